"""monomer_dag.py under real Apache Airflow 3 (make test-airflow).

Both DAGs load in a DagBag and equal `monomer plan --json`; the worker DAG
runs the demo job under Airflow's scheduler with LocalExecutor (two tasks at
a time) into a run directory `monomer diff`-identical to `monomer run`'s,
and a second run skips every stage; exit codes are retried or not as the
docs/running.md says, read from Airflow's task instance records; the Kubernetes DAG
renders one pod per experiment.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import AIRFLOW, API_PORT, DEMO_JOB, HOME, REPO, RUNS, monomer

UTC = dt.timezone.utc

# What each monomer exit code must do to an Airflow task (docs/running.md: Exit
# codes). "fail": fails at once, one try; "retry": retried, and succeeds
# once the cause is gone.
EXIT_CODES = {
    1: "retry",  # failure
    2: "fail",  # usage error or invalid job file
    3: "fail",  # bad input
    4: "retry",  # run directory locked
    5: "retry",  # an input file not there yet (data arriving late)
    6: "fail",  # not promoted: a publish gate refused the run
    130: "retry",  # interrupted
}


def load(dag_folder: Path, **env: str):
    """A DagBag of dag_folder parsed with env added to the environment."""
    from airflow.dag_processing.dagbag import DagBag

    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return DagBag(dag_folder=str(dag_folder))
    finally:
        for k, v in old.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def dagbag(airflow_db: Path):
    return load(airflow_db)


@pytest.fixture(scope="module")
def dag_module():
    """monomer_dag.py as a module, for its constants and helpers."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("monomer_dag_under_test", REPO / "jobs" / "airflow" / "monomer_dag.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def plan_of(job: Path) -> dict:
    return json.loads(monomer("plan", "--json", str(job)).stdout)


def sharded_job(tmp: Path) -> Path:
    """The demo job with its bag-of-words experiment counted in two shards."""
    src = DEMO_JOB.read_text()
    src = src.replace("data_dir: ../testdata/amazon", "data_dir: %s" % (REPO / "testdata" / "amazon"), 1)
    src = src.replace("models: [wnn, ct, lda, lmt, monomer]", "models: [wnn, ct, lda, lmt, monomer]\n    settings: {vocab_shards: 2}", 1)
    assert "vocab_shards: 2" in src, "jobs/demo.yaml changed shape: no bag-of-words experiment to shard"
    job = tmp / "sharded.yaml"
    job.write_text(src)
    return job


def seeds_job(tmp: Path) -> Path:
    """The demo job run at seeds 1 and 2: every seeded node twice."""
    src = DEMO_JOB.read_text()
    src = src.replace("data_dir: ../testdata/amazon", "data_dir: %s" % (REPO / "testdata" / "amazon"), 1)
    src = src.replace("\nseed: 1\n", "\nseeds: [1, 2]\n", 1)
    assert "seeds: [1, 2]" in src, "jobs/demo.yaml changed shape: no seed: 1 line"
    job = tmp / "seeds.yaml"
    job.write_text(src)
    return job


def test_dagbag_loads_both_dags(dagbag) -> None:
    assert dagbag.import_errors == {}
    assert {"monomer_demo", "monomer_demo_k8s"} <= set(dagbag.dag_ids)


@pytest.mark.parametrize("variant", ["demo", "sharded", "seeds"], ids=["demo", "demo-sharded", "demo-seeds"])
def test_bash_dag_equals_plan(airflow_db: Path, dag_module, tmp_path: Path, variant: str) -> None:
    job = {"demo": lambda _: DEMO_JOB, "sharded": sharded_job, "seeds": seeds_job}[variant](tmp_path)
    # A wrapper counts the parse's calls of the binary.
    calls = tmp_path / "calls"
    wrapper = tmp_path / "monomer"
    wrapper.write_text('#!/bin/sh\necho "$*" >> %s\nexec %s "$@"\n' % (shlex.quote(str(calls)), shlex.quote(os.environ["MONOMER_DAG_BIN"])))
    wrapper.chmod(0o755)
    bag = load(airflow_db, MONOMER_DAG_JOB=str(job), MONOMER_DAG_BIN=str(wrapper))
    assert bag.import_errors == {}
    assert calls.read_text().splitlines() == ["plan --json %s" % job], "the DAG file runs plan once per parse"

    plan = plan_of(job)
    if variant == "sharded":
        assert any(t["id"].endswith("bow-shard-1-of-2") for t in plan["tasks"])
    if variant == "seeds":
        # The second seed's nodes are tasks of their own, after their
        # seed's upstream; publish and the first seed's keep their names.
        ids = {t["id"]: t for t in plan["tasks"]}
        exp = plan["experiments"][0]
        assert {exp + ".split", exp + ".split.s2", exp + ".train.lmt.s2", exp + ".evaluate.s2"} <= set(ids)
        assert exp + ".split.s2" in ids[exp + ".train.lmt.s2"]["upstream"]
        assert exp + ".split" not in ids[exp + ".train.lmt.s2"]["upstream"]
    dag = bag.dags["monomer_" + plan["job"]]
    assert {t.task_id: set(t.upstream_task_ids) for t in dag.tasks} == {t["id"]: set(t["upstream"]) for t in plan["tasks"]}
    run_dir = os.path.join(str(RUNS), plan["job"])
    for t in plan["tasks"]:
        op = dag.get_task(t["id"])
        argv = [str(wrapper), t["command"], plan["job_file"], "--run-dir", run_dir] + t["args"]
        assert op.bash_command == " ".join(shlex.quote(a) for a in argv) + " --run-id {{ ds }}"
        assert type(op).__name__ == "MonomerBashOperator"
        want_pool = dag_module.pool_name(plan["job"], t["experiment"]) if t.get("experiment") else "default_pool"
        assert op.pool == want_pool


def test_airflow_dag_checks(dagbag) -> None:
    """Airflow's own checks: cycles, validation, and serialization (the JSON
    schema the scheduler stores DAGs under), round-tripped."""
    from airflow.serialization.serialized_objects import DagSerialization

    for dag_id in ("monomer_demo", "monomer_demo_k8s"):
        dag = dagbag.dags[dag_id]
        dag.check_cycle()
        dag.validate()
        back = DagSerialization.from_dict(DagSerialization.to_dict(dag))  # to_dict validates the schema
        assert {t.task_id: set(t.upstream_task_ids) for t in back.tasks} == {t.task_id: set(t.upstream_task_ids) for t in dag.tasks}
        assert back.get_task(dag.tasks[0].task_id).retries == dag.tasks[0].retries


# --- the worker DAG run by Airflow's scheduler ---------------------------


def sync_dags_to_db() -> None:
    """What Airflow's dag-processor does: parse the DAG folder and store the
    serialized DAGs (the scheduler reads only those)."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import BundleDagBag, sync_bag_to_db
    from airflow.utils.session import create_session

    manager = DagBundlesManager()
    with create_session() as session:
        manager.sync_bundles_to_db(session=session)
    for bundle in manager.get_all_dag_bundles():
        bundle.initialize()
        sync_bag_to_db(BundleDagBag(dag_folder=bundle.path, bundle_path=bundle.path, bundle_name=bundle.name), bundle.name, bundle.version)


def start(args: list[str], log: Path) -> subprocess.Popen:
    with open(log, "wb") as f:
        return subprocess.Popen([str(AIRFLOW), *args], stdout=f, stderr=subprocess.STDOUT, start_new_session=True)


def stop(p: subprocess.Popen) -> None:
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGTERM)
    p.wait(timeout=60)


def poll(check, attempts: int, every: float):
    """check() until it returns something, at most attempts times."""
    import time

    for _ in range(attempts):
        got = check()
        if got is not None:
            return got
        time.sleep(every)
    raise AssertionError("gave up after %d attempts" % attempts)


def api_ready() -> bool | None:
    import urllib.request

    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/execution/health" % API_PORT, timeout=2) as r:
            return True if r.status == 200 else None
    except OSError:
        return None


def finished_run(dag_id: str):
    """The scheduler's (not dag.test's) run of dag_id once it has finished."""
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState
    from airflow.utils.types import DagRunType

    with create_session() as session:
        runs = session.query(DagRun).filter(DagRun.dag_id == dag_id, DagRun.run_type == DagRunType.SCHEDULED).all()
        done = [r for r in runs if r.state in (DagRunState.SUCCESS, DagRunState.FAILED)]
        if not done:
            return None
        session.expunge_all()
        return done[0]


def task_instances(dag_id: str, run_id: str) -> list:
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session

    with create_session() as session:
        tis = session.query(TaskInstance).filter(TaskInstance.dag_id == dag_id, TaskInstance.run_id == run_id).all()
        session.expunge_all()
        return tis


def manifests(run_dir: Path) -> dict[str, tuple[int, int]]:
    """Every stage manifest's inode and mtime: a stage that ran again
    renames a new directory into place, so both change."""
    return {str(p.relative_to(run_dir)): (p.stat().st_ino, p.stat().st_mtime_ns) for p in run_dir.rglob("manifest.json") if ".store" not in p.parts}


def overlaps(a, b) -> bool:
    return a.start_date < b.end_date and b.start_date < a.end_date


def experiment_of(task_id: str) -> str:
    return task_id.split(".", 1)[0] if "." in task_id else ""


@pytest.fixture(scope="module")
def scheduled_run(airflow_db: Path, dagbag, dag_module, reference_run: Path):
    """One scheduled run of monomer_demo by `airflow scheduler` with
    LocalExecutor (parallelism 2) and the execution API server, the per-
    experiment pools created from the DAG file's own list. Returns the
    DagRun and its run directory."""
    from airflow.models.dag import DagModel
    from airflow.models.pool import Pool
    from airflow.utils.session import create_session

    out = subprocess.run([sys.executable, str(airflow_db / "monomer_dag.py")], capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        _, _, _, name, slots, desc = shlex.split(line)
        Pool.create_or_update_pool(name, int(slots), desc, include_deferred=False)
    sync_dags_to_db()
    with create_session() as session:
        session.query(DagModel).filter(DagModel.dag_id == "monomer_demo").update({"is_paused": False})

    api = start(["api-server", "--apps", "execution", "-H", "127.0.0.1", "-p", str(API_PORT), "-w", "1"], HOME / "api-server.log")
    scheduler = None
    try:
        poll(api_ready, attempts=120, every=0.5)
        scheduler = start(["scheduler", "--skip-serve-logs"], HOME / "scheduler.log")
        run = poll(lambda: finished_run("monomer_demo"), attempts=600, every=1)
    finally:
        if scheduler is not None:
            stop(scheduler)
        stop(api)
    run_dir = RUNS / "demo" / run.logical_date.strftime("%Y-%m-%d")
    return run, run_dir


def test_scheduler_runs_worker_dag_in_parallel(scheduled_run, reference_run: Path) -> None:
    run, run_dir = scheduled_run
    tis = task_instances("monomer_demo", run.run_id)
    assert tis and all(ti.state == "success" for ti in tis), [(ti.task_id, ti.state) for ti in tis]
    # No task found its experiment locked: the pools let one task of an
    # experiment run at a time.
    assert [(ti.task_id, ti.try_number) for ti in tis if ti.try_number != 1] == []
    pairs = [(a, b) for a in tis for b in tis if a.task_id < b.task_id and overlaps(a, b)]
    assert any(experiment_of(a.task_id) != experiment_of(b.task_id) for a, b in pairs), "no two experiments' tasks ran at the same time"
    assert [(a.task_id, b.task_id) for a, b in pairs if experiment_of(a.task_id) == experiment_of(b.task_id)] == []
    report = next(ti for ti in tis if ti.task_id == "report")
    assert all(ti.end_date <= report.start_date for ti in tis if ti is not report)
    # The same bytes as one sequential `monomer run`.
    diff = monomer("diff", str(reference_run), str(run_dir), check=False)
    assert diff.returncode == 0, diff.stdout + diff.stderr


def test_second_run_skips_every_stage(scheduled_run, dagbag) -> None:
    from airflow.utils.state import DagRunState

    run, run_dir = scheduled_run
    before = manifests(run_dir)
    assert len(before) == len(dagbag.dags["monomer_demo"].tasks)
    dr = dagbag.dags["monomer_demo"].test(logical_date=run.logical_date)
    assert dr.state == DagRunState.SUCCESS
    assert manifests(run_dir) == before


# --- retries, from Airflow's records -------------------------------------


def one_task_dag(dagbag, task_id: str, **attrs):
    """monomer_demo cut down to task_id, retried once at once (the DAG's
    delay of minutes would only make the test wait)."""
    dag = dagbag.dags["monomer_demo"].partial_subset(task_ids=[task_id], include_upstream=False)
    task = dag.get_task(task_id)
    task.retries = 1
    task.retry_delay = dt.timedelta(0)
    task.retry_exponential_backoff = False
    for k, v in attrs.items():
        setattr(task, k, v)
    return dag


def tries(dag_id: str, run_id: str, task_id: str) -> list[tuple[int, str]]:
    """(try number, state) of every try of a task, from Airflow's task
    instance history and the task instance."""
    from airflow.models.taskinstancehistory import TaskInstanceHistory
    from airflow.utils.session import create_session

    with create_session() as session:
        old = session.query(TaskInstanceHistory).filter_by(dag_id=dag_id, run_id=run_id, task_id=task_id).all()
        got = sorted((h.try_number, str(h.state)) for h in old)
    ti = next(ti for ti in task_instances(dag_id, run_id) if ti.task_id == task_id)
    return got + [(ti.try_number, str(ti.state))]


def test_exit_codes_table_matches_dag(dag_module) -> None:
    assert set(dag_module.PERMANENT_EXIT_CODES) == {c for c, how in EXIT_CODES.items() if how == "fail"}


@pytest.mark.parametrize("code", sorted(EXIT_CODES))
def test_exit_code_retries(dagbag, code: int) -> None:
    """A task exiting code on its first try, 0 on the next."""
    task_id = "men-also_bought-bow.ingest"
    dag = one_task_dag(dagbag, task_id, bash_command='[ "{{ ti.try_number }}" -gt 1 ] || exit %d' % code)
    dr = dag.test(logical_date=dt.datetime(2026, 2, 1, tzinfo=UTC) + dt.timedelta(days=code))
    if EXIT_CODES[code] == "fail":
        assert tries(dag.dag_id, dr.run_id, task_id) == [(1, "failed")]
    else:
        assert tries(dag.dag_id, dr.run_id, task_id) == [(1, "failed"), (2, "success")]


def test_locked_directory_is_retried(dagbag) -> None:
    """The real command finds the run directory locked by another process
    (exit 4); that process exits before the retry, which succeeds."""
    day = dt.datetime(2026, 3, 1, tzinfo=UTC)
    run_dir = RUNS / "demo" / day.strftime("%Y-%m-%d")
    run_dir.mkdir(parents=True)
    # A whole-job run's lock: exclusive on the run directory.
    holder = subprocess.Popen(["flock", "-x", str(run_dir / ".lock"), "sh", "-c", "echo held; exec cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        released = []

        def release(context) -> None:
            holder.stdin.close()
            released.append(holder.wait(timeout=60))

        task_id = "men-also_bought-bow.ingest"
        dag = one_task_dag(dagbag, task_id, on_retry_callback=[release])
        dr = dag.test(logical_date=day)
        assert released == [0]
        assert tries(dag.dag_id, dr.run_id, task_id) == [(1, "failed"), (2, "success")]
        assert (run_dir / "men-also_bought-bow" / "ingest" / "manifest.json").exists()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


# --- the Kubernetes DAG --------------------------------------------------


def test_k8s_dag_renders_pods(dagbag, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs monomer_demo_k8s with the pod operator's execute replaced by one
    that keeps the pod it would create: Airflow expands the mapped task over
    the experiments and renders {{ ds }} as for a real run."""
    from airflow.providers.cncf.kubernetes.hooks.kubernetes import KubernetesHook
    from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
    from airflow.utils.state import DagRunState

    pods = {}
    # The pod's labels say whether Airflow runs in the cluster; there is none.
    monkeypatch.setattr(KubernetesHook, "is_in_cluster", property(lambda self: False))

    def keep_pod(self, context):
        pods[(self.task_id, context["ti"].map_index)] = self.build_pod_request_obj(context)

    monkeypatch.setattr(KubernetesPodOperator, "execute", keep_pod)
    env = {"MONOMER_DAG_IMAGE": "registry.example/monomer:1.2", "MONOMER_DAG_PVC": "claim-x", "MONOMER_DAG_POD_JOB": "/jobs/demo.yaml", "MONOMER_DAG_POD_DATA": "/data/in"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    bag = load(Path(os.environ["AIRFLOW__CORE__DAGS_FOLDER"]))
    plan = plan_of(DEMO_JOB)
    day = dt.datetime(2026, 4, 1, tzinfo=UTC)
    dag = bag.dags["monomer_demo_k8s"]
    for t in dag.tasks:
        t.retries = 0  # a failure fails the run now instead of minutes later
    dr = dag.test(logical_date=day)
    assert dr.state == DagRunState.SUCCESS
    run_dir = os.path.join(str(RUNS), "demo")
    common = ["run", "/jobs/demo.yaml", "--run-dir", run_dir, "--run-id", "2026-04-01"]
    want = {("experiment", i): common + ["--experiment", e] for i, e in enumerate(plan["experiments"])}
    want.update({(s, -1): common + ["--only", s] for s in plan["job_stages"]})
    assert set(pods) == set(want)
    for key, pod in pods.items():
        c = pod.spec.containers[0]
        assert c.image == "registry.example/monomer:1.2"
        assert c.command == ["monomer"]
        assert c.args == want[key], key
        assert [(m.name, m.mount_path) for m in c.volume_mounts] == [("data", "/data")]
        assert [(v.name, v.persistent_volume_claim.claim_name) for v in pod.spec.volumes] == [("data", "claim-x")]
        assert {e.name: e.value for e in c.env}["MONOMER_DATA_DIR"] == "/data/in"
