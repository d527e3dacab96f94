#!/bin/sh
# faiss_topk.sh DIR: runs faiss_topk.py on DIR in a virtualenv with
# faiss-cpu and numpy (FAISS_VENV, default $TMPDIR/monomer-faiss-venv, made
# on first use). Where faiss-cpu cannot be installed it says so in one line
# and exits 0, so that `make bench` still completes.
set -u
dir=$1
venv=${FAISS_VENV:-${TMPDIR:-/tmp}/monomer-faiss-venv}
here=$(dirname "$0")
if ! "$venv/bin/python" -c 'import faiss, numpy' 2>/dev/null; then
	log=$(mktemp)
	if ! { python3 -m venv "$venv" && "$venv/bin/pip" install -q faiss-cpu numpy; } >"$log" 2>&1; then
		echo "bench-topk: FAISS skipped: faiss-cpu could not be installed into $venv ($(tail -n 1 "$log"))"
		rm -f "$log"
		exit 0
	fi
	rm -f "$log"
fi
exec "$venv/bin/python" "$here/faiss_topk.py" "$dir"
