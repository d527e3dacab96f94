# Writes pyarrow-types.parquet, a table with the Arrow types pyarrow stores
# in a Parquet footer's ARROW:schema, for TestStoredSchemaOtherWriters:
#   python3 pyarrow_types.py   (pyarrow 26.0.1, as jobs/airflow/requirements.txt)
import datetime
import decimal

import pyarrow as pa
import pyarrow.parquet as pq

n = 3
table = pa.table(
    {
        "asin": pa.array(["B000000001", "B000000002", None]),
        "category": pa.array(["shoes", "hats", "shoes"]).dictionary_encode(),
        "price": pa.array([decimal.Decimal("9.99"), None, decimal.Decimal("120.00")], pa.decimal128(9, 2)),
        "seen": pa.array([datetime.datetime(2018, 1, 2, 3, 4, 5)] * n, pa.timestamp("ms", tz="UTC")),
        "day": pa.array([datetime.date(2014, 5, 6)] * n, pa.date32()),
        "emb": pa.array([[0.5, 1.5, 2.5, 3.5]] * n, pa.list_(pa.float32(), 4)),
        "also_bought": pa.array([["B000000002"], [], None], pa.large_list(pa.large_string())),
        "attrs": pa.array([{"size": "M"}, {}, {"colour": "red", "size": "L"}], pa.map_(pa.string(), pa.string())),
        "rank": pa.array([{"where": "Clothing", "at": 12}, None, {"where": "Shoes", "at": 3}],
                         pa.struct([("where", pa.string()), ("at", pa.int64())])),
        "small": pa.array([1, 2, 3], pa.uint16()),
        "half": pa.array([0.5, 1.0, None], pa.float16()),
        "blob": pa.array([b"\x00\x01", b"", None], pa.large_binary()),
    }
)
table = table.replace_schema_metadata({"source": "monomer test"})
table = table.cast(table.schema.set(0, table.schema.field(0).with_metadata({"unit": "id"})))
pq.write_table(table, "pyarrow-types.parquet", row_group_size=2)
