"""VolumeBinding's PreFilterResult: a pod whose bound claims use local PVs (node affinity ``kubernetes.io/hostname
In``) is filtered only on those nodes, as kube-scheduler v1.34.1's ``VolumeBinding.PreFilter`` does through
``GetEligibleNodes`` and ``util.GetLocalPersistentVolumeNodeNames``; ``RunPreFilterPlugins`` intersects it with
NodeAffinity's, and ``findNodesThatFitPod`` gives the nodes left out ``node(s) didn't satisfy plugin(s) [...]``
(UnschedulableAndUnresolvable). An empty intersection rejects the pod at PreFilter with ``node(s) didn't satisfy
plugin VolumeBinding`` (one plugin) or ``node(s) didn't satisfy plugin(s) [NodeAffinity VolumeBinding]
simultaneously``, and, as for every volume PreFilter rejection, DynamicResources' PostFilter then ends the
message with its ``not found`` error."""

from __future__ import annotations

from typing import Any

from observatory.scheduling import schedule_one
from observatory.scheduling.volumes import VolumeRecord

from .volume_objects import HOSTNAME, node, pod, pv, pvc, snapshot

LOCAL = {HOSTNAME: ["node-b"]}


def pinned(p: dict[str, Any], *names: str) -> dict[str, Any]:
    """``p`` with required node affinity terms ``matchFields metadata.name In [name]``, one per name (a field
    requirement takes exactly one value; the terms are ORed): NodeAffinity's PreFilterResult."""
    p["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]} for name in names]}}}
    return p


def local_snapshot(*nodes: dict[str, Any], pods: tuple[dict[str, Any], ...] = ()) -> Any:
    return snapshot(list(nodes), pods, claims=[pvc("data", "wait-sc", bound_to="pv-local")],
                    volumes=[pv("pv-local", "wait-sc", claim="data", phase="Bound", affinity=LOCAL)])


def test_local_node_names_follow_get_local_persistent_volume_node_names():
    two_terms = pv("pv", affinity=LOCAL)
    two_terms["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"].append(
        {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": ["node-a", "node-c"]},
                              {"key": HOSTNAME, "operator": "In", "values": ["node-c"]}]})
    assert VolumeRecord.from_obj(two_terms).local_node_names() == {"node-b", "node-c"}
    assert VolumeRecord.from_obj(pv("zonal", affinity={"topology.kubernetes.io/zone": ["a"]})).local_node_names() \
        == frozenset()
    assert VolumeRecord.from_obj(pv("anywhere")).local_node_names() == frozenset()


def test_only_the_local_pvs_node_is_filtered():
    decision = schedule_one(pod("app", "data"), local_snapshot(node("node-a"), node("node-b")))
    assert decision.node == "node-b"
    assert decision.verdicts["node-a"].reasons == ("node(s) didn't satisfy plugin(s) [VolumeBinding]",)
    assert decision.verdicts["node-a"].plugin == "VolumeBinding"


def test_a_full_local_node_gives_the_prefilter_result_reason_for_the_others():
    big, busy = pod("app", "data"), pod("busy", on="node-b")
    big["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "3"}}
    busy["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2"}}
    decision = schedule_one(big, local_snapshot(node("node-a"), node("node-b"), node("node-c"), pods=(busy,)))
    assert decision.message == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [VolumeBinding]. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 1 No preemption victims found for "
        "incoming pod, 2 Preemption is not helpful for scheduling.")


def test_node_affinity_and_volume_binding_intersect():
    decision = schedule_one(pinned(pod("app", "data"), "node-a", "node-b"),
                            local_snapshot(node("node-a"), node("node-b"), node("node-c")))
    assert decision.node == "node-b"
    assert decision.verdicts["node-a"].reasons == ("node(s) didn't satisfy plugin(s) [NodeAffinity VolumeBinding]",)


def test_disjoint_results_reject_the_pod_at_prefilter():
    decision = schedule_one(pinned(pod("app", "data"), "node-a"), local_snapshot(node("node-a"), node("node-b")))
    assert decision.node is None
    assert decision.message == ("0/2 nodes are available: node(s) didn't satisfy plugin(s) "
                                "[NodeAffinity VolumeBinding] simultaneously. not found")


def test_a_local_pv_naming_no_existing_node_leaves_every_node_out():
    """The PreFilterResult is not empty (it names node-b), so PreFilter passes; no node in it exists, so every node
    gets the PreFilterResult's reason and preemption is not helpful anywhere."""
    decision = schedule_one(pod("app", "data"), local_snapshot(node("node-a"), node("node-c")))
    assert decision.message == (
        "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [VolumeBinding]. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")


def test_a_single_narrowing_plugin_with_an_empty_result_is_named_alone():
    claims = [pvc("data", "wait-sc", bound_to="pv-b"), pvc("logs", "wait-sc", bound_to="pv-c")]
    volumes = [pv("pv-b", "wait-sc", claim="data", phase="Bound", affinity=LOCAL),
               pv("pv-c", "wait-sc", claim="logs", phase="Bound", affinity={HOSTNAME: ["node-c"]})]
    decision = schedule_one(pod("app", "data", "logs"),
                            snapshot([node("node-b"), node("node-c")], claims=claims, volumes=volumes))
    assert decision.message == "0/2 nodes are available: node(s) didn't satisfy plugin VolumeBinding. not found"
