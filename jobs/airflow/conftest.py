"""Set-up shared by the Airflow tests: a throwaway AIRFLOW_HOME with a SQLite
metadata database, a DAG folder holding (a link to) monomer_dag.py, the
binary under test and a reference run of the demo job by `monomer run`.

Airflow reads its configuration when first imported, so the environment is
set here, before any test module imports airflow. Run through `make
test-airflow` (or `make test` once .venv-airflow exists), which set
MONOMER_DAG_BIN to the binary under test.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEMO_JOB = REPO / "jobs" / "demo.yaml"
HOME = Path(tempfile.mkdtemp(prefix="monomer-airflow-"))
DAGS = HOME / "dags"
RUNS = HOME / "runs"
AIRFLOW = Path(sys.executable).parent / "airflow"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


API_PORT = free_port()
os.environ.update(
    {
        "AIRFLOW_HOME": str(HOME),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        # The fan-out test's scheduler runs tasks two at a time.
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__CORE__PARALLELISM": "2",
        "AIRFLOW__API_AUTH__JWT_SECRET": "monomer-airflow-tests-only",
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": "http://127.0.0.1:%d/execution/" % API_PORT,
        "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
        "MONOMER_DAG_JOB": str(DEMO_JOB),
        "MONOMER_DAG_RUNS": str(RUNS),
    }
)


def pytest_configure(config: pytest.Config) -> None:
    binary = os.environ.get("MONOMER_DAG_BIN", "")
    if not os.access(binary, os.X_OK):
        raise pytest.UsageError("MONOMER_DAG_BIN=%r is not an executable monomer binary (run make test-airflow)" % binary)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(HOME, ignore_errors=True)


def monomer(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    out = subprocess.run([os.environ["MONOMER_DAG_BIN"], *args], capture_output=True, text=True)
    if check and out.returncode != 0:
        raise AssertionError("monomer %s: exit %d\n%s" % (" ".join(args), out.returncode, out.stderr[-2000:]))
    return out


@pytest.fixture(scope="session")
def airflow_db() -> Path:
    """A migrated SQLite metadata database and the DAG folder; returns the folder."""
    DAGS.mkdir(parents=True)
    (DAGS / "monomer_dag.py").symlink_to(HERE / "monomer_dag.py")
    subprocess.run([str(AIRFLOW), "db", "migrate"], check=True, capture_output=True)
    return DAGS


@pytest.fixture(scope="session")
def reference_run() -> Path:
    """The demo job run by `monomer run` alone, in its own run directory
    (and so its own store: nothing is restored into the DAG's runs)."""
    monomer("run", str(DEMO_JOB), "--run-dir", str(RUNS / "reference"), "--run-id", "ref")
    return RUNS / "reference" / "ref"
