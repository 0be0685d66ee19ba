"""Snapshot updates, and the preemption dry run (the lab never evicts)."""

from __future__ import annotations

from observatory.scheduling import Snapshot, filter_nodes, schedule_one

from .objects import node, pair, pod


def test_snapshot_counts_assigned_non_terminal_pods():
    snap = Snapshot([node("n")], [pod("a", node_name="n", requests={"cpu": "1"}),
                                  pod("b", node_name="n", requests={"cpu": "1"}, phase="Succeeded"),
                                  pod("c", requests={"cpu": "1"})])
    info = snap.get("n")
    assert info.requested["cpu"] == 1000 and len(info.pods) == 1
    assert info.usage() == {"cpu": 1000, "memory": 0, "pods": 1}


def test_snapshot_updates_in_place():
    snap = Snapshot([node("n")])
    a = pod("a", node_name="n", requests={"cpu": "1"}, uid="u-a")
    snap.add_pod(a)
    snap.add_pod(a)  # the same pod again replaces, it does not double count
    assert snap.get("n").requested["cpu"] == 1000
    a_done = pod("a", node_name="n", requests={"cpu": "1"}, uid="u-a", phase="Succeeded")
    snap.add_pod(a_done)  # turning terminal frees the node
    assert snap.get("n").requested["cpu"] == 0 and not snap.get("n").pods
    snap.assume(pod("b", requests={"cpu": "2"}, uid="u-b"), "n")
    assert snap.get("n").requested["cpu"] == 2000
    snap.remove_pod(pod("b", uid="u-b"))
    assert snap.get("n").requested["cpu"] == 0


def test_an_assumed_pod_survives_updates_of_its_unbound_version():
    snap = Snapshot([node("n")])
    pending = pod("a", requests={"cpu": "1"}, uid="u-a")
    snap.assume(pending, "n")
    assert snap.add_pod(pending) is False  # e.g. a status update arriving before the Binding
    assert snap.get("n").requested["cpu"] == 1000
    assert snap.add_pod(pod("a", node_name="n", requests={"cpu": "1"}, uid="u-a")) is True
    assert snap.get("n").requested["cpu"] == 1000


def test_pods_of_an_unknown_node_count_once_it_appears():
    snap = Snapshot([], [pod("a", node_name="late", requests={"cpu": "1"})])
    assert len(snap) == 0
    snap.set_node(node("late"))
    assert snap.get("late").requested["cpu"] == 1000
    snap.set_node(node("late", cpu="8"))  # replacing the node keeps its pods
    assert snap.get("late").requested["cpu"] == 1000 and snap.get("late").allocatable["cpu"] == 8000


def test_snapshot_and_pods_together_is_an_error():
    import pytest

    with pytest.raises(ValueError):
        filter_nodes(pod(), Snapshot(pair()), [pod("a", node_name="pair-worker")])


def test_lower_priority_pods_make_the_node_a_candidate_and_upstream_adds_no_postfilter_text():
    """Upstream would preempt ``low`` and succeed at PostFilter, so the message is only the filter part."""
    pods = [pod("low", node_name="pair-worker", requests={"memory": "6Gi"}, priority=0)]
    decision = schedule_one(pod(requests={"memory": "4Gi"}, priority=1000), pair(), pods)
    assert decision.node is None
    assert decision.message == (
        "0/2 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }."
    )
    assert decision.preemption_candidates == ("pair-worker",)
    assert decision.preemption["pair-worker"].victims == ("default/low",)


def test_only_the_needed_victims_are_listed_most_important_reprieved_first():
    pods = [pod("a", node_name="n", requests={"cpu": "1"}, priority=5),
            pod("b", node_name="n", requests={"cpu": "1"}, priority=1),
            pod("c", node_name="n", requests={"cpu": "2"}, priority=3)]
    decision = schedule_one(pod(requests={"cpu": "1"}, priority=10), [node("n")], pods)
    assert decision.preemption["n"].victims == ("default/b",)


def test_evicting_every_lower_priority_pod_would_not_help():
    pods = [pod("low", node_name="n", requests={"cpu": "1"}, priority=0),
            pod("same", node_name="n", requests={"cpu": "3"}, priority=10)]
    decision = schedule_one(pod(requests={"cpu": "2"}, priority=10), [node("n")], pods, dra_fragment=False)
    assert decision.message == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Insufficient cpu."
    )


def test_port_conflict_with_equal_priority_pod_has_no_victims():
    holder = pod("holder", node_name="n")
    holder["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 80}]
    wants = pod()
    wants["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 80}]
    assert schedule_one(wants, [node("n")], [holder], dra_fragment=False).message == (
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports. preemption: 0/1 "
        "nodes are available: 1 No preemption victims found for incoming pod."
    )
