"""Permissions in the TUI against an RBAC lab: the fallback to the context's namespace
with its banner, the nodes-forbidden view, and Bind disabled by the SelfSubjectAccessReview.

The lab's users (tests/lab/test_rbac.py POLICY): alice may read pods and events of team-a only (no nodes, no
pods/binding); binder may also bind in team-a and read nodes. The texts come from the issue and the README's
wording, the 403 messages from kube-apiserver's format; none is copied from what the program printed.
"""

from __future__ import annotations

import pytest
from textual.widgets import OptionList

from observatory.kube.connect import connect
from observatory.kube.source import ClusterSource
from observatory.model.access import AccessReview
from observatory.ui.app import ObservatoryApp
from observatory.ui.screens.chooser import ChooserScreen
from observatory.ui.screens.confirm import ConfirmScreen
from observatory.ui.widgets.exchange_pane import EMPTY_HINT
from observatory.ui.widgets.nodes_pane import NodesPane
from observatory.ui.widgets.pending_pods import PendingPodsPane
from observatory.ui.widgets.permissions_banner import PermissionsBanner
from observatory.ui.widgets.why_pane import WhyPane
from tests.ui.fakes import RecordedSource
from tests.ui.helpers import until


@pytest.fixture
async def app_as(rbac_lab):
    """An app as one of the lab's users, watching every namespace (as ``-A`` or the embedded lab would)."""
    sources = []

    async def make(user: str) -> ObservatoryApp:
        connection = await connect(str(rbac_lab.user_kubeconfigs[user]))
        source = ClusterSource(connection, namespace=None, lab=True,
                               reflector_options={"backoff_initial": 0.05, "backoff_max": 0.5})
        sources.append(source)
        return ObservatoryApp(source, refresh_interval=0.05, recent_seconds=0)

    yield make
    for source in sources:
        await source.close()


def banner(app: ObservatoryApp) -> str:
    widgets = app.query(PermissionsBanner)
    return "\n".join(widgets.first().lines) if widgets and widgets.first().display else ""


def bind_binding(app: ObservatoryApp):
    return next(b for b in app.screen.active_bindings.values() if b.binding.action == "bind")


async def select(pilot, app: ObservatoryApp, key: str) -> None:
    pane = app.query_one(PendingPodsPane)
    await until(pilot, lambda: key in pane.rows, f"{key} in the pending pane")
    pane.select(key)
    await until(pilot, lambda: app.main.selected == key, f"{key} selected")


async def test_a_forbidden_all_namespaces_list_falls_back_to_the_contexts_namespace(app_as):
    app = await app_as("alice")
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: app.main.source.namespace == "team-a", "the fallback to team-a (alice's context)")
        text = await until(pilot, lambda: banner(app), "the banner")
        assert "listing all namespaces is forbidden; showing namespace team-a" in text
        assert text.startswith("pods") or text.startswith("events")
        pane = app.query_one(PendingPodsPane)
        await until(pilot, lambda: "team-a/waiting" in pane.rows, "team-a's pods")
        assert "team-b/other" not in pane.rows
        assert app.main.state.watch_states["pods"].state == "live"
        # the header names the scope
        assert "scope team-a" in app.query_one("#header").content.plain


async def test_a_403_in_the_namespace_shown_is_on_the_banner_in_the_servers_words(rbac_lab):
    connection = await connect(str(rbac_lab.user_kubeconfigs["alice"]))
    source = ClusterSource(connection, namespace="team-b", reflector_options={"backoff_max": 0.5})
    app = ObservatoryApp(source, refresh_interval=0.05)
    try:
        async with app.run_test(size=(140, 45)) as pilot:
            text = await until(pilot, lambda: banner(app), "the banner")
            assert 'pods: pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the ' \
                   'namespace "team-b"' in text.splitlines()
            assert app.main.source.namespace == "team-b"  # -n is kept: only an all-namespaces scope falls back
    finally:
        await source.close()


async def test_nodes_forbidden_builds_the_placement_from_the_pods_node_names(app_as):
    app = await app_as("alice")
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: app.main.state.nodes_forbidden, "nodes forbidden")
        nodes = app.query_one(NodesPane)
        await until(pilot, lambda: "node details forbidden" in str(nodes.border_title), "the nodes pane's mark")
        block = await until(pilot, lambda: next((str(s.content) for s in nodes.query(".node")
                                                 if "team-a/web" in str(s.content)), None), "pair-worker's block")
        assert block.startswith("pair-worker  node details forbidden")
        assert "missing" not in block and "no such node" not in block
        # the pending pod bound to it: bound and waiting, the node's details forbidden; never "missing"
        pane = app.query_one(PendingPodsPane)
        await until(pilot, lambda: "team-a/web" in pane.rows and "forbidden" in pane.get_cell("team-a/web",
                                                                                              "state").plain,
                    "web's state")
        assert pane.get_cell("team-a/web", "state").plain == "bound to pair-worker, node details forbidden"
        await select(pilot, app, "team-a/web")
        why = app.query_one(WhyPane)
        text = await until(pilot, lambda: app.query_one("#why-text").content.plain
                           if why.border_title == "Why: team-a/web" else None, "the Why pane")
        assert text.startswith("Bound, waiting for the kubelet")
        assert "listing nodes is forbidden" in text and "missing" not in text and "does not exist" not in text


async def test_bind_disabled_by_the_access_review(app_as):
    app = await app_as("alice")
    async with app.run_test(size=(140, 45)) as pilot:
        await select(pilot, app, "team-a/waiting")
        reason = "Bind disabled: not allowed to create pods/binding in team-a (RBAC)"
        await until(pilot, lambda: reason in banner(app), "the reason on screen")
        await until(pilot, lambda: not bind_binding(app).enabled, "Bind dimmed in the footer")
        assert app.main.check_action("bind", ()) is None
        await pilot.press("b")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, (ChooserScreen, ConfirmScreen))
        assert app.main.exchanges == []  # nothing sent
        # The exchange pane no longer says "press b": it says why b does nothing.
        hint = str(app.query_one("#exchange-empty").render())
        assert hint == f"No Binding sent yet. {reason}: b does nothing here."


async def test_bind_allowed_by_the_access_review_is_offered(app_as):
    """The same lab and pod, as binder (who may create pods/binding in team-a and read nodes): Bind is offered."""
    app = await app_as("binder")
    async with app.run_test(size=(140, 45)) as pilot:
        await select(pilot, app, "team-a/waiting")
        await until(pilot, lambda: app.main.source.namespace == "team-a" and "team-a" in app.main.permissions.access,
                    "binder's access review")
        assert app.main.permissions.access["team-a"].allowed is True
        assert "Bind" not in banner(app)
        assert bind_binding(app).enabled
        assert str(app.query_one("#exchange-empty").render()) == EMPTY_HINT
        await until(pilot, lambda: "pair-worker" in app.main.state.nodes, "nodes listed")
        await pilot.press("b")
        chooser = await until(pilot, lambda: app.screen if isinstance(app.screen, ChooserScreen) else None,
                              "the chooser")
        ids = [str(option.id) for option in chooser.query_one(OptionList).options]
        assert ids == ["pair-control-plane", "pair-worker"]


class UnknownAccess(RecordedSource):
    """A source whose access review cannot be answered (as on a server without the endpoint)."""

    async def access_review(self, verb: str, resource: str, subresource: str = "",
                            namespace: str = "") -> AccessReview:
        return AccessReview(verb, resource, subresource, namespace,
                            problem="the API server does not serve SelfSubjectAccessReview (404)")


async def test_access_unknown_never_blocks_bind():
    app = ObservatoryApp(UnknownAccess(), refresh_interval=0.05)
    async with app.run_test(size=(140, 45)) as pilot:
        await select(pilot, app, "sched-lab/manual")
        text = await until(pilot, lambda: banner(app), "the banner")
        assert text == ("Bind: access unknown in sched-lab (the API server does not serve SelfSubjectAccessReview "
                        "(404))")
        assert bind_binding(app).enabled and app.main.check_action("bind", ()) is True
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, ChooserScreen), "the chooser")


async def test_with_nodes_forbidden_the_chooser_offers_nodes_known_by_name_and_the_bind_goes_through(app_as):
    """carol may bind in team-a but not read nodes: the chooser lists the node names the pods are bound to, marked,
    and the warning says the node cannot be checked (never that it does not exist); y sends the Binding."""
    app = await app_as("carol")
    async with app.run_test(size=(140, 45)) as pilot:
        await select(pilot, app, "team-a/waiting")
        await until(pilot, lambda: app.main.state.nodes_forbidden and "team-a" in (app.main.permissions.access or {}),
                    "nodes forbidden, and carol's access review")
        assert bind_binding(app).enabled
        await pilot.press("b")
        chooser = await until(pilot, lambda: app.screen if isinstance(app.screen, ChooserScreen) else None,
                              "the chooser")
        labels = {str(o.id): str(o.prompt) for o in chooser.query_one(OptionList).options}
        assert labels == {"pair-worker": "pair-worker  node details forbidden"}
        assert "node details forbidden" in str(chooser.query_one("#chooser-subtitle").content)
        await pilot.press("enter")
        confirm = await until(pilot, lambda: app.screen if isinstance(app.screen, ConfirmScreen) else None,
                              "the warning before the bind")
        assert app.main.exchanges == []
        assert len(confirm.warnings) == 1
        assert confirm.warnings[0].startswith("node details forbidden: observatory cannot check node pair-worker")
        await pilot.press("y")
        await until(pilot, lambda: app.main.exchanges, "the Binding's answer")
        assert app.main.exchanges[-1].status == 201
