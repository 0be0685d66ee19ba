"""The pure parts of ``observatory schedule``: policies, queue and backoff, the JSON it writes, options, lines.

Expected numbers are worked out by hand from the upstream formulas quoted in each test (kube-scheduler v1.34.1
``least_allocated.go``, ``most_allocated.go``, ``balanced_allocation.go``, ``taint_toleration.go``; client-go's
events/v1 recorder; ``podutil.UpdatePodCondition``), never copied from what the code prints.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from datetime import UTC, datetime

import pytest

from observatory.model.decisions import OUTCOMES, SchedulingDecision
from observatory.scheduler import SchedulerOptions
from observatory.scheduler.objects import condition_patch, lease_spec, legacy_event, scheduler_event
from observatory.scheduler.options import field_selector
from observatory.scheduler.policies import POLICIES, choose, most_allocated_score
from observatory.scheduling import PodInfo, Snapshot, schedule_one
from observatory.scheduling.queue import SchedulingQueue, backoff
from tests.unit.scheduling.objects import node, pod

TAINT = {"key": "example.com/dedicated", "value": "db", "effect": "NoSchedule"}


def cluster() -> Snapshot:
    """n0 tainted (never feasible); n1 two pods of 1500m/3Gi (3 cpu, 6Gi used); n2 three pods of 100m/256Mi
    (300m, 768Mi); n3 one pod of 1500m/3Gi. All 4 cpu / 8Gi (8192Mi)."""
    nodes = [node("n0", taints=[TAINT]), node("n1"), node("n2"), node("n3")]
    big = {"cpu": "1500m", "memory": "3Gi"}
    small = {"cpu": "100m", "memory": "256Mi"}
    pods = [pod("a1", node_name="n1", requests=big, uid="a1"), pod("a2", node_name="n1", requests=big, uid="a2"),
            *(pod(f"b{i}", node_name="n2", requests=small, uid=f"b{i}") for i in range(3)),
            pod("c1", node_name="n3", requests=big, uid="c1")]
    return Snapshot(nodes, pods)


NEW = pod("new", requests={"cpu": "1", "memory": "2Gi"})


def decide(policy: str, rng: random.Random | None = None):
    snapshot = cluster()
    info = PodInfo.from_pod(NEW)
    return choose(policy, info, schedule_one(info, snapshot), snapshot, rng)


def test_least_allocated_is_the_default_profile():
    """LeastAllocated (cpu, memory; (alloc - req) * 100 // alloc, integer mean):
    n1: 4000/4000 and 8192/8192 requested -> 0; n2: cpu 1300 -> 67, memory 2816Mi -> 65, mean 66;
    n3: cpu 2500 -> 37, memory 5120Mi -> 37. BalancedAllocation int((1 - |f_cpu - f_mem| / 2) * 100):
    n1 1.0/1.0 -> 100, n2 0.325/0.34375 -> 99, n3 0.625/0.625 -> 100. TaintToleration: no PreferNoSchedule
    taints, reversed -> 100, weight 3. ImageLocality: no node reports images -> 0. Totals: n1 400, n2 465,
    n3 437."""
    choice = decide("least-allocated")
    assert choice.node == "n2"
    assert dict(choice.scores) == {"n1": 400, "n2": 465, "n3": 437}
    assert choice.plugin_scores["n2"] == {"TaintToleration": 100, "NodeResourcesFit": 66,
                                          "NodeResourcesBalancedAllocation": 99, "ImageLocality": 0}


def test_most_allocated_packs():
    """MostAllocated (min(req, alloc) * 100 // alloc): n1 100/100 -> 100; n2 cpu 32, memory 34 -> 33;
    n3 62/62 -> 62. Totals with TaintToleration 300 and BalancedAllocation: n1 500, n2 432, n3 462."""
    choice = decide("most-allocated")
    assert choice.node == "n1"
    assert dict(choice.scores) == {"n1": 500, "n2": 432, "n3": 462}
    assert choice.plugin_scores["n1"]["NodeResourcesFit"] == 100


def test_most_allocated_score_caps_and_skips_missing_resources():
    info = PodInfo.from_pod(pod("p", requests={"cpu": "8", "memory": "1Gi"}))
    snapshot = Snapshot([node("n", cpu="4", memory="8Gi")])
    # cpu capped at 100; memory 1024 * 100 // 8192 = 12; mean 112 // 2 = 56
    assert most_allocated_score(info, snapshot.get("n")) == 56


def test_spread_takes_the_node_with_fewest_pods():
    choice = decide("spread")  # n1 2 pods, n2 3 pods, n3 1 pod; n0 is not feasible
    assert choice.node == "n3"
    assert dict(choice.scores) == {"n1": -2, "n2": -3, "n3": -1}


def test_first_fit_takes_the_first_feasible_name():
    assert decide("first-fit").node == "n1"  # n0 comes first by name but its taint rejects the pod


def test_random_is_uniform_over_the_feasible_and_seedable():
    rng_a, rng_b = random.Random(42), random.Random(42)
    snapshot = cluster()
    info = PodInfo.from_pod(NEW)
    decision = schedule_one(info, snapshot)
    a = [choose("random", info, decision, snapshot, rng_a).node for _ in range(300)]
    b = [choose("random", info, decision, snapshot, rng_b).node for _ in range(300)]
    assert a == b
    counts = Counter(a)
    assert set(counts) == {"n1", "n2", "n3"}
    assert all(60 < n < 140 for n in counts.values()), counts  # 100 expected each


def test_no_feasible_node_chooses_nothing():
    snapshot = Snapshot([node("n0", taints=[TAINT])])
    info = PodInfo.from_pod(NEW)
    for policy in POLICIES:
        assert choose(policy, info, schedule_one(info, snapshot), snapshot).node is None
    with pytest.raises(ValueError, match="unknown policy"):
        choose("best", info, schedule_one(info, snapshot), snapshot)


# -- queue -------------------------------------------------------------------------------------------------------

def test_backoff_doubles_from_one_second_to_ten():
    assert [backoff(n) for n in range(0, 7)] == [0.0, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_queue_orders_by_priority_then_the_time_each_pod_entered_the_queue():
    """PrioritySort's ``Less``: priority, then ``QueuedPodInfo.Timestamp``, not creationTimestamp."""
    q = SchedulingQueue()
    old = {"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": {}}
    new = {"metadata": {"creationTimestamp": "2026-01-02T00:00:00Z"}, "spec": {}}
    high = {"metadata": {"creationTimestamp": "2026-01-03T00:00:00Z"}, "spec": {"priority": 100}}
    for when, key, p in ((1.0, ("ns", "new"), new), (2.0, ("ns", "old"), old), (3.0, ("ns", "high"), high)):
        q.add(key, p, when)
    assert [q.pop(3.0)[0] for _ in range(3)] == [("ns", "high"), ("ns", "new"), ("ns", "old")]
    assert q.pop(3.0) == (None, None)


def test_a_failed_attempt_puts_the_pod_back_with_a_fresh_queue_time():
    q = SchedulingQueue()
    q.add(("ns", "first"), {"spec": {"a": 1}}, 0.0)
    assert q.pop(0.0) == (("ns", "first"), None)
    q.unschedulable(("ns", "first"), 5.0)
    q.add(("ns", "second"), {"spec": {"b": 1}}, 4.0)
    q.cluster_changed(10.0)
    assert [q.pop(10.0)[0] for _ in range(2)] == [("ns", "second"), ("ns", "first")]


def test_unschedulable_pod_waits_for_a_change_and_its_backoff():
    q = SchedulingQueue()
    key, p = ("ns", "big"), {"metadata": {}, "spec": {"containers": []}}
    q.add(key, p, 0.0)
    assert q.pop(0.0) == (key, None)
    assert q.unschedulable(key, 0.0) == 1.0
    key_none, due = q.pop(5.0)
    assert key_none is None and due == 300.0  # nothing changed: only the 5-minute flush
    assert q.cluster_changed(5.0)
    assert q.pop(5.0) == (key, None)  # its 1 s backoff is over
    assert q.unschedulable(key, 10.0) == 2.0  # attempt 2
    q.cluster_changed(10.5)
    assert q.pop(10.5) == (None, 12.0)  # changed, but still backing off
    assert q.pop(12.0) == (key, None)
    assert q.attempts(key) == 2


def test_same_spec_is_not_queued_again_but_a_new_spec_is():
    q = SchedulingQueue()
    key = ("ns", "p")
    assert q.add(key, {"spec": {"a": 1}}, 0.0)
    q.pop(0.0)  # in flight
    assert not q.add(key, {"spec": {"a": 1}, "status": {"conditions": []}}, 0.0)
    assert q.pop(0.0) == (None, None)
    assert q.add(key, {"spec": {"a": 2}}, 0.0)
    assert q.pop(0.0) == (key, None)


def test_failed_binding_retries_after_backoff_without_a_change():
    q = SchedulingQueue()
    key = ("ns", "p")
    q.add(key, {"spec": {}}, 0.0)
    q.pop(0.0)
    assert q.retry(key, 0.0) == 1.0
    assert q.pop(0.5) == (None, 1.0)
    assert q.pop(1.0) == (key, None)


# -- what is written ---------------------------------------------------------------------------------------------

POD = {"metadata": {"name": "web", "namespace": "sched-lab", "uid": "u-1", "resourceVersion": "42"},
       "spec": {}, "status": {"phase": "Pending", "conditions": []}}


def test_events_v1_event_as_the_scheduler_recorder_makes_it():
    now = datetime(2026, 8, 22, 14, 20, 24, 123456, tzinfo=UTC)
    event = scheduler_event(POD, "Normal", "Scheduled", "Binding", "Successfully assigned sched-lab/web to n1",
                            controller="my-scheduler", instance="my-scheduler-host", now=now, nanos=255)
    assert event == {
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "web.ff", "namespace": "sched-lab"},
        "eventTime": "2026-08-22T14:20:24.123456Z", "reportingController": "my-scheduler",
        "reportingInstance": "my-scheduler-host", "action": "Binding", "reason": "Scheduled",
        "regarding": {"kind": "Pod", "namespace": "sched-lab", "name": "web", "uid": "u-1", "apiVersion": "v1",
                      "resourceVersion": "42"},
        "note": "Successfully assigned sched-lab/web to n1", "type": "Normal"}
    assert re.fullmatch(r"web\.[0-9a-f]+", scheduler_event(POD, "Normal", "Scheduled", "Binding", "x",
                                                           controller="c", instance="i")["metadata"]["name"])
    legacy = legacy_event(POD, "Warning", "FailedScheduling", "msg", controller="my-scheduler", now=now, nanos=1)
    assert (legacy["source"], legacy["count"], legacy["eventTime"], legacy["firstTimestamp"]) == (
        {"component": "my-scheduler"}, 1, None, "2026-08-22T14:20:24Z")


def test_condition_patch_adds_then_updates_then_stays_quiet():
    now = datetime(2026, 8, 22, 14, 0, 0, tzinfo=UTC)
    first = condition_patch(POD, "Unschedulable", "0/2 nodes are available: a.", now)
    assert first == {"status": {"$setElementOrder/conditions": [{"type": "PodScheduled"}], "conditions": [
        {"type": "PodScheduled", "status": "False", "lastTransitionTime": "2026-08-22T14:00:00Z",
         "reason": "Unschedulable", "message": "0/2 nodes are available: a."}]}}
    applied = {**POD, "status": {"conditions": [{**first["status"]["conditions"][0], "lastProbeTime": None}]}}
    # the same text again: UpdatePodCondition finds nothing changed, so nothing is written
    assert condition_patch(applied, "Unschedulable", "0/2 nodes are available: a.") is None
    # a new text: only the message changes; the status stayed False, so lastTransitionTime stands
    assert condition_patch(applied, "Unschedulable", "0/2 nodes are available: b.") == {
        "status": {"$setElementOrder/conditions": [{"type": "PodScheduled"}],
                   "conditions": [{"message": "0/2 nodes are available: b.", "type": "PodScheduled"}]}}


def test_lease_spec_fields():
    t = datetime(2026, 1, 1, tzinfo=UTC)
    assert lease_spec("host_1", 15, t, t, 3) == {
        "holderIdentity": "host_1", "leaseDurationSeconds": 15, "acquireTime": "2026-01-01T00:00:00.000000Z",
        "renewTime": "2026-01-01T00:00:00.000000Z", "leaseTransitions": 3}


# -- options and lines -------------------------------------------------------------------------------------------

def test_options_are_checked_in_words():
    SchedulerOptions("my-scheduler").validate()
    cases = [(SchedulerOptions(""), "scheduler-name"), (SchedulerOptions("s", policy="best"), "--policy"),
             (SchedulerOptions("s", leader_elect=True, dry_run=True), "--dry-run"),
             (SchedulerOptions("s", leader_elect=True, lease_duration=5, renew_deadline=5), "--lease-duration"),
             (SchedulerOptions("s", leader_elect=True, renew_deadline=2, retry_period=2), "--renew-deadline"),
             # break-it findings: NaN passed every comparison, and 1e308 overflowed the Lease's int32 field
             (SchedulerOptions("s", leader_elect=True, lease_duration=float("nan")), "finite"),
             (SchedulerOptions("s", leader_elect=True, lease_duration=1e308), "int32"),
             (SchedulerOptions("s", percentage_of_nodes_to_score=101), r"--percentage-of-nodes-to-score 101 is not in "
                                                                        r"valid range \[0-100\]"),
             (SchedulerOptions("s", profile_percentages=(("s", -1),)), "profile 's'")]
    for options, words in cases:
        with pytest.raises(ValueError, match=words):
            options.validate()
    assert field_selector("my-scheduler") == "spec.schedulerName=my-scheduler,spec.nodeName="
    assert field_selector("a,b=c") == r"spec.schedulerName=a\,b\=c,spec.nodeName="


def test_decision_lines():
    t = datetime(2026, 1, 1, tzinfo=UTC)
    base = dict(pod="ns/p", uid="u", scheduler_name="s", policy="least-allocated", verdicts={"a": "", "b": "x"},
                scores={"a": 7}, node="a", message=None, exchange=None, time=t, attempt=1)
    assert SchedulingDecision(**base, outcome="dry-run").summary().startswith("would bind ns/p -> a (1/2 feasible")
    fit = "0/2 nodes are available: 2 Insufficient cpu."
    line = SchedulingDecision(**{**base, "node": None, "message": fit, "attempt": 3}, outcome="unschedulable").summary()
    assert line == f"FailedScheduling ns/p (attempt 3): {fit}"
    with pytest.raises(ValueError):
        SchedulingDecision(**base, outcome="maybe")
    assert "skipped" in OUTCOMES and "conflict" in OUTCOMES


def test_percentage_of_nodes_to_score_reaches_the_scheduler_from_the_flag():
    import argparse

    from observatory import schedule
    from observatory.scheduler.loop import Scheduler

    parser = argparse.ArgumentParser()
    schedule.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["schedule", "--scheduler-name", "s", "--percentage-of-nodes-to-score", "30"])
    options = schedule.options_from(args)
    assert options.percentage_of_nodes_to_score == 30
    sampler = Scheduler(object(), options).sampler
    assert sampler.num_to_find(1000) == 300
    assert Scheduler(object(), SchedulerOptions("s", profiles=("b",), profile_percentages=(("b", 10),))).sampler \
        .num_to_find(1000, "b") == 100
