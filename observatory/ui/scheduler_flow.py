"""``r``: observatory as a scheduler inside the screen. A mixin of :class:`~observatory.ui.app.ObservatoryApp`, kept
apart so the app module stays small.

``r`` (or the command palette's *Start scheduler…*) asks for a schedulerName (the names of the pending pods first,
those no scheduler has looked at on top; any other name may be typed) and a policy, then runs
``source.run_scheduler`` (``observatory schedule`` in-process: :class:`observatory.scheduler.loop.Scheduler`) in an
exclusive worker. Each :class:`~observatory.model.decisions.SchedulingDecision` is shown as it arrives: the
:class:`~observatory.ui.widgets.decisions_pane.DecisionsPane` takes the Why pane's place while the scheduler runs
(the layout is otherwise unchanged), every Binding it sends reaches the HTTP exchange pane, and the header says
``scheduler NAME (policy) running: N bound, M unschedulable``. The pods drain from the pending pane through the
ordinary watch. ``r`` again (or *Stop scheduler*) cancels the worker: the scheduler's watches stop, Bindings in
flight get their answer and a held Lease is released (``Scheduler.decisions``). One scheduler at a time.

While it runs, ``w`` (or the palette's *Show Why pane* / *Show scheduler decisions*) switches that place between the
decisions and the Why pane of the selected pod; stopping the scheduler brings the Why pane back either way.

In read-only mode the scheduler runs as a dry run: it decides and shows what it would bind, and sends nothing. A
source without ``run_scheduler`` (a recording, a replay) says so instead. The scheduler serves the screen's scope
when it started (the namespace shown, or every namespace), whatever ``n`` or ``a`` show later; the chooser says
which. (``observatory schedule`` serves every namespace unless ``-n`` restricts it.)

Upstream does not restrict ``spec.schedulerName`` beyond its being a string (``ValidatePodSpec`` leaves it alone;
a KubeSchedulerConfiguration profile only requires it non-empty), so any non-empty name without surrounding spaces
is accepted (:meth:`SchedulerOptions.validate`).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import SystemCommand
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget

from observatory.model.decisions import SchedulerStopped, SchedulingDecision
from observatory.model.diagnosis import NO_SCHEDULER
from observatory.model.state import ClusterState
from observatory.scheduler.options import SchedulerOptions
from observatory.scheduler.policies import DEFAULT_POLICY, POLICIES
from observatory.ui.screens.chooser import ChooserScreen
from observatory.ui.text import clock_time
from observatory.ui.widgets.decisions_pane import DecisionsPane
from observatory.ui.widgets.exchange_pane import ExchangePane
from observatory.ui.widgets.header_bar import HeaderBar
from observatory.ui.widgets.why_pane import WhyPane

if TYPE_CHECKING:
    from observatory.ui.source import Source

__all__ = ["POLICY_HELP", "SCHEDULER_BINDING", "SCHEDULER_BINDINGS", "SchedulerFlow", "SchedulerRun",
           "scheduler_name_options"]

SCHEDULER_BINDING = Binding("r", "toggle_scheduler", "Scheduler", show=False, id="scheduler")
WHY_OR_DECISIONS_BINDING = Binding("w", "toggle_why_decisions", "While a scheduler runs: Why pane / its decisions",
                                   show=False, id="why-or-decisions")
SCHEDULER_BINDINGS = [SCHEDULER_BINDING, WHY_OR_DECISIONS_BINDING]
"""ObservatoryApp lists them in its BINDINGS (a mixin's own BINDINGS would be ignored); in ``?`` and the palette."""
KEPT_DECISIONS = 200
"""Decisions kept for the pane (its history shows the last few)."""
KEPT_EXCHANGES = 20
"""The scheduler's Binding exchanges kept in the HTTP exchange pane: a drained queue of 1,000 pods must not leave
1,000 blocks behind (hand binds are never removed)."""
POLICY_HELP = {
    "least-allocated": "kube-scheduler's default scoring: the node with the most left free wins",
    "most-allocated": "bin packing: the fullest node that still fits wins",
    "spread": "the node with the fewest pods wins",
    "first-fit": "the first node, by name, that passes every filter",
    "random": "any node that passes every filter, at random",
}
"""One line per policy for the chooser (:mod:`observatory.scheduler.policies` has the details)."""


@dataclass
class SchedulerRun:
    """The scheduler running in the screen: its options and, per pod, the outcome of its latest decision."""

    options: SchedulerOptions
    latest: dict[str, str] = field(default_factory=dict)
    note: str = ""
    """The scheduler's last log line (synced, a watch in trouble, a write that failed)."""
    note_at: datetime | None = None
    """When :attr:`note` was logged."""

    def count(self, outcome: str) -> int:
        """Pods whose latest decision had ``outcome``."""
        return sum(1 for seen in self.latest.values() if seen == outcome)

    @property
    def counts(self) -> str:
        """``2 bound, 1 unschedulable`` (``dry run: 2 would bind, 1 unschedulable`` in a dry run)."""
        done = (f"dry run: {self.count('dry-run')} would bind" if self.options.dry_run
                else f"{self.count('bound')} bound")
        return f"{done}, {self.count('unschedulable')} unschedulable"

    @property
    def status(self) -> str:
        """The header's: ``scheduler my-scheduler (least-allocated) running: 2 bound, 1 unschedulable``."""
        return f"scheduler {self.options.scheduler_name} ({self.options.policy}) running: {self.counts}"

    @property
    def title(self) -> str:
        """The decisions pane's: ``Decisions of my-scheduler (least-allocated)`` (the counts are in the header)."""
        return f"Decisions of {self.options.scheduler_name} ({self.options.policy})"

    @property
    def log_line(self) -> str:
        """The last log line with its time, ``09:30:00 Synced: 2 nodes, …``; "" before the first."""
        if not self.note:
            return ""
        return f"{clock_time(self.note_at)} {self.note}" if self.note_at is not None else self.note


def scheduler_name_options(state: ClusterState) -> list[tuple[str, Text]]:
    """The chooser's schedulerNames: those of pods waiting with no node, each with its count and whether any
    scheduler of that name has looked (a FailedScheduling or Scheduled event seen). Names no scheduler has looked at
    come first, then by count, then by name."""
    waiting: dict[str, list[bool]] = {}
    for row in state.pending():
        if row.bound_to or row.pod.node_name:
            continue
        waiting.setdefault(row.pod.scheduler_name, []).append(row.diagnosis.state == NO_SCHEDULER)
    seen = state.schedulers_seen()
    options = []
    for name, unlooked in sorted(waiting.items(), key=lambda item: (not any(item[1]), -len(item[1]), item[0])):
        label = Text(name, style="bold")
        label.append(f"  {len(unlooked)} pending", style="yellow")
        if name in seen:
            label.append(f"  a scheduler of this name reported at {clock_time(seen[name])}", style="dim")
        elif any(unlooked):
            label.append("  no scheduler has looked", style="dim")
        options.append((name, label))
    return options


def policy_options() -> list[tuple[str, Text]]:
    """Every policy, the default first, each with what it prefers."""
    ordered = [DEFAULT_POLICY, *(p for p in POLICIES if p != DEFAULT_POLICY)]
    options = []
    for policy in ordered:
        label = Text(policy, style="bold")
        label.append(f"  {POLICY_HELP.get(policy, '')}", style="dim")
        if policy == DEFAULT_POLICY:
            label.append("  (default)", style="dim")
        options.append((policy, label))
    return options


class SchedulerFlow:
    """``r`` and the palette: start or stop the in-process scheduler; its decisions, header badge and exchanges."""

    state: ClusterState
    source: Source
    refresh_interval: float
    clock: Callable[[], datetime]
    scheduler_run: SchedulerRun | None = None
    """The scheduler running now (None: none)."""
    why_while_scheduling: bool = False
    """``w``: the Why pane, not the decisions, in their place while the scheduler runs."""
    _decisions: list[SchedulingDecision] | None = None
    _decisions_shown = 0
    _unshown_exchanges: int = 0
    _scheduler_timer: Timer | None = None
    _scheduler_exchange_blocks: collections.deque[Widget] | None = None

    @property
    def scheduler_decisions(self) -> list[SchedulingDecision]:
        """Decisions of this session's schedulers, oldest first (the last :data:`KEPT_DECISIONS`)."""
        if self._decisions is None:
            self._decisions = []
        return self._decisions

    # -- starting and stopping -------------------------------------------------------------------------------------

    def action_toggle_scheduler(self) -> None:
        """``r``: stop the running scheduler, or choose a schedulerName and a policy and start one."""
        if self.scheduler_run is not None:
            self.stop_scheduler()
            return
        if getattr(self.source, "run_scheduler", None) is None:
            self.notify("This screen cannot run a scheduler: it shows a recording or a replay, which holds only what "
                        "was watched.", title="Scheduler", severity="warning")
            return
        subtitle = Text("Pods waiting for a node, by schedulerName. Type any other name to serve it.", style="dim")
        scope = f"namespace {self.source.namespace}" if self.source.namespace else "every namespace"
        subtitle.append(f"\nIt serves the screen's scope: {scope} (n or a changes it before r).", style="dim")

        def named(name: str | None) -> None:
            if name:
                self._choose_policy(name)

        self.push_screen(ChooserScreen("Run a scheduler for which schedulerName?",
                                       scheduler_name_options(self.state), "type a schedulerName",
                                       free_text=True, subtitle=subtitle,
                                       free_text_hint="(no pending pod names it yet: serve it anyway)"), named)

    def _choose_policy(self, name: str) -> None:
        try:
            SchedulerOptions(name).validate()
        except ValueError as exc:
            self.notify(str(exc).replace("--scheduler-name ", "schedulerName "), title="Scheduler",
                        severity="warning")
            return
        subtitle = Text("Filtering is kube-scheduler's default profile; the policy picks among the nodes that pass.",
                        style="dim")
        if self.source.read_only:
            subtitle.append("\nRead-only: a dry run, it decides and binds nothing.", style="bold")

        def chosen(policy: str | None) -> None:
            if policy:
                self.start_scheduler(name, policy)

        self.push_screen(ChooserScreen(f"Schedule {name}'s pods with which policy?",
                                       policy_options(), "type to filter", subtitle=subtitle), chosen)

    def start_scheduler(self, name: str, policy: str = DEFAULT_POLICY) -> None:
        """Run a scheduler for ``name`` with ``policy`` (a dry run in read-only mode); one at a time."""
        if self.scheduler_run is not None:
            self.notify(f"{self.scheduler_run.status}; r stops it first.", title="Scheduler", severity="warning")
            return
        options = SchedulerOptions(name, policy=policy, dry_run=self.source.read_only)
        try:
            options.validate()
        except ValueError as exc:
            self.notify(str(exc), title="Scheduler", severity="warning")
            return
        run = self.scheduler_run = SchedulerRun(options)
        self.scheduler_decisions.clear()  # a new run starts a new history (its cycle numbers start again at 1)
        self._decisions_shown = self._unshown_exchanges = 0
        self.why_while_scheduling = False
        self._show_scheduler_pane(True)
        self._scheduler_timer = self.set_interval(self.refresh_interval, self.show_scheduler)
        self.run_in_process_scheduler(run)
        self.show_scheduler()

    def stop_scheduler(self, reason: str = "", *, severity: str = "information") -> None:
        """Cancel the scheduler's worker (its watches stop, a held Lease is released), restore the Why pane."""
        run, self.scheduler_run = self.scheduler_run, None
        self.workers.cancel_group(self, "scheduler")
        try:
            self._show_new_exchanges()  # the Bindings answered since the last tick
        except NoMatches:
            pass  # the screen is being torn down
        if self._scheduler_timer is not None:
            self._scheduler_timer.stop()
            self._scheduler_timer = None
        self._set_header(None)
        self._show_scheduler_pane(False)
        if run is not None:
            done = f"scheduler {run.options.scheduler_name} ({run.options.policy}): {run.counts}"
            self.notify(f"{reason} {done}" if reason else f"Stopped {done}", title="Scheduler", severity=severity,
                        timeout=10 if reason else 5)

    @work(exclusive=True, group="scheduler", exit_on_error=False)
    async def run_in_process_scheduler(self, run: SchedulerRun) -> None:
        """Iterate ``source.run_scheduler``; each decision is kept and shown on the next tick. Ends when cancelled
        (``r``), or when the scheduler stops by itself (its Lease lost, an error), which is said in one line."""
        def log(line: str) -> None:
            run.note, run.note_at = line, self.clock()

        stream = None
        try:
            stream = self.source.run_scheduler(run.options, log=log)
            async for decision in stream:
                if self.scheduler_run is not run:
                    break
                self._decided(run, decision)
        except SchedulerStopped as exc:
            self._ended(run, f"{exc}", "warning")
        except Exception as exc:
            self._ended(run, f"The scheduler stopped: {type(exc).__name__}: {exc}.", "error")
        else:
            self._ended(run, "The scheduler stopped.", "warning")
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()  # its watches stop, Bindings in flight finish, a held Lease is released

    def _ended(self, run: SchedulerRun, reason: str, severity: str) -> None:
        if self.scheduler_run is run:  # not stopped by r already
            self.stop_scheduler(reason, severity=severity)

    def _decided(self, run: SchedulerRun, decision: SchedulingDecision) -> None:
        run.latest[decision.pod] = decision.outcome
        self.scheduler_decisions.append(decision)
        if len(self.scheduler_decisions) > KEPT_DECISIONS:
            drop = len(self.scheduler_decisions) - KEPT_DECISIONS
            del self.scheduler_decisions[:drop]
            self._decisions_shown = max(0, self._decisions_shown - drop)
        if decision.exchange is not None:
            self._unshown_exchanges += 1

    # -- showing ---------------------------------------------------------------------------------------------------

    def show_scheduler(self) -> None:
        """Every tick while a scheduler runs: the header badge, the decisions pane, the new Binding exchanges."""
        run = self.scheduler_run
        if run is None or not self.is_running:
            return
        for pod in [p for p in run.latest if p not in self.state.pods]:
            del run.latest[pod]  # a deleted pod no longer counts as bound or unschedulable
        try:
            self._set_header(run)
            self.query_one(DecisionsPane).show(self.scheduler_decisions, run.title, run.log_line)
            self._show_new_exchanges()
        except NoMatches:
            return  # the screen is being torn down

    def _set_header(self, run: SchedulerRun | None) -> None:
        badge = None
        if run is not None:
            badge = Text(f" {run.status} ", style="bold black on cyan" if run.options.dry_run else "bold white on blue")
        try:
            header = self.query_one(HeaderBar)
        except NoMatches:
            return
        header.scheduler = badge  # shown from the next repaint on (HeaderBar.show)

    def _show_new_exchanges(self) -> None:
        """The Bindings decided since the last tick, in the HTTP exchange pane (the newest :data:`KEPT_EXCHANGES`
        of them), through the same rendering as a hand bind's, with the kubectl that sends the same Binding."""
        new = self.scheduler_decisions[self._decisions_shown:]
        self._decisions_shown = len(self.scheduler_decisions)
        if not self._unshown_exchanges:
            return
        self._unshown_exchanges = 0
        exchanges = [d.exchange for d in new if d.exchange is not None][-KEPT_EXCHANGES:]
        pane = self.query_one(ExchangePane)
        if self._scheduler_exchange_blocks is None:
            self._scheduler_exchange_blocks = collections.deque()
        blocks = self._scheduler_exchange_blocks
        for exchange in exchanges:
            pane.add(exchange, self.source.commands_context().commands(exchange))
            blocks.append(pane.children[-1])
        while len(blocks) > KEPT_EXCHANGES:
            blocks.popleft().remove()

    def action_toggle_why_decisions(self) -> None:
        """``w``: while a scheduler runs, show the Why pane of the selected pod in the decisions' place, or the
        decisions again."""
        if self.scheduler_run is None:
            self.notify("w switches between the Why pane and the scheduler's decisions while a scheduler runs (r "
                        "starts one); the Why pane is shown.", title="Why / decisions")
            return
        self.why_while_scheduling = not self.why_while_scheduling
        self._show_scheduler_pane(True)

    def _show_scheduler_pane(self, running: bool) -> None:
        """While a scheduler runs, the decisions pane in the Why pane's place (or, after ``w``, the Why pane with a
        hint on its border); the Why pane back after."""
        try:
            why = self.query_one(WhyPane)
        except NoMatches:
            return
        panes = self.query(DecisionsPane)
        if running and not panes:
            why.parent.mount(DecisionsPane(id="decisions"), after=why)
            panes = self.query(DecisionsPane)
        decisions = running and not self.why_while_scheduling
        moving_focus = why.has_focus if decisions else any(pane.has_focus for pane in panes)
        for pane in panes:
            pane.display = decisions
        why.display = not decisions
        why.border_subtitle = "w: the scheduler's decisions" if running and not decisions else None
        if moving_focus:
            self.call_after_refresh(self._focus_decisions if decisions else why.focus)

    def _focus_decisions(self) -> None:
        for pane in self.query(DecisionsPane):
            pane.focus()

    # -- the command palette ---------------------------------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)  # type: ignore[misc]
        if self.scheduler_run is None:
            yield SystemCommand("Start scheduler…", "Run observatory as the scheduler of a schedulerName, and watch "
                                "each decision (r)", self.action_toggle_scheduler)
        else:
            yield SystemCommand("Stop scheduler", f"Stop {self.scheduler_run.options.scheduler_name}'s in-process "
                                "scheduler (r)", self.action_toggle_scheduler)
            if self.why_while_scheduling:
                yield SystemCommand("Show scheduler decisions", "The scheduler's decisions in the Why pane's place (w)",
                                    self.action_toggle_why_decisions)
            else:
                yield SystemCommand("Show Why pane", "The Why pane of the selected pod in the decisions' place, while "
                                    "the scheduler runs (w)", self.action_toggle_why_decisions)

