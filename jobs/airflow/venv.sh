#!/bin/sh
# Creates (or reuses) the virtual environment of the Airflow tests in $1 from
# jobs/airflow/requirements.txt (or from the requirements file $2: the
# serving round trip's, tests/serving). The environment is reused only when the
# stamp it holds is the sha256 of the requirements file it was built from,
# so an edited pin rebuilds it from scratch.
set -eu
venv=$1
req=${2:-$(dirname "$0")/requirements.txt}
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" = "$want" ]; then
	exit 0
fi
echo "venv: installing $req into $venv"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
echo "$want" >"$venv/.requirements.sha256"
