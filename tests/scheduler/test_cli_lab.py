"""``observatory schedule`` as a person runs it: the installed command in a subprocess against ``observatory lab
serve`` (pair scenario, the lab's own default-scheduler and kubelets running), kubectl as the reference client.

Expected texts come from ../shared/k8s-api-reference.md: the Scheduled message (§4.3), the FitError of a pod
requesting 100 cpu on pair (§4.3a), the 409 Status message (§1.7), kubectl describe's From column (§4.2). Waits poll
files and the API with deadlines; no fixed sleeps.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from observatory.lab.kubeconfig import write_kubeconfig
from tests.e2e.test_cli import one_paragraph_failure
from tests.e2e.test_kubectl_seed import Lab, serving
from tests.kube.helpers import closed_port
from tests.scheduler.conftest import CPU_TOO_MUCH, SCHEDULER, pod_manifest

COMMAND = str(Path(sys.executable).parent / "observatory")
CONFLICT = 'Operation cannot be fulfilled on pods/binding "{0}": pod {0} is already assigned to node "{1}"'


class Instance:
    """One ``observatory schedule`` process; stdout and stderr go to files the test reads."""

    def __init__(self, lab: Lab, label: str, *args: str) -> None:
        self.out, self.err = lab.tmp / f"{label}.out", lab.tmp / f"{label}.err"
        self.proc = subprocess.Popen([COMMAND, "schedule", "--scheduler-name", SCHEDULER, *args],
                                     stdout=self.out.open("w"), stderr=self.err.open("w"), env=lab.env(),
                                     cwd=lab.tmp)

    def lines(self) -> list[str]:
        return self.out.read_text().splitlines()

    def errors(self) -> str:
        return self.err.read_text()

    def identity(self) -> str:
        return self.errors().split("identity ", 1)[1].split()[0]

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise


def wait(check: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def kubectl_json(lab: Lab, command: str) -> Any:
    result = lab.sh(f"kubectl {command} -o json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def apply(lab: Lab, *pods: dict[str, Any]) -> None:
    result = lab.sh("kubectl apply -f -", stdin=yaml.safe_dump_all(pods))
    assert result.returncode == 0, result.stderr


def node_of(lab: Lab, name: str) -> str:
    return kubectl_json(lab, f"-n sched-lab get pod {name}")["spec"].get("nodeName") or ""


def core_events(lab: Lab, reason: str) -> list[dict[str, Any]]:
    return kubectl_json(lab, f"-n sched-lab get events --field-selector reason={reason}")["items"]


@pytest.fixture
def lab(tmp_path, kubectl) -> Iterator[Lab]:
    with serving(tmp_path, "--scenario", "pair") as lab:
        yield lab


@pytest.fixture
def instances() -> Iterator[list[Instance]]:
    started: list[Instance] = []
    yield started
    for instance in started:
        instance.stop(signal.SIGKILL)


def start(lab: Lab, instances: list[Instance], label: str, *args: str) -> Instance:
    instance = Instance(lab, label, *args)
    instances.append(instance)
    wait(lambda: "Synced:" in instance.errors() or instance.proc.poll() is not None, f"{label} to sync")
    assert instance.proc.poll() is None, instance.errors()
    return instance


def test_binds_describes_and_refuses_like_kube_scheduler(lab, instances):
    sched = start(lab, instances, "sched", "-n", "sched-lab")
    apply(lab, pod_manifest("web"), pod_manifest("huge", cpu="100"),
          pod_manifest("huge-twin", cpu="100", scheduler="default-scheduler"),
          pod_manifest("elsewhere", namespace="default"))  # -n sched-lab: not served
    wait(lambda: node_of(lab, "web"), "web to be bound")
    assert node_of(lab, "web") == "pair-worker"  # the control plane's taint rejects it

    describe = lab.sh("kubectl -n sched-lab describe pod web")
    events = describe.stdout.split("Events:", 1)[1].splitlines()
    scheduled = [line.split(None, 4) for line in events if " Scheduled " in line]
    assert len(scheduled) == 1
    kind, reason, _age, source, message = scheduled[0]
    assert (kind, reason, source, message) == (
        "Normal", "Scheduled", SCHEDULER, "Successfully assigned sched-lab/web to pair-worker")

    failed = wait(lambda: [e for e in core_events(lab, "FailedScheduling")
                           if e["involvedObject"]["name"] == "huge"], "huge's FailedScheduling event")
    twin = wait(lambda: [e for e in core_events(lab, "FailedScheduling")
                         if e["involvedObject"]["name"] == "huge-twin"], "the lab scheduler's event for the twin")
    assert failed[0]["message"] == CPU_TOO_MUCH == twin[0]["message"]
    assert (failed[0]["type"], failed[0]["reportingComponent"], failed[0]["action"]) == (
        "Warning", SCHEDULER, "Scheduling")
    raw = lab.sh("kubectl get --raw /apis/events.k8s.io/v1/namespaces/sched-lab/events")
    assert raw.returncode == 0, raw.stderr
    v1 = json.loads(raw.stdout)
    written = [e for e in v1["items"] if e.get("reportingController") == SCHEDULER]
    assert {(e["reason"], e["regarding"]["name"]) for e in written} >= {("Scheduled", "web"),
                                                                         ("FailedScheduling", "huge")}
    assert {e["reportingInstance"] for e in written} == {f"{SCHEDULER}-{socket.gethostname()}"}
    assert all(e["eventTime"] and e["regarding"]["kind"] == "Pod" for e in written)

    condition = wait(lambda: [c for c in kubectl_json(lab, "-n sched-lab get pod huge")["status"].get("conditions", [])
                              if c["type"] == "PodScheduled"], "huge's PodScheduled condition")[0]
    assert (condition["status"], condition["reason"], condition["message"]) == ("False", "Unschedulable", CPU_TOO_MUCH)

    wait(lambda: any(line.startswith("FailedScheduling sched-lab/huge: ") for line in sched.lines()), "the line")
    assert f"FailedScheduling sched-lab/huge: {CPU_TOO_MUCH}" in sched.lines()
    assert any(line.startswith("bound sched-lab/web -> pair-worker (1/2 feasible") for line in sched.lines())
    assert sched.stop() == 0
    assert not [line for line in sched.lines() if "default/elsewhere" in line]
    assert not kubectl_json(lab, "-n default get pod elsewhere")["spec"].get("nodeName")
    assert "Traceback" not in sched.errors()


def test_serves_every_namespace_by_default_and_describe_counts_a_repeated_refusal(lab, instances):
    """Without -n the scheduler serves every namespace (the kubeconfig's context is
    ``default``; the seed exercises use sched-lab), and a refused pod refused again is one FailedScheduling event
    that ``kubectl describe`` shows as ``(x2 over …)`` from the third refusal on, as under kube-scheduler."""
    sched = start(lab, instances, "sched")
    assert "in every namespace" in sched.errors()
    apply(lab, pod_manifest("web"), pod_manifest("huge", cpu="100"), pod_manifest("home", namespace="default"))
    wait(lambda: node_of(lab, "web"), "sched-lab/web to be bound")
    wait(lambda: kubectl_json(lab, "-n default get pod home")["spec"].get("nodeName"), "default/home to be bound")
    wait(lambda: any(line.startswith("FailedScheduling sched-lab/huge: ") for line in sched.lines()), "the refusal")

    # A bound pod deleted: NodeResourcesFit's QueueingHint queues huge again (a node label would not).
    deleted = lab.sh("kubectl -n sched-lab delete pod web --wait=false")
    assert deleted.returncode == 0, deleted.stderr
    wait(lambda: any(line.startswith("FailedScheduling sched-lab/huge (attempt 2): ") for line in sched.lines()),
         "the second refusal")

    def failed_lines() -> list[str]:
        describe = lab.sh("kubectl -n sched-lab describe pod huge")
        assert describe.returncode == 0, describe.stderr
        return [line for line in describe.stdout.split("Events:", 1)[1].splitlines() if " FailedScheduling " in line]

    deleted = lab.sh("kubectl -n default delete pod home --wait=false")  # and a third time
    assert deleted.returncode == 0, deleted.stderr
    wait(lambda: any(line.startswith("FailedScheduling sched-lab/huge (attempt 3") for line in sched.lines()),
         "the third refusal")
    lines = wait(lambda: [line for line in failed_lines() if "(x2 over " in line] and failed_lines(),
                 "describe to show the series")
    # As under kube-scheduler: the first refusal's status patch gives the pod a new resourceVersion, so the second
    # refusal is a new event and the third joins it (upstream's getKey compares the whole regarding reference).
    assert len(lines) == 2, lines
    assert sum("(x2 over " in line for line in lines) == 1
    assert all(f" {SCHEDULER} " in line and "0/2 nodes are available" in line for line in lines)
    assert sched.stop() == 0


def test_two_instances_race_and_each_pod_is_bound_once(lab, instances):
    a = start(lab, instances, "a", "-n", "sched-lab")
    b = start(lab, instances, "b", "-n", "sched-lab")
    names: list[str] = []

    def conflicts() -> list[str]:
        return [line for line in a.lines() + b.lines() if line.startswith("409 Conflict ")]

    for batch in range(5):  # both instances decide the same node at once: one POST wins, the other gets 409
        new = [f"race-{batch}-{i}" for i in range(8)]
        names += new
        apply(lab, *(pod_manifest(name) for name in new))
        wait(lambda batch=new: all(node_of(lab, n) for n in batch), "the batch to be bound")
        if conflicts():
            break
    assert conflicts(), "no race happened in 40 pods"
    wait(lambda: sum(1 for line in a.lines() + b.lines() if line.startswith(("bound ", "409 Conflict ")))
         >= len(names), "every decision line")

    for name in names:
        pod = f"sched-lab/{name}"
        bound = [line for line in a.lines() + b.lines() if line.startswith(f"bound {pod} -> ")]
        assert len(bound) == 1, (name, bound)
        for instance in (a, b):  # the loser says 409 once and never retries
            assert len([line for line in instance.lines() if f" {pod} " in line]) <= 1
    scheduled = [e["involvedObject"]["name"] for e in wait(lambda: len(core_events(lab, "Scheduled")) >= len(names)
                                                           and core_events(lab, "Scheduled"), "the Scheduled events")]
    assert sorted(scheduled) == sorted(names)  # exactly one Scheduled event per pod: the loser wrote none
    for line in conflicts():
        pod = line.split()[2].split("/")[1]
        node = node_of(lab, pod)
        assert line == (f"409 Conflict sched-lab/{pod} -> {node}: {CONFLICT.format(pod, node)}"
                        " (another binder won; not retried, no Scheduled event)")
    assert a.stop() == 0 and b.stop() == 0


def test_leader_election_one_binds_and_a_clean_stop_hands_over(lab, instances):
    lease = ("--lease-name", "sched-test", "--lease-duration", "6", "--renew-deadline", "4", "--retry-period", "1")
    a = start(lab, instances, "a", "-n", "sched-lab", "--leader-elect", *lease)
    wait(lambda: "Leading: acquired Lease kube-system/sched-test" in a.errors(), "a to lead")
    b = start(lab, instances, "b", "-n", "sched-lab", "--leader-elect", *lease)
    wait(lambda: f"held by {a.identity()}: standing by" in b.errors(), "b to stand by")

    apply(lab, *(pod_manifest(f"led-{i}") for i in range(3)))
    wait(lambda: all(node_of(lab, f"led-{i}") for i in range(3)), "a's bindings")
    wait(lambda: len([line for line in a.lines() if line.startswith("bound ")]) == 3, "a's lines")
    assert b.lines() == []

    stopped_at = time.time()
    assert a.stop() == 0
    assert "Released Lease kube-system/sched-test" in a.errors()
    wait(lambda: "Leading: acquired Lease kube-system/sched-test" in b.errors(), "b to take over")
    spec = kubectl_json(lab, "-n kube-system get lease sched-test")["spec"]
    assert spec["holderIdentity"] == b.identity() and spec["leaseTransitions"] == 1
    acquired = datetime.fromisoformat(spec["acquireTime"].replace("Z", "+00:00")).timestamp()
    assert acquired - stopped_at < 6  # within the lease duration: the release lets b in at its next retry

    apply(lab, pod_manifest("after"))
    wait(lambda: node_of(lab, "after"), "b's binding")
    wait(lambda: any(line.startswith("bound sched-lab/after ") for line in b.lines()), "b's line")
    assert b.stop() == 0


def test_dry_run_binds_and_writes_nothing(lab, instances):
    dry = start(lab, instances, "dry", "-n", "sched-lab", "--dry-run")
    apply(lab, pod_manifest("web"), pod_manifest("huge", cpu="100"))
    wait(lambda: len(dry.lines()) >= 2, "two decisions")
    assert any(line.startswith("would bind sched-lab/web -> pair-worker (") for line in dry.lines())
    assert f"FailedScheduling sched-lab/huge: {CPU_TOO_MUCH} [dry run: not written]" in dry.lines()
    assert dry.stop() == 0
    assert node_of(lab, "web") == "" and node_of(lab, "huge") == ""
    everything = kubectl_json(lab, "get events -A")["items"]
    assert not [e for e in everything if e.get("reportingComponent") == SCHEDULER]
    assert not kubectl_json(lab, "-n sched-lab get pod huge")["status"].get("conditions")
    assert lab.sh(f"kubectl -n kube-system get lease {SCHEDULER}").returncode != 0


def test_bad_input_and_an_unreachable_cluster_are_one_paragraph(tmp_path):
    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([COMMAND, "schedule", *args], capture_output=True, text=True, timeout=60)

    config = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{closed_port()}")
    message = one_paragraph_failure(run("--scheduler-name", SCHEDULER, "--kubeconfig", str(config)))
    assert "refused" in message
    both = run("--scheduler-name", SCHEDULER, "--dry-run", "--leader-elect", "--kubeconfig", str(config))
    assert both.returncode == 2 and "--dry-run" in both.stderr and "Traceback" not in both.stderr
    fast = run("--scheduler-name", SCHEDULER, "--leader-elect", "--lease-duration", "2", "--renew-deadline", "3",
               "--kubeconfig", str(config))
    assert fast.returncode == 2 and "--lease-duration" in fast.stderr and fast.stdout == ""
