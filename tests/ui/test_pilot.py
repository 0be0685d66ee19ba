"""The TUI driven with Textual's pilot against a real lab on a random loopback port.

The app reaches the lab only through the kube/ layer over HTTP, as it reaches any cluster. Waits are on conditions
(the app's own state and widgets), never fixed sleeps.
"""

from __future__ import annotations

import json

import pytest

from observatory.settings import LabSettings
from observatory.ui.app import ObservatoryApp
from observatory.ui.widgets.exchange_pane import ExchangePane
from observatory.ui.widgets.nodes_pane import render_node
from observatory.ui.widgets.pending_pods import PendingPodsPane
from tests.ui.helpers import until

CREATED_201 = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}\n'
ALREADY_ASSIGNED = ('Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node '
                    '"pair-worker"')


@pytest.fixture
def lab_settings() -> LabSettings:
    """The shared ``lab`` fixture (tests/conftest.py), with the simulated cluster on and a quick kubelet."""
    return LabSettings(kubelet_start_seconds=0.3)


def pending_keys(app: ObservatoryApp) -> list[str]:
    return app.query_one(PendingPodsPane).row_keys


async def bind_via_keys(pilot, app: ObservatoryApp, typed: str, confirm: bool = False) -> None:
    count = len(app.main.exchanges)
    await pilot.press("b")
    await pilot.press(*typed)
    await pilot.press("enter")
    if confirm:
        await until(pilot, lambda: app.screen.__class__.__name__ == "ConfirmScreen")
        await pilot.press("y")
    await until(pilot, lambda: len(app.main.exchanges) > count)


async def test_hand_binding_flow_shows_201_then_409_timeline_and_kubelet_events(make_app):
    app = await make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        # 1. the seed's pod is listed as pending
        await until(pilot, lambda: "sched-lab/manual" in pending_keys(app))
        app.query_one(PendingPodsPane).select("sched-lab/manual")
        await until(pilot, lambda: app.main.selected == "sched-lab/manual")

        # 2. bind it to pair-worker: 201 Created, the exact Status body, and the pod under pair-worker
        await bind_via_keys(pilot, app, "worker")
        first = app.main.exchanges[-1]
        assert first.request_line == "POST /api/v1/namespaces/sched-lab/pods/manual/binding HTTP/1.1"
        assert first.status_line == "HTTP/1.1 201 Created"
        assert first.response_body == CREATED_201
        assert json.loads(first.request_body)["target"]["name"] == "pair-worker"
        worker = await until(pilot, lambda: next((p for p in app.main.state.placement() if p.node.name == "pair-worker"
                                                  and any(pod.key == "sched-lab/manual" for pod in p.pods)), None))
        assert "sched-lab/manual" in render_node(worker, app.main.selected).plain

        # 3. again, to pair-control-plane: a warning first, then the API server's 409 text
        await bind_via_keys(pilot, app, "control", confirm=True)
        second = app.main.exchanges[-1]
        assert second.status_line == "HTTP/1.1 409 Conflict"
        assert second.status_message == ALREADY_ASSIGNED
        shown = app.query_one(ExchangePane)
        assert len(shown.query(".exchange")) == 2

        # 4. the timeline: nodeName empty, then pair-worker, nothing in between
        frames = app.main.state.timeline("sched-lab/manual")
        nodes = [f.node_name for f in frames]
        assert nodes[0] == "" and "pair-worker" in nodes
        first_set = nodes.index("pair-worker")
        assert set(nodes[:first_set]) == {""} and set(nodes[first_set:]) == {"pair-worker"}

        # 5. the kubelet's events for the bound pod, and no Scheduled event
        await until(pilot, lambda: {"Pulling", "Started"} <= {e.reason
                                                              for e in app.main.state.events_for(app.main.selected)})
        reasons = {e.reason for e in app.main.state.events_for("sched-lab/manual")}
        assert "Scheduled" not in reasons
        assert all(e.source == "kubelet" for e in app.main.state.events_for("sched-lab/manual"))


async def test_read_only_leaves_bind_disabled(make_app):
    app = await make_app(read_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "sched-lab/manual" in pending_keys(app))
        app.query_one(PendingPodsPane).select("sched-lab/manual")
        await until(pilot, lambda: app.main.selected == "sched-lab/manual")
        assert app.main.check_action("bind", ()) is None  # disabled, not an error
        await pilot.press("b")
        await pilot.pause(0.1)
        assert app.main.exchanges == [] and app.screen is app.screen_stack[0]
        await until(pilot, lambda: str(app.query_one("#exchange-empty").render())
                    == "Read-only (--read-only): b sends no Binding.")
