"""kubectl against ``observatory lab serve`` with its simulated scheduler, kubelets and pod GC."""

from __future__ import annotations

import json
import re
import time

import pytest

from tests.e2e.test_kubectl_seed import MANUAL_POD, serving


@pytest.fixture
def lab(tmp_path, kubectl, monkeypatch):
    monkeypatch.setenv("OBSERVATORY_LAB__PODGC_QUARANTINE", "1")
    with serving(tmp_path) as lab:
        yield lab


def wait_running(lab, name: str, ns: str = "default") -> None:
    waited = lab.sh(f"kubectl -n {ns} wait --for=jsonpath='{{.status.phase}}'=Running pod/{name} --timeout=20s")
    assert waited.returncode == 0, waited.stderr


def describe_events(lab, name: str, ns: str = "default") -> list[list[str]]:
    """The rows of ``kubectl describe pod``'s Events table as [type, reason, from, message]."""
    out = lab.sh(f"kubectl -n {ns} describe pod {name}").stdout
    section = out.split("\nEvents:", 1)[1]
    rows = []
    for line in section.splitlines()[3:]:
        parts = re.split(r"\s{2,}", line.strip(), maxsplit=4)
        if len(parts) == 5:
            rows.append([parts[0], parts[1], parts[3], parts[4]])
    return rows


def test_run_reaches_running_and_describe_lists_scheduler_then_kubelet_events(lab):
    assert lab.sh("kubectl run seamb --image=nginx --restart=Never").returncode == 0
    wait_running(lab, "seamb")
    rows = describe_events(lab, "seamb")
    assert [r[:3] for r in rows] == [
        ["Normal", "Scheduled", "default-scheduler"], ["Normal", "Pulling", "kubelet"],
        ["Normal", "Pulled", "kubelet"], ["Normal", "Created", "kubelet"], ["Normal", "Started", "kubelet"]]
    assert rows[0][3] == "Successfully assigned default/seamb to pair-worker"
    assert rows[1][3] == 'Pulling image "nginx"'
    assert rows[3][3] == "Created container: seamb" and rows[4][3] == "Started container seamb"
    wide = lab.sh("kubectl get pod seamb -o wide").stdout.splitlines()[1].split()
    assert wide[1:3] == ["1/1", "Running"] and wide[6] == "pair-worker" and wide[5].startswith("10.244.")


def test_manual_pod_has_no_events_until_hand_bound_and_never_a_scheduled_one(lab):
    assert lab.sh("kubectl -n sched-lab apply -f -", stdin=MANUAL_POD).returncode == 0
    assert lab.sh("kubectl run other --image=nginx --restart=Never").returncode == 0
    wait_running(lab, "other")  # the scheduler and kubelets have been busy meanwhile
    assert describe_events(lab, "manual", "sched-lab") == []
    (lab.tmp / "binding.json").write_text('{"apiVersion":"v1","kind":"Binding","metadata":{"name":"manual",'
                                          '"namespace":"sched-lab"},"target":{"apiVersion":"v1","kind":"Node",'
                                          '"name":"pair-worker"}}')
    bound = lab.sh("kubectl create --raw /api/v1/namespaces/sched-lab/pods/manual/binding -f binding.json")
    assert bound.returncode == 0
    wait_running(lab, "manual", "sched-lab")
    reasons = [r[1] for r in describe_events(lab, "manual", "sched-lab")]
    assert reasons == ["Pulling", "Pulled", "Created", "Started"]


def test_pod_bound_to_a_missing_node_is_garbage_collected(lab):
    assert lab.sh("kubectl -n sched-lab apply -f -", stdin=MANUAL_POD).returncode == 0
    (lab.tmp / "ghost.json").write_text('{"metadata":{"name":"manual"},"target":{"name":"node-that-does-not-exist"}}')
    assert lab.sh("kubectl create --raw /api/v1/namespaces/sched-lab/pods/manual/binding -f ghost.json").returncode == 0
    waited = lab.sh("kubectl -n sched-lab wait --for=delete pod/manual --timeout=20s")
    assert waited.returncode == 0, waited.stderr


def test_node_not_ready_through_a_status_patch_and_back(lab):
    patch = {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                                        "message": "lesson"}]}}
    result = lab.sh(f"kubectl patch node pair-worker --subresource=status -p '{json.dumps(patch)}'")
    assert (result.returncode, result.stdout) == (0, "node/pair-worker patched\n"), result.stderr
    deadline = time.monotonic() + 10
    while True:
        row = lab.sh("kubectl get node pair-worker").stdout.splitlines()[1].split()
        if row[1] == "NotReady" or time.monotonic() > deadline:
            break
    assert row[1] == "NotReady"
    patch["status"]["conditions"][0].update(status="True", reason="KubeletReady")
    assert lab.sh(f"kubectl patch node pair-worker --subresource=status -p '{json.dumps(patch)}'").returncode == 0
    assert lab.sh("kubectl get node pair-worker").stdout.splitlines()[1].split()[1] == "Ready"
