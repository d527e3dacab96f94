# Writes the pyarrow seeds of the Parquet fuzz targets and byte-flip tests
# (catalogue, schema and cmd/monomer tests); the tests read the files,
# never Python:
#   python3 pyarrow_damage.py   (pyarrow 26.0.1, as jobs/airflow/requirements.txt)
# Each table is written with page CRCs, plain pages and no compression
# (every byte of a page is then a byte the CRC covers), and as pyarrow
# writes by default (no CRCs, dictionary pages, snappy); the items table
# also plain without CRCs, and with CRCs in data pages v2.
import datetime
import sys

import pyarrow as pa
import pyarrow.parquet as pq

crc = dict(write_page_checksum=True, use_dictionary=False, compression="none")
n = 40
items = pa.table(
    {
        "id": [f"I{i:02d}" for i in range(n)],
        "title": [f"Title {i}" for i in range(n)],
        "brand": [f"Brand{i % 3}" if i % 7 else None for i in range(n)],
        "categories": pa.array(
            [[["Shop", f"S{i % 4}"], ["Shop", "All"]] for i in range(n)],
            pa.list_(pa.list_(pa.string())),
        ),
    }
)
relations = pa.table(
    {
        "src": [f"I{i:02d}" for i in range(n)],
        "dst": [f"I{(i + 1) % n:02d}" for i in range(n)],
        "relation": ["bought_together" if i % 2 else "also_viewed" for i in range(n)],
    }
)
emb = pa.table(
    {
        "id": [f"I{i:02d}" for i in range(24)],
        "embedding": pa.array([[float(i), 0.5, -1.0, i / 8] for i in range(24)], pa.list_(pa.float32())),
    }
)
types = pa.table(
    {
        "name": ["a", "b", None],
        "took": pa.array([1500, None, 7], pa.duration("ms")),
        "at": pa.array([datetime.time(1, 2, 3)] * 3, pa.time64("us")),
        "price": pa.array([1, 2, None], pa.decimal128(9, 2)),
        "day": pa.array([datetime.date(2014, 5, 6)] * 3, pa.date32()),
        "laps": pa.array([[60, 61], [], None], pa.list_(pa.duration("s"))),
    }
)

out = sys.argv[1] if len(sys.argv) > 1 else "."
pq.write_table(items, f"{out}/items-crc.parquet", row_group_size=25, **crc)
pq.write_table(items, f"{out}/items.parquet", row_group_size=25)
pq.write_table(items, f"{out}/items-plain.parquet", row_group_size=25, use_dictionary=False, compression="none")
pq.write_table(items, f"{out}/items-v2-crc.parquet", data_page_version="2.0", **crc)
pq.write_table(relations, f"{out}/relations-crc.parquet", **crc)
pq.write_table(emb, f"{out}/emb-crc.parquet", **crc)
pq.write_table(emb, f"{out}/emb.parquet")
pq.write_table(types, f"{out}/types-crc.parquet", **crc)
