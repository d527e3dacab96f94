"""What a FAISS query of an export costs (docs/serving.md, "What a query
costs"): exact IndexFlatIP search of random float32 vectors of a model's
dimension over N items, queries in one batch and one at a time: the
CPU time per query (the process's, which other load on a shared machine
moves less than the wall time) and the wall time. Not a test: run it with the serving venv,

    .venv-serving/bin/python tests/serving/bench.py [N] [D] [K] [THREADS]
"""

import sys
import time

import faiss
import numpy as np

n = int(sys.argv[1]) if len(sys.argv) > 1 else 659566
d = int(sys.argv[2]) if len(sys.argv) > 2 else 36
k = int(sys.argv[3]) if len(sys.argv) > 3 else 21
threads = int(sys.argv[4]) if len(sys.argv) > 4 else 1
faiss.omp_set_num_threads(threads)
rng = np.random.default_rng(1)
items = rng.standard_normal((n, d), dtype=np.float32)
queries = rng.standard_normal((2000, d), dtype=np.float32)
index = faiss.IndexFlatIP(d)
index.add(items)


def timed(f, reps):
    def run():
        c, w = time.process_time(), time.perf_counter()
        f()
        return (time.process_time() - c) / reps, (time.perf_counter() - w) / reps
    return min(run() for _ in range(3))


b = timed(lambda: index.search(queries, k), len(queries))
s = timed(lambda: [index.search(queries[i:i + 1], k) for i in range(50)], 50)
print(f"faiss {faiss.__version__} IndexFlatIP n={n} d={d} k={k} threads={threads}: "
      f"batch of {len(queries)}: {b[0] * 1e3:.2f} CPU-ms/query ({n / b[0] / 1e6:.0f} M items per CPU-s), {b[1] * 1e3:.2f} ms wall; "
      f"one at a time: {s[0] * 1e3:.2f} CPU-ms/query ({n / s[0] / 1e6:.0f} M items per CPU-s), {s[1] * 1e3:.2f} ms wall")
