"""Airflow DAGs running a monomer job, one task per stage and experiment
(per model for training: train.lmt, train.monomer, ...).

The task list is not written here: it comes from `monomer plan --json JOB`,
the same job-file parsing and stage DAG the binary runs, so the DAG cannot
drift from the binary. Two DAGs are defined:

* monomer_<job>: BashOperator tasks on the worker, one per (experiment,
  node), grouped by experiment, then the job-level report. A node is a
  stage, one model's training (train.lmt) or one bag-of-words shard
  (bow-shard-1-of-4); experiments run on several workers at once, the
  nodes of one experiment one after another (see below). Each task runs
  `monomer run JOB --run-dir RUNS --run-id {{ ds }} --experiment E --only NODE`.
* monomer_<job>_k8s: one KubernetesPodOperator per experiment, fanned out
  with dynamic task mapping (.expand), each running the experiment's whole
  chain, then the report. The pods run the image `make image` builds
  (Containerfile) as it is built: its entrypoint, user, job files and
  volume (POD_* below); test_monomer_dag.py checks them against the
  image's inspect output.

Retries are safe: a stage writes into a temporary directory renamed into
place only when complete, a rerun of a finished stage is a no-op (its
manifest matches), and a run killed at any point is resumed by the next.
Experiments of one run directory run at the same time (each --experiment
run holds its own experiment's lock); the tasks of one experiment take
turns through the experiment's pool of one slot (pool_name), since two of
them at once would find the experiment locked (exit 4); the report takes
the whole directory. The exit codes in PERMANENT_EXIT_CODES would fail
again on retry, so those tasks fail at once without retrying (the
operators' skip_on_exit_code turned into AirflowFailException); any other
failure (1, 4 directory locked, 5 input not there yet, 130
interrupted) is retried. A job with a publish: block has a publish task per
experiment (docs/publishing.md); its exit 6, a gate that refused the
night's lists, fails that task alone: the report, which reads every
publish task's gate.json, then runs all the same (trigger rule all_done,
in both DAGs) and marks the refused experiment. Under all_done the report
runs after any other failure too, and fails finding that experiment's
outputs missing, as it would have been blocked. Airflow decides a DAG
run's state by its leaf tasks, and the report, a leaf that succeeds, would
make such a run a success: a watcher task (trigger rule one_failed,
downstream of every task) fails the run when any task failed.

The report is one task per experiment (report-section: that experiment's
maps and plots, the report's cost, in the Kubernetes DAG part of the
experiment's pod) and the job-level report task, which only assembles the
sections into one page.

The file runs `monomer plan` once per parse (Airflow 3's DAG processor
parses it every few minutes): both DAGs are built from that one plan. It needs Airflow 3
(airflow.sdk) with the standard provider; the Kubernetes DAG also needs the
cncf.kubernetes provider. `python monomer_dag.py` prints the `airflow pools
set` commands that create the pools. jobs/airflow/test_monomer_dag.py runs
both DAGs under real Airflow (make test-airflow).

Configuration (environment of the DAG processor, read at parse time, and of
the workers, which run the tasks; see docs/scheduling.md):
  MONOMER_DAG_BIN    the monomer binary            (default: monomer on PATH)
  MONOMER_DAG_JOB    the job file                  (default: jobs/demo.yaml)
  MONOMER_DAG_RUNS   run directory root            (default: /data/monomer/runs)
  MONOMER_DAG_IMAGE  container image for the k8s DAG (default: monomer:latest)
  MONOMER_DAG_PVC    volume claim holding data and runs, mounted at /data
                     (default: monomer-data)
  MONOMER_DAG_POD_JOB   the job file inside the image
                        (default: /opt/monomer/jobs/<basename of the job>)
  MONOMER_DAG_POD_DATA  data_dir inside the pod (default: /data/amazon)
  MONOMER_DAG_POD_RUNS  run directory root inside the pod (default:
                        /data/monomer/runs, on the volume claim)
  MONOMER_DAG_POD_CPU, MONOMER_DAG_POD_MEMORY, MONOMER_DAG_POD_MEMORY_LIMIT
                        each pod's requests and memory limit (defaults:
                        2, 8Gi, 16Gi; docs/scheduling.md has the figures)
  MONOMER_DAG_POOL_PREFIX  prefix of the per-experiment pools (default: monomer)
  MONOMER_DAG_WARM_FROM  warm_from for every task, e.g. published: each
                     night trains from the run the published links name
                     (docs/scheduling.md, "Warm starts"; default: the job's)
"""

import json
import os
import shlex
import subprocess
from datetime import datetime, timedelta

from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG, TaskGroup
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

MONOMER = os.environ.get("MONOMER_DAG_BIN", "monomer")
JOB = os.environ.get("MONOMER_DAG_JOB", "jobs/demo.yaml")
RUNS = os.environ.get("MONOMER_DAG_RUNS", "/data/monomer/runs")
IMAGE = os.environ.get("MONOMER_DAG_IMAGE", "monomer:latest")
PVC = os.environ.get("MONOMER_DAG_PVC", "monomer-data")
# What the image holds and how it runs (Containerfile): the volume claim
# is mounted at its volume, the pods run as its user, and its entrypoint
# (monomer) is left in place: the pods give arguments only.
POD_VOLUME = "/data"
POD_JOBS = "/opt/monomer/jobs"
POD_UID = 65532
POD_JOB = os.environ.get("MONOMER_DAG_POD_JOB", POD_JOBS + "/" + os.path.basename(JOB))
POD_DATA = os.environ.get("MONOMER_DAG_POD_DATA", POD_VOLUME + "/amazon")
POD_RUNS = os.environ.get("MONOMER_DAG_POD_RUNS", POD_VOLUME + "/monomer/runs")
POD_CPU = os.environ.get("MONOMER_DAG_POD_CPU", "2")
POD_MEMORY = os.environ.get("MONOMER_DAG_POD_MEMORY", "8Gi")
POD_MEMORY_LIMIT = os.environ.get("MONOMER_DAG_POD_MEMORY_LIMIT", "16Gi")
POOL_PREFIX = os.environ.get("MONOMER_DAG_POOL_PREFIX", "monomer")
WARM_FROM = os.environ.get("MONOMER_DAG_WARM_FROM", "")


def load_plan(binary: str = MONOMER, job: str = JOB) -> dict:
    """Returns the job's DAG as `monomer plan --json` prints it."""
    out = subprocess.run(
        [binary, "plan", "--json", job],
        check=True, capture_output=True, text=True, timeout=120,
    )
    return json.loads(out.stdout)


def run_command(plan: dict, task: dict, binary: str = MONOMER, runs: str = RUNS, warm_from: str = WARM_FROM) -> str:
    """The shell command that runs exactly one task of the plan."""
    argv = [binary, task.get("command", "run"), plan["job_file"], "--run-dir", os.path.join(runs, plan["job"])]
    argv += task["args"]
    if warm_from:
        argv += ["--set", "warm_from=" + warm_from]
    # {{ ds }} is left for Airflow to render: one run directory per logical date.
    return " ".join(shlex.quote(a) for a in argv) + " --run-id {{ ds }}"


# monomer's permanent failures, where a retry cannot help (docs/running.md, "Exit
# codes"): 2 usage, invalid job file or an uncreatable run directory; 3 bad
# input; 6 not promoted (a publish gate refused the run's lists: the same
# figures refuse again). 1, 4 (locked), 5 (an input file not there yet: data
# arriving late) and 130 are retried.
# The one place the DAGs read them from.
PERMANENT_EXIT_CODES = (2, 3, 6)


def pool_name(job: str, experiment: str) -> str:
    """The pool of one slot through which an experiment's tasks take turns."""
    return "%s_%s_%s" % (POOL_PREFIX, job, experiment)


def fail_permanently(operator_class: type) -> type:
    """A subclass of operator_class that fails without retries on the
    permanent exit codes.

    Airflow has no per-exit-code retry setting; its operators take
    skip_on_exit_code, and AirflowFailException fails a task for good, so
    the subclass asks for a skip on those codes and turns it into a failure.
    """

    class Permanent(operator_class):
        def __init__(self, **kwargs):
            kwargs.setdefault("skip_on_exit_code", list(PERMANENT_EXIT_CODES))
            super().__init__(**kwargs)

        def execute(self, context):
            try:
                return super().execute(context)
            except AirflowSkipException as e:
                raise AirflowFailException(
                    "monomer failed permanently (exit codes %s are not retried): %s"
                    % (", ".join(map(str, PERMANENT_EXIT_CODES)), e)
                ) from e

    Permanent.__name__ = "Monomer" + operator_class.__name__
    Permanent.__qualname__ = Permanent.__name__
    return Permanent


MonomerBashOperator = fail_permanently(BashOperator)

DEFAULT_ARGS = {
    "owner": "monomer",
    "retries": 2,
    "retry_delay": timedelta(minutes=5),
    "retry_exponential_backoff": True,
}


def trigger_rule_of(plan: dict, task: dict) -> str:
    """The trigger rule of a plan task: all_done for a task reading a publish
    task's outputs (the report), which a refused gate (exit 6) leaves in
    place, so that the report runs after a refusal and marks it;
    all_success for every other task."""
    publish = {t["id"] for t in plan["tasks"] if t["stage"] == "publish"}
    return "all_done" if publish & set(task["upstream"]) else "all_success"


def add_watcher(dag: DAG) -> None:
    """With a task that runs whatever its upstream ended in (all_done), a
    task downstream of every other that fails once any of them failed, so
    that a refused experiment still fails the DAG run (Airflow takes a
    run's state from its leaves); without one, nothing: the run fails with
    the failed task's chain."""
    if all(t.trigger_rule == "all_success" for t in dag.tasks):
        return
    with dag:
        watcher = BashOperator(
            task_id="watcher",
            bash_command="echo 'a task of this run failed'; exit 1",
            trigger_rule="one_failed",
            retries=0,
        )
    for t in dag.tasks:
        if t is not watcher:
            t >> watcher


def bash_dag(plan: dict) -> DAG:
    """One BashOperator per (experiment, stage), wired as the plan says."""
    dag = DAG(
        dag_id="monomer_" + plan["job"],
        description="monomer job %s, one task per stage" % plan["job"],
        schedule="@daily",
        start_date=datetime(2026, 1, 1),
        catchup=False,
        max_active_runs=1,
        default_args=DEFAULT_ARGS,
        tags=["monomer"],
    )
    tasks = {}
    with dag:
        groups = {e: TaskGroup(group_id=e) for e in plan["experiments"]}
        for t in plan["tasks"]:
            exp = t.get("experiment", "")
            # Inside the experiment's group the task id is the plan's id
            # without "<experiment>.": the stage, or the node of a model or
            # shard, e.g. train.lmt or bow-shard-1-of-4 (the stage name would
            # repeat for every model and shard).
            task_id = t["id"][len(exp) + 1:] if exp else t["id"]
            tasks[t["id"]] = MonomerBashOperator(
                task_id=task_id,
                task_group=groups.get(exp),
                bash_command=run_command(plan, t),
                pool=pool_name(plan["job"], exp) if exp else "default_pool",
                trigger_rule=trigger_rule_of(plan, t),
                # Each stage is one process; its own logs are JSON lines.
                append_env=True,
            )
        for t in plan["tasks"]:
            for up in t["upstream"]:
                tasks[up] >> tasks[t["id"]]
    add_watcher(dag)
    return dag


def k8s_dag(plan: dict) -> DAG:
    """Experiments fanned out as mapped KubernetesPodOperator tasks.

    Each pod runs one experiment whole, so text is counted in-process there
    (vocab_shards: 0); the Bash DAG is the one that fans bow-shard tasks out.
    """
    from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
    from kubernetes.client import models as k8s

    PodOperator = fail_permanently(KubernetesPodOperator)

    volume = k8s.V1Volume(
        name="data",
        persistent_volume_claim=k8s.V1PersistentVolumeClaimVolumeSource(claim_name=PVC),
    )
    mount = k8s.V1VolumeMount(name="data", mount_path=POD_VOLUME)
    # One experiment a pod: its memory is its largest stage's (train and
    # evaluate at Women's size, the paper's largest image category: 5.8 GB
    # of heap, beside up to 10.6 GB of the memory-mapped feature matrix in
    # reclaimable page cache; docs/scheduling.md).
    resources = k8s.V1ResourceRequirements(
        requests={"cpu": POD_CPU, "memory": POD_MEMORY}, limits={"memory": POD_MEMORY_LIMIT},
    )
    # The image's user; fs_group makes the volume claim writable by it.
    security = k8s.V1PodSecurityContext(run_as_user=POD_UID, run_as_group=POD_UID, fs_group=POD_UID, run_as_non_root=True)
    run_dir = POD_RUNS + "/" + plan["job"]
    common = dict(
        image=IMAGE,
        volumes=[volume],
        volume_mounts=[mount],
        security_context=security,
        container_resources=resources,
        # monomer reads job overrides from MONOMER_* (here: data_dir).
        env_vars={"MONOMER_DATA_DIR": POD_DATA, **({"MONOMER_WARM_FROM": WARM_FROM} if WARM_FROM else {})},
        get_logs=True,
        on_finish_action="delete_pod",
    )
    dag = DAG(
        dag_id="monomer_%s_k8s" % plan["job"],
        description="monomer job %s, experiments fanned out on Kubernetes" % plan["job"],
        schedule="@daily",
        start_date=datetime(2026, 1, 1),
        catchup=False,
        max_active_runs=1,
        default_args=DEFAULT_ARGS,
        tags=["monomer"],
    )
    with dag:
        experiments = PodOperator.partial(
            task_id="experiment",
            name="monomer-experiment",
            **common,
        ).expand(
            arguments=[
                ["run", POD_JOB, "--run-dir", run_dir, "--run-id", "{{ ds }}", "--experiment", e]
                for e in plan["experiments"]
            ],
        )
        # A pod runs an experiment whole, its publish node among them, so a
        # job-level task reading publish's outputs runs whatever the
        # experiments' pods ended in (a refused gate fails its pod with exit 6
        # once the experiment's report section is drawn).
        by_id = {t["id"]: t for t in plan["tasks"]}
        job_level = [
            PodOperator(
                task_id=s,
                name="monomer-" + s,
                arguments=["run", POD_JOB, "--run-dir", run_dir, "--run-id", "{{ ds }}", "--only", s],
                trigger_rule=trigger_rule_of(plan, by_id[s]),
                **common,
            )
            for s in plan["job_stages"]
        ]
        prev = experiments
        for t in job_level:
            prev >> t
            prev = t
    add_watcher(dag)
    return dag


if __name__ == "__main__":
    # The pools the Bash DAG's tasks need, as commands to paste.
    plan = load_plan()
    for e in plan["experiments"]:
        print("airflow pools set %s 1 %s" % (pool_name(plan["job"], e), shlex.quote("monomer experiment " + e)))
    raise SystemExit(0)

PLAN = load_plan()
bash = bash_dag(PLAN)
globals()[bash.dag_id] = bash
try:
    k8s_variant = k8s_dag(PLAN)
    globals()[k8s_variant.dag_id] = k8s_variant
except ImportError:  # the cncf.kubernetes provider is not installed
    pass
