"""A second Parquet engine reads every table: pyarrow (the reference
implementation) opens every Parquet file of a demo run and finds the
columns the README's table list names, with the types its type block gives.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from conftest import REPO


def readme_tables(readme: str) -> tuple[dict[str, list[str]], dict[str, list[tuple[str, str]]]]:
    """The README's leading columns of each table and its full typed
    schemas, by table name (DIR/metrics for the run directory's own)."""
    leading: dict[str, list[str]] = {}
    rows = readme.split("| table | columns |\n|---|---|\n", 1)[1].split("\n\n", 1)[0]
    for row in rows.splitlines():
        names, cols = row.strip("|").split(" | ", 1)
        names = re.sub(r"\([^)]*\)", "", names).replace("`", "").replace(".parquet", "")
        cols = cols.rstrip(" |")
        while True:  # nested remarks: innermost first
            cols, n = re.subn(r"\([^()]*\)", "", cols)
            if n == 0:
                break
        cols = cols.split(":", 1)[0]
        for name in names.split(","):
            leading[name.strip()] = [c.strip() for c in cols.split(",")]
    typed: dict[str, list[tuple[str, str]]] = {}
    block = readme.split("Their types, every column in order", 1)[1].split("```\n", 1)[1].split("```", 1)[0]
    for line in block.splitlines():
        names, cols = line.split(": ", 1)
        for name in names.split(","):
            typed[name.strip()] = [tuple(c.split(" ", 1)) for c in cols.split(", ")]
    return leading, typed


def type_name(t: pa.DataType) -> str:
    return "list<%s>" % type_name(t.value_type) if pa.types.is_list(t) else str(t)


def table_of(run_dir: Path, f: Path) -> str:
    rel = f.relative_to(run_dir)
    return "DIR/metrics" if str(rel) in ("metrics.parquet", "report/metrics.parquet") else f.stem


def test_readme_parses() -> None:
    leading, typed = readme_tables((REPO / "README.md").read_text())
    assert leading["items"][:2] == ["asin", "title"]
    assert leading["negatives"] == ["src", "dst", "graph", "src_idx", "dst_idx"]
    assert leading["DIR/metrics"][-1] == "job_hash"
    assert set(leading) == set(typed)


def test_pyarrow_reads_every_table(reference_run: Path) -> None:
    leading, typed = readme_tables((REPO / "README.md").read_text())
    files = sorted(reference_run.rglob("*.parquet"))
    seen = set()
    for f in files:
        name = table_of(reference_run, f)
        assert name in leading, "%s: table %s is not in the README's table list" % (f, name)
        table = pq.read_table(f)  # every row group and page, decoded
        got = [(field.name, type_name(field.type)) for field in table.schema]
        assert [n for n, _ in got][: len(leading[name])] == leading[name], f
        assert got == typed[name], f
        seen.add(name)
    # The demo writes every table the README lists.
    assert seen == set(leading)
