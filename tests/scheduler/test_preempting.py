"""The scheduler's half of preemption, pure parts: the nomination in the status patch (``updatePod``), the victim's
DisruptionTarget patch (``PreemptPod``), the nominator, nominated pods counted for equal or lower priorities, and
the text while victims terminate."""

from __future__ import annotations

from datetime import UTC, datetime

from observatory.scheduler.preempting import (
    Nominator,
    counting_nominated,
    disruption_target_patch,
    preempted_note,
    status_patch,
    terminating_message,
)
from observatory.scheduling import PodInfo, Snapshot, filter_nodes
from tests.unit.scheduling.objects import node, pod

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_the_nomination_rides_in_the_same_status_patch_as_the_condition():
    waiting = pod("p")
    assert status_patch(waiting, "Unschedulable", "0/1 nodes are available: 1 Insufficient cpu.", "n1", NOW) == {
        "status": {"$setElementOrder/conditions": [{"type": "PodScheduled"}], "conditions": [{
            "type": "PodScheduled", "status": "False", "lastTransitionTime": "2026-01-02T03:04:05Z",
            "reason": "Unschedulable", "message": "0/1 nodes are available: 1 Insufficient cpu."}],
            "nominatedNodeName": "n1"}}
    nominated = pod("p")
    nominated["status"].update(nominatedNodeName="n1", conditions=[{
        "type": "PodScheduled", "status": "False", "lastProbeTime": None, "lastTransitionTime": "2026-01-01T00:00:00Z",
        "reason": "Unschedulable", "message": "m"}])
    assert status_patch(nominated, "Unschedulable", "m", "n1") is None  # nothing changed
    assert status_patch(nominated, "Unschedulable", "m", None) is None  # not eligible: the nomination stays
    assert status_patch(nominated, "Unschedulable", "m", "") == {"status": {"nominatedNodeName": None}}


def test_the_victims_disruption_target_condition_is_added_once():
    victim = pod("v", node_name="n1")
    victim["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    patch = disruption_target_patch(victim, "default-scheduler", NOW)
    assert patch == {"status": {"$setElementOrder/conditions": [{"type": "Ready"}, {"type": "DisruptionTarget"}],
                                "conditions": [{"type": "DisruptionTarget", "status": "True",
                                                "lastTransitionTime": "2026-01-02T03:04:05Z",
                                                "reason": "PreemptionByScheduler",
                                                "message": "default-scheduler: preempting to accommodate a higher "
                                                           "priority pod"}]}}
    victim["status"]["conditions"].append(patch["status"]["conditions"][0])
    assert disruption_target_patch(victim, "default-scheduler") is None
    assert preempted_note({"metadata": {"uid": "u-1"}}, "n1") == "Preempted by pod u-1 on node n1"


def test_the_nominator_prefers_its_own_decision_until_forgotten():
    nominator = Nominator()
    seen = pod("p")
    seen["status"]["nominatedNodeName"] = "n2"
    assert nominator.node_of(("default", "p"), seen) == "n2"
    nominator.set(("default", "p"), "")
    assert nominator.nominated({("default", "p"): seen}) == []
    nominator.forget(("default", "p"))
    assert nominator.nominated({("default", "p"): seen}, skip=[("default", "p")]) == []
    assert nominator.nominated({("default", "p"): seen}) == [(("default", "p"), "n2", seen)]


def test_nominated_pods_count_for_pods_of_equal_or_lower_priority_only():
    snapshot = Snapshot([node("n1", cpu="1")], [])
    nominated = pod("big", requests={"cpu": "800m"}, priority=100, uid="big")
    entries = [(("default", "big"), "n1", nominated)]
    for priority, fits in ((100, False), (50, False), (200, True)):
        other = PodInfo.from_pod(pod("other", requests={"cpu": "500m"}, priority=priority, uid="other"))
        with counting_nominated(snapshot, other, entries):
            assert filter_nodes(other, snapshot)["n1"].feasible is fits, priority
        assert filter_nodes(other, snapshot)["n1"].feasible  # the nominated pod is not left behind
    itself = PodInfo.from_pod(nominated)
    with counting_nominated(snapshot, itself, entries):
        assert filter_nodes(itself, snapshot)["n1"].feasible  # a pod never counts against itself


def test_the_text_while_a_victim_terminates():
    snapshot = Snapshot([node("n1", cpu="1")], [pod("v", node_name="n1", requests={"cpu": "1"}, uid="v")])
    info = PodInfo.from_pod(pod("p", requests={"cpu": "500m"}, priority=10))
    assert terminating_message(1, filter_nodes(info, snapshot)) == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: not eligible due to "
        "a terminating pod on the nominated node.")
