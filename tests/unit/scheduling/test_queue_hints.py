"""The scheduling queue with QueueingHints, after ``scheduling_queue_test.go`` (kubernetes v1.34): a cluster event
moves a parked pod only when a plugin that rejected it queues on that event (``TestPriorityQueue_MoveAllToActive
OrBackoffQueueWithQueueingHint``: Queue from an unschedulable plugin goes through backoff, Queue from a pending plugin
goes to activeQ at once, Skip leaves it in unschedulablePods), and the five-minute flush still applies."""

from __future__ import annotations

import copy

from observatory.scheduling.clusterevents import ASSIGNED_POD, NODE, ActionType, ClusterEvent
from observatory.scheduling.queue import SchedulingQueue
from tests.unit.scheduling.objects import node, pod

KEY = ("default", "p")
LABEL = ClusterEvent(NODE, ActionType.UPDATE_NODE_LABEL)
ALLOCATABLE = ClusterEvent(NODE, ActionType.UPDATE_NODE_ALLOCATABLE)


def parked(plugins: set[str], pending: set[str] = frozenset(), *, target: dict | None = None) -> SchedulingQueue:
    """A queue holding ``p`` after one failed attempt at t=0 (backoff until t=1)."""
    queue = SchedulingQueue()
    queue.add(KEY, target or pod("p", uid="p", requests={"cpu": "6"}), 0.0)
    assert queue.pop(0.0)[0] == KEY
    queue.unschedulable(KEY, 0.0, plugins, pending)
    assert queue.state(KEY) == "unschedulable"
    return queue


def test_a_node_label_does_not_move_a_pod_that_only_lacked_cpu():
    queue = parked({"NodeResourcesFit"})
    labelled = node("n", labels={"lesson": "again"})
    assert not queue.cluster_changed(5.0, LABEL, node("n"), labelled)
    assert queue.state(KEY) == "unschedulable"
    assert queue.pop(5.0) == (None, 300.0)  # only the flush is due


def test_more_allocatable_cpu_moves_it_after_its_backoff():
    queue = parked({"NodeResourcesFit"})
    assert queue.cluster_changed(0.5, ALLOCATABLE, node("n"), node("n", cpu="8"))
    assert queue.state(KEY) == "backoff"
    assert queue.pop(0.5) == (None, 1.0)
    assert queue.pop(1.0)[0] == KEY


def test_after_the_backoff_it_goes_straight_to_active():
    queue = parked({"NodeResourcesFit"})
    assert queue.cluster_changed(2.0, ALLOCATABLE, node("n"), node("n", cpu="8"))
    assert queue.state(KEY) == "active"


def test_more_allocatable_that_still_does_not_fit_is_skipped():
    queue = parked({"NodeResourcesFit"})
    assert not queue.cluster_changed(2.0, ALLOCATABLE, node("n"), node("n", cpu="5"))
    assert queue.state(KEY) == "unschedulable"


def test_only_the_rejecting_plugins_are_asked():
    """A taint removed queues pods TaintToleration rejected, not those NodeResourcesFit rejected."""
    fit = parked({"NodeResourcesFit"})
    taint = parked({"TaintToleration"})
    tainted = node("n", taints=[{"key": "k", "effect": "NoSchedule"}])
    event = ClusterEvent(NODE, ActionType.UPDATE_NODE_TAINT)
    assert not fit.cluster_changed(2.0, event, tainted, node("n"))
    assert taint.cluster_changed(2.0, event, tainted, node("n"))
    assert (fit.state(KEY), taint.state(KEY)) == ("unschedulable", "active")


def test_queue_from_a_pending_plugin_skips_the_backoff():
    queue = parked({"NodeResourcesFit"}, {"SomeWaitingPlugin"})
    deleted = pod("x", uid="x", node_name="n")
    assert queue.cluster_changed(0.5, ClusterEvent(ASSIGNED_POD, ActionType.DELETE), deleted, None)
    assert queue.state(KEY) == "active"


def test_the_wildcard_and_the_flush_still_move_every_pod():
    queue = parked({"NodeResourcesFit"})
    assert queue.cluster_changed(2.0)
    assert queue.state(KEY) == "active"
    flushed = parked({"NodeResourcesFit"})
    assert flushed.pop(299.0) == (None, 300.0)
    assert flushed.pop(300.0)[0] == KEY


def test_a_pod_rejected_with_no_plugin_moves_on_any_event():
    queue = parked(set())
    assert queue.cluster_changed(2.0, LABEL, node("n"), node("n", labels={"a": "b"}))
    assert queue.state(KEY) == "active"


def test_the_parked_pods_own_update_goes_through_its_hints():
    """``PriorityQueue.Update`` with QHint on: a toleration added to the pod TaintToleration rejected moves it; a
    label added to a pod NodeResourcesFit rejected does not."""
    target = pod("p", uid="p")
    queue = parked({"TaintToleration"}, target=target)
    tolerant = copy.deepcopy(target)
    tolerant["spec"]["tolerations"] = [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
    assert queue.add(KEY, tolerant, 2.0)
    assert queue.state(KEY) == "active"

    fit = parked({"NodeResourcesFit"}, target=target)
    relabelled = copy.deepcopy(target)
    relabelled["metadata"]["labels"] = {"a": "b"}
    assert not fit.add(KEY, relabelled, 2.0)
    assert fit.state(KEY) == "unschedulable"
    assert fit.rejected_by(KEY) == ({"NodeResourcesFit"}, frozenset())
