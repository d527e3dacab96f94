# Writes the third-party files of TestEmbeddingsThirdParty (pyarrow 26, NumPy 2.4).
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
ids = ["B00007GDFV", "B0000ZE71C", "X"]
vecs = [[0.12, -0.5, 0.33], [0.7, 0.01, -0.2], [1.0, 2.0, 3.0]]
pq.write_table(pa.table({"asin": ids, "v": pa.array(vecs, pa.list_(pa.float64(), 3)), "note": ["a", "b", "c"]}), "fixed64.parquet")
pq.write_table(pa.table({"parent_asin": ids, "v": pa.array(vecs, pa.large_list(pa.float32()))}), "large32.parquet", row_group_size=2)
np.save("f32.npy", np.asarray(vecs, dtype=np.float32))
np.save("f64.npy", np.asarray(vecs, dtype=np.float64))
np.save("fortran.npy", np.asfortranarray(np.asarray(vecs, dtype=np.float32)))
for n in ["f32", "f64", "fortran"]:
    open(n + ".ids.txt", "w").write("\n".join(ids) + "\n")
