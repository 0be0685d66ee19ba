"""Why is it Pending, in the TUI, against a real lab: the pending pane's state for each kind of
pod, the Why pane and the bind chooser's fit verdicts, the raw message one key away, and the confirmation before a
bind to a cordoned or a missing node, which the API server accepts with 201.

Expected texts come from the scenarios (refusals.yaml quotes kube-scheduler v1.34.1's messages; pair.yaml gives
4 CPU and 8Gi per node; filler holds 500m and 6Gi of pair-worker) and from the README's wording, never from what
the program printed on an earlier run.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest
from rich.text import Text
from textual.widgets import OptionList, TextArea

from observatory.kube.connect import connect
from observatory.kube.source import ClusterSource
from observatory.settings import LabSettings
from observatory.ui.app import ObservatoryApp
from observatory.ui.screens.chooser import ChooserScreen
from observatory.ui.screens.confirm import ConfirmScreen
from observatory.ui.screens.raw_message import RawMessageScreen
from observatory.ui.widgets.exchange_pane import ExchangePane
from observatory.ui.widgets.pending_pods import PendingPodsPane
from observatory.ui.widgets.why_pane import WhyPane
from tests.ui.fakes import REFUSALS
from tests.ui.helpers import until

CREATED_201 = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}\n'
TAINT = "node-role.kubernetes.io/control-plane"
REFUSED = REFUSALS  # refusals.yaml, the comment above each pod (one copy, in fakes.py)


NO_KUBELET = LabSettings(kubelet=False, podgc=False, bookmark_interval=0.2)
"""For a pod that stays bound and Pending: nothing starts it."""
NO_SCHEDULER = LabSettings(scheduler=False, podgc=False, bookmark_interval=0.2)
"""For a default-scheduler pod nobody looks at, and no one holding kube-scheduler's Lease."""


@pytest.fixture
def lab_settings() -> LabSettings:
    """The simulated cluster (the scheduler refuses the refusals pods and ignores schedulerName nobody-at-all; the
    node lifecycle controller taints cordoned nodes) with a quick kubelet and no pod GC (a pod bound to a missing
    node stays)."""
    return LabSettings(podgc=False, kubelet_start_seconds=0.3, bookmark_interval=0.2)


@pytest.fixture
async def make_app(lab):
    sources = []

    async def make(**options: Any) -> ObservatoryApp:
        connection = await connect(str(lab.kubeconfig_path), "observatory-lab", None)
        source = ClusterSource(connection, namespace=None, lab=True)
        sources.append(source)
        # recent_seconds=0: a just-bound pod shows its diagnosis at once, not the "→ node" highlight
        return ObservatoryApp(source, refresh_interval=0.05, recent_seconds=0, **options)

    yield make
    for source in sources:
        await source.close()


def state_cell(app: ObservatoryApp, key: str) -> Text | None:
    """The STATE cell of ``key`` in the pending pane, None while the pod is not listed."""
    pane = app.query_one(PendingPodsPane)
    return pane.get_cell(key, "state") if key in pane.rows else None


def state_is(app: ObservatoryApp, key: str, test: Callable[[str], bool]) -> Text | None:
    cell = state_cell(app, key)
    return cell if cell is not None and test(cell.plain) else None


def why_text(app: ObservatoryApp) -> str:
    return app.query_one("#why-text").content.plain


def colour(cell: Text) -> str:
    return " ".join(str(span.style) for span in cell.spans)


async def select(pilot, app: ObservatoryApp, key: str) -> None:
    pane = app.query_one(PendingPodsPane)
    await until(pilot, lambda: key in pane.rows, f"{key} in the pending pane")
    pane.select(key)
    await until(pilot, lambda: app.main.selected == key, f"{key} selected")


async def create_pod(http: aiohttp.ClientSession, name: str, scheduler: str = "nobody-at-all", **meta: Any) -> None:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **meta},
            "spec": {"schedulerName": scheduler,
                     "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10"}]}}
    async with http.post("/api/v1/namespaces/sched-lab/pods", json=body) as response:
        assert response.status == 201, await response.text()


async def patch(http: aiohttp.ClientSession, path: str, body: dict) -> None:
    async with http.patch(path, json=body, headers={"Content-Type": "application/strategic-merge-patch+json"}) as r:
        assert r.status == 200, await r.text()


async def bind_typed(pilot, app: ObservatoryApp, typed: str) -> ConfirmScreen:
    """b, type, Enter; returns the confirmation that must come before anything is sent."""
    count = len(app.main.exchanges)
    await pilot.press("b", *typed, "enter")
    screen = await until(pilot, lambda: app.screen if isinstance(app.screen, ConfirmScreen) else None,
                         "the confirmation")
    assert len(app.main.exchanges) == count, "nothing is sent before the answer"
    return screen


async def answer_yes_and_see_201(pilot, app: ObservatoryApp, node: str) -> None:
    count = len(app.main.exchanges)
    await pilot.press("y")
    await until(pilot, lambda: len(app.main.exchanges) > count, "the Binding's answer")
    exchange = app.main.exchanges[-1]
    assert exchange.status_line == "HTTP/1.1 201 Created"
    assert exchange.response_body == CREATED_201
    assert exchange.node == node
    pane = app.query_one(ExchangePane)
    await until(pilot, lambda: pane.border_title == "HTTP exchange: HTTP/1.1 201 Created", "the exchange pane")


# -- the states ---------------------------------------------------------------------------------------------------

async def test_a_pod_whose_scheduler_nobody_runs_shows_no_scheduler_has_looked(make_app):
    app = await make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        cell = await until(pilot, lambda: state_is(app, "sched-lab/manual", lambda s: s == "no scheduler has looked"),
                           "the seed pod's state")
        assert colour(cell) == "yellow"
        scheduler = app.query_one(PendingPodsPane).get_cell("sched-lab/manual", "scheduler")
        assert scheduler.plain == "nobody-at-all" and colour(scheduler) == "bold yellow"
        await select(pilot, app, "sched-lab/manual")
        why = await until(pilot, lambda: why_text(app) if why_text(app).startswith("No scheduler") else None,
                          "the Why pane")
        assert "spec.schedulerName: nobody-at-all" in why
        assert "nobody-at-all" in why.split("Likely: ", 1)[1]  # the likely cause names the unserved scheduler


@pytest.mark.parametrize("lab_scenario", ["refusals"])
async def test_refused_pods_show_the_parsed_refusal_the_fit_preview_and_the_raw_message(make_app):
    app = await make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        expected = {"too-much-cpu": "1 too little cpu", "no-ssd": "1 node selector/affinity mismatch",
                    "needs-the-tainted-node": "1 too little memory"}
        for name, phrase in expected.items():
            cell = await until(pilot, lambda n=name: state_is(app, f"sched-lab/{n}", lambda s: s.startswith("0/2")),
                               f"{name} refused")
            # summarised from the message's "0/2 nodes are available: 1 ..., 1 node(s) had untolerated taint {...}"
            assert cell.plain == f"0/2 nodes: {phrase}, 1 untolerated taint {TAINT}"
            assert colour(cell) == "red"

        await select(pilot, app, "sched-lab/too-much-cpu")
        # filler is bound: once its kubelet reports it Running, and it is not the selected row, it is not pending
        await until(pilot, lambda: app.main.state.pods["sched-lab/filler"].phase == "Running", "filler running")
        await until(pilot, lambda: "sched-lab/filler" not in app.query_one(PendingPodsPane).rows, "filler gone")
        why = app.query_one(WhyPane)
        text = await until(pilot, lambda: why_text(app) if why.border_title == "Why: sched-lab/too-much-cpu"
                           and why_text(app).startswith("Refused") else None, "the Why pane of the selected pod")
        await until(pilot, lambda: why.fit_text("pair-worker"), "the fit preview")
        assert "0/2 nodes are available." in text and "1 × Insufficient cpu" in text
        assert "observatory's prediction from cached objects" in app.query_one("#why-fit-label").content.plain
        verdict, reasons = why.fit_text("pair-worker").split("\n")
        assert verdict.split() == ["✗", "pair-worker", "NodeResourcesFit"]
        assert reasons == "cpu: requests 100, free 3500m of 4 (500m in use)"
        verdict, reasons = why.fit_text("pair-control-plane").split("\n")
        assert verdict.split() == ["✗", "pair-control-plane", "TaintToleration"]
        assert reasons == f"untolerated taint {TAINT}:NoSchedule"

        # m: the raw message, verbatim, in a read-only text area; Esc closes it
        await pilot.press("m")
        screen = await until(pilot, lambda: app.screen if isinstance(app.screen, RawMessageScreen) else None)
        area = screen.query_one(TextArea)
        assert area.text == REFUSED["too-much-cpu"] and area.read_only
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, RawMessageScreen), "the modal closed")

        # b: every node with its verdict and the numbers behind it, under the preview's label
        await pilot.press("b")
        chooser = await until(pilot, lambda: app.screen if isinstance(app.screen, ChooserScreen) else None)
        labels = {str(option.id): str(option.prompt) for option in chooser.query_one(OptionList).options}
        assert "NodeResourcesFit: cpu: requests 100, free 3500m of 4 (500m in use)" in labels["pair-worker"]
        assert f"TaintToleration: untolerated taint {TAINT}:NoSchedule" in labels["pair-control-plane"]
        assert "observatory's prediction from cached objects" in str(chooser.query_one("#chooser-subtitle").content)
        await pilot.press("escape")

        # another refused pod: its own numbers (4Gi asked, 6Gi of 8Gi held by filler)
        await until(pilot, lambda: not isinstance(app.screen, ChooserScreen))
        await select(pilot, app, "sched-lab/needs-the-tainted-node")
        await until(pilot, lambda: "memory: requests 4Gi, free 2Gi of 8Gi (6Gi in use)" in why.fit_text("pair-worker"),
                    "the memory shortfall")
        await pilot.press("m")
        screen = await until(pilot, lambda: app.screen if isinstance(app.screen, RawMessageScreen) else None)
        assert screen.query_one(TextArea).text == REFUSED["needs-the-tainted-node"]


@pytest.mark.parametrize("lab_scenario", ["gated"])
async def test_gated_pods_show_their_gates(make_app):
    app = await make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        once = await until(pilot, lambda: state_is(app, "sched-lab/quota-gated", lambda s: "Gated" in s))
        assert once.plain == "SchedulingGated: example.com/quota-check"
        assert colour(once) == "magenta"
        twice = await until(pilot, lambda: state_is(app, "sched-lab/twice-gated", lambda s: "Gated" in s))
        assert twice.plain == "SchedulingGated: example.com/quota-check, example.com/data-ready"
        await select(pilot, app, "sched-lab/twice-gated")
        await pilot.press("m")
        screen = await until(pilot, lambda: app.screen if isinstance(app.screen, RawMessageScreen) else None)
        assert screen.query_one(TextArea).text == "No scheduler message for this pod."


@pytest.mark.parametrize("lab_settings", [NO_KUBELET])
async def test_a_bound_pod_waits_for_the_kubelet_then_for_its_node(make_app, http):
    app = await make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await select(pilot, app, "sched-lab/manual")
        await pilot.press("b", *"worker", "enter")  # pair-worker is Ready and has room: no question asked
        await until(pilot, lambda: app.main.exchanges, "the Binding's answer")
        assert app.main.exchanges[-1].status == 201
        cell = await until(pilot, lambda: state_is(app, "sched-lab/manual", lambda s: s.startswith("bound to")),
                           "the bound pod's state")
        assert cell.plain.startswith("bound to pair-worker, waiting for the kubelet")  # --no-kubelet: it stays
        assert colour(cell) == "cyan"

        # the node goes NotReady (README: "To take a node down for a lesson")
        await patch(http, "/api/v1/nodes/pair-worker/status", {"status": {"conditions": [
            {"type": "Ready", "status": "False", "reason": "KubeletNotReady", "message": "lesson"}]}})
        cell = await until(pilot, lambda: state_is(app, "sched-lab/manual", lambda s: "NotReady" in s))
        assert cell.plain == "bound to pair-worker, node NotReady"
        assert colour(cell) == "bold cyan"


async def test_binding_to_a_cordoned_node_asks_first_then_sends(make_app, http):
    await patch(http, "/api/v1/nodes/pair-worker", {"spec": {"unschedulable": True}})
    app = await make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.main.state.nodes.get("pair-worker")
                    and app.main.state.nodes["pair-worker"].unschedulable)
        await select(pilot, app, "sched-lab/manual")
        confirm = await bind_typed(pilot, app, "worker")
        assert confirm.warnings[0] == ("node pair-worker is cordoned: a hand-bind ignores that, the scheduler would "
                                       "not")
        await answer_yes_and_see_201(pilot, app, "pair-worker")


async def test_binding_to_a_missing_node_asks_first_then_sends(make_app):
    app = await make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await select(pilot, app, "sched-lab/manual")
        # a name no node has: typed in full, it is offered as "no such node", and Enter picks it
        await pilot.press("b", *"ghost-node")
        chooser = await until(pilot, lambda: app.screen if isinstance(app.screen, ChooserScreen) else None)
        options = chooser.query_one(OptionList)
        await until(pilot, lambda: options.option_count == 1 and options.get_option_at_index(0).id == "ghost-node")
        assert "no such node" in str(options.get_option_at_index(0).prompt)
        await pilot.press("enter")
        confirm = await until(pilot, lambda: app.screen if isinstance(app.screen, ConfirmScreen) else None)
        assert app.main.exchanges == [], "nothing is sent before the answer"
        assert confirm.warnings == ["node ghost-node does not exist: the binding succeeds, then pod GC deletes the "
                                    "pod"]
        await answer_yes_and_see_201(pilot, app, "ghost-node")
        cell = await until(pilot, lambda: state_is(app, "sched-lab/manual", lambda s: "missing" in s))
        assert cell.plain == "bound to missing node ghost-node"


async def test_a_pod_being_deleted_shows_so(make_app, http):
    await create_pod(http, "held", finalizers=["example.com/hold"])
    app = await make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: state_is(app, "sched-lab/held", lambda s: s == "no scheduler has looked"))
        async with http.delete("/api/v1/namespaces/sched-lab/pods/held") as response:
            assert response.status == 200  # the finalizer keeps it, with a deletionTimestamp
        cell = await until(pilot, lambda: state_is(app, "sched-lab/held", lambda s: s == "being deleted"))
        assert colour(cell) == "dim"


@pytest.mark.parametrize("lab_settings", [NO_SCHEDULER])
async def test_a_default_scheduler_pod_nobody_looked_at_names_the_lease_holder(make_app, http):
    await create_pod(http, "waiting", scheduler="default-scheduler")
    app = await make_app(lease_interval=0.2)
    async with app.run_test(size=(120, 40)) as pilot:
        await select(pilot, app, "sched-lab/waiting")
        # --no-scheduler: nobody holds kube-system/kube-scheduler, so the GET answers 404
        await until(pilot, lambda: "kube-system/kube-scheduler" in why_text(app) and "not found" in why_text(app),
                    "the unreadable Lease")
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                 "metadata": {"name": "kube-scheduler", "namespace": "kube-system"},
                 "spec": {"holderIdentity": "pair-control-plane_4b1d6f0e-lesson", "leaseDurationSeconds": 15,
                          "renewTime": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")}}
        async with http.post("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", json=lease) as response:
            assert response.status == 201, await response.text()
        # read again within lease_interval, and the holder named
        await until(pilot, lambda: "pair-control-plane_4b1d6f0e-lesson" in why_text(app), "the Lease holder")
