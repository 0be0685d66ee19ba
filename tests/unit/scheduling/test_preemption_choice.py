"""DefaultPreemption's candidate search and node choice (``preemption.preempt``), with the cases of upstream's
``default_preemption_test.go`` (``TestSelectBestCandidate`` / the older ``TestPickOneNodeForPreemption``): nodes of
5x the default request (500m cpu, 1000Mi), small/medium/large/very large pods of 1x/2x/3x/5x, priorities
neg -100, low 0, mid 100, high 1000, very high 10000."""

from __future__ import annotations

from typing import Any

import pytest

from observatory.scheduling import PodInfo, Snapshot, filter_nodes
from observatory.scheduling.preemption import (
    NOT_ELIGIBLE_PREEMPTION_POLICY_NEVER,
    NOT_ELIGIBLE_TERMINATING_POD,
    Candidate,
    calculate_num_candidates,
    pick_one_node_for_preemption,
    preempt,
)
from tests.unit.scheduling.objects import node, pod

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SIZES = {"small": 1, "medium": 2, "large": 3, "very-large": 5}
START = "2019-01-01T00:00:00Z"


def sized(size: str) -> dict[str, str]:
    n = SIZES[size]
    return {"cpu": f"{100 * n}m", "memory": f"{200 * n}Mi"}


def victim(name: str, machine: str, size: str, priority: int, start: str = START) -> dict[str, Any]:
    obj = pod(name, node_name=machine, requests=sized(size), priority=priority, uid=name)
    obj["status"]["startTime"] = start
    return obj


def run(machines: list[str], preemptor_size: str, pods: list[dict[str, Any]], priority: int = HIGH,
        offset: int = 0) -> tuple[str | None, tuple[str, ...]]:
    snapshot = Snapshot([node(m, cpu="500m", memory="1000Mi") for m in machines], pods)
    info = PodInfo.from_pod(pod("preemptor", requests=sized(preemptor_size), priority=priority, uid="preemptor"))
    verdicts = filter_nodes(info, snapshot)
    result = preempt(info, {n.name: n for n in snapshot}, verdicts, offset=offset)
    if result.candidate is None:
        return None, ()
    return result.nominated_node, tuple(v.key.split("/")[1] for v in result.candidate.victims)


def test_a_pod_that_fits_on_both_nodes_when_lower_priority_pods_are_preempted():
    pods = [victim("m1.1", "machine1", "large", MID), victim("m2.1", "machine2", "large", MID)]
    assert run(["machine1", "machine2"], "large", pods) == ("machine1", ("m1.1",))
    assert run(["machine1", "machine2"], "large", pods, offset=1) == ("machine2", ("m2.1",))


def test_machine_with_min_highest_priority_pod_is_picked():
    pods = [victim("m1.1", "machine1", "medium", MID), victim("m1.2", "machine1", "large", MID),
            victim("m2.1", "machine2", "medium", MID), victim("m2.2", "machine2", "medium", LOW),
            victim("m3.1", "machine3", "medium", LOW), victim("m3.2", "machine3", "medium", LOW)]
    assert run(["machine1", "machine2", "machine3"], "very-large", pods)[0] == "machine3"


def test_when_highest_priorities_are_the_same_minimum_sum_of_priorities_is_picked():
    pods = [victim("m1.1", "machine1", "medium", MID), victim("m1.2", "machine1", "large", MID),
            victim("m2.1", "machine2", "large", MID), victim("m2.2", "machine2", "medium", LOW),
            victim("m3.1", "machine3", "medium", MID), victim("m3.2", "machine3", "medium", MID)]
    assert run(["machine1", "machine2", "machine3"], "very-large", pods)[0] == "machine2"


def test_when_highest_priority_and_sum_are_the_same_minimum_number_of_pods_is_picked():
    pods = [victim("m1.1", "machine1", "small", MID), victim("m1.2", "machine1", "small", NEG),
            victim("m1.3", "machine1", "small", MID), victim("m1.4", "machine1", "small", NEG),
            victim("m2.1", "machine2", "large", MID), victim("m2.2", "machine2", "medium", NEG),
            victim("m3.1", "machine3", "medium", MID), victim("m3.2", "machine3", "small", NEG),
            victim("m3.3", "machine3", "small", LOW)]
    assert run(["machine1", "machine2", "machine3"], "very-large", pods)[0] == "machine2"


def test_sum_of_adjusted_priorities_is_considered():
    pods = [victim("m1.1", "machine1", "small", MID), victim("m1.2", "machine1", "small", NEG),
            victim("m1.3", "machine1", "small", NEG),
            victim("m2.1", "machine2", "large", MID), victim("m2.2", "machine2", "medium", NEG),
            victim("m3.1", "machine3", "medium", MID), victim("m3.2", "machine3", "small", NEG),
            victim("m3.3", "machine3", "small", LOW)]
    assert run(["machine1", "machine2", "machine3"], "very-large", pods)[0] == "machine2"


def test_non_overlapping_lowest_high_priority_sum_priorities_and_number_of_pods():
    pods = [victim("m1.1", "machine1", "small", MID), victim("m1.2", "machine1", "small", LOW),
            victim("m1.3", "machine1", "small", LOW),
            victim("m2.1", "machine2", "large", HIGH),
            victim("m3.1", "machine3", "medium", MID), victim("m3.2", "machine3", "small", LOW),
            victim("m3.3", "machine3", "small", LOW), victim("m3.4", "machine3", "medium", LOW),
            victim("m4.1", "machine4", "medium", MID), victim("m4.2", "machine4", "small", MID),
            victim("m4.3", "machine4", "small", MID), victim("m4.4", "machine4", "small", NEG)]
    assert run(["machine1", "machine2", "machine3", "machine4"], "very-large", pods,
               priority=VERY_HIGH)[0] == "machine1"


def test_same_priority_same_number_of_victims_different_start_time_for_each_machines_pod():
    pods = [victim("m1.1", "machine1", "medium", MID, "2019-01-03T00:00:00Z"),
            victim("m1.2", "machine1", "medium", MID, "2019-01-03T00:00:00Z"),
            victim("m2.1", "machine2", "medium", MID, "2019-01-04T00:00:00Z"),
            victim("m2.2", "machine2", "medium", MID, "2019-01-04T00:00:00Z"),
            victim("m3.1", "machine3", "medium", MID, "2019-01-02T00:00:00Z"),
            victim("m3.2", "machine3", "medium", MID, "2019-01-02T00:00:00Z")]
    assert run(["machine1", "machine2", "machine3"], "very-large", pods)[0] == "machine2"


def test_same_priority_same_number_of_victims_different_start_time_for_all_pods():
    pods = [victim("m1.1", "machine1", "medium", MID, "2019-01-05T00:00:00Z"),
            victim("m1.2", "machine1", "medium", MID, "2019-01-03T00:00:00Z"),
            victim("m2.1", "machine2", "medium", MID, "2019-01-06T00:00:00Z"),
            victim("m2.2", "machine2", "medium", MID, "2019-01-02T00:00:00Z"),
            victim("m3.1", "machine3", "medium", MID, "2019-01-04T00:00:00Z"),
            victim("m3.2", "machine3", "medium", MID, "2019-01-07T00:00:00Z")]
    assert run(["machine1", "machine2", "machine3"], "very-large", pods)[0] == "machine3"


def test_different_priority_same_number_of_victims_different_start_time_for_all_pods():
    pods = [victim("m1.1", "machine1", "medium", LOW, "2019-01-05T00:00:00Z"),
            victim("m1.2", "machine1", "medium", MID, "2019-01-03T00:00:00Z"),
            victim("m2.1", "machine2", "medium", MID, "2019-01-07T00:00:00Z"),
            victim("m2.2", "machine2", "medium", LOW, "2019-01-02T00:00:00Z"),
            victim("m3.1", "machine3", "medium", LOW, "2019-01-04T00:00:00Z"),
            victim("m3.2", "machine3", "medium", MID, "2019-01-06T00:00:00Z")]
    assert run(["machine1", "machine2", "machine3"], "very-large", pods)[0] == "machine2"


def test_victims_are_the_fewest_lower_priority_pods_most_important_reprieved_first():
    """SelectVictimsOnNode: all lower-priority pods go, then they come back most important first while the pod
    still fits; equal-priority and higher pods are never victims."""
    pods = [victim("old-low", "machine1", "small", LOW, "2019-01-01T00:00:00Z"),
            victim("new-low", "machine1", "small", LOW, "2019-01-05T00:00:00Z"),
            victim("mid", "machine1", "small", MID), victim("peer", "machine1", "small", HIGH),
            victim("neg", "machine1", "small", NEG)]
    # 500m node, 400m used by pods below HIGH plus 100m by the peer; a medium (200m) pod needs two to go
    assert run(["machine1"], "medium", pods) == ("machine1", ("new-low", "neg"))


def test_no_candidate_clears_the_nomination_and_never_or_a_terminating_victim_keep_it():
    snapshot = Snapshot([node("machine1", cpu="500m", memory="1000Mi")],
                        [victim("peer", "machine1", "very-large", HIGH)])
    info = PodInfo.from_pod(pod("p", requests=sized("small"), priority=HIGH, uid="p"))
    nodes = {n.name: n for n in snapshot}
    result = preempt(info, nodes, filter_nodes(info, snapshot))
    assert (result.nominated_node, result.candidate, result.message) == ("", None, None)
    assert result.verdicts is not None and result.verdicts["machine1"].reasons == (
        "No preemption victims found for incoming pod",)

    never = PodInfo.from_pod(pod("p", requests=sized("small"), priority=HIGH, preemptionPolicy="Never"))
    assert preempt(never, nodes, filter_nodes(never, snapshot)).message == NOT_ELIGIBLE_PREEMPTION_POLICY_NEVER

    terminating = victim("v", "machine1", "very-large", LOW)
    terminating["metadata"]["deletionTimestamp"] = "2019-01-01T00:00:30Z"
    terminating["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True",
                                            "reason": "PreemptionByScheduler"}]
    snapshot = Snapshot([node("machine1", cpu="500m", memory="1000Mi")], [terminating])
    nodes = {n.name: n for n in snapshot}
    verdicts = filter_nodes(info, snapshot)
    waiting = preempt(info, nodes, verdicts, nominated_node="machine1")
    assert (waiting.message, waiting.nominated_node) == (NOT_ELIGIBLE_TERMINATING_POD, None)
    # without the nomination (or with the condition missing) the same node is simply a candidate again
    assert preempt(info, nodes, verdicts).nominated_node == "machine1"


@pytest.mark.parametrize(("num_nodes", "percentage", "absolute", "expected"), [
    (0, 50, 10, 0), (10, 50, 2, 5), (10, 20, 5, 5), (10, 50, 20, 10), (5000, 10, 100, 500), (500, 10, 100, 100)])
def test_calculate_num_candidates(num_nodes, percentage, absolute, expected):
    assert calculate_num_candidates(num_nodes, percentage, absolute) == expected


def test_the_dry_run_stops_at_the_number_of_candidates_counted_from_the_offset():
    machines = [f"m{i}" for i in range(3)]
    pods = [victim(f"v{i}", m, "very-large", LOW) for i, m in enumerate(machines)]
    snapshot = Snapshot([node(m, cpu="500m", memory="1000Mi") for m in machines], pods)
    info = PodInfo.from_pod(pod("p", requests=sized("small"), priority=HIGH, uid="p"))
    verdicts = filter_nodes(info, snapshot)
    nodes = {n.name: n for n in snapshot}
    picked = [preempt(info, nodes, verdicts, offset=o, min_absolute=1).nominated_node for o in range(4)]
    assert picked == ["m0", "m1", "m2", "m0"]


def test_pick_one_node_takes_the_first_on_a_full_tie():
    a = PodInfo.from_pod(victim("a", "x", "small", LOW))
    b = PodInfo.from_pod(victim("b", "y", "small", LOW))
    assert pick_one_node_for_preemption([Candidate("y", (b,)), Candidate("x", (a,))]).node == "y"
    assert pick_one_node_for_preemption([]) is None
