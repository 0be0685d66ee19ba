"""ObservatoryApp: composes the panes, owns the workers, routes messages.

State flows one way: one worker per watched kind applies deltas to :class:`ClusterState`; a short interval flushes
whatever changed into the panes (a burst of watch events costs one repaint); panes post messages up; the bind runs
in an exclusive worker and comes back as :class:`~observatory.ui.binding_flow.BindingResponded`. The binding flow
(:mod:`.binding_flow`) and the Why pane with its Lease and raw message (:mod:`.why_flow`) are mixins of the app, as
is teaching (:mod:`.teaching_flow`: equivalent commands, transcript, screenshots, themes, key-cast overlay), lesson
mode (:mod:`.lesson_flow`), the keys of a recording and a replay (:mod:`.replay_flow`) and the scheduler run inside
the screen (:mod:`.scheduler_flow`).
"""

from __future__ import annotations

import asyncio
import bisect
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path

from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Footer, Input
from textual.worker import Worker, WorkerState

from observatory.model.lessons import Lesson
from observatory.model.records import BindingExchange
from observatory.model.rows import pending_row
from observatory.model.state import ClusterState, PendingRow
from observatory.ui.binding_flow import BindingFlow, BindingResponded
from observatory.ui.heap import settle_after, settle_after_repaint
from observatory.ui.lesson_flow import LessonFlow, make_lesson_run
from observatory.ui.permissions_flow import PermissionsFlow
from observatory.ui.printable import PrintableFilter
from observatory.ui.replay_flow import ReplayFlow
from observatory.ui.scheduler_flow import SCHEDULER_BINDINGS, SchedulerFlow
from observatory.ui.scope_flow import ScopeFlow
from observatory.ui.screens.help import HelpScreen
from observatory.ui.source import Source
from observatory.ui.teaching_flow import TEACHING_BINDINGS, TeachingFlow
from observatory.ui.themes import DEFAULT_THEME
from observatory.ui.why_flow import WhyFlow
from observatory.ui.widgets.events_pane import EventsPane
from observatory.ui.widgets.exchange_pane import ExchangePane
from observatory.ui.widgets.header_bar import HeaderBar
from observatory.ui.widgets.nodes_pane import NodesPane
from observatory.ui.widgets.pending_pods import PendingPodsPane
from observatory.ui.widgets.timeline_pane import TimelinePane
from observatory.ui.widgets.why_pane import WhyPane

__all__ = ["BindingResponded", "ObservatoryApp"]

NARROW_WIDTH = 100
"""Below this many columns the panes stack in one column (styles/app.tcss ``.-narrow``)."""
YIELD_EVERY = 32
"""Watch deltas a stream worker applies before it lets other tasks (keys, repaints) run."""
SELECTION_AREAS = frozenset({"events", "timeline", "nodes", "why"})
"""What shows the selected pod, besides the pending pane's cursor."""
MIN_FRAME_GAP = 1 / 60
"""The shortest gap between two repaints of changes, in seconds: Textual draws the screen at most 60 times a
second."""

STYLES = Path(__file__).resolve().parent.parent / "styles"
"""``styles/`` ships inside the package (see pyproject); in a source tree it is the top-level folder."""
if not STYLES.is_dir():
    STYLES = Path(__file__).resolve().parents[2] / "styles"


def with_selected_row(state: ClusterState, selected: str | None) -> list[PendingRow]:
    """The pending rows, plus the selected pod's at its place when it is no longer pending (it keeps its row while
    selected, showing where it is now: running, say, after a bind)."""
    rows = state.pending()
    if selected is None or any(row.pod.key == selected for row in rows):
        return rows
    diagnosis = state.diagnosis(selected)
    if diagnosis is None:
        return rows
    bisect.insort(rows, pending_row(state.pods[selected], diagnosis), key=lambda row: (row.pod.namespace, row.pod.name))
    return rows


class ObservatoryApp(ScopeFlow, BindingFlow, WhyFlow, TeachingFlow, LessonFlow, ReplayFlow, PermissionsFlow, SchedulerFlow,
                     App[None]):
    """The observatory TUI over any :class:`Source`."""

    CSS_PATH = [STYLES / "app.tcss"]
    TITLE = "observatory"
    BINDINGS = [
        Binding("b", "bind", "Bind", id="bind"),
        Binding("m", "raw_message", "Message", id="raw-message"),
        Binding("n", "choose_namespace", "Namespace", id="namespace"),
        Binding("a", "all_namespaces", "All ns", id="all-namespaces"),
        Binding("slash", "filter", "Filter", id="filter", key_display="/"),
        Binding("question_mark", "help", "Keys", id="help", key_display="?"),
        Binding("tab", "focus_next", "Next pane", show=False, id="next-pane"),
        Binding("shift+tab", "focus_previous", "Previous pane", show=False, id="previous-pane"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="clear-filter"),
        Binding("l", "toggle_lesson", "Lesson", id="lesson"),  # lesson mode only (lesson_flow.py)
        *SCHEDULER_BINDINGS,  # r: start or stop the in-process scheduler; w: Why / decisions (scheduler_flow.py)
        Binding("q", "quit", "Quit", id="quit"),
        *TEACHING_BINDINGS,  # c commands, e transcript, s screenshot (teaching_flow.py); after Quit in the footer
    ]

    selected: reactive[str | None] = reactive(None)
    filter_text: reactive[str] = reactive("")

    def __init__(self, source: Source, *, clock: Callable[[], datetime] | None = None,
                 refresh_interval: float = 0.1, recent_seconds: float = 10.0, lease_interval: float = 10.0,
                 keymap: dict[str, str] | None = None, theme: str = DEFAULT_THEME, keycast: bool = False,
                 screenshot_dir: Path | str = Path("."), lesson: Lesson | None = None,
                 key_script: AsyncIterator[str] | None = None) -> None:
        super().__init__()
        self._filters.append(PrintableFilter())  # no cluster text drives the terminal (ui/printable.py)
        self.source = source
        self.clock = clock or (lambda: datetime.now(UTC))
        self.state = ClusterState(self.clock, recent_seconds=recent_seconds)
        self.refresh_interval = refresh_interval
        self.lease_interval = lease_interval
        self._dirty: set[str] = {"pods", "nodes", "events", "watch", "why"}
        self._flushed_at = 0.0  # time.monotonic() when the last repaint of changes ended
        self._repaint_cost = 0.0  # seconds the last repaint of changes took
        self._paced_flush: Timer | None = None  # the one repaint a burst of changes is waiting for
        self._keymap = keymap or {}
        self._bind_enabled: bool | object | None = object()  # check_action("bind") when the footer was last drawn
        self.exchanges: list[BindingExchange] = []
        self._highlight_until: datetime | None = None
        self.setup_teaching(theme=theme, keycast=keycast, screenshot_dir=screenshot_dir)
        self.lesson_run, self.key_script = make_lesson_run(lesson, source), key_script  # lesson_flow, replay_flow

    # -- layout ----------------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield HeaderBar(id="header")
        with Grid(id="panes"):
            yield PendingPodsPane(id="pending")
            yield WhyPane(id="why")
            yield NodesPane(id="nodes")
            yield from self.lesson_panes()  # a column beside these, rows 2-4
            yield ExchangePane(id="exchange")
            yield EventsPane(id="events")
            yield TimelinePane(id="timeline")
        yield Input(placeholder="filter pending pods by namespace/name", id="filter")
        yield Footer()

    def on_mount(self) -> None:
        self.set_class(self.size.width < NARROW_WIDTH, "-narrow")
        if self._keymap:
            self.set_keymap(self._keymap)
        self.query_one("#filter", Input).display = False
        self.query_one(PendingPodsPane).focus()
        self.start_streams()
        self.set_interval(self.refresh_interval, self.flush)
        self.flush()

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW_WIDTH, "-narrow")

    # -- data ------------------------------------------------------------------------------------------------------

    def start_streams(self) -> None:
        for kind in ("pods", "nodes", "events"):
            self.stream(kind)

    @work(group="streams", exit_on_error=False)
    async def stream(self, kind: str) -> None:
        """One worker per watched kind: apply each delta, mark what changed, and have it painted (:meth:`paced`).
        Every :data:`YIELD_EVERY` deltas it lets the app's messages run (a watch chunk can hold hundreds of events,
        and a key press should not wait for all of them)."""
        applied = 0
        async for delta in self.source.stream(kind):
            applied += 1
            if applied % YIELD_EVERY == 0:
                await asyncio.sleep(0)
            changed = self.state.apply(delta)
            settle_after(delta)  # after a big list, keep full GC passes short (heap.py)
            self._dirty |= changed
            if "watch" in changed:  # shown at once, however briefly it lasts (a resync after 410 takes milliseconds)
                self.flush()
            elif changed:
                self.paced()

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
        """Push selector output down into the panes that changed since the last flush."""
        if not self.is_running or not self.screen_stack:
            return  # shutting down: the panes may already be gone
        changes = bool(self._dirty)  # a repaint of changes (the interval's idle ticks do not count)
        started = time.monotonic()
        try:
            self._repaint()
        except NoMatches:
            return  # the default screen is being torn down
        if changes:
            self._flushed_at = time.monotonic()
            self._repaint_cost = self._flushed_at - started
        settle_after_repaint()  # after the first repaint of a big list, keep full GC passes short (heap.py)

    def _repaint(self) -> None:
        now = self.clock()
        dirty, self._dirty = self._dirty, set()
        self.query_one(HeaderBar).show(context=self.source.context, server=self.source.server,
                                       namespace=self.source.namespace, lab=self.source.lab,
                                       read_only=self.source.read_only, watches=self.state.watch_states)
        # Ages and the "just bound" window move with the clock, so pods and nodes repaint on every tick they show.
        kept = self.selected if self.selected in self.state.pods else None  # a deleted pod does not linger
        self.query_one(PendingPodsPane).show(with_selected_row(self.state, kept), now, self.filter_text, kept)
        expired = self._highlight_until is not None and now >= self._highlight_until
        if dirty & {"pods", "nodes"} or expired:
            nodes = self.query_one(NodesPane)
            nodes.border_title = (f"Nodes (requests of {self.source.namespace} pods only)" if self.source.namespace
                                  else "Nodes")
            self.show_placement(nodes)  # or the nodes known by name when nodes are forbidden (permissions_flow.py)
            self._highlight_until = self.state.recently_bound_expiry()
        if dirty & {"events", "pods"}:
            self._show_events()
        if dirty & {"pods", "timeline"}:
            self.query_one(TimelinePane).show(self.selected, self.state.timeline(self.selected) if self.selected else [])
        self.show_why(dirty, now)
        self.show_lesson(dirty, now)
        self.show_replay_state()
        self.show_permissions()  # namespace fallback, Bind's access review, the banner (permissions_flow.py)

    def _show_events(self) -> None:
        title = f"Events: {self.selected}" if self.selected else "Events of pending pods"
        self.query_one(EventsPane).show(self.state.events_for(self.selected), title)

    def watch_selected(self) -> None:
        """Another pod selected: its Why, fit preview, events, timeline and node are repainted once the screen shows
        the cursor on it. The fit preview filters every node (tens of ms at 1,000 nodes); done before the next
        frame, it held up the cursor the key press moved (issue 8's key latency)."""
        if self.screen_stack:  # not while the app is shutting down
            self.refresh_bind_key()  # Bind is refused in some namespaces (permissions_flow.py)
            self.selection_since = time.monotonic()  # the Why pane waits for _show_selected (why_flow.py)
            self.call_after_refresh(self._show_selected)
        else:
            self._dirty |= SELECTION_AREAS

    def _show_selected(self) -> None:
        self.selection_since = None
        self._dirty |= SELECTION_AREAS
        self.paced()

    def refresh_bind_key(self) -> None:
        """Redraw the footer when Bind's state changed. Textual's ``refresh_bindings`` recomposes the whole footer,
        which lays out the screen, and every key press in the pending pane selects another pod: under churn that
        layout was most of a key press's latency (issue 8)."""
        enabled = self.check_action("bind", ())
        if enabled != self._bind_enabled:
            self._bind_enabled = enabled
            self.refresh_bindings()

    def watch_filter_text(self) -> None:
        self._dirty.add("pods")

    def on_pending_pods_pane_pod_highlighted(self, message: PendingPodsPane.PodHighlighted) -> None:
        self.selected = message.key

    # -- actions and workers (binding: binding_flow.py; the Why pane, Lease and raw message: why_flow.py) -----------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "bind" and (self.source.read_only or self.bind_refusal() is not None):
            return None  # shown, but disabled (read-only, or RBAC refuses pods/binding: permissions_flow.py)
        if action == "toggle_lesson":
            return self.lesson_run is not None
        return True

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Textual's notify with markup off by default: a notification quotes server messages, paths and names a
        user typed, and ``[/]`` in any of them would otherwise be a MarkupError."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Unexpected worker failures become a visible message, never a traceback."""
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.notify(f"{event.worker.name}: {type(error).__name__}: {error}", title="observatory error",
                        severity="error", timeout=15, markup=False)  # the error's text is not markup

    # -- filter, help (the namespace scope: scope_flow.py) -----------------------------------------------------------------------------------

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.filter_text = event.value.strip()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            self.query_one(PendingPodsPane).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.display = False
        self.query_one(PendingPodsPane).focus()

    def action_help(self) -> None:
        bindings = [b for b in self.BINDINGS if isinstance(b, Binding)]
        bindings += [Binding("up,down,pageup,pagedown,home,end", "", "move in the focused pane"),
                     Binding("left,right", "", "in a table cut with …: scroll its columns sideways"),
                     Binding("enter", "", "in a chooser: pick the highlighted entry"),
                     Binding("y,n", "", "in a warning: send the Binding anyway / don't"),
                     Binding("ctrl+p", "", "command palette: maximize the focused pane, change theme, "
                                                    "toggle the key-cast overlay, quit")]
        self.push_screen(HelpScreen(bindings))
