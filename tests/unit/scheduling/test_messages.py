"""FitError and event texts, byte for byte against the reference (§4.3, §4.3a), never against our own output."""

from __future__ import annotations

from observatory.scheduling import (
    NO_NODES_AVAILABLE,
    Snapshot,
    fit_error_message,
    schedule_one,
    scheduled_message,
)
from observatory.scheduling.messages import reasons_histogram
from observatory.scheduling.verdicts import UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE, NodeVerdict

from .objects import CONTROL_PLANE, node, pair, pod

TAINT = "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"


def test_pair_pod_requesting_100_cpus():
    """§4.3a worked example 1: the request exceeds every node's allocatable, so both nodes are unresolvable."""
    decision = schedule_one(pod(requests={"cpu": "100"}), pair())
    assert decision.node is None
    assert decision.message == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: 0/2 nodes are "
        "available: 2 Preemption is not helpful for scheduling."
    )
    assert decision.condition_reason == "Unschedulable"


def test_pair_pod_with_node_selector_disktype_ssd():
    """§4.3a worked example 2."""
    decision = schedule_one(pod(nodeSelector={"disktype": "ssd"}), pair())
    assert decision.message == (
        "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated "
        "taint {node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: 0/2 nodes are "
        "available: 2 Preemption is not helpful for scheduling."
    )


def test_pair_memory_only_the_tainted_node_could_hold():
    """Worker already runs a 6Gi pod (priority 0); the new pod (priority 0) requests 4Gi.

    Derivation, from the rules of §4.3/§4.3a and upstream:

    * Filter. pair-control-plane fails TaintToleration first (UnschedulableAndUnresolvable) with
      ``node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }``; its free 8Gi never matters.
      pair-worker passes the taint, affinity and port filters and fails NodeResourcesFit: 4Gi > 8Gi - 6Gi free,
      but 4Gi <= 8Gi allocatable, so the status is plain Unschedulable with ``Insufficient memory``.
    * Histogram: ``1 Insufficient memory`` and ``1 node(s) had untolerated taint {…}``; byte order puts
      ``"1 I…"`` before ``"1 n…"``.
    * PostFilter. DRA contributes ``no new claims to deallocate``. DefaultPreemption: the control plane is
      unresolvable, so ``Preemption is not helpful for scheduling``; the worker is a potential node, but its only
      pod has the same priority (0 is not lower than 0), so ``No preemption victims found for incoming pod``. No
      candidate, so preemption returns its own FitError over 2 nodes, sorted: ``"1 No…" < "1 Preemption…"``.
    * The PostFilter text is appended without an extra period (1.34), so the message ends in a single ``.``.
    """
    pods = [pod("big", node_name="pair-worker", requests={"memory": "6Gi"})]
    decision = schedule_one(pod(requests={"memory": "4Gi"}), pair(), pods)
    assert decision.message == (
        "0/2 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: 0/2 nodes are "
        "available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    )
    worker = decision.verdicts["pair-worker"]
    assert worker.code == UNSCHEDULABLE
    (short,) = worker.details
    assert (short.resource, short.requested, short.used, short.free, short.allocatable, short.unresolvable) == (
        "memory", 4 * 2**30, 6 * 2**30, 2 * 2**30, 8 * 2**30, False)


def test_no_nodes():
    assert schedule_one(pod(), []).message == "no nodes available to schedule pods"
    assert NO_NODES_AVAILABLE == "no nodes available to schedule pods"


def test_scheduled_event_message():
    assert scheduled_message("default", "nginx", "node01") == "Successfully assigned default/nginx to node01"


def test_three_node_example_without_dra_fragment():
    """§4.3 "1.34-style" example: one tainted control plane, two full workers held by equal-priority pods."""
    nodes = [node("cp", labels={CONTROL_PLANE: ""}, taints=[{"key": CONTROL_PLANE, "effect": "NoSchedule"}]),
             node("w1"), node("w2")]
    pods = [pod("a", node_name="w1", requests={"cpu": "4"}), pod("b", node_name="w2", requests={"cpu": "3500m"})]
    decision = schedule_one(pod(requests={"cpu": "1"}), nodes, pods, dra_fragment=False)
    assert decision.message == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
        "2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod."
    )


def test_three_node_selector_miss_without_dra_fragment():
    """§4.3 "nodeSelector miss" example."""
    decision = schedule_one(pod(nodeSelector={"disktype": "ssd"}), [node("a"), node("b"), node("c")],
                            dra_fragment=False)
    assert decision.message == (
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling."
    )


def _v(name: str, *reasons: str) -> NodeVerdict:
    return NodeVerdict(name, "X", UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def test_counts_sort_as_byte_strings_so_10_comes_before_2():
    verdicts = [_v(f"n{i}", "Insufficient cpu") for i in range(10)] + [_v("m1", TAINT), _v("m2", TAINT)]
    assert fit_error_message(12, verdicts) == (
        "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }."
    )


def test_capital_letters_sort_before_lowercase():
    assert reasons_histogram([_v("a", "node(s) were unschedulable"), _v("b", "Too many pods"),
                              _v("c", "Insufficient memory")]) == [
        "1 Insufficient memory", "1 Too many pods", "1 node(s) were unschedulable"]


def test_one_node_counts_once_per_reason_it_carries():
    """NodeResourcesFit reports every shortfall, so one node can count for cpu and for memory."""
    decision = schedule_one(pod(requests={"cpu": "5", "memory": "9Gi"}), [node("only")], dra_fragment=False)
    assert decision.message == (
        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. preemption: 0/1 nodes are "
        "available: 1 Preemption is not helpful for scheduling."
    )


def test_absent_nodes_count_for_absent_reasons():
    assert fit_error_message(3, [_v("a", "Insufficient cpu")], absent_reasons=["Preemption is not helpful for "
                                                                              "scheduling"]) == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 Preemption is not helpful for scheduling.")


def test_prefilter_message_replaces_the_histogram():
    assert fit_error_message(2, [_v("a", "x")], prefilter_message="pod affinity terms conflict",
                             postfilter_message="preemption: y.") == (
        "0/2 nodes are available: pod affinity terms conflict. preemption: y.")


def test_preemption_policy_never():
    spec_pod = pod(requests={"memory": "4Gi"}, preemptionPolicy="Never")
    decision = schedule_one(spec_pod, pair(), [pod("big", node_name="pair-worker", requests={"memory": "6Gi"})])
    assert decision.message == (
        "0/2 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: not eligible due to "
        "preemptionPolicy=Never."
    )
    assert decision.preemption is None


def test_snapshot_gives_the_same_text_as_json():
    pods = [pod("big", node_name="pair-worker", requests={"memory": "6Gi"})]
    spec_pod = pod(requests={"memory": "4Gi"})
    assert schedule_one(spec_pod, Snapshot(pair(), pods)).message == schedule_one(spec_pod, pair(), pods).message
