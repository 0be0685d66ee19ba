"""The main screen: composes the panes, owns the repaint, holds the features, and runs their workers.

State flows one way: one worker per watched kind applies deltas to :class:`ClusterState`; the changed areas are
flushed into the panes, at once after a quiet spell and then at most once per frame gap (a burst of watch events
costs a few repaints); panes and modals post messages up (:class:`~observatory.ui.binding.BindRequested`), and the
bind runs in a worker that comes back as :class:`~observatory.ui.binding.BindingResponded`. The features are
controllers with typed hosts (:mod:`observatory.ui.scope`, :mod:`.permissions <observatory.ui.permissions>`,
:mod:`.why <observatory.ui.why>`, :mod:`.scheduler <observatory.ui.scheduler>`, :mod:`.lesson <observatory.ui.lesson>`,
:mod:`.teaching <observatory.ui.teaching>`, :mod:`.writes <observatory.ui.writes>`); this screen is each one's host.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Grid
from textual.notifications import SeverityLevel
from textual.reactive import reactive
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import Footer, Input
from textual.worker import Worker

from observatory.model.deltas import BOUND_PODS, Delta
from observatory.model.lessons import Lesson
from observatory.model.records import BindingExchange
from observatory.model.source import AccessReviewer, Source
from observatory.model.state import ClusterState
from observatory.scheduler.host import SchedulerHost
from observatory.ui.areas import ALL, SELECTION, Area
from observatory.ui.binding import BindController, BindingResponded, BindRequested
from observatory.ui.heap import settle_after, settle_after_repaint
from observatory.ui.host import Panes, report_worker_failure
from observatory.ui.keys import EXTRA_KEYS, MAIN_BINDINGS
from observatory.ui.lesson import LessonController, make_lesson_run
from observatory.ui.palette import ObservatoryCommands
from observatory.ui.permissions import PermissionsController
from observatory.ui.scheduler import SchedulerController, SchedulerRun
from observatory.ui.scope import ScopeController
from observatory.ui.screens.help import HelpScreen
from observatory.ui.screens.raw_message import RawMessageScreen
from observatory.ui.teaching import TeachingController
from observatory.ui.why import WhyController
from observatory.ui.widgets.exchange_pane import ExchangePane
from observatory.ui.widgets.keycast import KeyCastBar
from observatory.ui.widgets.pending_pods import PendingPodsPane, with_selected_row
from observatory.ui.widgets.permissions_banner import PermissionsBanner
from observatory.ui.writes import WritesController

if TYPE_CHECKING:
    from observatory.ui.replay_keys import ReplayKeys

__all__ = ["MIN_FRAME_GAP", "YIELD_EVERY", "MainScreen"]

T = TypeVar("T")

YIELD_EVERY = 32
"""Watch deltas a stream worker applies before it lets other tasks (keys, repaints) run."""
MIN_FRAME_GAP = 1 / 60
"""The shortest gap between two repaints of changes, in seconds: Textual draws the screen at most 60 times a
second."""


class MainScreen(Screen[None]):
    """The observatory screen over any :class:`Source`."""

    BINDINGS: ClassVar[list[BindingType]] = list(MAIN_BINDINGS)
    COMMANDS = {ObservatoryCommands}

    selected: reactive[str | None] = reactive(None)
    filter_text: reactive[str] = reactive("")

    def __init__(self, source: Source, *, clock: Callable[[], datetime], replay: ReplayKeys,
                 refresh_interval: float = 0.1, recent_seconds: float = 10.0, lease_interval: float = 10.0,
                 screenshot_dir: Path | str = Path("."), lesson: Lesson | None = None,
                 scheduler: SchedulerHost | None = None, keycast: bool = False) -> None:
        super().__init__()
        self.source, self.clock, self.replay, self.scheduler_host = source, clock, replay, scheduler
        self.state = ClusterState(clock, recent_seconds=recent_seconds)
        self.refresh_interval = refresh_interval
        self.exchanges: list[BindingExchange] = []
        self.selection_since: float | None = None
        """time.monotonic() when another pod was selected, until the frame showing its cursor is painted."""
        self._panes: Panes | None = None
        self.mounted = asyncio.Event()
        """Set once the panes are mounted and the streams started."""
        self.keycast = keycast
        """Whether the key-cast overlay shows the last keys pressed."""
        self._dirty = ALL
        self._flushed_at = 0.0  # time.monotonic() when the last repaint of changes ended
        self._repaint_cost = 0.0  # seconds the last repaint of changes took
        self._paced_flush: Timer | None = None  # the one repaint a burst of changes is waiting for
        self._bind_enabled: bool | object | None = object()  # check_action("bind") when the footer was last drawn
        self._highlight_until: datetime | None = None
        self.scope = ScopeController(self)
        self.binding = BindController(self)
        self.permissions = PermissionsController(self)
        self.why = WhyController(self, lease_interval=lease_interval)
        self.scheduler = SchedulerController(self, refresh_interval=refresh_interval)
        self.teaching = TeachingController(self, screenshot_dir=screenshot_dir)
        self.writes = WritesController(self)
        self.teaching.write_store = self.writes.store  # transcripts carry the writes the pane shows
        run = make_lesson_run(lesson, source)
        self.lesson = LessonController(self, run, self.teaching) if run is not None else None

    # -- layout ----------------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        p = self._panes = Panes.build(lesson=self.lesson is not None)
        yield p.header
        with Grid(id="panes"):
            yield from (p.pending, p.why, p.nodes)
            if p.lesson is not None:
                yield p.lesson  # a column beside these, rows 2-4
            yield from (p.exchange, p.events, p.timeline)
        yield p.filter
        yield Footer()
        bar = KeyCastBar(id="keycast-bar")
        bar.display = self.keycast
        yield bar

    def action_toggle_keycast(self) -> None:
        self.keycast = not self.keycast
        for bar in self.query(KeyCastBar):
            bar.display = self.keycast

    @property
    def panes(self) -> Panes:
        if self._panes is None:
            raise RuntimeError("the main screen is not composed yet")
        return self._panes

    def on_mount(self) -> None:
        self.app.set_class(self.lesson is not None, "-lesson")
        self.panes.filter.display = False
        self.panes.pending.focus()
        self.start_streams()
        self.writes.start()
        self.set_interval(self.refresh_interval, self.flush)
        self.set_interval(self.refresh_interval, self.teaching.settle_binds)
        self.flush()
        self.mounted.set()

    # -- data ------------------------------------------------------------------------------------------------------

    def start_streams(self) -> None:
        """The pods, nodes and events of the scope; with one namespace shown, also the bound pods of every
        namespace (when the source offers them), so the nodes' room counts pods the panes do not show."""
        for kind in ("pods", "nodes", "events"):
            self.stream(kind)
        bound = self.source.capabilities().bound_pods
        if self.source.namespace is not None and bound is not None:
            self.stream(BOUND_PODS, bound.stream_bound_pods)

    @work(group="streams", exit_on_error=False)
    async def stream(self, kind: str, deltas: Callable[[], AsyncIterator[Delta]] | None = None) -> None:
        """One worker per watched kind (``deltas``: where its deltas come from, else the source's stream of
        ``kind``): apply each delta, mark what changed, and have it painted (:meth:`paced`).
        Every :data:`YIELD_EVERY` deltas it lets the app's messages run (a watch chunk can hold hundreds of events,
        and a key press should not wait for all of them)."""
        applied = 0
        async for delta in (deltas() if deltas is not None else self.source.stream(kind)):
            applied += 1
            if applied % YIELD_EVERY == 0:
                await asyncio.sleep(0)
            changed = Area.of(self.state.apply(delta))
            settle_after(delta)  # after a big list, keep full GC passes short (heap.py)
            self._dirty |= changed
            if Area.WATCH in changed:  # shown at once, however briefly it lasts (a resync after 410 takes ms)
                self.flush()
            elif changed:
                self.paced()

    def rescope(self, namespace: str | None) -> None:
        """Watch pods and events of another namespace (None: all); the relist replaces what was shown."""
        if self.scope_locked():
            return
        self.scope.leaving(self.source)
        self.workers.cancel_group(self, "streams")
        self.source = self.source.with_namespace(namespace)
        # Every stream restarts with a fresh list: start from a fresh state too, so pods that merely left the
        # scope are not recorded as deleted in their timelines.
        self.state = ClusterState(self.clock, recent_seconds=self.state.recent_seconds)
        self.selected = None
        self.start_streams()
        self._dirty |= ALL

    # -- the repaint -----------------------------------------------------------------------------------------------

    def frame_gap(self) -> float:
        """Seconds from the end of one repaint of changes to the start of the next: twice what the last one cost
        (repainting takes at most a third of the time), at least a 60th of a second (Textual's own frame rate) and
        at most ``refresh_interval``."""
        return min(self.refresh_interval, max(MIN_FRAME_GAP, 2 * self._repaint_cost))

    def paced(self) -> None:
        """Repaint for a change: at once when the last repaint of changes is at least :meth:`frame_gap` old (a
        lone bind shows as fast as a repaint allows), else once when the gap is over. A burst of 500 watch events
        costs a repaint per gap, not 500, and a change never waits longer than ``refresh_interval``."""
        if self._paced_flush is not None:
            return  # a repaint is already due: this change will be in it
        wait = self._flushed_at + self.frame_gap() - time.monotonic()
        if wait <= 0:
            self.flush()
        else:
            self._paced_flush = self.set_timer(wait, self._paced_due, name="paced repaint")

    def _paced_due(self) -> None:
        self._paced_flush = None
        if self._dirty:
            self.flush()

    def flush(self) -> None:
        """Push selector output down into the panes that changed since the last flush. Not while another screen (a
        chooser, the help) is on top, as before it opened: the changes wait for it to close."""
        if not self.app.is_running or not self.is_current or self._panes is None:
            return
        changes = bool(self._dirty)  # a repaint of changes (the interval's idle ticks do not count)
        started = time.monotonic()
        self._repaint()
        if changes:
            self._flushed_at = time.monotonic()
            self._repaint_cost = self._flushed_at - started
        settle_after_repaint()  # after the first repaint of a big list, keep full GC passes short (heap.py)

    def _repaint(self) -> None:
        now, p, source, state = self.clock(), self.panes, self.source, self.state
        dirty, self._dirty = self._dirty, Area(0)
        p.header.show(context=source.context, server=source.server, namespace=source.namespace, lab=source.lab,
                      read_only=source.read_only, watches=state.watch_states,
                      kubeconfig=self.teaching.kubeconfig_export())
        # Ages and the "just bound" window move with the clock, so pods and nodes repaint on every tick they show.
        kept = self.selected if self.selected in state.pods else None  # a deleted pod does not linger
        p.pending.show(with_selected_row(state, kept), now, self.filter_text, kept)
        expired = self._highlight_until is not None and now >= self._highlight_until
        if dirty & (Area.PODS | Area.NODES) or expired:
            p.nodes.show_state(state, self.selected, source.namespace)
            self._highlight_until = state.recently_bound_expiry()
        if dirty & (Area.EVENTS | Area.PODS):
            p.events.show(state.events_for(self.selected),
                          f"Events: {self.selected}" if self.selected else "Events of pending pods")
        self.writes.show(dirty)  # the timeline, and the writes pane with an audit feed
        self.why.show(dirty, now)
        if self.lesson is not None and p.lesson is not None:
            p.lesson.show(self.lesson.update(dirty, now))
        self.replay.show_state()
        self.permissions.update()
        PermissionsBanner.show_under(p.header, self.permissions.banner_lines())
        p.exchange.hint(self.permissions.bind_hint())

    def watch_selected(self) -> None:
        """Another pod selected: its Why, fit preview, events, timeline and node are repainted once the screen shows
        the cursor on it. The fit preview filters every node (tens of ms at 1,000 nodes); done before the next
        frame, it would hold up the cursor the key press moved."""
        if self.is_attached:
            self.refresh_bind_key()  # Bind is refused in some namespaces (permissions.py)
            self.selection_since = time.monotonic()  # the Why pane waits for _show_selected (why.py)
            self.call_after_refresh(self._show_selected)
        else:
            self._dirty |= SELECTION

    def _show_selected(self) -> None:
        self.selection_since = None
        self._dirty |= SELECTION
        self.paced()

    def refresh_bind_key(self) -> None:
        """Redraw the footer when Bind's state changed. Textual's ``refresh_bindings`` recomposes the whole footer,
        which lays out the screen, and every key press in the pending pane selects another pod: under churn that
        layout would be most of a key press's latency."""
        enabled = self.check_action("bind", ())
        if enabled != self._bind_enabled:
            self._bind_enabled = enabled
            self.refresh_bindings()

    def watch_filter_text(self) -> None:
        self._dirty |= Area.PODS

    def on_pending_pods_pane_pod_highlighted(self, message: PendingPodsPane.PodHighlighted) -> None:
        self.selected = message.key

    # -- what the controllers need (their host protocols) ---------------------------------------------------------

    @property
    def replaying(self) -> bool:
        return self.replay.replaying

    def now(self) -> datetime:
        return self.clock()

    def ask(self, screen: ModalScreen[T], answered: Callable[[T | None], None]) -> None:
        self.app.push_screen(screen, answered)

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """The app's notify (markup off by default: notifications quote server messages and names users typed)."""
        self.app.notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def scope_locked(self, *, chooser: bool = False) -> bool:
        return self.replay.scope_locked(self.source.namespace, chooser=chooser)

    def review_access(self, source: Source, access: AccessReviewer, namespace: str) -> None:
        self.run_worker(self.permissions.review(source, access, namespace), group="access", exit_on_error=False)

    def read_scheduler_lease(self) -> None:
        self.run_worker(self._read_scheduler_lease(), group="lease", exclusive=True, exit_on_error=False)

    async def _read_scheduler_lease(self) -> None:
        await self.why.read_lease()
        self._dirty |= Area.WHY

    def follow_audit(self, follow: Coroutine[Any, Any, None]) -> None:
        self.run_worker(follow, group="audit", exclusive=True, exit_on_error=False)

    def writes_changed(self) -> None:
        self._dirty |= Area.WRITES
        self.paced()

    def run_scheduler_worker(self, run: SchedulerRun) -> None:
        self.run_worker(self.scheduler.run(run), group="scheduler", exclusive=True, exit_on_error=False)

    def cancel_scheduler_worker(self) -> None:
        self.workers.cancel_group(self, "scheduler")

    def save_screenshot(self, filename: str | None = None, path: str | None = None) -> str:
        return self.app.save_screenshot(filename=filename, path=path)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Unexpected failures of this screen's workers (their state reaches this screen only)."""
        report_worker_failure(self, event.worker)

    # -- binding ---------------------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "bind" and (self.source.read_only or self.permissions.bind_refusal() is not None):
            return None  # shown, but disabled (read-only, or RBAC refuses pods/binding: permissions.py)
        if action == "toggle_lesson":
            return self.lesson is not None
        return True

    def action_bind(self) -> None:
        if self.source.read_only:
            return
        if self.selected is None:
            self.notify("Select a pod in the pending pods pane first.", title="Bind")
            return
        self.binding.choose(self.selected)

    @work(group="bind", exit_on_error=False)
    async def on_bind_requested(self, message: BindRequested) -> None:
        self.post_message(await self.binding.send(message.pod, message.node))

    def on_binding_responded(self, message: BindingResponded) -> None:
        self.exchanges.append(message.exchange)
        self.panes.exchange.add(message.exchange, message.commands)
        self.panes.exchange.scroll_visible(animate=False)  # below the fold when the panes stack (narrow terminals)
        self.selected = message.exchange.pod  # the selection stays on the pod and follows it to its node
        self.panes.pending.select(message.exchange.pod)
        self.teaching.record(message)

    def on_exchange_pane_compare_requested(self, message: ExchangePane.CompareRequested) -> None:
        self.writes.compare(message)

    # -- the other keys --------------------------------------------------------------------------------------------

    def action_raw_message(self) -> None:
        """``m``: the selected pod's scheduler message, verbatim and copyable."""
        key = self.selected
        if key is None:
            self.notify("Select a pod in the pending pods pane first.", title="Raw message")
            return
        raw, where = self.why.raw_message(key)
        self.app.push_screen(RawMessageScreen(f"Scheduler message for {key}", raw, where))

    def action_choose_namespace(self) -> None:
        self.scope.choose_namespace()

    def action_all_namespaces(self) -> None:
        self.scope.toggle_all_namespaces()

    def action_toggle_scheduler(self) -> None:
        self.scheduler.toggle()

    def action_toggle_why_decisions(self) -> None:
        self.scheduler.toggle_why_decisions()

    def action_show_commands(self) -> None:
        self.teaching.show_commands()

    def action_transcript(self) -> None:
        self.teaching.transcript()

    def action_screenshot_svg(self) -> Path | None:
        return self.teaching.screenshot_svg()

    def action_show_kubeconfig(self) -> None:
        self.teaching.show_kubeconfig()

    def action_toggle_lesson(self) -> None:
        if self.panes.lesson is not None:
            self.app.set_class(self.panes.lesson.toggle(self.panes.pending), "-lesson")

    def action_filter(self) -> None:
        self.panes.filter.display = True
        self.panes.filter.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input is self.panes.filter:
            self.filter_text = event.value.strip()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input is self.panes.filter:
            self.panes.pending.focus()

    def action_clear_filter(self) -> None:
        box = self.panes.filter
        box.value = ""
        box.display = False
        self.panes.pending.focus()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen([*MAIN_BINDINGS, *EXTRA_KEYS]))

