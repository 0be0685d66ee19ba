"""The scheduler inside the screen drains the pending pane and shows a decision table, driven with Textual's pilot
against a real lab on a random loopback port.

Pods for ``my-scheduler`` are created over HTTP; ``r`` (or the command palette) starts the in-process scheduler
through ``ClusterSource.run_scheduler``. Expected texts come from ../shared/k8s-api-reference.md: the FitError of
§4.3a (``CPU_TOO_MUCH``), the 201 Status body of §1.7 and the header line of the issue. Waits are on conditions,
never fixed sleeps.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.command import CommandPalette
from textual.worker import WorkerState

from observatory.settings import LabSettings
from observatory.ui.app import ObservatoryApp
from observatory.ui.screens.chooser import ChooserScreen
from observatory.ui.widgets.decisions_pane import DecisionsPane
from observatory.ui.widgets.exchange_pane import ExchangePane
from observatory.ui.widgets.nodes_pane import render_node
from observatory.ui.widgets.why_pane import WhyPane
from tests.scheduler.conftest import CPU_TOO_MUCH, SCHEDULER, pod_manifest
from tests.ui.helpers import until

CREATED_201 = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}\n'
NODES = {"pair-control-plane", "pair-worker"}
TOLERATE_CONTROL_PLANE = [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
                           "effect": "NoSchedule"}]
"""So both nodes of the pair pass every filter and the scores decide."""


@pytest.fixture
def lab_settings() -> LabSettings:
    """The simulated cluster on (its default-scheduler ignores my-scheduler's pods) with a quick kubelet."""
    return LabSettings(kubelet_start_seconds=0.3)


async def create(http, body: dict[str, Any]) -> None:
    async with http.post(f"/api/v1/namespaces/{body['metadata']['namespace']}/pods", json=body) as resp:
        assert resp.status == 201, await resp.text()


def waiting(app: ObservatoryApp, scheduler: str = SCHEDULER) -> set[str]:
    """Pods of ``scheduler`` the screen shows as pending with no node."""
    return {row.pod.key for row in app.main.state.pending()
            if row.pod.scheduler_name == scheduler and not row.pod.node_name and not row.bound_to}


def node_of(lab, name: str) -> str | None:
    return lab.store.get("pods", "sched-lab", name)["spec"].get("nodeName")


def decided(app: ObservatoryApp, pod: str, outcome: str) -> list:
    return [d for d in app.main.scheduler.decisions if d.pod == f"sched-lab/{pod}" and d.outcome == outcome]


def header(app: ObservatoryApp) -> str:
    return str(app.query_one("#header").render())


async def start_with_keys(pilot, name: str = SCHEDULER) -> None:
    app = pilot.app
    await pilot.press("r")
    await until(pilot, lambda: isinstance(app.screen, ChooserScreen), "the schedulerName chooser")
    assert name in [oid for oid, _ in app.screen.options]  # offered: its pods are pending and nobody looked
    assert "the screen's scope: every namespace" in str(app.screen.subtitle)  # the source watches every namespace
    await pilot.press(*name, "enter")
    await until(pilot, lambda: isinstance(app.screen, ChooserScreen) and "policy" in app.screen.title_text,
                "the policy chooser")
    assert next(oid for oid, _ in app.screen.options) == "least-allocated"
    await pilot.press("enter")  # the default, highlighted first
    await until(pilot, lambda: app.main.scheduler.run_now is not None, "the scheduler started")


async def test_scheduler_drains_pending_pods_shows_decisions_and_stops(make_app, lab, http):
    for name in ("a", "b", "c"):
        await create(http, pod_manifest(name, tolerations=TOLERATE_CONTROL_PLANE))
    app = await make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: waiting(app) == {"sched-lab/a", "sched-lab/b", "sched-lab/c"}, "three pods pending")
        assert app.query_one(WhyPane).display and not app.query(DecisionsPane)

        await start_with_keys(pilot)
        pane = app.query_one(DecisionsPane)
        assert pane.display and not app.query_one(WhyPane).display  # in the Why pane's place

        # The pending pane drains: every pod bound by the Binding, to a node of the lab, and shown under it.
        await until(pilot, lambda: not waiting(app), "the pending pods of my-scheduler drained")
        await until(pilot, lambda: all(decided(app, n, "bound") for n in "abc"), "three bound decisions")
        for name in "abc":
            node = node_of(lab, name)
            assert node in NODES and decided(app, name, "bound")[0].node == node
        placed = {p.node.name: render_node(p, None).plain for p in app.main.state.placement()}
        assert all(f"sched-lab/{n}" in placed[node_of(lab, n)] for n in "abc")
        await until(pilot, lambda: "3 bound, 0 unschedulable" in header(app), "the header's count")
        assert f"scheduler {SCHEDULER} (least-allocated) running: 3 bound, 0 unschedulable" in header(app)

        # The decision table: a row per node with its verdict and score, the chosen node marked. The latest is the
        # decision of the latest scheduling cycle (Bindings are answered in any order).
        cycles = sorted(app.main.scheduler.decisions, key=lambda d: d.queue_order)
        assert [d.cycle for d in cycles] == [1, 2, 3]
        latest = cycles[-1]
        assert latest.outcome == "bound" and set(latest.verdicts) == NODES
        await until(pilot, lambda: len(app.main.scheduler.decisions) == 3
                    and latest.pod in pane.plain().splitlines()[0], "the latest decision shown")
        text = pane.plain()
        assert text.splitlines()[0].lstrip().startswith("#3 ")
        assert "NODE" in text and "FILTERS" in text and "SCORE" in text
        rows = {node: next(line for line in text.splitlines() if node in line and "fits" in line) for node in NODES}
        assert rows[latest.node].lstrip().startswith("▶")
        for node in NODES:
            assert "✓ fits" in rows[node] and str(latest.scores[node]) in rows[node]
        assert "Binding ← HTTP/1.1 201 Created" in text
        history = text.split("Earlier decisions, by scheduling cycle (latest first)\n", 1)[1].splitlines()
        assert [line.split()[0] for line in history[:2]] == ["#2", "#1"]  # the two before it, latest cycle first
        assert [history[i].split()[2] for i in (0, 1)] == [cycles[1].pod, cycles[0].pod]

        # The log line is not under the decision but on the border, with its time; the title fits.
        assert "Synced:" in pane.log_line and "Synced" not in text
        hh, mm, ss = pane.log_line.split()[0].split(":")
        assert all(part.isdigit() and len(part) == 2 for part in (hh, mm, ss))
        title = app.main.scheduler.run_now.title
        assert pane.border_title == title and len(title) + 6 <= pane.outer_size.width  # "╭─ title ─╮", uncut
        assert "bound" not in title  # the counts are in the header

        # Each Binding reached the HTTP exchange pane, with its 201.
        exchanges = app.query_one(ExchangePane)
        await until(pilot, lambda: len(exchanges.query(".exchange")) == 3, "three exchanges shown")
        assert exchanges.border_title == "HTTP exchange: HTTP/1.1 201 Created"
        bound = [d for d in app.main.scheduler.decisions if d.outcome == "bound"]
        assert all(d.exchange is not None and d.exchange.response_body == CREATED_201 for d in bound)

        # A pod that fits nowhere: FailedScheduling with the FitError text, in the pane and in the header.
        await create(http, pod_manifest("huge", cpu="100"))
        await until(pilot, lambda: decided(app, "huge", "unschedulable"), "the refusal")
        assert decided(app, "huge", "unschedulable")[0].message == CPU_TOO_MUCH
        await until(pilot, lambda: "FailedScheduling" in pane.plain() and "sched-lab/huge" in pane.plain(),
                    "the refusal shown")
        flat = " ".join(pane.plain(width=400).split())
        assert CPU_TOO_MUCH in flat
        await until(pilot, lambda: "3 bound, 1 unschedulable" in header(app), "the header's count")
        assert waiting(app) == {"sched-lab/huge"}

        # w: the Why pane of the selected pod in the decisions' place while the scheduler runs, w again: back.
        app.query_one("#pending").select("sched-lab/huge")
        await until(pilot, lambda: app.main.selected == "sched-lab/huge", "huge selected")
        await pilot.press("w")
        why = app.query_one(WhyPane)
        await until(pilot, lambda: why.display and not pane.display, "the Why pane in the decisions' place")
        assert app.main.scheduler.run_now is not None and why.region.width >= 40
        await until(pilot, lambda: why.border_title == "Why: sched-lab/huge" and why.fit_text("pair-worker"),
                    "the Why pane of the selected pod")
        assert "NodeResourcesFit" in why.fit_text("pair-worker")  # its cpu request of 100 fits nowhere
        await pilot.press("w")
        await until(pilot, lambda: pane.display and not why.display, "the decisions back")

        # r again stops it: the Why pane is back, the worker is gone, and a new pod stays pending.
        await pilot.press("r")
        # The badge is gone (the header's kubeconfig path may hold "scheduler": pytest names the folder after the test).
        await until(pilot, lambda: app.main.scheduler.run_now is None and f"scheduler {SCHEDULER} (" not in header(app)
                    and app.main.panes.header.scheduler is None, "the scheduler stopped")
        assert app.query_one(WhyPane).display and not pane.display
        await until(pilot, lambda: all(w.state in (WorkerState.CANCELLED, WorkerState.SUCCESS, WorkerState.ERROR)
                                       for w in app.workers if w.group == "scheduler"), "the worker ended")
        count = len(app.main.scheduler.decisions)
        await create(http, pod_manifest("late", tolerations=TOLERATE_CONTROL_PLANE))
        # The lab's default-scheduler binds a pod of its own meanwhile: proof that time passed with schedulers busy.
        await create(http, pod_manifest("probe", scheduler="default-scheduler"))
        await until(pilot, lambda: node_of(lab, "probe") and "sched-lab/late" in waiting(app), "probe bound")
        assert node_of(lab, "late") is None and len(app.main.scheduler.decisions) == count


async def test_read_only_runs_a_dry_run_from_the_palette_and_binds_nothing(make_app, lab, http):
    for name in ("a", "b"):
        await create(http, pod_manifest(name))
    app = await make_app(read_only=True)
    async with app.run_test(size=(90, 30)) as pilot:  # the narrow layout (below 100 columns)
        await until(pilot, lambda: waiting(app) == {"sched-lab/a", "sched-lab/b"}, "two pods pending")
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the command palette")
        await pilot.press(*"Start scheduler")
        await until(pilot, lambda: "Start scheduler" in str(app.screen.query_one("CommandList").get_option_at_index(0)
                                                               .prompt), "the palette entry")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ChooserScreen), "the schedulerName chooser")
        await pilot.press(*SCHEDULER, "enter")
        await until(pilot, lambda: isinstance(app.screen, ChooserScreen) and "policy" in app.screen.title_text,
                    "the policy chooser")
        await pilot.press(*"first", "enter")
        await until(pilot, lambda: app.main.scheduler.run_now is not None, "the scheduler started")
        assert app.main.scheduler.run_now.options.dry_run and app.main.scheduler.run_now.options.policy == "first-fit"

        await until(pilot, lambda: decided(app, "a", "dry-run") and decided(app, "b", "dry-run"), "two dry runs")
        pane = app.query_one(DecisionsPane)
        assert pane.display and pane.region.height >= 10 and pane.region.width >= 60
        await until(pilot, lambda: "would bind" in pane.plain(), "a dry-run decision shown")
        await until(pilot, lambda: "dry run: 2 would bind" in header(app), "the header's count")
        assert "READ-ONLY" in header(app)
        # Nothing was sent: no Binding, no exchange, no event; the pods are still waiting.
        assert all(d.exchange is None for d in app.main.scheduler.decisions)
        assert node_of(lab, "a") is None and node_of(lab, "b") is None
        assert waiting(app) == {"sched-lab/a", "sched-lab/b"}
        assert not app.query_one(ExchangePane).query(".exchange")
        assert not [e for e in lab.store.iter("events") if e.get("reason") == "Scheduled"
                    and e["involvedObject"]["name"] in ("a", "b")]

        # The palette stops it too.
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the command palette")
        await pilot.press(*"Stop scheduler")
        await until(pilot, lambda: "Stop scheduler" in str(app.screen.query_one("CommandList").get_option_at_index(0)
                                                              .prompt), "the palette entry")
        await pilot.press("enter")
        await until(pilot, lambda: app.main.scheduler.run_now is None, "the scheduler stopped")
        assert app.query_one(WhyPane).display and not pane.display
