"""Topology spread on the lab, driven with kubectl: the scheduler's exact FailedScheduling events, and
``observatory why`` naming PodTopologySpread for the same node with the counts behind it.

The pair cluster's nodes carry ``kubernetes.io/hostname`` and no zone label. Expected FitErrors: kube-scheduler
v1.34.1's format (reference §4.3a) with PodTopologySpread's reasons (``podtopologyspread/filtering.go``): a missing
topology key is UnschedulableAndUnresolvable, a skew above maxSkew is Unschedulable. With the default
``nodeTaintsPolicy: Ignore`` the tainted control-plane node still counts as a hostname domain with no pods.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.test_interpod_affinity import (
    TAIL_NO_VICTIMS,
    TAIL_NOT_HELPFUL,
    TAINT,
    apply,
    failed_scheduling,
    manifest,
    node_of,
    why,
)
from tests.e2e.test_kubectl_seed import Lab, serving


def spread(key: str, max_skew: int = 1) -> list[dict[str, Any]]:
    return [{"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "spread"}}}]


def spread_pod(name: str, key: str) -> dict[str, Any]:
    pod = manifest(name, {"app": "spread"})
    pod["spec"]["topologySpreadConstraints"] = spread(key)
    return pod


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("spread"), "--scenario", "pair", "--no-kubelet") as lab:
        yield lab


def test_a_skew_over_max_skew_by_hostname(lab: Lab, capsys):
    apply(lab, spread_pod("spread-1", "kubernetes.io/hostname"))
    assert node_of(lab, "spread-1") == "pair-worker"
    apply(lab, spread_pod("spread-2", "kubernetes.io/hostname"))
    assert failed_scheduling(lab, "spread-2") == (
        f"0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints, {TAINT}. "
        f"{TAIL_NO_VICTIMS}")
    fit = why(capsys, lab, "spread-2")
    assert (fit["pair-worker"]["fits"], fit["pair-worker"]["filter"]) == (False, "PodTopologySpread")
    assert fit["pair-worker"]["why"] == [
        "spread over kubernetes.io/hostname: pair-worker has 1 (+1 with this pod), pair-control-plane has 0, "
        "maxSkew 1"]


def test_a_missing_topology_label(lab: Lab, capsys):
    apply(lab, spread_pod("zoned", "topology.kubernetes.io/zone"))
    assert failed_scheduling(lab, "zoned") == (
        "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label), "
        f"{TAINT}. {TAIL_NOT_HELPFUL}")
    fit = why(capsys, lab, "zoned")
    assert fit["pair-worker"]["filter"] == "PodTopologySpread"
    assert fit["pair-worker"]["why"] == [
        "spread over topology.kubernetes.io/zone: the node has no topology.kubernetes.io/zone label"]
