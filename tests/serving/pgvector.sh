#!/usr/bin/env bash
# make test-pgvector: docs/serving.md's pgvector recipe against real pgvector
# (tests/serving/pgvector.py says what is checked).
#
#   tests/serving/pgvector.sh [RUN_DIR]
#
# Runs jobs/demo.yaml with a publish block on both experiments (Monomer's
# lists for the image one, LMT's for the bag of words, as TestExport does)
# into a temporary directory: from scratch, or, given RUN_DIR (a run of
# jobs/demo.yaml, such as make run's runs/demo), on a copy of it, where
# only publish and the report run. RUN_DIR is not changed. Then exports
# those two models and checks pgvector's top k of every item against the
# publish table (k = 20) and of the recommend table's queries of the
# model (k = 10), and, as the negative case that must fail, LMT's vectors
# against Monomer's recommend lists.
#
# Environment: BIN (bin/monomer), PY (.venv-serving/bin/python, with
# pgserver's PostgreSQL and pgvector), PG_BIN (another PostgreSQL's bin
# directory, with pgvector).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin/monomer}
PY=${PY:-.venv-serving/bin/python}
say() { echo "test-pgvector: $*"; }
fail() { echo "test-pgvector: FAIL: $*" >&2; exit 1; }
[ -x "$BIN" ] || fail "no $BIN (make build)"
[ -x "$PY" ] || fail "no $PY (make serving-venv)"

work=$(mktemp -d "${TMPDIR:-/tmp}/monomer-test-pgvector.XXXXXX")
trap 'rm -rf "$work"' EXIT
img=men-also_bought-image bow=men-also_bought-bow
if [ $# -gt 0 ]; then
	[ -d "$1" ] || fail "$1: not a run directory"
	cp -a "$1" "$work/run"
	say "the demo run $1, copied"
fi
"$BIN" run jobs/demo.yaml --run-dir "$work/run" \
	--set "experiments.$img.publish.model=monomer" --set "experiments.$bow.publish.model=lmt" >"$work/run.log" 2>&1 ||
	{ tail -n 20 "$work/run.log" >&2; fail "the demo run failed"; }
grep -o '"msg":"run summary".*' "$work/run.log" | sed 's/^/test-pgvector: /'
"$BIN" export "$work/run" --experiment "$img" --model monomer --out "$work/$img-monomer" >/dev/null
"$BIN" export "$work/run" --experiment "$bow" --model lmt --out "$work/$bow-lmt" >/dev/null
rec() { echo "$work/run/$1/recommend/recommendations.parquet:$2"; }
args=(
	"$work/$img-monomer=$work/run/$img/publish/recommendations.parquet"
	"$work/$bow-lmt=$work/run/$bow/publish/recommendations.parquet"
	"$work/$img-monomer=$(rec "$img" monomer)"
	"$work/$bow-lmt=$(rec "$bow" lmt)"
	--must-fail "$work/$bow-lmt=$(rec "$bow" monomer)"
)
[ -z "${PG_BIN:-}" ] || args+=(--pg-bin "$PG_BIN")
out=$(PYTHONDONTWRITEBYTECODE=1 "$PY" tests/serving/pgvector.py "${args[@]}") || fail "pgvector.py failed"
printf '%s\n' "$out" | sed 's/^/test-pgvector: /'
# Four cases and the negative one, which must have failed on the near-tie bound.
[ "$(printf '%s\n' "$out" | grep -c '"identical_lists"')" = 4 ] || fail "want 4 cases checked"
printf '%s\n' "$out" | grep -q '"must_fail".*more than the float32 near-tie bound' ||
	fail "the negative case did not fail on the near-tie bound"
say "ok"
