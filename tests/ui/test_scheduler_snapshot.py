"""SVG snapshots of the scheduler inside the screen (``r``), at 120x40 and 80x24, over the recorded lab of
tests/ui/fakes.py with a frozen clock: the decisions pane in the Why pane's place, its decision table (the chosen node
highlighted), the Binding's 201 in the pane and in the HTTP exchange pane, the header badge. The scheduler is a fake
that yields one pinned decision (the taint verdict is §4.3a's text; the scores are made up) and binds through the
recorded source, so every run renders the same screen; the real scheduler is in test_scheduler_pilot.py.

Also the pane's pure rendering: a refusal, a dry run, the summary of a large cluster; the log line kept apart from
the decisions, the history in queue order, ``w``, a title that fits.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import Any

import pytest
from rich.console import Console
from textual.app import App

from observatory.model.decisions import SchedulingDecision
from observatory.scheduler.options import SchedulerOptions
from observatory.ui.app import ObservatoryApp
from observatory.ui.scheduler import scheduler_name_options
from observatory.ui.widgets.decisions_pane import (
    ALL_NODES_UP_TO,
    DecisionsPane,
    decision_table,
    history_line,
    outcome_text,
)
from tests.scheduler.conftest import CPU_TOO_MUCH
from tests.ui.fakes import FROZEN, RecordedSource, frozen_clock
from tests.ui.helpers import until

pytestmark = pytest.mark.usefixtures("utc_local_time")  # clock times as the snapshots show them

TAINTED = "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"
"""TaintToleration's reason on the pair's control plane (../shared/k8s-api-reference.md §4.3a)."""


class SchedulingSource(RecordedSource):
    """The recorded lab with a scheduler that binds each pod of its schedulerName to pair-worker, through the
    recorded ``bind`` (so the watch shows the pod move and the exchange is the lab's 201)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.started: list[SchedulerOptions] = []

    async def run_scheduler(self, options: SchedulerOptions, *, namespace: str | None = None,
                            log: Callable[[str], None] | None = None) -> AsyncIterator[SchedulingDecision]:
        self.started.append(options)
        if log is not None:
            log(f"Synced: 2 nodes, 0 bound pods, 1 pods waiting for {options.scheduler_name}.")
        for key, pod in list(self.objects["pods"].items()):
            if pod["spec"].get("schedulerName") != options.scheduler_name or pod["spec"].get("nodeName"):
                continue
            namespace, name = key.split("/", 1)
            exchange = await self.bind(namespace, name, "pair-worker", pod["metadata"]["uid"])
            yield SchedulingDecision(
                pod=key, uid=pod["metadata"]["uid"], scheduler_name=options.scheduler_name, policy=options.policy,
                attempt=1, verdicts={"pair-control-plane": TAINTED, "pair-worker": ""}, scores={"pair-worker": 492},
                node="pair-worker", message=None, exchange=exchange, outcome="bound", time=FROZEN, cycle=1,
                started=FROZEN,
                plugin_scores={"pair-worker": {"TaintToleration": 100, "NodeResourcesFit": 95,
                                               "NodeResourcesBalancedAllocation": 97}})
        await asyncio.Event().wait()  # a scheduler runs until stopped


def make_app() -> ObservatoryApp:
    source = SchedulingSource()
    return ObservatoryApp(source, clock=frozen_clock, refresh_interval=0.05, scheduler=source)


async def run_scheduler(pilot) -> None:
    app = pilot.app
    await until(pilot, lambda: "sched-lab/manual" in app.query_one("#pending").rows)
    app.query_one("#pending").select("sched-lab/manual")
    await until(pilot, lambda: app.main.selected == "sched-lab/manual")
    await pilot.press("r")
    await until(pilot, lambda: app.screen.__class__.__name__ == "ChooserScreen")
    await pilot.press(*"nobody", "enter")  # the seed pod's schedulerName, nobody-at-all
    await until(pilot, lambda: "policy" in getattr(app.screen, "title_text", ""))
    await pilot.press("enter")
    await until(pilot, lambda: app.main.scheduler.decisions and app.main.state.recently_bound()
                and len(app.query("#exchange .exchange")) == 1 and "1 bound" in str(app.query_one("#header").render()))
    await pilot.pause(0.15)  # three refresh intervals: the flush after the change has rendered
    await pilot.wait_for_scheduled_animations()


def test_scheduler_running_120x40(snap_compare):
    assert snap_compare(make_app(), terminal_size=(120, 40), run_before=run_scheduler)


def test_scheduler_running_80x24(snap_compare):
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=run_scheduler)


async def test_chooser_offers_the_names_no_scheduler_has_looked_at_first():
    app = ObservatoryApp(RecordedSource(scenario="refusals"), clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.main.state.schedulers_seen())
        names = [oid for oid, _ in scheduler_name_options(app.main.state)]
        # refusals: default-scheduler's refused pods (it has looked) and none for another name
        assert names[-1] == "default-scheduler"
        assert "a scheduler of this name reported" in dict(scheduler_name_options(app.main.state))[names[-1]].plain
        await pilot.press("r")  # this source cannot run a scheduler: said, and nothing opens
        await pilot.pause(0.1)
        assert app.main.scheduler.run_now is None and app.screen is app.screen_stack[0]


async def test_r_is_in_help_and_a_second_r_stops_the_fake_scheduler():
    from observatory.ui.screens.help import HelpScreen

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        keys = {(b.key, b.id): b.description for b in app.screen.bindings}
        assert ("r", "scheduler") in keys
        assert "Why pane" in keys[("w", "why-or-decisions")]
        await pilot.press("escape")
        await run_scheduler(pilot)
        assert app.main.source.started[-1].scheduler_name == "nobody-at-all"
        assert not app.main.source.started[-1].dry_run and app.main.source.started[-1].policy == "least-allocated"

        # w: the Why pane of the selected pod in the decisions' place, with a hint on its border; w: back
        await pilot.press("w")
        await until(pilot, lambda: app.query_one("#why").display and not app.query_one("#decisions").display)
        assert app.query_one("#why").border_title == "Why: sched-lab/manual"
        assert "w" in (app.query_one("#why").border_subtitle or "")
        await pilot.press("w")
        await until(pilot, lambda: app.query_one("#decisions").display and not app.query_one("#why").display)
        await pilot.press("w")  # Why shown when r stops it: the Why pane stays, with no hint
        await pilot.press("r")
        await until(pilot, lambda: app.main.scheduler.run_now is None and app.query_one("#why").display
                    and not app.query_one("#decisions").display)
        assert "scheduler" not in str(app.query_one("#header").render())
        assert not app.query_one("#why").border_subtitle
        assert app.main.scheduler.decisions  # the first run's decisions, kept for the pane while it ran
        app.main.scheduler.start("nobody-at-all")  # a new run shows its decisions again, whatever w showed before
        assert not app.main.scheduler.decisions  # break-it finding: the earlier run's decisions stayed under its title
        await until(pilot, lambda: app.query_one("#decisions").display and not app.query_one("#why").display)
        await pilot.press("r")
        await until(pilot, lambda: app.main.scheduler.run_now is None)


async def test_the_title_fits_at_120x40_and_the_log_line_is_on_the_border():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await run_scheduler(pilot)
        pane = app.query_one(DecisionsPane)
        await until(pilot, lambda: pane.log_line)
        title = app.main.scheduler.run_now.title
        assert pane.border_title == title and len(title) + 6 <= pane.outer_size.width  # "╭─ title ─╮", uncut
        assert pane.log_line == "09:30:00 Synced: 2 nodes, 0 bound pods, 1 pods waiting for nobody-at-all."
        assert "Synced" not in pane.plain()


def decision(**kw: Any) -> SchedulingDecision:
    base: dict[str, Any] = dict(pod="sched-lab/huge", uid="u", scheduler_name="my-scheduler", policy="least-allocated",
                                attempt=1, verdicts={}, scores={}, node=None, message=None, exchange=None,
                                outcome="unschedulable", time=FROZEN)
    base.update(kw)
    return SchedulingDecision(**base)


def plain(renderable) -> str:
    console = Console(width=200, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_a_refusal_shows_failed_scheduling_and_every_node_rejected():
    refusal = decision(verdicts={"pair-control-plane": TAINTED, "pair-worker": "Insufficient cpu"},
                       message=CPU_TOO_MUCH)
    text = plain(outcome_text(refusal))
    assert text.splitlines()[0] == "FailedScheduling" and CPU_TOO_MUCH in " ".join(text.split())
    table = plain(decision_table(refusal))
    assert f"✗ {TAINTED}" in table and "✗ Insufficient cpu" in table and "▶" not in table
    assert "FailedScheduling" in history_line(refusal).plain


def test_a_dry_run_says_nothing_was_sent():
    dry = decision(pod="sched-lab/a", verdicts={"pair-worker": ""}, node="pair-worker", outcome="dry-run",
                   dry_run=True, policy="first-fit")
    assert "would bind → pair-worker" in outcome_text(dry).plain and "no Binding sent" in outcome_text(dry).plain
    assert "Binding ←" not in outcome_text(dry).plain


class PaneApp(App[None]):
    def compose(self):
        yield DecisionsPane(id="decisions")


async def test_a_log_line_about_another_pod_never_reads_as_the_decisions_outcome():
    """A log line such as ``The PodScheduled condition of default/err-2 could not be written (500)`` never sits under
    ``bound → big-node``: it goes on the border, with its own time; the decision shows only its own outcome."""
    bound = decision(pod="default/ok-1", verdicts={"big-node": ""}, scores={"big-node": 400}, node="big-node",
                     outcome="bound", cycle=4, started=FROZEN)
    log = "09:30:02 The PodScheduled condition of default/err-2 could not be written (500): etcd is busy"
    app = PaneApp()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(DecisionsPane)
        pane.show([bound], "Decisions of s (least-allocated)", log)
        await pilot.pause()
        assert "could not be written" not in pane.plain() and "err-2" not in pane.plain()
        assert pane.log_line == log and "err-2" in (pane.border_subtitle or "")
        assert "default/ok-1" in pane.plain() and "bound → big-node" in pane.plain()
        pane.show([bound], "Decisions of s (least-allocated)", "")  # no log line: no border text
        assert pane.border_subtitle is None


async def test_the_history_is_in_queue_order_with_cycle_numbers():
    """A FailedScheduling (known at once) may arrive before the Bindings of the pods queued before it: the history
    still lists decisions in queue order."""
    t = FROZEN
    refused = decision(pod="sched-lab/huge", message=CPU_TOO_MUCH, cycle=3, started=t + timedelta(seconds=2))
    first = decision(pod="sched-lab/a", verdicts={"pair-worker": ""}, node="pair-worker", outcome="dry-run",
                     cycle=1, started=t)
    second = decision(pod="sched-lab/b", verdicts={"pair-worker": ""}, node="pair-worker", outcome="dry-run",
                      cycle=2, started=t + timedelta(seconds=1))
    app = PaneApp()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(DecisionsPane)
        pane.show([refused, second, first], "Decisions of s (least-allocated)")  # in arrival order
        await pilot.pause()
        lines = pane.plain().splitlines()
        assert lines[0].split()[:3] == ["#3", "09:30:02", "sched-lab/huge"]  # the latest cycle in full
        history = lines[lines.index("Earlier decisions, by scheduling cycle (latest first)") + 1:]
        assert [line.split()[:3] for line in history if line.strip()] == [["#2", "09:30:01", "sched-lab/b"],
                                                                          ["#1", "09:30:00", "sched-lab/a"]]


def test_a_large_cluster_is_summarised_around_the_chosen_node():
    nodes = {f"n{i:04d}": ("" if i % 2 else "Insufficient cpu") for i in range(1000)}
    scores = {n: int(n[1:]) for n, why in nodes.items() if not why}
    big = decision(pod="sched-lab/a", verdicts=nodes, scores=scores, node="n0999", outcome="dry-run")
    table = plain(decision_table(big))
    rows = [line for line in table.splitlines() if line.strip().startswith(("▶", "n"))]
    assert len(rows) <= ALL_NODES_UP_TO and rows[0].lstrip().startswith("▶")
    assert "990 more nodes" in table and "500 Insufficient cpu" in table
