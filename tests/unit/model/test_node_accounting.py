"""ClusterState's node accounting from the cluster-wide bound pods' watch: counted in the fit preview and the bind
warnings, never shown in the panes; a relist forgets the bound pods gone since, but not the shown namespace's own;
a 403 falls back to the namespace's pods."""

from __future__ import annotations

from observatory.model.deltas import BOUND_PODS, PODS, Deleted, Relisted, Upserted, WatchState
from observatory.model.state import ClusterState
from tests.unit.scheduling.objects import node, pod


def state_with(*bound: dict) -> ClusterState:
    state = ClusterState()
    state.apply(Relisted("nodes", (node("pair-worker"),), "1"))
    state.apply(Relisted(PODS, (pod("manual", namespace="sched-lab", requests={"cpu": "1"}),), "1"))
    state.apply(Relisted(BOUND_PODS, bound, "2"))
    return state


def cpu_used(state: ClusterState) -> int:
    preview = state.fit("sched-lab/manual", state.node_scope("sched-lab"))
    assert preview is not None
    worker = preview.get("pair-worker")
    assert worker is not None
    return next(used for resource, _, used, _ in worker.resources if resource == "cpu")


def test_bound_pods_of_other_namespaces_count_on_the_nodes_but_are_not_shown():
    state = state_with(pod("filler", namespace="default", node_name="pair-worker", requests={"cpu": "3500m"}))
    assert state.node_scope("sched-lab") is None
    assert cpu_used(state) == 3500
    assert list(state.pods) == ["sched-lab/manual"]
    warnings = state.bind_warnings("sched-lab/manual", "pair-worker", state.node_scope("sched-lab"))
    assert ("node pair-worker lacks cpu (requests 1, free 500m): the API server accepts the binding, the kubelet will "
            "reject the pod") in warnings
    assert not any("only sched-lab's pods" in w for w in warnings)


def test_a_relist_forgets_bound_pods_gone_since_and_a_delete_frees_the_room():
    state = state_with(pod("a", namespace="default", node_name="pair-worker", requests={"cpu": "1"}),
                       pod("b", namespace="default", node_name="pair-worker", requests={"cpu": "2"}))
    assert cpu_used(state) == 3000
    state.apply(Relisted(BOUND_PODS, (pod("b", namespace="default", node_name="pair-worker", requests={"cpu": "2"}),),
                         "3"))
    assert cpu_used(state) == 2000
    state.apply(Deleted(BOUND_PODS, pod("b", namespace="default", node_name="pair-worker")))
    assert cpu_used(state) == 0
    state.apply(Upserted(BOUND_PODS, pod("c", namespace="other", node_name="pair-worker", requests={"cpu": "1"})))
    assert cpu_used(state) == 1000


def test_a_relist_leaves_the_shown_namespaces_pods_to_their_own_watch():
    mine = pod("mine", namespace="sched-lab", node_name="pair-worker", requests={"cpu": "2"})
    state = state_with(mine)
    state.apply(Upserted(PODS, mine))
    state.apply(Relisted(BOUND_PODS, (), "3"))
    assert cpu_used(state) == 2000  # still shown, so still counted


def test_a_forbidden_list_falls_back_to_the_namespace():
    state = ClusterState()
    assert state.node_scope("sched-lab") == "sched-lab"  # not listed yet
    assert state.node_scope(None) is None
    state.apply(WatchState(BOUND_PODS, "forbidden", 'pods is forbidden: User "alice" cannot list resource "pods"'))
    assert state.bound_pods_forbidden and state.node_scope("sched-lab") == "sched-lab"
