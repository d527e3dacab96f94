"""A second Parquet engine reads every table: pyarrow (the reference
implementation) opens every Parquet file of a demo run and finds the
columns, in order and with the types, that docs/tables.md gives (the page
cmd/docgen prints from package schema).
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from conftest import REPO

# Tables the demo job does not write: the bag-of-words shards' (only with
# vocab_shards), the rejects kept beside a stage that failed, the
# publish node's (only with a publish: block) and monomer export's (not
# in a run directory; tests/serving reads it).
NOT_IN_DEMO = {"counts", "info", "ingest.failed.rejects", "publish/recommendations", "churn", "vectors"}


def doc_tables(page: str) -> dict[str, list[tuple[str, str]]]:
    """Each table's columns and types by file stem (DIR/metrics for the run
    directory's own metrics.parquet), from docs/tables.md's sections: a
    "## name" heading, a "Written to ..." paragraph naming the files, and
    a | column | type | ... | table."""
    tables: dict[str, list[tuple[str, str]]] = {}
    paths: dict[str, str] = {}
    for section in page.split("\n## ")[1:]:
        name, body = section.split("\n", 1)
        written = body.strip().split("\n\n", 1)[0].replace("\\", "")
        cols = [
            (m.group(1).replace("\\", ""), m.group(2))
            for m in re.finditer(r"^\| ([^|]+?) \| ([^|]+?) \|", body, re.M)
            if m.group(1) not in ("column", "---")
        ]
        assert written.startswith("Written to "), name
        if name.strip() == "job_metrics":
            tables["DIR/metrics"] = cols
            continue
        sentence = written.split(". ", 1)[0]
        for f in re.findall(r"([\w.<>/-]+)\.parquet", sentence):
            stem = f.rsplit("/", 1)[-1]
            if stem in tables and tables[stem] != cols:
                # Two tables of one file name in two stages
                # (recommend/ and publish/recommendations.parquet): each
                # is known by its stage's directory and name.
                tables["%s/%s" % (paths[stem].rsplit("/", 2)[-2], stem)] = tables.pop(stem)
                tables["%s/%s" % (f.rsplit("/", 2)[-2], stem)] = cols
                continue
            paths[stem] = f
            tables[stem] = cols
    return tables


def type_name(t: pa.DataType) -> str:
    return "list<%s>" % type_name(t.value_type) if pa.types.is_list(t) else str(t)


def table_of(run_dir: Path, f: Path, tables: dict) -> str:
    rel = f.relative_to(run_dir)
    if str(rel) in ("metrics.parquet", "report/metrics.parquet"):
        return "DIR/metrics"
    staged = "%s/%s" % (f.parent.name, f.stem)
    return staged if staged in tables else f.stem


def test_tables_page_parses() -> None:
    tables = doc_tables((REPO / "docs" / "tables.md").read_text())
    assert [c for c, _ in tables["items"][:2]] == ["asin", "title"]
    assert [c for c, _ in tables["negatives"]] == ["src", "dst", "graph", "src_idx", "dst_idx"]
    assert ("job_hash", "string") in tables["DIR/metrics"]
    assert tables["DIR/metrics"][-1] == ("negatives", "string")
    assert ("term_ids", "list<int32>") in tables["bow"]
    assert NOT_IN_DEMO <= set(tables)


def test_pyarrow_reads_every_table(reference_run: Path) -> None:
    tables = doc_tables((REPO / "docs" / "tables.md").read_text())
    files = sorted(reference_run.rglob("*.parquet"))
    seen = set()
    for f in files:
        name = table_of(reference_run, f, tables)
        assert name in tables, "%s: table %s is not in docs/tables.md" % (f, name)
        table = pq.read_table(f)  # every row group and page, decoded
        got = [(field.name, type_name(field.type)) for field in table.schema]
        assert got == tables[name], f
        seen.add(name)
    # The demo writes every table the page lists but the shards' and a
    # failed ingest's.
    assert seen == set(tables) - NOT_IN_DEMO
