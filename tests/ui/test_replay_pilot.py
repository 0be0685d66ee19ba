"""Record and replay against a real lab (a round trip produces the same final screen as the live run): a live
session on the lab, recorded with ``RecordingSource``, binds ``sched-lab/manual`` by pressing keys
(b, worker, Enter: 201; b, control, Enter, y: 409); ``ReplaySource`` then plays the file with no cluster, the app
pressing the recorded keys again, and the replay's final screen is the live run's.

What makes the two screens comparable: the live app and the recorder share one frozen clock, and a replay runs on
the recorded clock (``ReplaySource.clock``), so every age, "just bound" mark and timeline time is the same in both.
Everything else on the screen (server URL, uids, resourceVersions, events, the exact answers) comes from the recording.
The only thing removed before comparing is the replay's own "replay finished" notification, which the live run cannot
have.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from observatory.kube.connect import connect
from observatory.kube.source import ClusterSource
from observatory.lessons import load_lesson
from observatory.model.recording import KeyEntry
from observatory.recorder import RecordingSource
from observatory.replay import ReplaySource, load_recording
from observatory.settings import LabSettings
from observatory.ui.app import ObservatoryApp
from observatory.ui.screens.chooser import ChooserScreen
from observatory.ui.screens.confirm import ConfirmScreen
from tests.ui.helpers import until

MANUAL = "sched-lab/manual"
KEYS = ["b", *"worker", "enter", "b", *"control", "enter", "y"]
"""Bind to pair-worker (201), then to pair-control-plane, confirming the warning (409)."""
ALREADY_ASSIGNED = ('Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node '
                    '"pair-worker"')
SIZE = (120, 40)


@pytest.fixture
def lab_settings() -> LabSettings:
    """The simulated cluster with a quick kubelet (nobody schedules sched-lab/manual: its scheduler does not exist)."""
    return LabSettings(kubelet_start_seconds=0.3, podgc=False, bookmark_interval=0.2)


@pytest.fixture
def frozen() -> Callable[[], datetime]:
    """One instant, a minute after the lab's objects were made, for the live app and its recorder alike."""
    at = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=1)
    return lambda: at


async def final_screen(pilot) -> str:
    """The screen once every change has been painted: a flush, then a few refresh intervals."""
    pilot.app.main.flush()
    await pilot.pause(0.2)
    await pilot.wait_for_scheduled_animations()
    return pilot.app.export_screenshot()


def words(svg: str) -> str:
    """The text of an SVG screenshot, for looking things up in it (the screens themselves are compared whole)."""
    return html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")


def screen_lines(svg: str) -> list[str]:
    """The text of an SVG screenshot, one string per terminal row."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for m in re.finditer(r'<text[^>]*?x="([\d.]+)"[^>]*?y="([\d.]+)"[^>]*>(.*?)</text>', svg, re.S):
        rows.setdefault(float(m[2]), []).append((float(m[1]), html.unescape(re.sub(r"<[^>]+>", "", m[3]))))
    return ["".join(t for _, t in sorted(cells)).replace("\xa0", " ") for _, cells in sorted(rows.items())]


def running(app: ObservatoryApp) -> bool:
    pod = app.main.state.pods.get(MANUAL)
    reasons = {e.reason for e in app.main.state.events_for(MANUAL)}
    return pod is not None and pod.status == "Running" and {"Pulled", "Started"} <= reasons


async def record_live(lab, path: Path, clock: Callable[[], datetime]) -> str:
    """The live session, recorded to ``path``; returns its final screen."""
    connection = await connect(str(lab.kubeconfig_path), "observatory-lab", None)
    source = RecordingSource(ClusterSource(connection, namespace=None, lab=True), path, secrets=connection.secrets,
                             clock=clock)
    app = ObservatoryApp(source, clock=clock, refresh_interval=0.05)
    try:
        async with app.run_test(size=SIZE) as pilot:
            # The only pending pod is highlighted, so it is selected: no key needed.
            await until(pilot, lambda: app.main.selected == MANUAL, "sched-lab/manual selected")
            await pilot.press(*KEYS[:8])
            await until(pilot, lambda: len(app.main.exchanges) == 1, "the first Binding's answer")
            assert app.main.exchanges[0].status_line == "HTTP/1.1 201 Created"
            await until(pilot, lambda: running(app), "the pod Running, with the kubelet's events")
            await pilot.press(*KEYS[8:17])
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the warning before the second bind")
            await pilot.press(KEYS[17])
            await until(pilot, lambda: len(app.main.exchanges) == 2, "the second Binding's answer")
            assert app.main.exchanges[1].status_message == ALREADY_ASSIGNED
            return await final_screen(pilot)
    finally:
        await source.close()


async def replay(path: Path, *, keys: bool = True) -> tuple[ObservatoryApp, ReplaySource]:
    source = ReplaySource(load_recording(path), speed=math.inf)
    app = ObservatoryApp(source, clock=source.clock, refresh_interval=0.05, key_script=source.keys() if keys else None)
    return app, source


async def replayed_screen(path: Path) -> tuple[str, ObservatoryApp]:
    app, source = await replay(path)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: source.finished and len(app.main.exchanges) == 2 and running(app),
                        "the whole recording played")
            await until(pilot, lambda: app.replay.finished_shown, "the replay-finished notification")
            # Volatile on purpose: the replay says it has finished; the live run had nothing to say.
            app.clear_notifications()
            return await final_screen(pilot), app
    finally:
        await source.close()


async def test_a_replay_ends_on_the_live_runs_final_screen(lab, tmp_path, frozen):
    path = tmp_path / "session.jsonl"
    live = await record_live(lab, path, frozen)
    assert "HTTP/1.1 409 Conflict" in words(live) and "already assigned" in words(live)

    screen, app = await replayed_screen(path)
    assert [ex.status_line for ex in app.main.exchanges] == ["HTTP/1.1 201 Created", "HTTP/1.1 409 Conflict"]
    assert app.main.exchanges[1].status_message == ALREADY_ASSIGNED
    assert screen_lines(screen) == screen_lines(live)  # a readable diff first
    assert screen == live


async def test_the_recording_holds_every_key_in_order_and_replays_are_deterministic(lab, tmp_path, frozen):
    path = tmp_path / "session.jsonl"
    await record_live(lab, path, frozen)

    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["key"] for line in lines if line["type"] == "key"] == KEYS
    assert [e.key for e in load_recording(path).entries if isinstance(e, KeyEntry)] == KEYS
    exchanges = [line for line in lines if line["type"] == "exchange"]
    assert [(ex["node"], ex["status"]) for ex in exchanges] == [("pair-worker", 201), ("pair-control-plane", 409)]
    # Each key is written before what it caused: the first Binding's answer follows the Enter that sent it.
    order = [line.get("key") or line["type"] for line in lines[1:] if line["type"] != "delta"]
    assert order == [*KEYS[:8], "exchange", *KEYS[8:], "exchange"]

    first, _ = await replayed_screen(path)
    second, _ = await replayed_screen(path)
    assert first == second


async def test_keys_pressed_after_a_namespace_change_are_still_recorded(lab, tmp_path):
    path = tmp_path / "session.jsonl"
    connection = await connect(str(lab.kubeconfig_path), "observatory-lab", None)
    source = RecordingSource(ClusterSource(connection, namespace=None, lab=True), path, secrets=connection.secrets)
    app = ObservatoryApp(source, refresh_interval=0.05)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.main.selected == MANUAL, "sched-lab/manual selected")
            await pilot.press("n")
            await until(pilot, lambda: isinstance(app.screen, ChooserScreen), "the namespace chooser")
            await pilot.press(*"sched-lab", "enter")
            await until(pilot, lambda: app.main.source.namespace == "sched-lab", "the new scope")
            assert app.main.source is not source  # with_namespace made another RecordingSource
            await pilot.press("question_mark", "escape")
    finally:
        await app.main.source.close()
    keys = [e.key for e in load_recording(path).entries if isinstance(e, KeyEntry)]
    assert keys == ["n", *"sched", "minus", *"lab", "enter", "question_mark", "escape"]  # Textual's key names

    # Replayed, the recorded n opens the chooser again, so "sched-lab" is typed into it and not taken for keys of
    # the main screen (b would start a bind); Enter's choice is refused: the replay keeps the recorded scope.
    replayed = ReplaySource(load_recording(path), speed=math.inf)
    app = ObservatoryApp(replayed, clock=replayed.clock, refresh_interval=0.05, key_script=replayed.keys())
    said: list[str] = []
    notify = app.notify
    app.notify = lambda message, **kw: (said.append(message), notify(message, **kw))[1]  # type: ignore[method-assign]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: replayed.finished, "the whole recording played")
            await pilot.pause()
            assert app.screen is app.screen_stack[0]  # the chooser and the help screen were closed, as live
            assert app.main.source is replayed and app.main.source.namespace is None
            assert any(m.startswith("A replay keeps the recorded scope") for m in said)
            assert app.main.exchanges == []
    finally:
        await replayed.close()


async def test_n_and_a_are_off_during_a_replay(lab, tmp_path, frozen):
    path = tmp_path / "session.jsonl"
    await record_live(lab, path, frozen)
    app, source = await replay(path)
    said: list[str] = []
    notify = app.notify
    app.notify = lambda message, **kw: (said.append(message), notify(message, **kw))[1]  # type: ignore[method-assign]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: source.finished and any(m.startswith("Replay finished") for m in said),
                        "the whole recording played, and the notification that says so")
            streams = {w for w in app.workers if w.group == "streams"}
            for key in ("n", "a"):
                said.clear()
                await pilot.press(key)
                assert not isinstance(app.screen, ChooserScreen), "no chooser: the scope cannot change"
                assert app.main.source is source and app.main.source.namespace is None
                assert {w for w in app.workers if w.group == "streams"} == streams  # nothing was restarted
                assert said == ["A replay keeps the recorded scope (all namespaces): the recording holds only what "
                                "was watched, so n and a are off."]
            assert len(app.main.exchanges) == 2
    finally:
        await source.close()


async def test_the_recorded_q_does_not_quit_the_replay_but_a_q_pressed_then_does(lab, tmp_path):
    path = tmp_path / "session.jsonl"
    connection = await connect(str(lab.kubeconfig_path), "observatory-lab", None)
    source = RecordingSource(ClusterSource(connection, namespace=None, lab=True), path, secrets=connection.secrets)
    app = ObservatoryApp(source, refresh_interval=0.05)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.main.selected == MANUAL, "sched-lab/manual selected")
            await pilot.press("q")  # the usual end of a recorded session
            await until(pilot, lambda: not app.is_running, "the live app quit")
    finally:
        await source.close()
    assert [e.key for e in load_recording(path).entries if isinstance(e, KeyEntry)] == ["q"]

    app, replayed = await replay(path)
    said: list[str] = []
    notify = app.notify
    app.notify = lambda message, **kw: (said.append(message), notify(message, **kw))[1]  # type: ignore[method-assign]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: replayed.finished and app.replay.finished_shown, "the whole recording played")
            await pilot.pause()
            assert app.is_running
            assert "The recorded session quit here; the replay stays on this screen. q quits." in said
            await pilot.press("q")
            await until(pilot, lambda: not app.is_running, "a q pressed now quits")
    finally:
        await replayed.close()


async def test_a_lesson_walked_over_a_replay_ticks_on_the_recorded_clock(lab, tmp_path, frozen, monkeypatch):
    path = tmp_path / "session.jsonl"
    await record_live(lab, path, frozen)
    monkeypatch.chdir(tmp_path)
    source = ReplaySource(load_recording(path), speed=math.inf)
    app = ObservatoryApp(source, clock=source.clock, refresh_interval=0.05, key_script=source.keys(),
                         lesson=load_lesson("manual-binding"))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.main.lesson.run.done and "Transcript:" in app.main.lesson.transcript,
                        "every step ticked and the transcript written")
            assert app.main.lesson.run.ticked == (frozen(),) * 6  # the recorder's clock, not the wall clock
    finally:
        await source.close()
    # Named for the recorded clock, as the live run's would be: "-replay" keeps it from overwriting that one.
    [written] = tmp_path.glob("observatory-transcript-*.md")
    assert written.name.endswith("-replay.md") and written.with_suffix(".json").exists()
    assert ALREADY_ASSIGNED in written.read_text()
