"""Node accounting with ``-n``: the screen shows one namespace's pods, but counts every namespace's bound pods on the
nodes (a cluster-wide watch with ``fieldSelector=spec.nodeName!=``, as ``observatory schedule`` keeps), so the fit
preview sees a pod of another namespace and a bind that fits asks nothing. When that list is forbidden (a user with a
Role in one namespace) the node counts fall back to the namespace's pods, the banner says so, and the warning before
a bind stays."""

from __future__ import annotations

from typing import Any

import pytest

from observatory.kube.connect import connect
from observatory.kube.source import ClusterSource
from observatory.ui.app import ObservatoryApp
from observatory.ui.screens.chooser import ChooserScreen
from observatory.ui.screens.confirm import ConfirmScreen
from observatory.ui.widgets.pending_pods import PendingPodsPane
from observatory.ui.widgets.permissions_banner import PermissionsBanner
from observatory.ui.widgets.why_pane import WhyPane
from tests.ui.helpers import until

OPTIONS = {"backoff_initial": 0.05, "backoff_max": 0.5}


def pod(name: str, namespace: str, cpu: str | None = None, node: str | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "pause", "image": "registry.k8s.io/pause:3.9"}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    spec: dict[str, Any] = {"schedulerName": "nobody-at-all", "containers": [container]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


async def create(http, body: dict[str, Any]) -> None:
    async with http.post(f"/api/v1/namespaces/{body['metadata']['namespace']}/pods", json=body) as resp:
        assert resp.status == 201, await resp.text()


def banner(app: ObservatoryApp) -> str:
    widgets = app.query(PermissionsBanner)
    return "\n".join(widgets.first().lines) if widgets and widgets.first().display else ""


async def select(pilot, app: ObservatoryApp, key: str) -> None:
    pane = app.query_one(PendingPodsPane)
    await until(pilot, lambda: key in pane.rows, f"{key} in the pending pane")
    pane.select(key)
    await until(pilot, lambda: app.main.selected == key, f"{key} selected")


async def bind_to_worker(pilot, app: ObservatoryApp) -> None:
    await pilot.press("b")
    await until(pilot, lambda: isinstance(app.screen, ChooserScreen), "the node chooser")
    await pilot.press(*"worker", "enter")


@pytest.fixture
async def scoped_app(lab):
    sources = []

    async def make(namespace: str, kubeconfig: str | None = None) -> ObservatoryApp:
        connection = await connect(kubeconfig or str(lab.kubeconfig_path))
        source = ClusterSource(connection, namespace=namespace, lab=True, reflector_options=OPTIONS)
        sources.append(source)
        return ObservatoryApp(source, refresh_interval=0.05, recent_seconds=0)

    yield make
    for source in sources:
        await source.close()


async def test_a_pod_of_another_namespace_counts_on_its_node_and_a_bind_that_fits_asks_nothing(lab, http, scoped_app):
    await create(http, pod("filler", "default", cpu="3500m", node="pair-worker"))
    await create(http, pod("wide", "sched-lab", cpu="1"))
    app = await scoped_app("sched-lab")
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: app.main.state.node_scope("sched-lab") is None, "every namespace counted")
        pending = app.query_one(PendingPodsPane)
        await until(pilot, lambda: "sched-lab/wide" in pending.rows, "sched-lab's pods")
        assert "default/filler" not in app.main.state.pods  # the panes still show sched-lab only

        await select(pilot, app, "sched-lab/wide")
        why = app.query_one(WhyPane)
        worker = await until(pilot, lambda: why.preview and why.preview.pod == "sched-lab/wide"
                             and why.preview.get("pair-worker"), "wide's fit preview")
        assert why.preview.scope is None
        assert (worker.fits, worker.filter, worker.reasons) == (False, "NodeResourcesFit", ("Insufficient cpu",))
        assert ("cpu", 1000, 3500, 4000) in worker.resources  # filler's 3500m of default counted

        await select(pilot, app, "sched-lab/manual")
        await bind_to_worker(pilot, app)
        await until(pilot, lambda: len(app.main.exchanges) == 1, "the Binding sent without a question")
        assert not any(isinstance(s, ConfirmScreen) for s in app.screen_stack)
        assert app.main.exchanges[0].status == 201
        assert "bound pods" not in banner(app)


async def test_without_the_cluster_wide_list_the_banner_says_so_and_the_bind_warns(rbac_lab):
    """binder (tests/rbac_fixtures.py) may list pods in team-a only, read nodes and bind in team-a."""
    connection = await connect(str(rbac_lab.user_kubeconfigs["binder"]))
    source = ClusterSource(connection, namespace="team-a", lab=True, reflector_options=OPTIONS)
    app = ObservatoryApp(source, refresh_interval=0.05, recent_seconds=0)
    try:
        async with app.run_test(size=(140, 45)) as pilot:
            text = await until(pilot, lambda: banner(app), "the banner")
            assert ("bound pods: listing the pods of every namespace is forbidden; node counts see only namespace "
                    "team-a's pods") in text
            assert app.main.state.node_scope("team-a") == "team-a"
            await select(pilot, app, "team-a/waiting")
            why = app.query_one(WhyPane)
            await until(pilot, lambda: why.preview and why.preview.pod == "team-a/waiting", "the fit preview")
            assert why.preview.scope == "team-a"
            await until(pilot, lambda: app.main.permissions.bind_hint() is not None and app.main.check_action(
                "bind", ()), "Bind allowed for binder")
            await bind_to_worker(pilot, app)
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the warning before the bind")
            assert any("only team-a's pods are counted on node pair-worker" in w for w in app.screen.warnings)
            await pilot.press("n")
            await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), "the warning closed")
            assert app.main.exchanges == []
    finally:
        await source.close()
