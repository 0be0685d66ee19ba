"""kubectl, the reference client, drives ``observatory lab serve`` with the seed exercises' commands verbatim.

The lab runs as the installed command in a subprocess; kubectl finds it through the kubeconfig the lab prints.
Expected outputs are kubectl's own formats and the exact texts of ../shared/k8s-api-reference.md §1.7.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

MANUAL_POD = """apiVersion: v1
kind: Pod
metadata: {name: manual}
spec:
  schedulerName: nobody-at-all
  containers: [{name: pause, image: registry.k8s.io/pause:3.9}]
"""


class Lab:
    def __init__(self, proc: subprocess.Popen, url: str, kubeconfig: str, tmp: Path) -> None:
        self.proc, self.url, self.kubeconfig, self.tmp = proc, url, kubeconfig, tmp

    def env(self) -> dict[str, str]:
        return {**os.environ, "KUBECONFIG": self.kubeconfig}

    def sh(self, script: str, stdin: str | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
        """Run a shell line as the exercise writes it, with KUBECONFIG pointing at the lab."""
        return subprocess.run(["bash", "-c", script], input=stdin, capture_output=True, text=True,
                              env=self.env(), cwd=self.tmp, timeout=timeout)


def start_lab(tmp: Path, *args: str) -> Lab:
    proc = subprocess.Popen(
        [sys.executable, "-m", "observatory", "lab", "serve", "--port", "0",
         "--kubeconfig-out", str(tmp / "kubeconfig"), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    url_line = proc.stdout.readline()
    kc_line = proc.stdout.readline()
    match = re.fullmatch(r"Lab API server: (http://127\.0\.0\.1:\d+)\n", url_line)
    if match is None:
        proc.kill()
        pytest.fail(f"lab did not start: {url_line!r} {proc.stderr.read()}")
    assert kc_line == f"Kubeconfig: {tmp / 'kubeconfig'}\n"
    return Lab(proc, match.group(1), str(tmp / "kubeconfig"), tmp)


@contextmanager
def serving(tmp: Path, *args: str) -> Iterator[Lab]:
    """``observatory lab serve`` running for the duration of the block, then stopped with SIGTERM."""
    lab = start_lab(tmp, *args)
    try:
        yield lab
    finally:
        lab.proc.send_signal(signal.SIGTERM)
        try:
            lab.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            lab.proc.kill()
            raise


@pytest.fixture
def lab(tmp_path, kubectl) -> Iterator[Lab]:
    with serving(tmp_path) as lab:
        yield lab


def test_manual_binding_exercise_verbatim(lab):
    created = lab.sh("kubectl -n sched-lab apply -f -", stdin=MANUAL_POD)
    assert (created.returncode, created.stdout, created.stderr) == (0, "pod/manual created\n", "")

    wide = lab.sh("kubectl -n sched-lab get pod manual -o wide")
    assert wide.returncode == 0, wide.stderr
    header, row = wide.stdout.splitlines()
    assert header.split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE",
                              "READINESS", "GATES"]
    cells = row.split()
    assert cells[:4] == ["manual", "0/1", "Pending", "0"]
    assert cells[5:] == ["<none>", "<none>", "<none>", "<none>"]

    events = lab.sh("kubectl -n sched-lab describe pod manual | sed -n '/Events/,$p'")
    assert events.returncode == 0, events.stderr
    assert events.stdout.split() == ["Events:", "<none>"]

    (lab.tmp / "binding.json").write_text(
        '{"apiVersion":"v1","kind":"Binding",\n'
        ' "metadata":{"name":"manual","namespace":"sched-lab"},\n'
        ' "target":{"apiVersion":"v1","kind":"Node","name":"pair-worker"}}\n'
    )
    first = lab.sh("kubectl create --raw /api/v1/namespaces/sched-lab/pods/manual/binding -f binding.json")
    assert (first.returncode, first.stdout, first.stderr) == (
        0, '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}\n', "")

    bound = lab.sh("kubectl -n sched-lab get pod manual -o wide")
    assert bound.stdout.splitlines()[1].split()[6] == "pair-worker"

    lab.sh('sed -i "s/pair-worker/pair-control-plane/" binding.json')
    second = lab.sh("kubectl create --raw /api/v1/namespaces/sched-lab/pods/manual/binding -f binding.json")
    assert (second.returncode, second.stdout, second.stderr) == (
        1, "",
        'Error from server (Conflict): Operation cannot be fulfilled on pods/binding "manual": pod manual is already '
        'assigned to node "pair-worker"\n',
    )

    deleted = lab.sh("kubectl -n sched-lab delete pod manual")
    assert (deleted.returncode, deleted.stdout) == (0, 'pod "manual" deleted\n')


@pytest.fixture
def slow_bind_lab(tmp_path, kubectl, monkeypatch) -> Iterator[Lab]:
    """A lab whose scheduler waits 2 s before binding, so a watch started after ``kubectl run`` sees Pending."""
    monkeypatch.setenv("OBSERVATORY_LAB__BIND_DELAY", "2")
    with serving(tmp_path) as lab:
        yield lab


def test_seam_b_watch_shows_node_name_empty_then_set(slow_bind_lab):
    lab = slow_bind_lab
    run = lab.sh("kubectl run seamb --image=nginx --restart=Never")
    assert (run.returncode, run.stdout) == (0, "pod/seamb created\n"), run.stderr
    watcher = subprocess.Popen(
        ["kubectl", "get", "pod", "seamb", "-w", "-o", "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=lab.env(),
    )
    try:
        assert watcher.stdout.readline().split() == ["NAME", "NODE"]
        assert watcher.stdout.readline().split() == ["seamb", "<none>"]
        # The default-scheduler's Binding lands: the next frame has the node, with nothing in between.
        assert watcher.stdout.readline().split() == ["seamb", "pair-worker"]
    finally:
        watcher.kill()
        watcher.wait()
    deleted = lab.sh("kubectl delete pod seamb")
    assert (deleted.returncode, deleted.stdout) == (0, 'pod "seamb" deleted\n'), deleted.stderr
    gone = lab.sh("kubectl get pod seamb")
    assert gone.returncode == 1
    assert gone.stderr == 'Error from server (NotFound): pods "seamb" not found\n'


def test_get_watch_shows_pending_then_container_creating_then_running(slow_bind_lab):
    lab = slow_bind_lab
    assert lab.sh("kubectl run seamb --image=nginx --restart=Never").returncode == 0
    watcher = subprocess.Popen(["kubectl", "get", "pod", "seamb", "-w"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=lab.env())
    statuses: list[str] = []
    try:
        assert watcher.stdout.readline().split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
        while "Running" not in statuses:
            cells = watcher.stdout.readline().split()
            assert cells[0] == "seamb"
            if not statuses or statuses[-1] != cells[2]:
                statuses.append(cells[2])
    finally:
        watcher.kill()
        watcher.wait()
    assert statuses == ["Pending", "ContainerCreating", "Running"]


def test_get_nodes_and_describe_node(lab):
    nodes = lab.sh("kubectl get nodes")
    assert nodes.returncode == 0, nodes.stderr
    rows = [line.split() for line in nodes.stdout.splitlines()]
    assert rows[0] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert [r[:3] for r in rows[1:]] == [["pair-control-plane", "Ready", "control-plane"],
                                         ["pair-worker", "Ready", "<none>"]]
    assert all(r[4] == "v1.34.1" for r in rows[1:])
    described = lab.sh("kubectl describe node pair-control-plane")
    assert described.returncode == 0, described.stderr
    assert "Taints:             node-role.kubernetes.io/control-plane:NoSchedule" in described.stdout
    assert re.search(r"Allocatable:\n\s+cpu:\s+4\n", described.stdout)


def test_label_taint_and_cordon_patch_the_node(lab):
    assert lab.sh("kubectl label node pair-worker disktype=ssd").stdout == "node/pair-worker labeled\n"
    assert lab.sh("kubectl annotate node pair-worker lesson=taints").stdout == "node/pair-worker annotated\n"
    assert lab.sh("kubectl taint node pair-worker dedicated=class:NoSchedule").stdout == "node/pair-worker tainted\n"
    assert lab.sh("kubectl cordon pair-worker").stdout == "node/pair-worker cordoned\n"
    status = lab.sh("kubectl get node pair-worker")
    assert status.stdout.splitlines()[1].split()[1] == "Ready,SchedulingDisabled"
    taints = lab.sh("kubectl get node pair-worker -o jsonpath="
                    "'{.spec.taints[*].key} {.metadata.labels.disktype} {.metadata.annotations.lesson}'")
    # The node lifecycle controller adds its own NoSchedule taint to a cordoned node.
    assert taints.stdout == "dedicated node.kubernetes.io/unschedulable ssd taints"
    assert lab.sh("kubectl taint node pair-worker dedicated-").stdout == "node/pair-worker untainted\n"
    assert lab.sh("kubectl uncordon pair-worker").stdout == "node/pair-worker uncordoned\n"
    cleared = lab.sh("kubectl get node pair-worker -o jsonpath='{.spec.taints}'")
    assert cleared.stdout == ""


def test_apply_twice_is_unchanged_then_configured(lab):
    assert lab.sh("kubectl -n sched-lab apply -f -", stdin=MANUAL_POD).stdout == "pod/manual created\n"
    assert lab.sh("kubectl -n sched-lab apply -f -", stdin=MANUAL_POD).stdout == "pod/manual unchanged\n"
    relabelled = MANUAL_POD.replace("metadata: {name: manual}", "metadata: {name: manual, labels: {app: demo}}")
    again = lab.sh("kubectl -n sched-lab apply -f -", stdin=relabelled)
    assert (again.returncode, again.stdout) == (0, "pod/manual configured\n"), again.stderr
    assert lab.sh("kubectl -n sched-lab get pod manual -o jsonpath='{.metadata.labels.app}'").stdout == "demo"


def test_strict_validation_rejects_an_unknown_field(lab):
    bad = MANUAL_POD.replace("  schedulerName: nobody-at-all\n", "  schedulerName: nobody-at-all\n  nodeNmae: x\n")
    result = lab.sh("kubectl -n sched-lab apply -f -", stdin=bad)
    assert result.returncode == 1
    assert 'unknown field "spec.nodeNmae"' in result.stderr


def test_warn_validation_creates_and_prints_one_warning_per_field(lab):
    bad = MANUAL_POD.replace("  schedulerName: nobody-at-all\n",
                             "  schedulerName: nobody-at-all\n  nodeNmae: x\n  foo: 1\n")
    result = lab.sh("kubectl -n sched-lab create --validate=warn -f -", stdin=bad)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "pod/manual created\n"
    assert result.stderr.splitlines() == ['Warning: unknown field "spec.foo"', 'Warning: unknown field "spec.nodeNmae"']


def test_lab_stops_cleanly_on_sigterm(tmp_path, kubectl):
    lab = start_lab(tmp_path)
    time.sleep(0.2)
    lab.proc.send_signal(signal.SIGTERM)
    assert lab.proc.wait(timeout=10) == 0
    assert "Traceback" not in lab.proc.stderr.read()


def test_create_namespace_sends_protobuf_and_works(lab):
    created = lab.sh("kubectl create namespace demo")
    assert (created.returncode, created.stdout) == (0, "namespace/demo created\n"), created.stderr
    labels = lab.sh("kubectl get ns demo -o jsonpath='{.metadata.labels}'")
    assert labels.stdout == '{"kubernetes.io/metadata.name":"demo"}'
    assert lab.sh("kubectl -n demo run x --image=nginx --restart=Never").returncode == 0
    assert lab.sh("kubectl delete namespace demo").returncode == 0
    # After a 404, kubectl 1.32 looks the namespace up itself and reports that instead.
    assert lab.sh("kubectl -n demo get pod x").stderr == 'Error from server (NotFound): namespaces "demo" not found\n'
