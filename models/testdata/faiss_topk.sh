#!/bin/sh
# faiss_topk.sh DIR: runs faiss_topk.py on DIR in the serving tests'
# virtualenv (FAISS_VENV, default the repository's .venv-serving, made on
# first use by jobs/airflow/venv.sh from tests/serving/requirements.txt, so
# the bench and the round trip use the same pinned faiss-cpu). Where it
# cannot be installed it says so in one line and exits 0, so that
# `make bench` still completes.
set -u
dir=$1
here=$(dirname "$0")
repo=$(cd "$here/../.." && pwd)
venv=${FAISS_VENV:-$repo/.venv-serving}
if ! "$venv/bin/python" -c 'import faiss, numpy' 2>/dev/null; then
	log=$(mktemp)
	# A FAISS_VENV of the user's is used as it is, never rebuilt (venv.sh
	# replaces the directory it builds).
	if [ -n "${FAISS_VENV:-}" ]; then
		echo "bench-topk: FAISS skipped: FAISS_VENV=$FAISS_VENV has no faiss and numpy"
		rm -f "$log"
		exit 0
	fi
	if ! "$repo/jobs/airflow/venv.sh" "$venv" "$repo/tests/serving/requirements.txt" >"$log" 2>&1; then
		echo "bench-topk: FAISS skipped: faiss-cpu could not be installed into $venv ($(tail -n 1 "$log"))"
		rm -f "$log"
		exit 0
	fi
	rm -f "$log"
fi
exec "$venv/bin/python" "$here/faiss_topk.py" "$dir"
