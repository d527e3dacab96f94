"""Times faiss-cpu's exact IndexFlatIP on the vectors TestTopKWriteNpy wrote.

Usage: faiss_topk.py DIR. For each DIR/<shape>-queries.npy (float32, one
query's q row a row) with its -items.npy (every item's v) and -lists.npy
(monomer's exact top-20 items per query), it searches the top 21 inner
products of every query (one more, since monomer leaves the query itself
out), and prints wall and CPU seconds of the search, pairs per second and
per CPU-second, and how many of monomer's exact lists FAISS returns
unchanged (same items in the same order, the query dropped).
"""
import glob
import os
import sys
import time

import faiss
import numpy as np


def main(d):
    paths = sorted(glob.glob(os.path.join(d, "*-queries.npy")))
    if not paths:
        sys.exit(f"faiss_topk: no *-queries.npy in {d}")
    threads_max = faiss.omp_get_max_threads()
    print(f"faiss {faiss.__version__}, {threads_max} threads")
    for qp in paths:
        shape = os.path.basename(qp)[: -len("-queries.npy")]
        q = np.load(qp)
        v = np.load(os.path.join(d, shape + "-items.npy"))
        lists = np.load(os.path.join(d, shape + "-lists.npy"))
        k = lists.shape[1]
        index = faiss.IndexFlatIP(v.shape[1])
        index.add(v)
        # Also on one thread: OpenMP's threads spin while they wait, which
        # counts as CPU time on a machine other work shares.
        for threads in sorted({threads_max, 1}, reverse=True):
            faiss.omp_set_num_threads(threads)
            w0, c0 = time.perf_counter(), time.process_time()
            _, ids = index.search(q, k + 1)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            report(shape, threads, q, v, k, ids, lists, wall, cpu)
        faiss.omp_set_num_threads(threads_max)


def report(shape, threads, q, v, k, ids, lists, wall, cpu):
    pairs = q.shape[0] * v.shape[0]
    # The query rows are those of items i·(n/5000), as topKRetriever draws
    # them.
    step = v.shape[0] // q.shape[0]
    same = 0
    for i in range(q.shape[0]):
        got = [j for j in ids[i] if j != i * step][:k]
        same += list(got) == list(lists[i])
    print(
        f"faiss IndexFlatIP {shape}, {threads} thread(s): {q.shape[0]} queries x {v.shape[0]} items, "
        f"d={v.shape[1]}, top-{k}: {wall:.2f} s wall, {cpu:.2f} CPU-s, {pairs / wall / 1e6:.0f} M pairs/s, "
        f"{pairs / cpu / 1e6:.0f} M pairs/CPU-s; {same} of {q.shape[0]} lists equal monomer's exact ones"
    )


if __name__ == "__main__":
    main(sys.argv[1])
