"""The fit preview beside the scheduler's latest refusal: where they disagree, the preview says so in words."""

from __future__ import annotations

from observatory.model.fit import FitPreview, NodeFit, compared
from observatory.scheduling.fiterror import parse_fit_error

VOLUME = ("0/2 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, 1 node(s) had "
          "untolerated taint {node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: "
          "0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
TAINT_AND_CPU = ("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
                 "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: 0/2 nodes are "
                 "available: 2 Preemption is not helpful for scheduling.")


def preview(*fits: NodeFit, source: str = "observatory") -> FitPreview:
    return FitPreview("default/p", source, "observatory's prediction from cached objects", fits)


CONTROL = NodeFit("pair-control-plane", False, "TaintToleration")
WORKER_FITS = NodeFit("pair-worker", True, None)
WORKER_CPU = NodeFit("pair-worker", False, "NodeResourcesFit")


def test_an_unmodeled_filter_in_the_refusal_is_named_and_the_fit_is_disputed():
    out = compared(preview(CONTROL, WORKER_FITS), parse_fit_error(VOLUME))
    assert out.disagreement == (
        "The scheduler also reports \"1 node(s) didn't match PersistentVolume's node affinity\", from a filter "
        "observatory does not model: trust the scheduler's message for those nodes. The scheduler's latest refusal "
        "found no node, but this prediction fits pair-worker: the scheduler runs a filter observatory does not "
        "model.")
    assert out.to_json()["disagreement"] == out.disagreement


def test_a_refusal_the_prediction_agrees_with_says_nothing():
    assert compared(preview(CONTROL, WORKER_CPU), parse_fit_error(TAINT_AND_CPU)).disagreement == ""


def test_a_fit_the_scheduler_denied_for_modeled_reasons_points_at_the_cache_or_profile():
    out = compared(preview(CONTROL, WORKER_FITS), parse_fit_error(TAINT_AND_CPU))
    assert out.disagreement.startswith("The scheduler's latest refusal found no node, but this prediction fits "
                                       "pair-worker: the scheduler runs another profile, or knows of pods")


def test_another_node_count_is_said():
    out = compared(preview(WORKER_CPU), parse_fit_error(TAINT_AND_CPU))
    assert out.disagreement == "The scheduler counted 2 nodes; this cache holds 1."


def test_no_refusal_or_a_simulator_result_is_left_alone():
    plain = preview(CONTROL, WORKER_FITS)
    assert compared(plain, None) is plain
    recorded = preview(CONTROL, WORKER_FITS, source="kube-scheduler-simulator")
    assert compared(recorded, parse_fit_error(VOLUME)) is recorded


def test_comparing_again_keeps_the_same_object():
    once = compared(preview(CONTROL, WORKER_FITS), parse_fit_error(VOLUME))
    assert compared(once, parse_fit_error(VOLUME)) is once
    assert compared(once, None).disagreement == ""
