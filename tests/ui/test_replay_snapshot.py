"""Record and replay as an SVG snapshot: a round trip produces the same final screen as the live run.

The live session runs over the recorded lab of tests/ui/fakes.py (pinned objects and times, so the snapshot is the
same on every run) wrapped in a ``RecordingSource`` on the frozen clock: b, worker, Enter (201), then b, control,
Enter, y (409), all as key presses. The replay of that file (``ReplaySource`` at ``--speed inf``, the keys pressed
again by the app) is the snapshot, and its screen is also compared with the live run's whole. The lab round trip is
in test_replay_pilot.py.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest

from observatory.recorder import RecordingSource
from observatory.replay import ReplaySource, load_recording
from observatory.ui.app import ObservatoryApp
from observatory.ui.screens.confirm import ConfirmScreen
from tests.ui.fakes import RecordedSource, frozen_clock
from tests.ui.helpers import until

pytestmark = pytest.mark.usefixtures("utc_local_time")  # clock times as the snapshots show them

SIZE = (120, 40)
KEYS = ["b", *"worker", "enter", "b", *"control", "enter", "y"]


async def final_screen(pilot) -> str:
    pilot.app.main.flush()
    await pilot.pause(0.2)
    await pilot.wait_for_scheduled_animations()
    return pilot.app.export_screenshot()


def record_session(path: Path) -> str:
    """The live session over the recorded lab, recorded to ``path``; returns its final screen."""

    async def run() -> str:
        source = RecordingSource(RecordedSource(), path, clock=frozen_clock)
        app = ObservatoryApp(source, clock=frozen_clock, refresh_interval=0.05)
        try:
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: app.main.selected == "sched-lab/manual", "the only pending pod selected")
                await pilot.press(*KEYS[:8])
                await until(pilot, lambda: len(app.main.exchanges) == 1, "the 201")
                await pilot.press(*KEYS[8:17])
                await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the warning")
                await pilot.press(KEYS[17])
                await until(pilot, lambda: len(app.main.exchanges) == 2, "the 409")
                return await final_screen(pilot)
        finally:
            await source.close()

    return asyncio.run(run())


def test_replay_of_a_recorded_bind_session_120x40(snap_compare, tmp_path):
    path = tmp_path / "session.jsonl"
    live = record_session(path)
    source = ReplaySource(load_recording(path), speed=math.inf)
    app = ObservatoryApp(source, clock=source.clock, refresh_interval=0.05, key_script=source.keys())
    replayed: list[str] = []

    async def played(pilot) -> None:
        await until(pilot, lambda: source.finished and len(app.main.exchanges) == 2, "the whole recording played")
        await until(pilot, lambda: app.replay.finished_shown, "the replay-finished notification")
        # The toast is mounted after notify() returns: clearing before it is on screen would leave it there.
        await until(pilot, lambda: app.screen.query("Toast"), "the replay-finished toast on screen")
        app.clear_notifications()  # the replay's own news: the live run had none
        # The toast leaves the screen on a later refresh; snapshot only once it has gone.
        await until(pilot, lambda: not app.screen.query("Toast"), "the notification toast gone")
        replayed.append(await final_screen(pilot))

    assert snap_compare(app, terminal_size=SIZE, run_before=played)
    assert [ex.status_line for ex in app.main.exchanges] == ["HTTP/1.1 201 Created", "HTTP/1.1 409 Conflict"]
    assert replayed == [live]
