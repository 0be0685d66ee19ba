"""Warnings before a bind (``ClusterState.bind_warnings``, what the confirmation lists), and the layout's breakpoint
following the current size."""

from __future__ import annotations

from observatory.model.deltas import Relisted
from observatory.model.state import ClusterState
from observatory.ui.app import ObservatoryApp
from tests.ui.fakes import RecordedSource, frozen_clock
from tests.ui.helpers import select_manual, until_painted


def node(name: str, cpu: str = "4", memory: str = "8Gi", *, ready: str = "True", cordoned: bool = False,
         taints: list[dict] = ()) -> dict:
    return {"metadata": {"name": name, "resourceVersion": "1"}, "spec": {"unschedulable": cordoned,
                                                                         "taints": list(taints)},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
                       "conditions": [{"type": "Ready", "status": ready}]}}


def pod(name: str, cpu: str = "100m", node_name: str = "", **spec) -> dict:
    return {"metadata": {"name": name, "namespace": "default", "uid": name, "resourceVersion": "1"},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "x",
                                                              "resources": {"requests": {"cpu": cpu}}}], **spec},
            "status": {"phase": "Pending"}}


def state_with(nodes: list[dict], pods: list[dict]) -> ClusterState:
    state = ClusterState(frozen_clock)
    state.apply(Relisted("nodes", tuple(nodes), "1"))
    state.apply(Relisted("pods", tuple(pods), "1"))
    return state


def test_no_warning_when_the_pod_fits_a_ready_node():
    state = state_with([node("w")], [pod("p")])
    assert state.bind_warnings("default/p", "w") == []


def test_warns_when_the_node_lacks_cpu_counting_pods_already_there():
    state = state_with([node("w", cpu="4")], [pod("p", cpu="2"), pod("there", cpu="3", node_name="w")])
    assert state.bind_warnings("default/p", "w") == [
        "node w lacks cpu (requests 2, free 1): the API server accepts the binding, the kubelet will reject the pod"]


def test_warns_for_missing_cordoned_and_not_ready_nodes():
    state = state_with([node("cordoned", cordoned=True), node("down", ready="False")], [pod("p")])
    assert state.bind_warnings("default/p", "ghost") == [
        "node ghost does not exist: the binding succeeds, then pod GC deletes the pod"]
    assert state.bind_warnings("default/p", "cordoned") == [
        "node cordoned is cordoned: a hand-bind ignores that, the scheduler would not"]
    assert state.bind_warnings("default/p", "down") == ["node down is not Ready: nothing will start the pod"]


def test_warns_for_each_untolerated_no_schedule_or_no_execute_taint():
    gpu = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    flaky = [{"key": "example.com/flaky", "effect": "NoExecute"}, {"key": "soft", "effect": "PreferNoSchedule"}]
    state = state_with([node("gpu", taints=[gpu]), node("flaky", taints=flaky)],
                       [pod("p"), pod("tolerant", tolerations=[{"key": "dedicated", "operator": "Equal",
                                                                "value": "gpu", "effect": "NoSchedule"}])])
    assert state.bind_warnings("default/p", "gpu") == [
        "node gpu has taint dedicated=gpu:NoSchedule, which the pod does not tolerate: a hand-bind ignores that, the "
        "scheduler would not"]
    # NoExecute evicts after the bind; PreferNoSchedule is only a preference, so it is no warning
    assert state.bind_warnings("default/p", "flaky") == [
        "node flaky has taint example.com/flaky:NoExecute, which the pod does not tolerate: the taint manager evicts "
        "the pod once it is bound"]
    assert state.bind_warnings("default/tolerant", "gpu") == []


def test_warns_for_gated_and_bound_pods():
    state = state_with([node("w")], [pod("g", schedulingGates=[{"name": "example.com/q"}]),
                                     pod("b", node_name="w")])
    assert state.bind_warnings("default/g", "w") == [
        "the pod has scheduling gates (example.com/q): the API server will refuse"]
    assert state.bind_warnings("default/b", "w") == ["already assigned to w: the API server will refuse"]


async def test_layout_follows_the_current_size_across_resizes():
    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        assert not app.has_class("-narrow")
        for size, narrow in [((80, 24), True), ((60, 20), True), ((200, 60), False), ((99, 30), True),
                             ((100, 30), False)]:
            await pilot.resize_terminal(*size)
            await pilot.pause(0.1)
            assert app.has_class("-narrow") is narrow, size


async def test_bind_with_nothing_selected_says_so():
    app = ObservatoryApp(RecordedSource(pods=False), clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_painted(pilot, lambda: app.main.state.nodes)
        assert app.main.selected is None
        await pilot.press("b")
        await until_painted(pilot, lambda: any("Select a pod" in n.message for n in app._notifications))
        assert app.main.exchanges == []
