"""``r``: observatory as a scheduler inside the screen: :class:`SchedulerController`, held by the main screen.

``r`` (or the command palette's *Start scheduler…*) asks for a schedulerName (the names of the pending pods first,
those no scheduler has looked at on top; any other name may be typed) and a policy, then runs the screen's
:class:`~observatory.scheduler.host.SchedulerHost` (``observatory schedule`` in-process:
:class:`observatory.scheduler.host.InProcessScheduler`) in an exclusive worker of the screen. Each
:class:`~observatory.model.decisions.SchedulingDecision` is shown as it arrives: the
:class:`~observatory.ui.widgets.decisions_pane.DecisionsPane` takes the Why pane's place while the scheduler runs
(the layout is otherwise unchanged), every Binding it sends reaches the HTTP exchange pane, and the header says
``scheduler NAME (policy) running: N bound, M unschedulable``. The pods drain from the pending pane through the
ordinary watch. ``r`` again (or *Stop scheduler*) cancels the worker: the scheduler's watches stop, Bindings in
flight get their answer and a held Lease is released (``Scheduler.decisions``). One scheduler at a time.

While it runs, ``w`` (or the palette's *Show Why pane* / *Show scheduler decisions*) switches that place between the
decisions and the Why pane of the selected pod; stopping the scheduler brings the Why pane back either way.

In read-only mode the scheduler runs as a dry run: it decides and shows what it would bind, and sends nothing. A
screen without a scheduler host (a recording, a replay) says so instead. The scheduler serves the screen's scope
when it started (the namespace shown, or every namespace), whatever ``n`` or ``a`` show later; the chooser says
which. (``observatory schedule`` serves every namespace unless ``-n`` restricts it.)

Upstream does not restrict ``spec.schedulerName`` beyond its being a string (``ValidatePodSpec`` leaves it alone;
a KubeSchedulerConfiguration profile only requires it non-empty), so any non-empty name without surrounding spaces
is accepted (:meth:`SchedulerOptions.validate`).
"""

from __future__ import annotations

import collections
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from rich.text import Text
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel
from textual.timer import Timer
from textual.widget import Widget

from observatory.model.decisions import SchedulerStopped, SchedulingDecision
from observatory.model.diagnosis import NO_SCHEDULER
from observatory.model.state import ClusterState
from observatory.scheduler.host import SchedulerHost
from observatory.scheduler.options import SchedulerOptions
from observatory.scheduler.policies import DEFAULT_POLICY, POLICIES
from observatory.ui.host import Asker, Panes, ScreenFacts
from observatory.ui.screens.chooser import ChooserScreen
from observatory.ui.text import clock_time
from observatory.ui.widgets.decisions_pane import DecisionsPane

__all__ = ["KEPT_DECISIONS", "KEPT_EXCHANGES", "POLICY_HELP", "SchedulerController", "SchedulerRun",
           "SchedulerScreenHost", "policy_options", "scheduler_name_options"]

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
    namespace: str | None = None
    """The scope it serves: the screen's when it started (None: every namespace)."""
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


class SchedulerScreenHost(ScreenFacts, Asker, Protocol):
    """What the scheduler in the screen needs from it."""

    @property
    def panes(self) -> Panes: ...

    @property
    def scheduler_host(self) -> SchedulerHost | None:
        """What runs a scheduler over this screen's connection; None: it cannot (a recording, a replay)."""
        ...

    def now(self) -> datetime: ...

    def run_scheduler_worker(self, run: SchedulerRun) -> None:
        """Run :meth:`SchedulerController.run` in the exclusive ``scheduler`` worker."""
        ...

    def cancel_scheduler_worker(self) -> None: ...

    def set_interval(self, interval: float, callback: Callable[[], object] | None = None) -> Timer: ...

    def call_after_refresh(self, callback: Callable[[], object]) -> bool: ...


class SchedulerController:
    """Start or stop the in-process scheduler; its decisions, header badge and exchanges."""

    def __init__(self, host: SchedulerScreenHost, *, refresh_interval: float) -> None:
        self.host, self.refresh_interval = host, refresh_interval
        self.run_now: SchedulerRun | None = None
        """The scheduler running now (None: none)."""
        self.why_instead = False
        """``w``: the Why pane, not the decisions, in their place while the scheduler runs."""
        self.decisions: list[SchedulingDecision] = []
        """Decisions of this session's schedulers, oldest first (the last :data:`KEPT_DECISIONS`)."""
        self._decisions_shown = 0
        self._unshown_exchanges = 0
        self._timer: Timer | None = None
        self._exchange_blocks: collections.deque[Widget] = collections.deque()

    # -- starting and stopping -------------------------------------------------------------------------------------

    def toggle(self) -> None:
        """``r``: stop the running scheduler, or choose a schedulerName and a policy and start one."""
        host = self.host
        if self.run_now is not None:
            self.stop()
            return
        if host.scheduler_host is None:
            host.notify("This screen cannot run a scheduler: it shows a recording or a replay, which holds only what "
                        "was watched.", title="Scheduler", severity="warning")
            return
        subtitle = Text("Pods waiting for a node, by schedulerName. Type any other name to serve it.", style="dim")
        scope = f"namespace {host.source.namespace}" if host.source.namespace else "every namespace"
        subtitle.append(f"\nIt serves the screen's scope: {scope} (n or a changes it before r).", style="dim")

        def named(name: str | None) -> None:
            if name:
                self._choose_policy(name)

        host.ask(ChooserScreen("Run a scheduler for which schedulerName?", list(scheduler_name_options(host.state)),
                               "type a schedulerName", free_text=True, subtitle=subtitle,
                               free_text_hint="(no pending pod names it yet: serve it anyway)"), named)

    def _choose_policy(self, name: str) -> None:
        host = self.host
        try:
            SchedulerOptions(name).validate()
        except ValueError as exc:
            host.notify(str(exc).replace("--scheduler-name ", "schedulerName "), title="Scheduler",
                        severity="warning")
            return
        subtitle = Text("Filtering is kube-scheduler's default profile; the policy picks among the nodes that pass.",
                        style="dim")
        if host.source.read_only:
            subtitle.append("\nRead-only: a dry run, it decides and binds nothing.", style="bold")

        def chosen(policy: str | None) -> None:
            if policy:
                self.start(name, policy)

        host.ask(ChooserScreen(f"Schedule {name}'s pods with which policy?", list(policy_options()),
                               "type to filter", subtitle=subtitle), chosen)

    def start(self, name: str, policy: str = DEFAULT_POLICY) -> None:
        """Run a scheduler for ``name`` with ``policy`` (a dry run in read-only mode); one at a time."""
        host = self.host
        if self.run_now is not None:
            host.notify(f"{self.run_now.status}; r stops it first.", title="Scheduler", severity="warning")
            return
        options = SchedulerOptions(name, policy=policy, dry_run=host.source.read_only)
        try:
            options.validate()
        except ValueError as exc:
            host.notify(str(exc), title="Scheduler", severity="warning")
            return
        run = self.run_now = SchedulerRun(options, namespace=host.source.namespace)
        self.decisions.clear()  # a new run starts a new history (its cycle numbers start again at 1)
        self._decisions_shown = self._unshown_exchanges = 0
        self.why_instead = False
        self._show_pane(True)
        self._timer = host.set_interval(self.refresh_interval, self.show)
        host.run_scheduler_worker(run)
        self.show()

    def stop(self, reason: str = "", *, severity: SeverityLevel = "information") -> None:
        """Cancel the scheduler's worker (its watches stop, a held Lease is released), restore the Why pane."""
        run, self.run_now = self.run_now, None
        self.host.cancel_scheduler_worker()
        self._show_new_exchanges()  # the Bindings answered since the last tick
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.host.panes.header.scheduler = None
        self._show_pane(False)
        if run is not None:
            done = f"scheduler {run.options.scheduler_name} ({run.options.policy}): {run.counts}"
            self.host.notify(f"{reason} {done}" if reason else f"Stopped {done}", title="Scheduler",
                             severity=severity, timeout=10 if reason else 5)

    async def run(self, run: SchedulerRun) -> None:
        """Iterate the scheduler host's decisions; each is kept and shown on the next tick. Ends when cancelled
        (``r``), or when the scheduler stops by itself (its Lease lost, an error), which is said in one line."""
        def log(line: str) -> None:
            run.note, run.note_at = line, self.host.now()

        scheduler = self.host.scheduler_host
        if scheduler is None:
            return
        stream = None
        try:
            stream = scheduler.run_scheduler(run.options, namespace=run.namespace, log=log)
            async for decision in stream:
                if self.run_now is not run:
                    break
                self._decided(decision)
        except SchedulerStopped as exc:
            self._ended(run, f"{exc}", "warning")
        except Exception as exc:
            self._ended(run, f"The scheduler stopped: {type(exc).__name__}: {exc}.", "error")
        else:
            self._ended(run, "The scheduler stopped.", "warning")
        finally:
            if stream is not None:
                await aclose(stream)  # its watches stop, Bindings in flight finish, a held Lease is released

    def _ended(self, run: SchedulerRun, reason: str, severity: SeverityLevel) -> None:
        if self.run_now is run:  # not stopped by r already
            self.stop(reason, severity=severity)

    def _decided(self, decision: SchedulingDecision) -> None:
        run = self.run_now
        if run is not None:
            run.latest[decision.pod] = decision.outcome
        self.decisions.append(decision)
        if len(self.decisions) > KEPT_DECISIONS:
            drop = len(self.decisions) - KEPT_DECISIONS
            del self.decisions[:drop]
            self._decisions_shown = max(0, self._decisions_shown - drop)
        if decision.exchange is not None:
            self._unshown_exchanges += 1

    # -- showing ---------------------------------------------------------------------------------------------------

    def show(self) -> None:
        """Every tick while a scheduler runs: the header badge, the decisions pane, the new Binding exchanges."""
        run = self.run_now
        if run is None:
            return
        for pod in [p for p in run.latest if p not in self.host.state.pods]:
            del run.latest[pod]  # a deleted pod no longer counts as bound or unschedulable
        self.host.panes.header.scheduler = Text(
            f" {run.status} ", style="bold black on cyan" if run.options.dry_run else "bold white on blue")
        try:
            for pane in self._decisions_panes():
                pane.show(self.decisions, run.title, run.log_line)
        except NoMatches:
            pass  # a pane just mounted, not composed yet: the next tick shows it
        self._show_new_exchanges()

    def _show_new_exchanges(self) -> None:
        """The Bindings decided since the last tick, in the HTTP exchange pane (the newest :data:`KEPT_EXCHANGES`
        of them), through the same rendering as a hand bind's, with the kubectl that sends the same Binding."""
        new = self.decisions[self._decisions_shown:]
        self._decisions_shown = len(self.decisions)
        if not self._unshown_exchanges:
            return
        self._unshown_exchanges = 0
        exchanges = [d.exchange for d in new if d.exchange is not None][-KEPT_EXCHANGES:]
        pane, blocks = self.host.panes.exchange, self._exchange_blocks
        for exchange in exchanges:
            blocks.append(pane.add(exchange, self.host.source.commands_context().commands(exchange)))
        while len(blocks) > KEPT_EXCHANGES:
            blocks.popleft().remove()

    def toggle_why_decisions(self) -> None:
        """``w``: while a scheduler runs, show the Why pane of the selected pod in the decisions' place, or the
        decisions again."""
        if self.run_now is None:
            self.host.notify("w switches between the Why pane and the scheduler's decisions while a scheduler runs "
                             "(r starts one); the Why pane is shown.", title="Why / decisions")
            return
        self.why_instead = not self.why_instead
        self._show_pane(True)

    def _decisions_panes(self) -> list[DecisionsPane]:
        parent = self.host.panes.why.parent
        return [] if parent is None else list(parent.query_children(DecisionsPane))

    def _show_pane(self, running: bool) -> None:
        """While a scheduler runs, the decisions pane in the Why pane's place (or, after ``w``, the Why pane with a
        hint on its border); the Why pane back after."""
        why = self.host.panes.why
        panes = self._decisions_panes()
        if running and not panes and isinstance(why.parent, Widget):
            pane = DecisionsPane(id="decisions")
            why.parent.mount(pane, after=why)
            panes = [pane]
        decisions = running and not self.why_instead
        moving_focus = why.has_focus if decisions else any(pane.has_focus for pane in panes)
        for pane in panes:
            pane.display = decisions
        why.display = not decisions
        why.border_subtitle = "w: the scheduler's decisions" if running and not decisions else None
        if moving_focus:
            self.host.call_after_refresh((panes[0] if decisions and panes else why).focus)


async def aclose(stream: AsyncIterator[SchedulingDecision]) -> None:
    """Close an async generator's iteration (a plain async iterator has nothing to close)."""
    if isinstance(stream, AsyncGenerator):
        await stream.aclose()
