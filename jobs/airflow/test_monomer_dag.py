"""monomer_dag.py under real Apache Airflow 3 (make test-airflow).

Both DAGs load in a DagBag and equal `monomer plan --json`; the worker DAG
runs the demo job under Airflow's scheduler with LocalExecutor (two tasks at
a time) into a run directory `monomer diff`-identical to `monomer run`'s,
and a second run skips every stage; exit codes are retried or not as the
docs/running.md says, read from Airflow's task instance records; the Kubernetes DAG
renders one pod per experiment, and its pods run the image `make image`
builds as that image's inspect output says it runs (make test-image).
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


def render_k8s_pods(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> dict:
    """Runs monomer_demo_k8s, parsed with env added, with the pod operator's
    execute replaced by one that keeps the pod it would create: Airflow
    expands the mapped task over the experiments and renders {{ ds }} as
    for a real run (logical date 2026-04-01). Returns the pods by (task id,
    map index)."""
    from airflow.providers.cncf.kubernetes.hooks.kubernetes import KubernetesHook
    from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
    from airflow.utils.state import DagRunState

    pods = {}
    # The pod's labels say whether Airflow runs in the cluster; there is none.
    monkeypatch.setattr(KubernetesHook, "is_in_cluster", property(lambda self: False))

    def keep_pod(self, context):
        pods[(self.task_id, context["ti"].map_index)] = self.build_pod_request_obj(context)

    monkeypatch.setattr(KubernetesPodOperator, "execute", keep_pod)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    bag = load(Path(os.environ["AIRFLOW__CORE__DAGS_FOLDER"]))
    assert bag.import_errors == {}
    dag = bag.dags["monomer_demo_k8s"]
    for t in dag.tasks:
        t.retries = 0  # a failure fails the run now instead of minutes later
    dr = dag.test(logical_date=dt.datetime(2026, 4, 1, tzinfo=UTC))
    assert dr.state == DagRunState.SUCCESS
    return pods


def want_args(plan: dict, job: str, runs: str) -> dict:
    """Each pod's arguments, by (task id, map index)."""
    common = ["run", job, "--run-dir", runs + "/" + plan["job"], "--run-id", "2026-04-01"]
    want = {("experiment", i): common + ["--experiment", e] for i, e in enumerate(plan["experiments"])}
    want.update({(s, -1): common + ["--only", s] for s in plan["job_stages"]})
    return want


def test_k8s_dag_renders_pods(dagbag, monkeypatch: pytest.MonkeyPatch) -> None:
    """One pod per experiment (mapped) and one for the report, with the
    variables' image, claim, job, data and runs."""
    env = {
        "MONOMER_DAG_IMAGE": "registry.example/monomer:1.2",
        "MONOMER_DAG_PVC": "claim-x",
        "MONOMER_DAG_POD_JOB": "/jobs/demo.yaml",
        "MONOMER_DAG_POD_DATA": "/data/in",
        "MONOMER_DAG_POD_RUNS": "/data/r",
        "MONOMER_DAG_POD_MEMORY": "3Gi",
    }
    pods = render_k8s_pods(monkeypatch, env)
    want = want_args(plan_of(DEMO_JOB), "/jobs/demo.yaml", "/data/r")
    assert set(pods) == set(want)
    for key, pod in pods.items():
        c = pod.spec.containers[0]
        assert c.image == "registry.example/monomer:1.2"
        assert not c.command, "the pods run the image's entrypoint"
        assert c.args == want[key], key
        assert [(m.name, m.mount_path) for m in c.volume_mounts] == [("data", "/data")]
        assert [(v.name, v.persistent_volume_claim.claim_name) for v in pod.spec.volumes] == [("data", "claim-x")]
        assert {e.name: e.value for e in c.env}["MONOMER_DATA_DIR"] == "/data/in"
        assert c.resources.requests == {"cpu": "2", "memory": "3Gi"}
        assert c.resources.limits == {"memory": "16Gi"}


# --- the Kubernetes DAG against the image make image builds -------------


def image_inspect() -> tuple[str, dict]:
    """The container tool and `TOOL image inspect` of MONOMER_IMAGE
    (default monomer:latest); skips, saying why, when there is no tool or no
    image, unless MONOMER_IMAGE_REQUIRED=1 (make test-image)."""
    import shutil

    image = os.environ.get("MONOMER_IMAGE", "monomer:latest")
    tools = [os.environ["MONOMER_IMAGE_TOOL"]] if os.environ.get("MONOMER_IMAGE_TOOL") else ["podman", "docker"]
    why = []
    for tool in tools:
        if shutil.which(tool) is None:
            why.append("no %s" % tool)
            continue
        out = subprocess.run([tool, "image", "inspect", image], capture_output=True, text=True)
        if out.returncode == 0:
            return tool, json.loads(out.stdout)[0]
        why.append("%s image inspect %s: %s" % (tool, image, (out.stderr.strip().splitlines() or ["exit %d" % out.returncode])[-1]))
    msg = "SKIPPING the pods against the image: %s (make image builds it; make test-image runs this test for real)" % "; ".join(why)
    if os.environ.get("MONOMER_IMAGE_REQUIRED") == "1":
        pytest.fail(msg + " (MONOMER_IMAGE_REQUIRED=1: not skipping)")
    print(msg)
    pytest.skip(msg)


def image_file(tool: str, image: str, path: str) -> bytes:
    """The bytes of one file of the image, copied out of a container
    created (never started) from it."""
    import io
    import tarfile

    ctr = subprocess.run([tool, "create", image], check=True, capture_output=True, text=True).stdout.strip()
    try:
        tar = subprocess.run([tool, "cp", "%s:%s" % (ctr, path), "-"], check=True, capture_output=True).stdout
    finally:
        subprocess.run([tool, "rm", "-v", ctr], check=True, capture_output=True)  # -v: and its anonymous /data volume
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        return t.extractfile(t.getmembers()[0]).read()


def test_k8s_pods_match_image(dagbag, dag_module, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pods the DAG renders by default run the image as it is built:
    its entrypoint, its user, a job file it holds, the volume claim at its
    volume with data and runs on it, and its labels' paths."""
    tool, got = image_inspect()
    image = os.environ.get("MONOMER_IMAGE", "monomer:latest")
    cfg = got["Config"]
    labels = cfg.get("Labels") or {}
    for label in ("org.opencontainers.image.version", "org.opencontainers.image.revision", "io.monomer.blas"):
        assert labels.get(label, "unknown") != "unknown", label
    volume = dag_module.POD_VOLUME
    assert list(cfg.get("Volumes") or {}) == [volume] == [labels["io.monomer.data"]]
    assert labels["io.monomer.jobs"] == dag_module.POD_JOBS
    assert cfg["Entrypoint"] and os.path.basename(cfg["Entrypoint"][0]) == "monomer"
    assert cfg["User"] == "%d:%d" % (dag_module.POD_UID, dag_module.POD_UID)
    # The job file the pods name is the repository's, in the image.
    pod_job = dag_module.POD_JOBS + "/" + DEMO_JOB.name
    assert image_file(tool, image, pod_job) == DEMO_JOB.read_bytes()

    for k in ("MONOMER_DAG_POD_JOB", "MONOMER_DAG_POD_DATA", "MONOMER_DAG_POD_RUNS", "MONOMER_DAG_PVC"):
        monkeypatch.delenv(k, raising=False)
    pods = render_k8s_pods(monkeypatch, {"MONOMER_DAG_IMAGE": image})
    want = want_args(plan_of(DEMO_JOB), pod_job, dag_module.POD_RUNS)
    assert set(pods) == set(want)
    for key, pod in pods.items():
        c = pod.spec.containers[0]
        assert c.image == image
        assert not c.command, "the pods run the image's entrypoint, %s" % cfg["Entrypoint"]
        assert c.args == want[key], key
        sc = pod.spec.security_context
        assert (sc.run_as_user, sc.run_as_group, sc.fs_group, sc.run_as_non_root) == (dag_module.POD_UID,) * 3 + (True,)
        mounts = [m.mount_path for m in c.volume_mounts]
        assert mounts == [volume]
        data = {e.name: e.value for e in c.env}["MONOMER_DATA_DIR"]
        run_dir = c.args[c.args.index("--run-dir") + 1]
        for p in (data, run_dir):
            assert p.startswith(volume + "/"), "%s is not on the volume claim (%s)" % (p, volume)


# --- a refused publish gate (exit 6) and the report ----------------------


def publish_job(tmp: Path) -> Path:
    """The demo job with a publish: block, as job demo-publish."""
    src = DEMO_JOB.read_text()
    src = src.replace("name: demo\n", "name: demo-publish\n", 1)
    src = src.replace("data_dir: ../testdata/amazon", "data_dir: %s" % (REPO / "testdata" / "amazon"), 1)
    src = src.replace("\nexperiments:\n", "\npublish:\n  model: monomer\n  k: 10\nexperiments:\n", 1)
    assert "publish:" in src and "demo-publish" in src, "jobs/demo.yaml changed shape"
    job = tmp / "demo-publish.yaml"
    job.write_text(src)
    return job


def test_report_trigger_rules(airflow_db: Path, tmp_path: Path) -> None:
    """The report reads the publish tasks' gate.json: it runs whatever they
    ended in (all_done) in both DAGs; without publish tasks every task,
    the report too, waits for its upstream's success."""
    for job, want in ((DEMO_JOB, "all_success"), (publish_job(tmp_path), "all_done")):
        plan = plan_of(job)
        bag = load(airflow_db, MONOMER_DAG_JOB=str(job))
        assert bag.import_errors == {}
        bash = bag.dags["monomer_" + plan["job"]]
        publish = {t["id"] for t in plan["tasks"] if t["stage"] == "publish"}
        assert bool(publish) == (want == "all_done")
        assert publish <= set(bash.get_task("report").upstream_task_ids)
        watched = want == "all_done"
        k8s = bag.dags["monomer_%s_k8s" % plan["job"]]
        for dag in (bash, k8s):
            assert dag.get_task("report").trigger_rule == want
            # A watcher downstream of every task fails the run when any
            # failed, now that the report, a leaf, runs after a failure.
            assert ("watcher" in dag.task_ids) == watched
            if watched:
                w = dag.get_task("watcher")
                assert w.trigger_rule == "one_failed" and w.retries == 0
                assert set(w.upstream_task_ids) == set(dag.task_ids) - {"watcher"}
        for t in bash.tasks:
            if t.task_id not in ("report", "watcher"):
                assert t.trigger_rule == "all_success", t.task_id


def test_bash_report_runs_after_refusal(airflow_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An experiment's publish task exits 6: it fails at once, and the
    report still runs."""
    job = publish_job(tmp_path)
    plan = plan_of(job)
    # In the environment, not only the parse's: dag.test parses the folder
    # again to store the DAG it runs.
    monkeypatch.setenv("MONOMER_DAG_JOB", str(job))
    bag = load(airflow_db)
    refused = "%s.publish" % plan["experiments"][0]
    dag = bag.dags["monomer_" + plan["job"]].partial_subset(task_ids=[refused, "report", "watcher"], include_upstream=False)
    for t in (dag.get_task(refused), dag.get_task("report")):
        t.retries = 1  # a retry would show: none may happen
        t.retry_delay = dt.timedelta(0)
    dag.get_task(refused).bash_command = "exit 6"
    dag.get_task("report").bash_command = "true"
    dr = dag.test(logical_date=dt.datetime(2026, 5, 1, tzinfo=UTC))
    assert tries(dag.dag_id, dr.run_id, refused) == [(1, "failed")]
    assert tries(dag.dag_id, dr.run_id, "report") == [(1, "success")]
    # The run fails all the same, by its watcher.
    assert tries(dag.dag_id, dr.run_id, "watcher") == [(1, "failed")]
    assert str(dr.state) == "failed"


def test_k8s_report_runs_after_refusal(dagbag, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first experiment's pod exits 6 (its gate refused the run): the
    mapped task fails for it alone and the report's pod still runs."""
    from airflow.providers.cncf.kubernetes.hooks.kubernetes import KubernetesHook
    from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
    from airflow.sdk.exceptions import AirflowSkipException
    from airflow.utils.state import DagRunState

    monkeypatch.setattr(KubernetesHook, "is_in_cluster", property(lambda self: False))
    ran = []

    def pod(self, context):
        ran.append((self.task_id, context["ti"].map_index))
        if self.task_id == "experiment" and context["ti"].map_index == 0:
            # What skip_on_exit_code makes of exit 6.
            raise AirflowSkipException("Pod returned a failure: exit code 6")

    monkeypatch.setattr(KubernetesPodOperator, "execute", pod)
    job = publish_job(tmp_path)
    monkeypatch.setenv("MONOMER_DAG_JOB", str(job))
    bag = load(Path(os.environ["AIRFLOW__CORE__DAGS_FOLDER"]))
    plan = plan_of(job)
    dag = bag.dags["monomer_%s_k8s" % plan["job"]]
    for t in dag.tasks:
        t.retries = 0
    dr = dag.test(logical_date=dt.datetime(2026, 5, 2, tzinfo=UTC))
    assert dr.state == DagRunState.FAILED
    assert sorted(ran) == sorted([("experiment", i) for i in range(len(plan["experiments"]))] + [("report", -1)])
    states = {(ti.task_id, ti.map_index): str(ti.state) for ti in task_instances(dag.dag_id, dr.run_id)}
    assert states[("experiment", 0)] == "failed"
    assert states[("experiment", 1)] == "success"
    assert states[("report", -1)] == "success"
    assert states[("watcher", -1)] == "failed"
