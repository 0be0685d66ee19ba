"""The node-fit preview for pods with claims: per node, in words, what the volume plugins decided, and that a
preview without volume data says it cannot see them rather than claiming a fit; the scheduler and the preview
agree node by node on the same objects."""

from __future__ import annotations

from datetime import UTC, datetime

from observatory.model.deltas import Relisted
from observatory.model.fit import compared
from observatory.model.state import ClusterState
from observatory.scheduling import Snapshot, schedule_one
from observatory.scheduling.fiterror import parse_fit_error
from observatory.scheduling.volumes import VolumeCatalog
from tests.unit.scheduling.volume_objects import IMMEDIATE, PROVISIONING, WAIT, node, pod, pv, pvc, storage_class

T0 = datetime(2026, 1, 1, tzinfo=UTC)
NODES = [node("node-a", **{"topology.kubernetes.io/zone": "a"}), node("node-b", **{"topology.kubernetes.io/zone": "b"})]


def preview(pods, claims=(), volumes=(), classes=(WAIT, IMMEDIATE, PROVISIONING), *, catalog=True):
    state = ClusterState(lambda: T0)
    state.apply(Relisted("nodes", tuple(NODES), "1"))
    state.apply(Relisted("pods", tuple(pods), "1"))
    if catalog:
        state.set_volumes(VolumeCatalog(claims, volumes, classes))
    return state.fit("default/web")


def scheduler(pods, claims=(), volumes=(), classes=(WAIT, IMMEDIATE, PROVISIONING)):
    snap = Snapshot(NODES, [p for p in pods if p["spec"].get("nodeName")])
    snap.volumes = VolumeCatalog(claims, volumes, classes)
    return schedule_one(next(p for p in pods if p["metadata"]["name"] == "web"), snap)


def agree(fit, decision):
    """Node by node, the preview's fit and first plugin are the scheduler's."""
    assert {n.node: (n.fits, n.filter) for n in fit.nodes} == {
        name: (v.feasible, v.plugin) for name, v in decision.verdicts.items()}


PV3 = pv("pv-3", "wait-sc", claim="data", phase="Bound", affinity={"topology.kubernetes.io/zone": ["b"]})


def test_a_bound_pv_names_its_node_affinity_and_the_nodes_label():
    pods, claims = [pod("web", "data")], [pvc("data", "wait-sc", bound_to="pv-3")]
    fit = preview(pods, claims, [PV3])
    a = fit.get("node-a")
    assert not a.fits and a.filter == "VolumeBinding"
    assert a.why == ("PVC data is bound to PV pv-3, whose node affinity needs topology.kubernetes.io/zone in (b); "
                     "the node has topology.kubernetes.io/zone=a",)
    assert fit.get("node-b").fits
    agree(fit, scheduler(pods, claims, [PV3]))


def test_an_unbound_immediate_claim_is_named_on_every_node():
    pods, claims = [pod("web", "data")], [pvc("data", "immediate-sc")]
    fit = preview(pods, claims)
    assert {n.why for n in fit.nodes} == {(
        "PVC data (class immediate-sc, Immediate binding) is not bound yet: the PV controller must bind it before any "
        "node is considered",)}
    agree(fit, scheduler(pods, claims))


def test_a_read_write_once_pod_claim_in_use_names_its_holder():
    rwop = ("ReadWriteOncePod",)
    pods = [pod("holder", "data", on="node-a"), pod("web", "data")]
    claims = [pvc("data", "wait-sc", bound_to="pv-1", modes=rwop)]
    volumes = [pv("pv-1", "wait-sc", claim="data", phase="Bound", modes=rwop)]
    fit = preview(pods, claims, volumes)
    assert {n.why for n in fit.nodes} == {(
        "PVC data is ReadWriteOncePod and pod default/holder already uses it, which rules out every node until that "
        "pod is gone",)}
    agree(fit, scheduler(pods, claims, volumes))


def test_a_claim_no_pv_fits_and_no_class_provisions_says_why():
    zonal = storage_class("zonal", provisioner="csi.example.com", topologies=[{"topology.kubernetes.io/zone": ["a"]}])
    pods, claims = [pod("web", "data")], [pvc("data", "zonal", request="2Gi")]
    fit = preview(pods, claims, classes=[zonal])
    assert fit.get("node-a").fits
    assert fit.get("node-b").why == (
        "PVC data (class zonal, 2Gi) has no available PV this node reaches, and StorageClass zonal provisions only "
        "where its allowedTopologies match, not on this node",)
    agree(fit, scheduler(pods, claims, classes=[zonal]))


def test_without_volume_data_every_node_says_the_prediction_cannot_see_volumes():
    fit = preview([pod("web", "data")], catalog=False)
    assert not fit.volumes_checked
    assert all(any(note.startswith("volumes not checked: this prediction cannot see") for note in n.notes)
               for n in fit.nodes)
    refusal = parse_fit_error("0/2 nodes are available: 2 node(s) didn't match PersistentVolume's node affinity. no "
                              "new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not "
                              "helpful for scheduling.")
    assert "from a filter observatory does not model" in compared(fit, refusal).disagreement


def test_with_volume_data_the_volume_reasons_are_modelled():
    pods, claims = [pod("web", "data")], [pvc("data", "wait-sc", bound_to="pv-3")]
    pv_nowhere = pv("pv-3", "wait-sc", claim="data", phase="Bound", affinity={"topology.kubernetes.io/zone": ["c"]})
    fit = preview(pods, claims, [pv_nowhere])
    refusal = parse_fit_error(scheduler(pods, claims, [pv_nowhere]).message)
    assert compared(fit, refusal).disagreement == ""


def test_a_pod_without_claims_gets_no_volume_note():
    fit = preview([pod("web")], catalog=False)
    assert not fit.volumes_checked
    assert not [note for n in fit.nodes for note in n.notes if note.startswith("volumes not checked")]


def test_observatory_why_reads_the_volume_catalog_it_gathered():
    """``why_from`` hands the gathered PVCs, PVs and StorageClasses to the fit, and a kind it could not read
    leaves the fit blind to volumes."""
    from observatory.why import Gathered, why_from

    web = pod("web", "data")
    catalog = VolumeCatalog([pvc("data", "wait-sc", bound_to="pv-3")], [PV3], [WAIT])
    why = why_from(Gathered(pod=web, nodes=NODES, volumes=catalog), now=T0)
    assert why.fit.get("node-a").filter == "VolumeBinding" and why.fit.get("node-b").fits
    catalog.blind.add("storageclasses")
    blind = why_from(Gathered(pod=web, nodes=NODES, volumes=catalog), now=T0)
    assert why.fit.volumes_checked and not blind.fit.volumes_checked and blind.fit.get("node-a").fits
