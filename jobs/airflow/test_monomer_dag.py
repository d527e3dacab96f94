"""Tests of monomer_dag.py against stand-in airflow modules.

Airflow cannot be installed here, so the modules the DAG file imports are
replaced by small stand-ins that record DAGs, tasks and dependencies and run
a task's command as Airflow's operators do (skip_on_exit_code included).
The DAG's tasks and dependencies must equal `monomer plan --json`.

Run: MONOMER_DAG_BIN=path/to/monomer MONOMER_DAG_JOB=jobs/demo.yaml \
     python3 jobs/airflow/test_monomer_dag.py
(go test ./cmd/monomer -run TestAirflowDAG does, with shards in the job).
"""

import importlib.util
import json
import os
import shlex
import stat
import subprocess
import sys
import tempfile
import types
import unittest

DAG_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "monomer_dag.py")


# --- stand-ins for the airflow and kubernetes modules --------------------

class AirflowException(Exception):
    pass


class AirflowSkipException(AirflowException):
    pass


class AirflowFailException(AirflowException):
    pass


class DAG:
    current = None
    all = []

    def __init__(self, dag_id, default_args=None, **kwargs):
        self.dag_id, self.default_args, self.tasks = dag_id, default_args or {}, {}
        DAG.all.append(self)

    def __enter__(self):
        DAG.current = self
        return self

    def __exit__(self, *exc):
        DAG.current = None


class TaskGroup:
    def __init__(self, group_id):
        self.group_id = group_id


class Operator:
    """Records itself in the current DAG; execute runs the command in sh
    and raises as Airflow's BashOperator does."""

    def __init__(self, task_id, task_group=None, bash_command=None, arguments=None,
                 skip_on_exit_code=None, **kwargs):
        self.task_id = (task_group.group_id + "." if task_group else "") + task_id
        self.bash_command, self.arguments = bash_command, arguments
        self.skip_on_exit_code = skip_on_exit_code or []
        self.upstream = set()
        self.mapped = None
        if DAG.current is not None:
            DAG.current.tasks[self.task_id] = self

    def __rshift__(self, other):
        other.upstream.add(self.task_id)
        return other

    def execute(self, context):
        cmd = self.bash_command if self.bash_command is not None else " ".join(self.arguments)
        code = subprocess.run(["sh", "-c", cmd]).returncode
        if code in self.skip_on_exit_code:
            raise AirflowSkipException("Bash command returned exit code %d. Skipping." % code)
        if code != 0:
            raise AirflowException("Bash command failed. The command returned a non-zero exit code %d." % code)
        return code

    @classmethod
    def partial(cls, task_id, **kwargs):
        class Partial:
            def expand(self, arguments):
                op = cls(task_id=task_id, arguments=[], **kwargs)
                op.mapped = arguments
                return op
        return Partial()


def install_stubs():
    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m

    class K8sModels:
        def __getattr__(self, name):
            return lambda *a, **kw: None

    module("airflow", DAG=DAG)
    module("airflow.exceptions", AirflowException=AirflowException,
           AirflowSkipException=AirflowSkipException, AirflowFailException=AirflowFailException)
    module("airflow.operators")
    module("airflow.operators.bash", BashOperator=type("BashOperator", (Operator,), {}))
    module("airflow.utils")
    module("airflow.utils.task_group", TaskGroup=TaskGroup)
    for p in ["airflow.providers", "airflow.providers.cncf", "airflow.providers.cncf.kubernetes",
              "airflow.providers.cncf.kubernetes.operators"]:
        module(p)
    module("airflow.providers.cncf.kubernetes.operators.pod",
           KubernetesPodOperator=type("KubernetesPodOperator", (Operator,), {}))
    module("kubernetes")
    module("kubernetes.client", models=K8sModels())


# --- the tests ------------------------------------------------------------

class MonomerDAGTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.binary = os.environ.get("MONOMER_DAG_BIN")
        cls.job = os.environ.get("MONOMER_DAG_JOB")
        if not cls.binary or not cls.job:
            raise unittest.SkipTest("set MONOMER_DAG_BIN and MONOMER_DAG_JOB")
        cls.tmp = tempfile.mkdtemp()
        # Count the parse's calls of the binary through a wrapper.
        cls.calls = os.path.join(cls.tmp, "calls")
        wrapper = os.path.join(cls.tmp, "monomer")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\necho \"$*\" >> %s\nexec %s \"$@\"\n" % (shlex.quote(cls.calls), shlex.quote(cls.binary)))
        os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IEXEC)
        cls.runs = "/runs"
        os.environ.update(MONOMER_DAG_BIN=wrapper, MONOMER_DAG_RUNS=cls.runs)
        install_stubs()
        DAG.all = []
        spec = importlib.util.spec_from_file_location("monomer_dag", DAG_FILE)
        cls.mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(cls.mod)
        with open(cls.calls) as f:
            cls.parse_calls = f.read().splitlines()
        out = subprocess.run([cls.binary, "plan", "--json", cls.job], check=True, capture_output=True, text=True)
        cls.plan = json.loads(out.stdout)
        cls.dags = {d.dag_id: d for d in DAG.all}

    def test_plan_runs_once_per_parse(self):
        self.assertEqual(self.parse_calls, ["plan --json " + self.job])

    def test_bash_dag_equals_plan(self):
        dag = self.dags["monomer_" + self.plan["job"]]
        want = {t["id"]: set(t["upstream"]) for t in self.plan["tasks"]}
        got = {tid: op.upstream for tid, op in dag.tasks.items()}
        self.assertEqual(got, want)
        run_dir = os.path.join(self.runs, self.plan["job"])
        for t in self.plan["tasks"]:
            argv = [self.mod.MONOMER, t["command"], self.plan["job_file"], "--run-dir", run_dir] + t["args"]
            want_cmd = " ".join(shlex.quote(a) for a in argv) + " --run-id {{ ds }}"
            self.assertEqual(dag.tasks[t["id"]].bash_command, want_cmd, t["id"])
            self.assertIsInstance(dag.tasks[t["id"]], self.mod.MonomerBashOperator)

    def test_k8s_dag_maps_experiments(self):
        dag = self.dags["monomer_%s_k8s" % self.plan["job"]]
        exp = dag.tasks["experiment"]
        self.assertEqual([a[a.index("--experiment") + 1] for a in exp.mapped], self.plan["experiments"])
        prev = "experiment"
        for s in self.plan["job_stages"]:
            self.assertEqual(dag.tasks[s].upstream, {prev})
            prev = s
        self.assertEqual(set(dag.tasks), {"experiment", *self.plan["job_stages"]})

    def test_permanent_exit_codes_not_retried(self):
        self.assertEqual(self.mod.PERMANENT_EXIT_CODES, (2, 3))
        self.assertGreater(self.mod.DEFAULT_ARGS["retries"], 0)
        pod = self.mod.fail_permanently(sys.modules["airflow.providers.cncf.kubernetes.operators.pod"].KubernetesPodOperator)
        for code, want in [(0, None), (1, AirflowException), (2, AirflowFailException), (3, AirflowFailException),
                           (4, AirflowException), (130, AirflowException)]:
            for op in [self.mod.MonomerBashOperator(task_id="t", bash_command="exit %d" % code),
                       pod(task_id="p", arguments=["exit", str(code)])]:
                with self.subTest(code=code, operator=type(op).__name__):
                    if want is None:
                        self.assertEqual(op.execute({}), 0)
                        continue
                    with self.assertRaises(AirflowException) as cm:
                        op.execute({})
                    # AirflowFailException is final; any other is retried.
                    self.assertIs(type(cm.exception), want)


if __name__ == "__main__":
    unittest.main()
