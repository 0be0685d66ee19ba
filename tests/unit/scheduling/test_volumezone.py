"""VolumeZone's PreFilter and Filter with upstream's cases (``volume_zone_test.go``: ``TestSingleZone``,
``TestMultiZone``, ``TestWithBinding``)."""

from __future__ import annotations

import pytest

from observatory.scheduling import PodInfo
from observatory.scheduling.volumezone import ERR_VOLUME_ZONE, ZoneState, prefilter

from .volume_objects import node, pod, pv, pvc, snapshot, storage_class

BZ, BR = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
Z, R = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
VOLUMES = [pv("Vol_1", labels={BZ: "us-west1-a"}), pv("Vol_2", labels={BR: "us-west1", "uselessLabel": "none"}),
           pv("Vol_Stable_1", labels={Z: "us-west1-a"}), pv("Vol_Stable_2", labels={R: "us-west1"}),
           pv("Vol_Stable_3", labels={Z: "us-west1-a", R: "us-west1-a"}),
           pv("Vol_Multi", labels={BZ: "us-west1-c__us-west1-a"})]
CLAIMS = [pvc(f"PVC_{v['metadata']['name'][4:]}", bound_to=v["metadata"]["name"]) for v in VOLUMES]


def verdict(claim: str, **labels: str) -> str | None:
    snap = snapshot([{"metadata": {"name": "host1", "labels": labels}, "status": {}}], claims=CLAIMS,
                    volumes=VOLUMES)
    state = prefilter(PodInfo.from_pod(pod("pod_1", claim)), snap.volumes)
    assert isinstance(state, ZoneState)
    conflict = state.filter(next(iter(snap)))
    return None if conflict is None else ERR_VOLUME_ZONE


@pytest.mark.parametrize(("claim", "labels", "rejected"), [
    ("PVC_1", {}, False),                                            # node without labels
    ("PVC_1", {BZ: "us-west1-a", "uselessLabel": "none"}, False),    # beta zone label matched
    ("PVC_2", {BR: "us-west1"}, False),                              # beta region label matched
    ("PVC_2", {BR: "no_us-west1"}, True),                            # beta region label doesn't match
    ("PVC_1", {BZ: "no_us-west1-a"}, True),                          # beta zone label doesn't match
    ("PVC_Stable_1", {Z: "us-west1-a"}, False),                      # zone label matched
    ("PVC_Stable_2", {R: "no_us-west1"}, True),                      # region label doesn't match
    ("PVC_Stable_3", {Z: "us-west1-a"}, True),                       # pv with zone and region, node with only zone
    ("PVC_Stable_1", {BZ: "us-west1-a"}, True),                      # pv with zone, node with beta zone
    ("PVC_1", {Z: "us-west1-a"}, False),                             # pv with beta label, node with ga label
    ("PVC_1", {Z: "us-west1-b"}, True),                              # ... don't match
    ("PVC_Multi", {BZ: "us-west1-a"}, False),                        # TestMultiZone: one of c__a
    ("PVC_Multi", {BZ: "us-west1-b"}, True),
])
def test_single_and_multi_zone(claim, labels, rejected):
    assert (verdict(claim, **labels) == ERR_VOLUME_ZONE) is rejected


def test_pod_without_volume_is_skipped():
    assert prefilter(PodInfo.from_pod(pod("pod_1")), snapshot([node("a")]).volumes) is None


@pytest.mark.parametrize(("claim", "want"), [
    (pvc("PVC_EmptySC"), "PersistentVolumeClaim had no pv name and storageClass name"),
    (pvc("PVC_NoSC", "Class_0"), 'storageclass.storage.k8s.io "Class_0" not found'),
    (pvc("PVC_ImmediateSC", "Class_Immediate"), "PersistentVolume had no name"),
    (pvc("PVC_WaitSC", "Class_Wait"), None),
    (pvc("PVC_Gone", bound_to="Vol_Gone"), 'persistentvolume "Vol_Gone" not found'),
])
def test_with_binding(claim, want):
    """``TestWithBinding``: unbound claims by class; a WaitForFirstConsumer one is skipped (Skip overall)."""
    classes = [storage_class("Class_Immediate", "Immediate"), storage_class("Class_Wait")]
    snap = snapshot([node("host1")], claims=[claim], classes=classes)
    assert prefilter(PodInfo.from_pod(pod("pod_1", claim["metadata"]["name"])), snap.volumes) == want
