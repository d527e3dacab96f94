"""What a FAISS query of an export costs (docs/serving.md, "What a query
costs"): exact IndexFlatIP search of random float32 vectors of a model's
dimension over N items, queries in one batch and one at a time, the
wall time per query. Not a test: run it with the serving venv,

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


def best(f, reps=3):
    return min(f() for _ in range(reps))


def batch():
    t = time.perf_counter()
    index.search(queries, k)
    return (time.perf_counter() - t) / len(queries)


def single():
    t = time.perf_counter()
    for i in range(50):
        index.search(queries[i:i + 1], k)
    return (time.perf_counter() - t) / 50


b, s = best(batch), best(single)
print(f"faiss {faiss.__version__} IndexFlatIP n={n} d={d} k={k} threads={threads}: "
      f"batch of {len(queries)}: {b * 1e3:.3f} ms/query ({n / b / 1e6:.0f} M items/s), "
      f"one at a time: {s * 1e3:.3f} ms/query ({n / s / 1e6:.0f} M items/s)")
