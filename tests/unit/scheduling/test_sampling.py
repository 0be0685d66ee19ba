"""percentageOfNodesToScore: upstream's ``TestNumFeasibleNodesToFind`` (``schedule_one_test.go``) and the
round-robin start of ``findNodesThatPassFilters``."""

from __future__ import annotations

import pytest

from observatory.scheduling import Snapshot, filter_nodes, schedule_one
from observatory.scheduling.sampling import NodeSampler, check_percentage, num_feasible_nodes_to_find

from .objects import node, pod


@pytest.mark.parametrize(("global_percentage", "profile_percentage", "nodes", "want"), [
    (0, None, 10, 10),        # not set, fewer than 100 nodes
    (0, 40, 10, 10),          # profile set, fewer than 100 nodes
    (0, None, 1000, 420),     # adaptive: 50 - 1000/125 = 42 %
    (0, 40, 1000, 400),       # profile 40 %
    (100, 40, 1000, 400),     # the profile's wins over the global
    (40, None, 1000, 400),    # global 40 %
    (0, None, 6000, 300),     # adaptive floor 5 %
    (0, 40, 6000, 2400),
    (0, 1, 1000, 100),        # never fewer than 100
    (100, None, 150, 150),
])
def test_num_feasible_nodes_to_find(global_percentage, profile_percentage, nodes, want):
    assert num_feasible_nodes_to_find(nodes, profile_percentage, global_percentage) == want


def test_per_profile_percentage_through_the_sampler():
    sampler = NodeSampler(percentage=50, profiles={"batch": 10})
    assert sampler.num_to_find(1000, "batch") == 100
    assert sampler.num_to_find(1000, "default-scheduler") == 500


@pytest.mark.parametrize("bad", [-1, 101, True, 3.5])
def test_percentage_outside_0_to_100_is_refused(bad):
    with pytest.raises(ValueError, match=r"not in valid range \[0-100\]"):
        check_percentage(bad)


def cluster(count: int) -> Snapshot:
    return Snapshot([node(f"n{i:03d}") for i in range(count)], [])


def test_a_cycle_filters_only_enough_nodes_and_the_next_one_starts_after_them():
    snapshot = cluster(200)  # adaptive: 50 - 200/125 = 49 % of 200 = 98, raised to 100
    sampler = NodeSampler()
    first = schedule_one(pod(), snapshot, sampler=sampler)
    assert len(first.verdicts) == 100 and len(first.scores) == 100
    assert next(iter(first.verdicts)) == "n000" and sampler.next_start == 100
    second = schedule_one(pod(), snapshot, sampler=sampler)
    assert next(iter(second.verdicts)) == "n100" and sampler.next_start == 0
    assert set(first.verdicts).isdisjoint(second.verdicts)


def test_rejected_nodes_count_as_processed():
    nodes = [node(f"n{i:03d}", cpu="100m" if i < 50 else "4") for i in range(200)]
    snapshot, sampler = Snapshot(nodes, []), NodeSampler()
    decision = schedule_one(pod(requests={"cpu": "1"}), snapshot, sampler=sampler)
    assert len(decision.feasible) == 100 and len(decision.verdicts) == 150
    assert sampler.next_start == 150


def test_an_unschedulable_pod_is_filtered_on_every_node():
    snapshot, sampler = cluster(300), NodeSampler(next_start=123)
    decision = schedule_one(pod(requests={"cpu": "64"}), snapshot, sampler=sampler)
    assert decision.node is None and len(decision.verdicts) == 300
    assert decision.message is not None and decision.message.startswith("0/300 nodes are available: 300 ")
    assert sampler.next_start == 123  # moved on by all 300, modulo 300


def test_without_a_sampler_and_in_explanations_every_node_is_filtered():
    snapshot = cluster(300)
    assert len(schedule_one(pod(), snapshot).verdicts) == 300
    assert len(filter_nodes(pod(), snapshot)) == 300


def test_sampling_changes_the_chosen_node_as_upstream():
    """Every node is alike except that n150 is emptier: with every node filtered it wins; the first cycle from
    index 0 looks only at n000..n099 and picks among them."""
    nodes = [node(f"n{i:03d}") for i in range(200)]
    pods = [pod(f"p{i}", node_name=f"n{i:03d}", requests={"cpu": "1"}, uid=f"u{i}") for i in range(200) if i != 150]
    snapshot = Snapshot(nodes, pods)
    assert schedule_one(pod(), snapshot).node == "n150"
    assert schedule_one(pod(), snapshot, sampler=NodeSampler()).node == "n000"
    assert schedule_one(pod(), snapshot, sampler=NodeSampler(next_start=100)).node == "n150"


def test_the_fit_preview_of_the_explanations_covers_every_node():
    """``observatory why`` and the Why pane read :func:`observatory.model.fit.fit_preview`: no sampling there."""
    from observatory.model.fit import FitIndex, fit_preview
    from observatory.model.records import NodeView, PodView

    index, views = FitIndex(), {}
    for i in range(300):
        obj = node(f"n{i:03d}")
        obj["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
        index.set_node(obj)
        views[obj["metadata"]["name"]] = NodeView.from_api(obj)
    waiting = pod("w")
    index.set_pod("default/w", waiting)
    preview = fit_preview(PodView.from_api(waiting), index.info("default/w"), index, views)
    assert len(preview.nodes) == 300 and all(n.fits for n in preview.nodes)
