"""A second Parquet engine reads every table: pyarrow (the reference
implementation) opens every Parquet file of a demo run, and of a second
night of the demo with a publish: block (its publish and churn tables),
and finds the columns, in order and with the types, that docs/tables.md
gives (the page cmd/docgen prints from package schema).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import DEMO_JOB, REPO, RUNS, monomer

# Tables no run here writes: the bag-of-words shards' (only with
# vocab_shards), the rejects kept beside a stage that failed, monomer
# export's (not in a run directory; tests/serving reads it) and the
# held-out items' (only with settings.cold_items; stages'
# TestColdItemsHeldOut reads them back). The publish node's tables come
# from published_run.
NOT_IN_DEMO = {"counts", "info", "ingest.failed.rejects", "vectors", "cold_items", "cold_relations", "cold_items_metrics"}


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


@pytest.fixture(scope="module")
def published_run(reference_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo job with a publish: block, two nights of a root of runs,
    each a copy of the reference run (so only the publish nodes and the
    report run: seconds); the second night writes churn.parquet against
    the first. Returns the second night's run directory."""
    src = DEMO_JOB.read_text().replace("data_dir: ../testdata/amazon", "data_dir: %s" % (REPO / "testdata" / "amazon"), 1)
    src = src.replace("\nexperiments:\n", "\npublish:\n  model: monomer\n  k: 10\nexperiments:\n", 1)
    assert "publish:" in src, "jobs/demo.yaml changed shape"
    job = tmp_path_factory.mktemp("publish") / "demo.yaml"
    job.write_text(src)
    root = RUNS / "published-root"
    for night in ("n1", "n2"):
        shutil.copytree(reference_run, root / night, ignore=shutil.ignore_patterns(".lock"))
        monomer("run", str(job), "--run-dir", str(root), "--run-id", night)
    return root / "n2"


def test_pyarrow_reads_every_table(reference_run: Path, published_run: Path) -> None:
    tables = doc_tables((REPO / "docs" / "tables.md").read_text())
    seen = set()
    for run in (reference_run, published_run):
        for f in sorted(run.rglob("*.parquet")):
            name = table_of(run, f, tables)
            assert name in tables, "%s: table %s is not in docs/tables.md" % (f, name)
            table = pq.read_table(f)  # every row group and page, decoded
            got = [(field.name, type_name(field.type)) for field in table.schema]
            assert got == tables[name], f
            seen.add(name)
    assert {"publish/recommendations", "churn"} <= seen
    # The two write every table the page lists but the shards' and a
    # failed ingest's.
    assert seen == set(tables) - NOT_IN_DEMO
