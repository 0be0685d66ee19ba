"""VolumeBinding's PreFilter, Filter, Reserve and the PreBind check, with cases from upstream's
``pkg/scheduler/framework/plugins/volumebinding/volume_binding_test.go`` (``TestVolumeBinding``) and the binder's
behaviour in ``binder.go``; then the whole cycle's FitError text for the same objects."""

from __future__ import annotations

import pytest

from observatory.scheduling import PodInfo, schedule_one
from observatory.scheduling.volumebinding import (
    ERR_BIND_CONFLICT,
    ERR_NODE_CONFLICT,
    ERR_PV_NOT_EXIST,
    ERR_UNBOUND_IMMEDIATE,
    BindingState,
    check_bindings,
    prefilter,
    reserve,
)
from observatory.scheduling.volumeplugins import reserve_volumes
from observatory.scheduling.volumes import ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE

from .volume_objects import HOSTNAME, PROVISIONING, node, pod, pv, pvc, snapshot, storage_class


def run_plugin(p, snap):
    """The plugin alone, as upstream's test runs it: PreFilter, then Filter on each node."""
    state = prefilter(PodInfo.from_pod(p), snap.volumes)
    if not isinstance(state, BindingState):
        return state, None
    return state, {n.name: state.filter(n) for n in snap}


@pytest.mark.parametrize(("claims", "want"), [
    ([], 'persistentvolumeclaim "pvc-a" not found'),
    ([pvc("pvc-a", "wait-sc", bound_to="pv-a")], 'persistentvolumeclaim "pvc-b" not found'),
])
def test_missing_claims_reject_at_prefilter(claims, want):
    """"PVC does not exist" and "Part of PVCs do not exist": the lister's NotFound text, for the first missing."""
    p = pod("pod-a", "pvc-a", "pvc-b") if claims else pod("pod-a", "pvc-a")
    assert run_plugin(p, snapshot([node("node-a")], claims=claims))[0] == want


def test_pod_without_claims_is_skipped_and_costs_nothing():
    """A pod whose only volume is the service-account token has no volumes for the plugins to read."""
    token = {"name": "kube-api-access-x7k2p", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}
    info = PodInfo.from_pod(pod("pod-a", volumes=[token]))
    assert info.volumes == ()
    assert prefilter(info, snapshot([node("node-a")]).volumes) is None


def test_all_bound_fits():
    snap = snapshot([node("node-a")], claims=[pvc("pvc-a", "wait-sc", bound_to="pv-a")],
                    volumes=[pv("pv-a", "wait-sc", claim="pvc-a", phase="Bound")])
    state, verdicts = run_plugin(pod("pod-a", "pvc-a"), snap)
    assert verdicts == {"node-a": None}
    assert reserve(state, "node-a") is None  # nothing to bind: PreBind has nothing to do


def test_immediate_claim_not_bound_rejects_the_pod():
    snap = snapshot([node("node-a")], claims=[pvc("pvc-a", "immediate-sc")])
    assert run_plugin(pod("pod-a", "pvc-a"), snap)[0] == ERR_UNBOUND_IMMEDIATE


def test_unbound_claims_no_matches():
    snap = snapshot([node("node-a")], claims=[pvc("pvc-a", "wait-sc")])
    _, verdicts = run_plugin(pod("pod-a", "pvc-a"), snap)
    assert verdicts["node-a"][0] == (ERR_BIND_CONFLICT,)


def test_bound_and_unbound_unsatisfied_gives_both_reasons_in_upstream_order():
    snap = snapshot([node("node-a", foo="barbar")],
                    claims=[pvc("pvc-a", "wait-sc", bound_to="pv-a"), pvc("pvc-b", "wait-sc")],
                    volumes=[pv("pv-a", "wait-sc", affinity={"foo": ["bar"]})])
    _, verdicts = run_plugin(pod("pod-a", "pvc-a", "pvc-b"), snap)
    assert verdicts["node-a"][0] == (ERR_NODE_CONFLICT, ERR_BIND_CONFLICT)
    assert [d.kind for d in verdicts["node-a"][1]] == ["node-affinity", "no-volume"]


def test_pv_not_found_is_a_filter_reason_of_the_plugin():
    snap = snapshot([node("node-a")], claims=[pvc("pvc-a", "wait-sc", bound_to="pv-a")])
    _, verdicts = run_plugin(pod("pod-a", "pvc-a"), snap)
    assert verdicts["node-a"][0] == (ERR_PV_NOT_EXIST,)


def test_pv_not_found_claim_lost():
    snap = snapshot([node("node-a")], claims=[pvc("pvc-a", "wait-sc", bound_to="pv-a", phase="Lost")])
    assert run_plugin(pod("pod-a", "pvc-a"), snap)[0] == \
        'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'


def test_claim_being_deleted():
    snap = snapshot([node("node-a")], claims=[pvc("pvc-a", "wait-sc", deleting=True)])
    assert run_plugin(pod("pod-a", "pvc-a"), snap)[0] == 'persistentvolumeclaim "pvc-a" is being deleted'


def test_ephemeral_volume_claims():
    """A generic ephemeral volume's claim is ``<pod>-<volume>``; missing, or not owned by the pod, rejects."""
    eph = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]
    p = pod("web", volumes=eph, uid="uid-web")
    assert run_plugin(p, snapshot([node("node-a")]))[0] == \
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "web-scratch"'
    stranger = snapshot([node("node-a")], claims=[pvc("web-scratch", "wait-sc", owner="someone-else")])
    assert run_plugin(p, stranger)[0] == \
        "PVC default/web-scratch was not created for pod default/web (pod is not owner)"
    owned = snapshot([node("node-a")], claims=[pvc("web-scratch", "provisioning-sc", owner="uid-web")],
                     classes=[PROVISIONING])
    assert run_plugin(p, owned)[1] == {"node-a": None}


def close_capacity():
    nodes = [node("node-a"), node("node-b"), node("node-c")]
    volumes = [pv(f"pv-{n}-{i}", "wait-sc", capacity=cap, affinity={HOSTNAME: [f"node-{n}"]})
               for n, cap in (("a", "200Gi"), ("b", "100Gi")) for i in (0, 1)]
    return snapshot(nodes, claims=[pvc("pvc-a", "wait-sc", request="50Gi")], volumes=volumes)


def test_local_volumes_reachable_from_the_node_match():
    """"local volumes with close capacity are preferred": node-c reaches no PV and the class cannot provision."""
    _, verdicts = run_plugin(pod("pod-a", "pvc-a"), close_capacity())
    assert verdicts["node-a"] is None and verdicts["node-b"] is None
    assert verdicts["node-c"][0] == (ERR_BIND_CONFLICT,)


def test_reserve_binds_the_smallest_matching_pv_through_its_claim_ref():
    """Reserve sets the PV's claimRef and bound-by-controller (``GetBindVolumeToClaim``) and assumes it, so the
    next cycle sees the PV taken; the claim itself is left to the PV controller."""
    snap = close_capacity()
    plan = reserve_volumes(PodInfo.from_pod(pod("pod-a", "pvc-a")), snap, "node-b")
    assert plan is not None and plan.claims == ()
    (written,) = plan.volumes
    assert written["metadata"]["name"] == "pv-b-0"
    assert written["spec"]["claimRef"] == {"kind": "PersistentVolumeClaim", "namespace": "default",
                                           "name": "pvc-a", "uid": "uid-pvc-a", "apiVersion": "v1",
                                           "resourceVersion": "10"}
    assert written["metadata"]["annotations"] == {ANN_BOUND_BY_CONTROLLER: "yes"}
    assert snap.volumes.volume("pv-b-0").claim_ref == ("default", "pvc-a", "uid-pvc-a")
    other = pvc("pvc-z", "wait-sc", request="50Gi")
    snap.volumes.set_claim(other)
    again = reserve_volumes(PodInfo.from_pod(pod("pod-z", "pvc-z")), snap, "node-b")
    assert again is not None and again.volumes[0]["metadata"]["name"] == "pv-b-1"


def test_wait_for_first_consumer_with_a_provisioner_fits_and_selects_the_node():
    snap = snapshot([node("node-a"), node("node-b")], claims=[pvc("data", "provisioning-sc")])
    _, verdicts = run_plugin(pod("pod-a", "data"), snap)
    assert verdicts == {"node-a": None, "node-b": None}
    plan = reserve_volumes(PodInfo.from_pod(pod("pod-a", "data")), snap, "node-b")
    assert plan is not None and plan.volumes == ()
    assert plan.claims[0]["metadata"]["annotations"] == {ANN_SELECTED_NODE: "node-b"}
    assert plan.provisions == ("default/data",)
    # the assumed claim now waits for node-b: another pod sharing it fits nowhere else
    _, later = run_plugin(pod("pod-b", "data"), snap)
    assert later["node-a"][0] == (ERR_BIND_CONFLICT,) and later["node-b"] is None


def test_allowed_topologies_limit_where_a_class_provisions():
    zonal = storage_class("zonal", provisioner="csi.example.com", topologies=[{"zone": ["a"]}])
    snap = snapshot([node("node-a", zone="a"), node("node-b", zone="b")], claims=[pvc("data", "zonal")],
                    classes=[zonal])
    _, verdicts = run_plugin(pod("pod-a", "data"), snap)
    assert verdicts["node-a"] is None and verdicts["node-b"][0] == (ERR_BIND_CONFLICT,)


def test_check_bindings_waits_for_the_pv_controller_then_reports_a_failed_provisioning():
    snap = snapshot([node("node-a")], claims=[pvc("data", "provisioning-sc")])
    plan = reserve_volumes(PodInfo.from_pod(pod("pod-a", "data")), snap, "node-a")
    assert plan is not None
    catalog = snap.volumes
    catalog.set_claim(pvc("data", "provisioning-sc", annotations={ANN_SELECTED_NODE: "node-a"}, rv="11"))
    assert check_bindings(plan, catalog, {}, {"pvc/default/data": "11"}) is False
    assert check_bindings(plan, catalog, {}, {"pvc/default/data": "12"}) is False  # the watch lags behind the PUT
    bound = pvc("data", "provisioning-sc", annotations={ANN_SELECTED_NODE: "node-a", ANN_BIND_COMPLETED: "yes"},
                rv="13")
    bound["spec"]["volumeName"] = "pvc-1234"
    catalog.set_claim(bound)
    catalog.set_volume(pv("pvc-1234", "provisioning-sc", claim="data", phase="Bound"))
    assert check_bindings(plan, catalog, {}, {"pvc/default/data": "11"}) is True
    catalog.set_claim(pvc("data", "provisioning-sc", annotations={"other": "x"}, rv="14"))
    assert check_bindings(plan, catalog, {}, {}) == 'provisioning failed for PVC "data"'


def test_fit_error_for_an_unbound_immediate_claim_ends_with_dra_postfilter_error():
    """The PreFilter rejection stops before DynamicResources' PreFilter, so its PostFilter finds no state and
    ends the PostFilter with ``not found`` (no preemption text); without DRA, DefaultPreemption speaks."""
    snap = snapshot([node("node-a"), node("node-b")], claims=[pvc("pvc-a", "immediate-sc")])
    p = pod("pod-a", "pvc-a")
    assert schedule_one(p, snap).message == \
        "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"
    assert schedule_one(p, snap, dra_fragment=False).message == (
        "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/2 nodes are "
        "available: 2 Preemption is not helpful for scheduling.")


def test_fit_error_for_a_pv_no_node_reaches():
    snap = snapshot([node("node-a"), node("node-b")], claims=[pvc("data", "wait-sc", bound_to="pv-3")],
                    volumes=[pv("pv-3", "wait-sc", claim="data", phase="Bound", affinity={"zone": ["c"]})])
    decision = schedule_one(pod("pod-a", "data"), snap)
    assert decision.message == (
        "0/2 nodes are available: 2 node(s) didn't match PersistentVolume's node affinity. no new claims to "
        "deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    assert {v.plugin for v in decision.verdicts.values()} == {"VolumeBinding"}


def test_a_missing_bound_pv_is_reported_by_volume_zone_prefilter_in_the_full_cycle():
    """VolumeBinding lets a bound claim through its PreFilter; VolumeZone's PreFilter, next, cannot get the PV."""
    snap = snapshot([node("node-a")], claims=[pvc("data", "wait-sc", bound_to="pv-gone")])
    assert schedule_one(pod("pod-a", "data"), snap).message == \
        '0/1 nodes are available: persistentvolume "pv-gone" not found. not found'


def test_without_a_catalog_the_volume_plugins_do_not_run():
    snap = snapshot([node("node-a")])
    snap.volumes = None
    assert schedule_one(pod("pod-a", "missing"), snap).node == "node-a"
