"""The serving round trip of `monomer export` (docs/serving.md).

For each CASE, EXPORT_DIR=LISTS[:MODEL], it reads every table of the export
with pyarrow and its .npy arrays with numpy, loads item_vector into FAISS's
exact inner-product index (IndexFlatIP) and checks that FAISS's top k of
every query of LISTS (a publish table, or a recommend table's rows of
MODEL) is monomer's exact list: the same items in the same order, except
where two items are a float32 near-tie (NEAR_TIE below). It also checks the
probabilities σ(c − query_offset + q·v) against the table's. Driven by
TestExportFAISS (cmd/monomer/export_test.go); prints one JSON line of
figures per case, and exits 1 naming the first failure.
"""

import json
import math
import os
import sys

import faiss
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

# Unit roundoff of float32.
U = 2.0**-24


def near_tie(d, qa_abs, va_abs, vb_abs):
    """The bound under which two items' order may differ between monomer's
    float64 scores and FAISS's float32 ones: each float32 score q·v is
    within (d+3)·u·Σ|q∘v| of the float64 score of the unrounded vectors
    (q and v rounded to float32: 2u a term; a d-term float32 sum: d·u),
    so two items whose exact scores differ by less than the two errors
    together may swap. 2u more covers computing the check's own scores in
    float64 from the rounded vectors."""
    return (d + 5) * U * (float(qa_abs @ va_abs) + float(qa_abs @ vb_abs))



def compare_list(stats, engine, export, q, mine, theirs, x, row, q64, v64, qa, va, d):
    """Counts list mine (engine's for query q, row x) against monomer's
    theirs in stats, and returns a one-line failure when two items they
    rank differently are further apart than the float32 near-tie bound."""
    if mine == theirs:
        stats["identical_lists"] += 1
        return None
    ties = 0
    for r, (a, b) in enumerate(zip(mine, theirs)):
        if a == b:
            continue
        ya, yb = row[a], row[b]
        gap = abs(float(q64[x] @ v64[ya]) - float(q64[x] @ v64[yb]))
        bound = near_tie(d, qa[x], va[ya], va[yb])
        if gap > bound:
            return (f"{export}: query {q} rank {r + 1}: {engine} has {a}, monomer {b}, "
                    f"scores {gap:.3g} apart, more than the float32 near-tie bound {bound:.3g}")
        ties += 1
    stats["near_tie_positions"] += ties
    stats["lists_with_near_ties"] += 1
    return None

def fail(msg):
    print("roundtrip: " + msg, file=sys.stderr)
    sys.exit(1)


def read_lists(path, model):
    t = pq.read_table(path)
    cols = t.column_names
    if model is not None:
        if "model" not in cols:
            fail(f"{path}: no model column to select {model} by")
        t = t.filter(pa.compute.equal(t["model"], model))
    q = t["query"].to_pylist()
    item = t["item"].to_pylist()
    rank = t["rank"].to_pylist()
    prob = t["probability"].to_numpy()
    lists = {}
    for i in range(len(q)):
        lists.setdefault(q[i], []).append((rank[i], item[i], prob[i]))
    for l in lists.values():
        l.sort()
    return lists


def check(export, lists_path, model):
    meta = json.load(open(os.path.join(export, "model.json")))
    d, n = meta["dimension"], meta["items"]
    # Every table reads with pyarrow, with the declared types.
    vt = pq.read_table(os.path.join(export, "vectors.parquet"))
    want = {"id": pa.string(), "query_vector": pa.list_(pa.float32(), d),
            "item_vector": pa.list_(pa.float32(), d), "query_offset": pa.float64()}
    if vt.column_names != list(want):
        fail(f"{export}: vectors.parquet columns {vt.column_names}")
    for name, typ in want.items():
        got = vt.schema.field(name).type
        if got != typ:
            fail(f"{export}: vectors.parquet column {name} is {got}, want {typ}")
    if vt.num_rows != n:
        fail(f"{export}: {vt.num_rows} rows, model.json says {n}")
    tables = ["vectors.parquet"]
    if meta.get("vocabulary"):
        voc = pq.read_table(os.path.join(export, meta["vocabulary"]))
        if voc.num_rows == 0 or voc.column_names[:2] != ["term_id", "term"]:
            fail(f"{export}: vocabulary.parquet: {voc.num_rows} rows, columns {voc.column_names}")
        tables.append(meta["vocabulary"])
    # The copies score --model-dir reads (score/) are Parquet tables too.
    for name in sorted(meta.get("files", {})):
        if name.startswith(meta.get("score", "score") + "/") and name.endswith(".parquet"):
            if pq.read_table(os.path.join(export, name)).num_rows == 0:
                fail(f"{export}: {name} has no rows")
            tables.append(name)
    ids = vt["id"].to_pylist()
    if ids != sorted(ids, key=lambda s: s.encode()):
        fail(f"{export}: ids not in byte order")
    qv = vt["query_vector"].combine_chunks().flatten().to_numpy().reshape(n, d)
    iv = vt["item_vector"].combine_chunks().flatten().to_numpy().reshape(n, d)
    off = vt["query_offset"].to_numpy()
    # The .npy arrays are the same rows.
    for name, arr in [("query_vectors.npy", qv), ("item_vectors.npy", iv), ("query_offsets.npy", off)]:
        a = np.load(os.path.join(export, name))
        if a.shape != arr.shape or a.dtype != arr.dtype or not np.array_equal(a, arr):
            fail(f"{export}: {name} {a.shape} {a.dtype} differs from vectors.parquet")
    if np.load(os.path.join(export, "ids.npy")).tolist() != ids:
        fail(f"{export}: ids.npy differs from vectors.parquet")

    lists = read_lists(lists_path, model)
    row = {s: i for i, s in enumerate(ids)}
    index = faiss.IndexFlatIP(d)
    index.add(np.ascontiguousarray(iv))
    queries = sorted(lists)
    k = max(len(l) for l in lists.values())
    qi = np.array([row[q] for q in queries])
    # k+1: the query itself, which monomer leaves out of its own list.
    scores, found = index.search(np.ascontiguousarray(qv[qi]), k + 1)
    q64, v64 = qv.astype(np.float64), iv.astype(np.float64)
    qa, va = np.abs(q64), np.abs(v64)
    c = meta["c"]
    stats = {"export": os.path.basename(export), "model": meta["model"], "queries": len(queries), "k": k,
             "dimension": d, "items": n, "tables_read": tables, "identical_lists": 0, "near_tie_positions": 0,
             "lists_with_near_ties": 0, "float64_reordered_lists": 0, "max_prob_error": 0.0}
    for j, q in enumerate(queries):
        x = qi[j]
        mine = [ids[f] for f in found[j] if f != x and f >= 0][:k]
        theirs = [it for _, it, _ in lists[q]]
        if len(theirs) < k and len(mine) > len(theirs):
            mine = mine[:len(theirs)]  # a short list: fewer candidates than k
        bad = compare_list(stats, "FAISS", export, q, mine, theirs, x, row, q64, v64, qa, va, d)
        if bad:
            fail(bad)
        # Ranking the rounded vectors in float64: how often float32 alone
        # reorders monomer's list.
        # Rows are in id order, so ties go to the lower row, as monomer's.
        s = v64 @ q64[x]
        s[x] = -math.inf
        order = np.lexsort((np.arange(n), -s))[:len(theirs)]
        if [ids[y] for y in order] != theirs:
            stats["float64_reordered_lists"] += 1
        for _, it, p in lists[q]:
            z = c - off[x] + float(q64[x] @ v64[row[it]])
            mine_p = 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))
            stats["max_prob_error"] = max(stats["max_prob_error"], abs(mine_p - p))
    if stats["max_prob_error"] > 1e-4:
        fail(f"{export}: probabilities differ from the table's by up to {stats['max_prob_error']:.3g}")
    return stats


def main(args):
    if not args:
        fail("usage: roundtrip.py EXPORT_DIR=LISTS[:MODEL] ...")
    for a in args:
        export, _, rest = a.partition("=")
        path, _, model = rest.partition(":")
        print(json.dumps(check(export, path, model or None)))


if __name__ == "__main__":
    main(sys.argv[1:])
