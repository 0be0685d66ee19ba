"""Terminals from 40x10 to 300x100, storms of resizes, and hostile objects on screen never crash the TUI.

At each size of a matrix the app runs over the recorded source (:mod:`tests.ui.fakes`, the ``refusals`` scenario)
and the main keys are pressed: Tab, Down, ``b`` then Esc, ``m`` then Esc, ``?`` then Esc, ``c`` then Esc, ``/`` then
Esc. After each key the app must still be running with no exception, no failed worker and no error notification;
at the end the main screen is back, its header in view and the whole screen renders. Below 100 columns the panes
stack in one column (``-narrow``) instead of being squeezed. One size runs over a real lab. A resize storm sweeps
the size range while watch deltas keep arriving. Hostile objects (terminal escapes, Rich markup, lone surrogates,
1 MiB messages, null containers) must render without a crash and without a control character reaching the
terminal. Waits are on conditions, never fixed sleeps.
"""

from __future__ import annotations

import copy
import io
import time
from typing import Any

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.segment import ControlType, Segment
from textual.color import Color
from textual.worker import WorkerState

from observatory.kube.connect import connect
from observatory.kube.source import ClusterSource
from observatory.model.deltas import Upserted
from observatory.model.diagnosis import Diagnosis
from observatory.settings import LabSettings
from observatory.ui.app import NARROW_WIDTH, ObservatoryApp
from observatory.ui.printable import PrintableFilter, printable
from observatory.ui.screens.raw_message import MAX_SHOWN, shown
from observatory.ui.widgets.events_pane import EventsPane
from observatory.ui.widgets.header_bar import HeaderBar
from observatory.ui.widgets.pending_pods import PendingPodsPane
from observatory.ui.widgets.why_pane import MAX_LINE, render_diagnosis
from tests.ui.fakes import REFUSALS, RecordedSource, frozen_clock
from tests.ui.helpers import until
from tests.unit.test_properties_strategies import HUGE, unprintable

SIZES = [(40, 10), (80, 24), (99, 30), (100, 30), (300, 100)]
"""The smallest and largest, the classic 80x24, and either side of the one-column breakpoint (NARROW_WIDTH): the
sizes where layout changes. 120x40 is every other pilot test's size."""
REFUSED = "sched-lab/too-much-cpu"


class Watched:
    """An app and every notification it raised (notifications expire from the screen; this list keeps them)."""

    def __init__(self, app: ObservatoryApp) -> None:
        self.app = app
        self.notices: list[tuple[str, str, str]] = []
        notify = app.notify

        def recording(message: str, *args: Any, **kwargs: Any) -> Any:
            self.notices.append((str(kwargs.get("severity", "information")), str(kwargs.get("title", "")),
                                 str(message)))
            return notify(message, *args, **kwargs)

        app.notify = recording  # type: ignore[method-assign]

    def healthy(self, after: str) -> None:
        app = self.app
        assert app.is_running, f"the app stopped after {after}"
        assert app._exception is None, f"{after}: {app._exception!r}"
        failed = [w for w in app.workers if w.state == WorkerState.ERROR]
        assert not failed, f"{after}: worker failed: {[(w.name, w.error) for w in failed]}"
        errors = [n for n in self.notices if n[0] == "error"]
        assert not errors, f"{after}: error notification {errors}"


def recorded_app(source: RecordedSource | None = None) -> Watched:
    return Watched(ObservatoryApp(source or RecordedSource(scenario="refusals"), clock=frozen_clock,
                                  refresh_interval=0.05))


def screen_text(app: ObservatoryApp) -> str:
    """The screen as the terminal would be sent it (cursor moves left out), as plain text."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, color_system=None,
                      record=True, legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text(styles=False)


async def settled(pilot) -> None:
    """Let queued messages, the flush interval (0.05 s here) and the repaint after it land."""
    await pilot.pause()
    await pilot.pause(0.08)
    await pilot.wait_for_scheduled_animations()


def check_screen(watched: Watched, size: tuple[int, int], context: str) -> str:
    """The main screen is up, laid out for ``size`` (collapsed below the breakpoint), its header in view, and it
    renders with nothing unprintable in it."""
    app = watched.app
    watched.healthy("rendering")
    assert len(app.screen_stack) == 1, f"a modal is still open: {app.screen!r}"
    width, height = size
    assert tuple(app.size) == size
    assert app.has_class("-narrow") == (width < NARROW_WIDTH)
    header = app.query_one(HeaderBar)
    assert header.region.y == 0 and header.region.height == 2 and header.region.width == width
    pending = app.query_one(PendingPodsPane)
    assert pending.region.height > 0 and pending.region.width > 0, "the pending pods pane is not on screen"
    text = screen_text(app)
    lines = text.splitlines()
    assert len(lines) == height
    assert context[: max(1, width - 10)][:10] in lines[0], f"header line: {lines[0]!r}"
    assert not unprintable(text), f"unprintable characters on screen: {sorted(set(unprintable(text)))}"
    return text


async def press_main_keys(pilot, watched: Watched) -> None:
    app = watched.app
    for keys in (["tab"], ["down"], ["shift+tab"], ["b"], ["escape"], ["m"], ["escape"], ["question_mark"],
                 ["escape"], ["c"], ["escape"], ["slash"], ["escape"]):
        await pilot.press(*keys)
        await settled(pilot)
        watched.healthy(f"pressing {keys[0]}")
        if keys == ["slash"]:
            assert app.query_one("#filter").display
        if keys == ["b"]:  # the chooser fits a node under the typed name, however small the terminal
            await until(pilot, lambda: len(app.screen_stack) == 2, "the node chooser")
            await settled(pilot)
            assert "pair-" in screen_text(app), "no node in view in the bind chooser"
    await until(pilot, lambda: len(app.screen_stack) == 1, "the main screen")


# -- the matrix over the recorded source -------------------------------------------------------------------------

@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_main_keys_at_every_size(size):
    watched = recorded_app()
    app = watched.app
    async with app.run_test(size=size, notifications=True) as pilot:
        await until(pilot, lambda: REFUSED in app.query_one(PendingPodsPane).rows, "the refused pod listed")
        app.query_one(PendingPodsPane).select(REFUSED)
        await until(pilot, lambda: app.main.selected == REFUSED)
        await settled(pilot)
        check_screen(watched, size, RecordedSource.context)
        await press_main_keys(pilot, watched)
        await settled(pilot)
        check_screen(watched, size, RecordedSource.context)
        # m with a pod selected shows the scheduler's message verbatim, whatever the size
        app.query_one(PendingPodsPane).select(REFUSED)
        await until(pilot, lambda: app.main.selected == REFUSED)
        await pilot.press("m")
        await until(pilot, lambda: len(app.screen_stack) == 2, "the message window")
        await settled(pilot)
        assert REFUSALS["too-much-cpu"][:20] in app.screen.query_one("#raw-message-text").text
        screen_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: len(app.screen_stack) == 1, "the main screen")
        watched.healthy("the message window")


# -- a resize storm while deltas flow --------------------------------------------------------------------------

def _churn(source: RecordedSource, i: int) -> None:
    """One pod modified (its phase and resourceVersion) and one refusal event repeated: deltas on two watches."""
    pods = list(source.objects["pods"].values())
    pod = copy.deepcopy(pods[i % len(pods)])
    pod["metadata"]["resourceVersion"] = str(1000 + i)
    pod["status"]["phase"] = ("Pending", "Unknown")[i % 2]
    source.queues["pods"].put_nowait(Upserted("pods", pod, "MODIFIED"))
    events = list(source.objects["events"].values())
    if events:
        event = copy.deepcopy(events[i % len(events)])
        event["metadata"]["resourceVersion"] = str(1000 + i)
        event["series"]["count"] = 4 + i
        source.queues["events"].put_nowait(Upserted("events", event, "MODIFIED"))


async def test_resize_storm_while_deltas_flow():
    source = RecordedSource(scenario="refusals")
    watched = recorded_app(source)
    app = watched.app
    storm = [SIZES[i % len(SIZES)] for i in (0, 6, 1, 5, 2, 4, 3, 6, 0, 3, 1, 6, 2, 0, 5, 4)] + [
        (40 + 17 * i, 10 + 6 * i) for i in range(15)] + [(300 - 13 * i, 100 - 5 * i) for i in range(19)]
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await until(pilot, lambda: REFUSED in app.query_one(PendingPodsPane).rows, "the refused pod listed")
        app.query_one(PendingPodsPane).select(REFUSED)
        for i, size in enumerate(storm):
            _churn(source, i)
            await pilot.resize_terminal(*size)
            if i % 3 == 0:
                await pilot.pause()  # some resizes land between repaints, others pile up before one
            if i % 10 == 0:
                await pilot.press("tab")
            watched.healthy(f"resizing to {size}")
        final = (80, 24)
        await pilot.resize_terminal(*final)
        await until(pilot, lambda: tuple(app.size) == final and app.has_class("-narrow"), "the last size")
        await until(pilot, lambda: all(q.empty() for q in source.queues.values()), "the deltas applied")
        await settled(pilot)
        check_screen(watched, final, RecordedSource.context)
        assert app.main.state.pods["sched-lab/too-much-cpu"].resource_version.startswith("10")


# -- hostile objects on screen ---------------------------------------------------------------------------------

ESCAPES = "\x1b[2J\x1b]0;pwned\x07\x9b31m\x00\u202e"


def hostile_objects() -> dict[str, list[dict[str, Any]]]:
    """Objects no real API server should serve, and one day will: escapes, markup, surrogates, huge messages."""
    ns = "sched-lab"
    pods = [
        {"metadata": {"name": f"evil{ESCAPES}", "namespace": ns, "uid": "h1", "resourceVersion": "1",
                      "creationTimestamp": None},
         "spec": {"containers": None, "schedulerName": f"sched{ESCAPES}"},
         "status": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                    "message": f"[/bold] [/] {ESCAPES} " + HUGE}]}},
        {"metadata": {"name": "[bold]markup[/]", "namespace": ns, "uid": "h2", "creationTimestamp": 5},
         "spec": {"nodeName": f"ghost{ESCAPES}", "containers": "nope"}, "status": None},
        {"metadata": {"name": "surrogate-\ud800\udcff", "namespace": ns, "uid": "h3"}},
        {"metadata": {"name": "scheduler-error", "namespace": ns, "uid": "h4",
                      "creationTimestamp": "0001-01-01T00:00:00+01:00"},
         "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1e999999999", "memory": -1}}}]},
         "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                        "reason": "SchedulerError",
                                                        "message": "[/bin/sh -c]\x00" + HUGE}]}},
        {"metadata": None, "spec": None, "status": 7},
    ]
    nodes = [{"metadata": {"name": f"node{ESCAPES}[/]"},
              "spec": {"taints": [{"key": "[/]", "value": ESCAPES, "effect": "NoSchedule"}, 5]},
              "status": {"allocatable": {"cpu": "1e999999999", "memory": "-1", "pods": "x"}, "conditions": None}}]
    events = [
        {"metadata": {"name": f"e1{ESCAPES}", "namespace": ns, "resourceVersion": "1"},
         "involvedObject": {"kind": "Pod", "namespace": ns, "name": f"evil{ESCAPES}", "uid": "h1"},
         "reason": "FailedScheduling", "message": f"[/bin/sh -c] {ESCAPES} " + HUGE, "type": "Warning",
         "reportingComponent": f"[/]{ESCAPES}", "lastTimestamp": None, "count": -5},
        {"metadata": {"name": "e0", "namespace": ns, "resourceVersion": "3"},
         "involvedObject": {"kind": "Pod", "namespace": ns, "name": "scheduler-error", "uid": "h4"},
         "reason": "Failed", "message": 'exec: "[/bin/sh -c]" failed', "type": "Warning",
         "lastTimestamp": "0001-01-01T00:00:00Z", "firstTimestamp": "9999-12-31T23:59:59Z"},
        {"metadata": {"name": "e2", "namespace": ns, "resourceVersion": "2"},
         "involvedObject": {"kind": "Pod", "namespace": ns, "name": "[bold]markup[/]"},
         "reason": "[/]", "message": "[link=x]\ud800", "type": None, "source": {"component": "[/i]"},
         "eventTime": "0001-01-01T00:00:00+01:00", "series": {"count": 10 ** 30, "lastObservedTime": 12}},
    ]
    return {"pods": pods, "nodes": nodes, "events": events}


def hostile_source() -> RecordedSource:
    source = RecordedSource(scenario="refusals")
    for kind, objs in hostile_objects().items():
        for i, obj in enumerate(objs):
            source.objects[kind][f"hostile/{i}"] = obj
    return source


@pytest.fixture
def west_of_greenwich(monkeypatch):
    """Local time five hours behind UTC, where ``0001-01-01T00:00:00Z`` has no local time."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("size", [(40, 10), (300, 100)], ids=["40x10", "300x100"])
async def test_hostile_objects_render_without_crash_or_control_characters(size, west_of_greenwich):
    watched = recorded_app(hostile_source())
    app = watched.app
    async with app.run_test(size=size, notifications=True) as pilot:
        await until(pilot, lambda: len(app.query_one(PendingPodsPane).rows) >= 5, "the hostile pods listed")
        await settled(pilot)
        check_screen(watched, size, RecordedSource.context)
        keys = [k for k in app.query_one(PendingPodsPane).row_keys if k.split("/", 1)[1] not in REFUSALS]
        for key in keys:  # each hostile pod selected: its Why, events, timeline and raw message on screen
            app.query_one(PendingPodsPane).select(key)
            await until(pilot, lambda key=key: app.main.selected == key, f"{key!r} selected")
            await settled(pilot)
            check_screen(watched, size, RecordedSource.context)
            for modal in ("m", "b"):
                await pilot.press(modal)
                await until(pilot, lambda: len(app.screen_stack) == 2, f"the {modal} window for {key!r}")
                await settled(pilot)
                watched.healthy(f"{modal} for {key!r}")
                assert not unprintable(screen_text(app)), f"{modal} for {key!r}"
                await pilot.press("escape")
                await until(pilot, lambda: len(app.screen_stack) == 1, "the main screen")
        check_screen(watched, size, RecordedSource.context)


# -- one size over a real lab ----------------------------------------------------------------------------------

@pytest.fixture
def lab_settings() -> LabSettings:
    """The shared ``lab`` fixture (tests/conftest.py) with the simulated cluster on: its scheduler writes events."""
    return LabSettings(kubelet_start_seconds=0.3)


async def test_main_keys_and_resizes_over_a_real_lab(lab):
    connection = await connect(str(lab.kubeconfig_path), "observatory-lab", None)
    source = ClusterSource(connection, namespace=None, lab=True, read_only=False)
    try:
        watched = Watched(ObservatoryApp(source, refresh_interval=0.05))
        app = watched.app
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await until(pilot, lambda: "sched-lab/manual" in app.query_one(PendingPodsPane).rows, "the seed's pod")
            app.query_one(PendingPodsPane).select("sched-lab/manual")
            await until(pilot, lambda: app.main.selected == "sched-lab/manual")
            await settled(pilot)
            check_screen(watched, (80, 24), "observatory-lab")
            await press_main_keys(pilot, watched)
            for size in (SIZES[0], SIZES[-1], (80, 24)):
                await pilot.resize_terminal(*size)
                await until(pilot, lambda s=size: tuple(app.size) == s, f"the size {size}")
                await settled(pilot)
                check_screen(watched, size, "observatory-lab")
    finally:
        await source.close()


# -- regressions: the minimal examples of the bugs these tests found -----------------------------------------------

async def test_regression_markup_in_an_event_message_is_shown_as_text():
    """``exec: "[/bin/sh -c]" failed``, an ordinary kubelet message, in the events pane: a str cell is parsed as
    Rich markup, and the closing tag that matches nothing raised MarkupError, which stopped the app."""
    source = RecordedSource()
    message = 'exec: "[/bin/sh -c]" failed'
    source.objects["events"]["sched-lab/manual.1"] = {
        "metadata": {"name": "manual.1", "namespace": "sched-lab", "resourceVersion": "1"},
        "involvedObject": {"kind": "Pod", "namespace": "sched-lab", "name": "manual"},
        "reason": "[/]", "message": message, "type": "Warning", "source": {"component": "[bold]kubelet"}}
    watched = recorded_app(source)
    app = watched.app
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await until(pilot, lambda: "sched-lab/manual.1" in app.query_one(EventsPane).rows, "the event listed")
        await settled(pilot)
        watched.healthy("showing the event")
        pane = app.query_one(EventsPane)
        assert str(pane.get_cell("sched-lab/manual.1", "message")) == message
        assert str(pane.get_cell("sched-lab/manual.1", "reason")) == "[/]"
        assert '[/]     [bold]kubelet  exec: "[/bin/sh -c' in screen_text(app)  # drawn: where it raised


def test_regression_control_characters_are_dropped_and_widths_kept():
    """An ESC (or C1 CSI, NUL, bidi override) in a pod name or an event message reached the terminal as is."""
    line = [Segment("evil\x1b[2J\x1b]0;pwned\x07\x9b31m\x00\u202e"), Segment("\ud800x", None),
            Segment.line(), Segment("\x1b[H", None, [(ControlType.HOME,)])]
    filtered = PrintableFilter().apply(line, Color(0, 0, 0))
    assert [s.text for s in filtered] == ["evil[2J]0;pwned31m", "\ufffdx", "\n", "\x1b[H"]  # control: the driver's
    assert [cell_len(s.text) for s in filtered[:2]] == [cell_len(s.text) for s in line[:2]]
    assert printable("plain") == "plain"


def test_regression_huge_messages_are_cut_for_the_screen():
    """A 1 MiB scheduler message froze the app for seconds: in the pending pane's headline, the Why pane's
    explanation and the message window, each wrapping it whole."""
    huge = "[/bin/sh -c] " + HUGE
    assert len(shown(huge)) < MAX_SHOWN + 200 and shown(huge).startswith(huge[:100])
    assert shown("short") == "short"
    diagnosis = Diagnosis(pod="ns/p", state="scheduler-error", headline="SchedulerError", explanation=(huge,))
    assert len(render_diagnosis(diagnosis).plain) < MAX_LINE + 200


async def test_regression_markup_typed_as_a_node_name():
    """``b``, then ``[/]`` typed as the node (any name may be typed, even of a node that does not exist): the
    warning, the title of the confirmation and of the ``c`` window put it in a Label, which parsed it as markup
    and raised MarkupError."""
    watched = recorded_app(RecordedSource())
    app = watched.app
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await until(pilot, lambda: "sched-lab/manual" in app.query_one(PendingPodsPane).rows, "the seed's pod")
        app.query_one(PendingPodsPane).select("sched-lab/manual")
        await until(pilot, lambda: app.main.selected == "sched-lab/manual")
        await pilot.press("b", "left_square_bracket", "slash", "right_square_bracket", "enter")
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", "the warning before the bind")
        await settled(pilot)
        watched.healthy("the warning")
        assert "node [/] does not exist" in screen_text(app)
        await pilot.press("y")
        await until(pilot, lambda: len(app.main.exchanges) == 1 and len(app.screen_stack) == 1, "the Binding sent")
        await pilot.press("c")
        await until(pilot, lambda: len(app.screen_stack) == 2, "the equivalent commands")
        await settled(pilot)
        watched.healthy("the equivalent commands")
        assert "→ [/]" in screen_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: len(app.screen_stack) == 1, "the main screen")
        watched.healthy("closing the commands")


class FailingSource(RecordedSource):
    """The events watch fails with an error whose text looks like markup (a server's message may hold anything)."""

    async def stream(self, kind: str):
        if kind == "events":
            raise RuntimeError('unexpected answer: exec "[/bin/sh -c]" [/]')
        async for delta in super().stream(kind):
            yield delta


async def test_regression_markup_in_a_worker_error_is_shown_as_text():
    """The handler that turns a failed worker into a notification passed the error text as markup: an error
    mentioning ``[/]`` raised MarkupError in the notification, the one place meant to keep errors visible."""
    watched = recorded_app(FailingSource())
    app = watched.app
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await until(pilot, lambda: any(n[0] == "error" for n in watched.notices), "the error notification")
        await settled(pilot)
        assert app.is_running and app._exception is None
        shown = " ".join(line.strip(" │▌") for line in screen_text(app).splitlines())
        assert 'unexpected answer: exec "[/bin/sh' in shown and '-c]" [/]' in shown  # the toast, wrapped


async def test_regression_markup_in_a_typed_transcript_path(tmp_path):
    """``e`` with a path holding ``[/]`` that cannot be written: the error notification parsed the path as markup."""
    watched = recorded_app(RecordedSource())
    app = watched.app
    target = tmp_path / "[/]" / "missing" / "t.md"
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await until(pilot, lambda: "sched-lab/manual" in app.query_one(PendingPodsPane).rows, "the seed's pod")
        assert app.main.teaching.export_transcript(target) is None
        await settled(pilot)
        assert app.is_running and app._exception is None
        assert watched.notices[-1][:2] == ("error", "Transcript not written") and "[/]" in watched.notices[-1][2]
        assert "Transcript not written" in screen_text(app)


async def test_regression_markup_typed_as_a_namespace_is_a_plain_notification():
    """``n``, then ``[/]`` typed as the namespace: the refusal quoted it in a notification, which Textual parses as
    markup by default (MarkupError). Every notification of the app is plain text unless it asks for markup."""
    watched = recorded_app(RecordedSource())
    app = watched.app
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await until(pilot, lambda: "sched-lab/manual" in app.query_one(PendingPodsPane).rows, "the seed's pod")
        await pilot.press("n", "left_square_bracket", "slash", "right_square_bracket", "enter")
        await until(pilot, lambda: list(app._notifications), "the refusal notified")
        await settled(pilot)
        watched.healthy("refusing the namespace")
        assert [n.message for n in app._notifications] == [
            "'[/]' is not a namespace name (lower-case letters, digits and '-')."]
