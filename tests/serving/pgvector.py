"""docs/serving.md's pgvector recipe, run as it stands against real pgvector.

For each CASE, EXPORT_DIR=LISTS[:MODEL] as in roundtrip.py, it takes the
three code blocks of the doc's "## pgvector" section (the CSV writer, the
load, the top-k query), replaces only the export's directory name in the
first, and runs them in a throwaway PostgreSQL cluster: the CSV writer in
Python, the load and one query per query item of LISTS with psql, with d, c,
k and id passed as psql variables. It checks that the table holds the
export's float32 bits, that pgvector's top k of every query is monomer's
list except where two items are a float32 near-tie (roundtrip.near_tie, the
rule of the FAISS round trip), that the probabilities agree with the
table's, and that with an HNSW index the query is served by it once its
inner ORDER BY is the distance alone, and not as the doc has it. A case
given after --must-fail must fail the list comparison (the negative case).

PostgreSQL and pgvector are the ones the pgserver wheel bundles
(tests/serving/requirements.txt; Debian 12 has no pgvector package), or
those of --pg-bin. The cluster lives in a temporary directory with a unix
socket there and no TCP port; as root, the server runs as "nobody" from a
copy of the binaries. Prints one JSON line of figures per case; exits 1
naming the first failure.
"""

import argparse
import csv
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from roundtrip import compare_list, read_lists  # noqa: E402

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "serving.md")
# The export the doc's snippets name; the only text of theirs replaced.
DOC_EXPORT = "men-image-monomer"


class Mismatch(Exception):
    """pgvector's lists or probabilities are not monomer's."""


def fail(msg):
    print("pgvector: " + msg, file=sys.stderr)
    sys.exit(1)


def doc_blocks():
    """The pgvector section's code blocks: (python, load sql, query sql)."""
    text = open(DOC).read()
    m = re.search(r"^## pgvector\n(.*?)^## ", text, re.S | re.M)
    if not m:
        fail(f"{DOC}: no '## pgvector' section")
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", m.group(1), re.S | re.M)
    langs = [lang for lang, _ in blocks]
    if langs != ["python", "sql", "sql"]:
        fail(f"{DOC}: the pgvector section has code blocks {langs}, want python, sql, sql")
    return [code for _, code in blocks]


def pg_bin(given):
    if given:
        return given
    spec = importlib.util.find_spec("pgserver")
    if spec is None:
        fail("no --pg-bin and no pgserver package (make serving-venv installs it)")
    return os.path.join(spec.submodule_search_locations[0], "pginstall", "bin")


class Cluster:
    """A PostgreSQL cluster in a temporary directory, reached by its socket."""

    def __init__(self, bindir):
        self.tmp = tempfile.mkdtemp(prefix="monomer-pgvector.")
        self.bindir = bindir  # psql runs from here, as the caller
        self.as_user = []
        self.started = False
        try:
            self._start()
        except BaseException:  # fail() exits: the directory goes with it
            self.close()
            raise

    def _start(self):
        bindir = self.bindir
        server = bindir
        if os.geteuid() == 0:
            self.as_user = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--reset-env"]
        # initdb, as it loads its libraries (postgres --version ran as
        # nobody from a path nobody could not list).
        probe = subprocess.run(self.as_user + [os.path.join(bindir, "initdb"), "--version"], capture_output=True)
        if self.as_user and probe.returncode != 0:
            # The server refuses to run as root: it runs as nobody, here from
            # a copy of its installation, as nobody cannot reach the
            # original's path (a venv under /root). The copy keeps the layout
            # the binaries find their files by: lib and share beside bin, and
            # a wheel's bundled libraries (auditwheel's PACKAGE.libs, beside
            # the package holding the installation) where their rpath looks.
            src = os.path.dirname(bindir)
            pkg = os.path.dirname(src)
            root = os.path.join(self.tmp, "pg", os.path.basename(pkg), os.path.basename(src))
            for sub in ("lib", "share"):
                shutil.copytree(os.path.join(src, sub), os.path.join(root, sub))
            os.makedirs(os.path.join(root, "bin"))
            for exe in ("postgres", "initdb", "pg_ctl"):
                shutil.copy2(os.path.join(bindir, exe), os.path.join(root, "bin", exe))
            if os.path.isdir(pkg + ".libs"):
                shutil.copytree(pkg + ".libs", os.path.join(self.tmp, "pg", os.path.basename(pkg) + ".libs"))
            server = os.path.join(root, "bin")
        self.sock = os.path.join(self.tmp, "sock")
        os.mkdir(self.sock)
        if self.as_user:
            os.chmod(self.tmp, 0o755)
            shutil.chown(self.sock, "nobody", "nogroup")
        self.data = os.path.join(self.sock, "data")
        self.server = server
        self._server_cmd([os.path.join(server, "initdb"), "-D", self.data, "-U", "postgres", "-A", "trust",
                          "-N", "-E", "UTF8", "--locale=C.UTF-8"])
        # No TCP (listen_addresses empty), the socket in the temporary
        # directory; fsync off: the cluster is thrown away.
        opts = f"-c listen_addresses='' -k {self.sock} -c fsync=off"
        self._server_cmd([os.path.join(server, "pg_ctl"), "-D", self.data, "-l", os.path.join(self.sock, "server.log"),
                          "-w", "-o", opts, "start"])
        self.started = True
        self.version = self.psql("postgres", [], "SHOW server_version;").strip()

    def _server_cmd(self, args):
        r = subprocess.run(self.as_user + args, capture_output=True, text=True)
        if r.returncode != 0:
            why = (r.stderr or r.stdout).strip()
            try:
                why += "; server log: " + open(os.path.join(self.sock, "server.log")).read().strip()
            except OSError:
                pass
            fail(f"{os.path.basename(args[0])}: exit {r.returncode}: {why[-800:]}")

    def psql(self, db, variables, script, cwd=None):
        args = [os.path.join(self.bindir, "psql"), "-X", "-q", "--csv", "-t", "-v", "ON_ERROR_STOP=1",
                "-h", self.sock, "-U", "postgres", "-d", db]
        for name, value in variables:
            args += ["-v", f"{name}={value}"]
        r = subprocess.run(args, input=script, capture_output=True, text=True, cwd=cwd)
        if r.returncode != 0:
            fail(f"psql: exit {r.returncode}: {r.stderr.strip()[-800:]}")
        return r.stdout

    def server_cpu(self):
        """CPU-seconds of the server's processes so far: the postmaster's own
        and those of the backends it has reaped (the server is not a child
        of this process, so its time is not in ours)."""
        try:
            pid = open(os.path.join(self.data, "postmaster.pid")).readline().strip()
            f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            return sum(int(x) for x in f[11:15]) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None

    def close(self):
        if self.started:
            subprocess.run(self.as_user + [os.path.join(self.server, "pg_ctl"), "-D", self.data, "-m", "immediate",
                                           "-w", "stop"], capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


def parse_vector(s):
    if not (s.startswith("[") and s.endswith("]")):
        fail(f"not a vector's text form: {s[:40]}")
    return np.array(s[1:-1].split(","), dtype=np.float32)


def check(cluster, blocks, n_case, export, lists_path, model):
    csv_py, load_sql, top_sql = blocks
    if f'"{DOC_EXPORT}"' not in csv_py:
        fail(f"{DOC}: the pgvector section's Python no longer names the export \"{DOC_EXPORT}\"")
    export = os.path.abspath(export)
    meta = json.load(open(os.path.join(export, "model.json")))
    d, c = meta["dimension"], meta["c"]
    ids = np.load(os.path.join(export, "ids.npy")).tolist()
    qv, iv = np.load(os.path.join(export, "query_vectors.npy")), np.load(os.path.join(export, "item_vectors.npy"))
    off = np.load(os.path.join(export, "query_offsets.npy"))
    n = len(ids)
    row = {s: i for i, s in enumerate(ids)}

    # The doc's CSV writer and load, in a directory of their own.
    work = os.path.join(cluster.tmp, f"case{n_case}")
    os.mkdir(work)
    cwd = os.getcwd()
    os.chdir(work)
    try:
        exec(compile(csv_py.replace(f'"{DOC_EXPORT}"', repr(export)), "docs/serving.md (pgvector, python)", "exec"), {})
    finally:
        os.chdir(cwd)
    db = f"case{n_case}"
    cluster.psql("postgres", [], f"CREATE DATABASE {db};")
    cluster.psql(db, [("d", d)], load_sql, cwd=work)

    # The table holds the export's bits, every row.
    out = cluster.psql(db, [], "SELECT id, query_vector, item_vector, query_offset FROM items ORDER BY id;")
    rows = list(csv.reader(out.splitlines()))
    if len(rows) != n:
        fail(f"{export}: items has {len(rows)} rows, the export {n}")
    for j, (id_, qs, vs, offs) in enumerate(rows):
        if id_ != ids[j]:
            fail(f"{export}: row {j} of items is {id_}, the export's is {ids[j]} (id order)")
        if not (np.array_equal(parse_vector(qs), qv[j]) and np.array_equal(parse_vector(vs), iv[j])):
            fail(f"{export}: item {id_}: the vectors in Postgres differ from the export's float32s")
        if float(offs) != float(off[j]):
            fail(f"{export}: item {id_}: query_offset {offs} in Postgres, {off[j]!r} exported")

    lists = read_lists(lists_path, model)
    queries = sorted(lists)
    k = max(len(l) for l in lists.values())
    # One psql session: for each query its id, a marker line, then the doc's query.
    script = "".join(f"\\set id {q}\n\\echo @ {q}\n{top_sql}\n" for q in queries)
    out = cluster.psql(db, [("c", repr(float(c))), ("k", k)], script)
    found = {}
    cur = None
    for line in out.splitlines():
        if line.startswith("@ "):
            cur = line[2:]
            found[cur] = []
        elif line:
            it, p = next(csv.reader([line]))
            found[cur].append((it, float(p)))
    if sorted(found) != queries:
        fail(f"{export}: psql answered {len(found)} queries of {len(queries)}")

    q64, v64 = qv.astype(np.float64), iv.astype(np.float64)
    qa, va = np.abs(q64), np.abs(v64)
    stats = {"export": os.path.basename(export), "model": meta["model"], "lists": "/".join(os.path.abspath(lists_path).split(os.sep)[-3:]),
             "queries": len(queries), "k": k, "dimension": d, "items": n, "identical_lists": 0,
             "near_tie_positions": 0, "lists_with_near_ties": 0, "max_prob_error": 0.0}
    for q in queries:
        x = row[q]
        theirs = [it for _, it, _ in lists[q]]
        mine = [it for it, _ in found[q]]
        if len(theirs) < k:
            mine = mine[:len(theirs)]  # a short list: fewer candidates than k
        if len(mine) != len(theirs):
            raise Mismatch(f"{export}: query {q}: pgvector gave {len(mine)} items, monomer {len(theirs)}")
        bad = compare_list(stats, "pgvector", export, q, mine, theirs, x, row, q64, v64, qa, va, d)
        if bad:
            raise Mismatch(bad)
        prob = dict(found[q])
        for _, it, p in lists[q]:
            if it in prob:
                stats["max_prob_error"] = max(stats["max_prob_error"], abs(prob[it] - p))
    if not stats["max_prob_error"] <= 1e-4:
        raise Mismatch(f"{export}: probabilities differ from the table's by up to {stats['max_prob_error']:.3g}")

    # With the doc's HNSW index, and the inner ORDER BY the distance alone as
    # the doc says, the query is served by the index (seq scans off: on a
    # table this small the planner would rather scan).
    inner = "ORDER BY ip, id LIMIT :k"
    if top_sql.count(inner) != 1:
        fail(f"{DOC}: the pgvector query has no {inner!r}")
    plan = cluster.psql(db, [("c", repr(float(c))), ("k", k), ("id", queries[0])],
                        "CREATE INDEX ON items USING hnsw (item_vector vector_ip_ops);\n"
                        "SET enable_seqscan = off;\nEXPLAIN (COSTS OFF)\n" +
                        top_sql.replace(inner, "ORDER BY ip LIMIT :k"))
    if not re.search(r"Index Scan using items_item_vector_idx on items", plan):
        fail(f"{export}: with the HNSW index the doc's query does not use it:\n{plan}")
    # and as the doc has it, with the tie-break by id, the index cannot serve
    # it: the lists above stay exact with the index there.
    plan = cluster.psql(db, [("c", repr(float(c))), ("k", k), ("id", queries[0])],
                        "SET enable_seqscan = off;\nEXPLAIN (COSTS OFF)\n" + top_sql)
    if "items_item_vector_idx" in plan:
        fail(f"{export}: the doc's exact query uses the HNSW index:\n{plan}")
    stats["hnsw_plan"] = "index scan with ORDER BY ip, exact scan with ORDER BY ip, id"
    return stats


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pg-bin", help="PostgreSQL's bin directory, with pgvector installed (default: pgserver's)")
    ap.add_argument("--must-fail", action="append", default=[], metavar="CASE",
                    help="a case whose lists are not the export's model's: it must fail")
    ap.add_argument("cases", nargs="+", metavar="EXPORT_DIR=LISTS[:MODEL]")
    a = ap.parse_args(argv)
    blocks = doc_blocks()
    cluster = Cluster(pg_bin(a.pg_bin))
    try:
        ext = cluster.psql("postgres", [], "SELECT default_version FROM pg_available_extensions WHERE name = 'vector';")
        if not ext.strip():
            fail(f"PostgreSQL {cluster.version} in {cluster.bindir} has no pgvector")
        n = 0
        for case in a.cases + a.must_fail:
            export, _, rest = case.partition("=")
            path, _, model = rest.partition(":")
            n += 1
            try:
                stats = check(cluster, blocks, n, export, path, model or None)
            except Mismatch as e:
                if case in a.must_fail:
                    print(json.dumps({"must_fail": case, "failed": str(e)}))
                    continue
                fail(str(e))
            if case in a.must_fail:
                fail(f"{case}: passed, but its lists are not the export's model's")
            stats["postgres"], stats["pgvector"] = cluster.version, ext.strip()
            print(json.dumps(stats))
        # What the server cost, for CI's time (the queries' own backends
        # have exited: every psql call is its own session).
        print(json.dumps({"postgres_cpu_s": cluster.server_cpu()}))
    finally:
        cluster.close()


if __name__ == "__main__":
    main(sys.argv[1:])
