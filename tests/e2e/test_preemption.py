"""DefaultPreemption acted out on the lab's ``preemption`` scenario, driven with kubectl.

One 1-CPU node, preempt-node, runs filler-1 and filler-2 (class low, 500m each). Expected, as kube-scheduler
v1.34.1 with asynchronous preemption does it (reference A.3; ``default_preemption.go``, ``preemption.go``,
``schedule_one.go``): a pod of class high-never gets ``… preemption: not eligible due to preemptionPolicy=Never.``;
a pod of class high is nominated in the same status patch as its ``PodScheduled=False`` condition (FailedScheduling
without a preemption tail), one filler gets ``DisruptionTarget``, a graceful DELETE and a ``Preempted`` event, a
retry while it terminates says ``… not eligible due to a terminating pod on the nominated node.``, and once it is
gone the pod is bound with ``status.nominatedNodeName`` kept. ``observatory why`` shows the nomination and the
victim's Preempted event.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from typing import Any

import pytest

from observatory import cli
from tests.e2e.test_interpod_affinity import apply
from tests.e2e.test_kubectl_seed import Lab, serving

NODE = "preempt-node"
GRACE_CAP = "4"
"""Seconds the lab's kubelet lets a victim terminate: long enough for one retry of the preemptor in between."""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    previous = os.environ.get("OBSERVATORY_LAB__TERMINATION_GRACE_CAP")
    os.environ["OBSERVATORY_LAB__TERMINATION_GRACE_CAP"] = GRACE_CAP
    try:
        with serving(tmp_path_factory.mktemp("preempt"), "--scenario", "preemption") as lab:
            yield lab
    finally:
        if previous is None:
            os.environ.pop("OBSERVATORY_LAB__TERMINATION_GRACE_CAP", None)
        else:
            os.environ["OBSERVATORY_LAB__TERMINATION_GRACE_CAP"] = previous


def preemptor(name: str, priority_class: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"priorityClassName": priority_class, "containers": [
                {"name": "app", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": "500m"}}}]}}


def get_json(lab: Lab, what: str) -> Any:
    out = lab.sh(f"kubectl get {what} -o json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def wait_for(check, what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"never saw {what}")


def events_v1(lab: Lab) -> list[dict[str, Any]]:
    items = get_json(lab, "events.v1.events.k8s.io -n default")["items"]
    return sorted(items, key=lambda e: int(e["metadata"]["resourceVersion"]))


def frames(text: str) -> list[dict[str, Any]]:
    decoder, out, i = json.JSONDecoder(), [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        obj, i = decoder.raw_decode(text, i)
        out.append(obj)


def condition(pod: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in (pod.get("status") or {}).get("conditions") or [] if c["type"] == type_), None)


def test_preemption_policy_never_gives_the_exact_failed_scheduling_event(lab: Lab):
    apply(lab, preemptor("patient", "high-never"))
    event = wait_for(lambda: [e for e in events_v1(lab) if e["regarding"]["name"] == "patient"
                              and e["reason"] == "FailedScheduling"], "patient's FailedScheduling")[0]
    assert event["note"] == ("0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: "
                             "not eligible due to preemptionPolicy=Never.")
    pod = get_json(lab, "pod patient")
    assert (pod["spec"]["priority"], pod["spec"]["preemptionPolicy"]) == (1000, "Never")
    assert "nominatedNodeName" not in pod["status"]
    assert lab.sh("kubectl delete pod patient --wait=false").returncode == 0
    fillers = get_json(lab, "pods -l app=filler")["items"]
    assert sorted(p["metadata"]["name"] for p in fillers) == ["filler-1", "filler-2"]
    assert all("deletionTimestamp" not in p["metadata"] for p in fillers)


def test_a_successful_preemption_in_upstreams_order_then_why_shows_it(lab: Lab, capsys):
    watch = subprocess.Popen(["kubectl", "get", "pods", "-w", "--output-watch-events", "-o", "json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=lab.env())
    listed = []
    try:
        assert watch.stdout is not None
        listed.append(watch.stdout.readline())  # the first frame (one line into a pipe): the watch has listed
        apply(lab, preemptor("urgent", "high"))
        wait_for(lambda: get_json(lab, "pod urgent")["status"].get("nominatedNodeName"), "the nomination")
        # while its victim terminates, a node event NodeResourcesFit's QueueingHint accepts (allocatable cpu up from
        # 1 to 1100m: the pod fits the bare node, and a resource it requests grew) retries the pod; 1100m is still
        # too little while the victim's 500m counts
        patch = '{"status":{"allocatable":{"cpu":"1100m"}}}'
        assert lab.sh(f"kubectl patch node {NODE} --subresource=status --type=merge -p '{patch}'").returncode == 0
        wait_for(lambda: get_json(lab, "pod urgent")["spec"].get("nodeName"), "urgent bound")
        wait_for(lambda: any(e["reason"] == "Scheduled" for e in events_v1(lab)), "the Scheduled event")
    finally:
        watch.terminate()
        out, _ = watch.communicate(timeout=10)
    seen = [(f["type"], f["object"]) for f in frames("".join(listed) + out)]
    urgent = [(t, o) for t, o in seen if o["metadata"]["name"] == "urgent"]
    victims = {o["metadata"]["name"] for _, o in seen if condition(o, "DisruptionTarget")}
    assert len(victims) == 1
    victim = victims.pop()
    mine = [(t, o) for t, o in seen if o["metadata"]["name"] == victim]

    def rv(obj: dict[str, Any]) -> int:
        return int(obj["metadata"]["resourceVersion"])

    nominated = next(o for t, o in urgent if o["status"].get("nominatedNodeName"))
    scheduled = condition(nominated, "PodScheduled")
    assert (nominated["status"]["nominatedNodeName"], scheduled["status"], scheduled["reason"], scheduled["message"]) \
        == (NODE, "False", "Unschedulable", "0/1 nodes are available: 1 Insufficient cpu.")
    target = next(o for t, o in mine if condition(o, "DisruptionTarget"))
    assert {k: v for k, v in condition(target, "DisruptionTarget").items() if k != "lastTransitionTime"} == {
        "type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "lastProbeTime": None,
        "message": "default-scheduler: preempting to accommodate a higher priority pod"}
    # lastProbeTime null: PodCondition's metav1.Time encodes its zero value as null despite omitempty
    assert "deletionTimestamp" not in target["metadata"]
    terminating = next(o for t, o in mine if "deletionTimestamp" in o["metadata"])
    deleted = next(o for t, o in mine if t == "DELETED")
    retried = next(o for t, o in urgent if (condition(o, "PodScheduled") or {}).get("message", "").endswith(
        "not eligible due to a terminating pod on the nominated node."))
    bound = next(o for t, o in urgent if o["spec"].get("nodeName"))
    assert condition(retried, "PodScheduled")["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: not eligible due to "
        "a terminating pod on the nominated node.")
    assert retried["status"]["nominatedNodeName"] == NODE
    assert (bound["spec"]["nodeName"], bound["status"]["nominatedNodeName"]) == (NODE, NODE)

    events = events_v1(lab)
    failed = [e for e in events if e["regarding"]["name"] == "urgent" and e["reason"] == "FailedScheduling"]
    preempted = [e for e in events if e["reason"] == "Preempted"]
    assert failed[0]["note"] == "0/1 nodes are available: 1 Insufficient cpu."
    assert len(preempted) == 1
    event = preempted[0]
    assert (event["type"], event["action"], event["reportingController"], event["regarding"]["name"],
            event["related"]["kind"], event["related"]["name"], event["related"]["uid"], event["note"]) == (
        "Normal", "Preempting", "default-scheduler", victim, "Pod", "urgent", bound["metadata"]["uid"],
        f"Preempted by pod {bound['metadata']['uid']} on node {NODE}")
    assert rv(nominated) < rv(target) < rv(terminating) < rv(event) < rv(deleted) < rv(bound)
    assert rv(terminating) < rv(retried) < rv(deleted)

    code = cli.main(["why", "urgent", "-n", "default", "-o", "json", "--kubeconfig", lab.kubeconfig])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    doc = json.loads(out)
    assert doc["preemption"]["nominatedNodeName"] == NODE
    assert doc["preemption"]["victims"] == [{"pod": f"default/{victim}", "node": NODE,
                                             "note": f"Preempted by pod {bound['metadata']['uid']} on node {NODE}"}]
