"""The victims ``observatory why`` names for a preemptor: core/v1 ``Preempted`` events related to it by uid."""

from __future__ import annotations

from observatory.model.victims import Victim, victims_of

PREEMPTOR = {"metadata": {"namespace": "default", "name": "urgent", "uid": "u-1"}}


def preempted(victim: str, related_uid: str, node: str = "n1", at: str = "2026-01-01T00:00:01Z") -> dict:
    return {"reason": "Preempted", "firstTimestamp": at, "message": f"Preempted by pod {related_uid} on node {node}",
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": victim},
            "related": {"kind": "Pod", "namespace": "default", "name": "urgent", "uid": related_uid}}


def test_only_events_related_to_this_pods_uid_each_victim_once_oldest_first():
    events = [preempted("b", "u-1", at="2026-01-01T00:00:02Z"), preempted("a", "u-1"),
              preempted("other", "u-2"), preempted("a", "u-1", at="2026-01-01T00:00:03Z"),
              {"reason": "Scheduled", "related": {"uid": "u-1"}}, {"reason": "Preempted"}]
    assert victims_of(PREEMPTOR, events) == (
        Victim("default/a", "n1", "Preempted by pod u-1 on node n1"),
        Victim("default/b", "n1", "Preempted by pod u-1 on node n1"))


def test_a_pod_without_uid_has_no_victims_and_an_odd_note_has_no_node():
    assert victims_of({"metadata": {"name": "x"}}, [preempted("a", "")]) == ()
    odd = preempted("a", "u-1")
    odd["message"] = "Preempted elsewhere"
    assert victims_of(PREEMPTOR, [odd]) == (Victim("default/a", "", "Preempted elsewhere"),)
