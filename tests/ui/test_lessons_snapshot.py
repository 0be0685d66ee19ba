"""SVG snapshots of lesson mode (manual-binding) at 120x40 and 80x24, over the recorded lab of tests/ui/fakes.py with
a frozen clock: the lesson pane beside the Why pane, the nodes, the exchange, the events and the timeline, and at 80x24
at the bottom of the stacked panes. Steps 1 and 2 are ticked (the seed pod, untouched); step 3 waits for a Binding.
"""

from __future__ import annotations

import pytest

from observatory.lessons import load_lesson
from observatory.ui.app import ObservatoryApp
from tests.ui.fakes import RecordedSource, frozen_clock
from tests.waiting import eventually

pytestmark = pytest.mark.usefixtures("utc_local_time")  # clock times as the snapshots show them


def make_app() -> ObservatoryApp:
    return ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05,
                          lesson=load_lesson("manual-binding"))


async def at_step_3(pilot) -> None:
    app = pilot.app
    await eventually(lambda: app.main.lesson.run.current == 2 and app.main.selected == "sched-lab/manual"
                     and app.query_one("#lesson").shown is not None and app.query_one("#lesson").shown.current == 2,
                     "step 3 shown", pause=lambda: pilot.pause(0.05))
    await pilot.pause(0.15)
    await pilot.wait_for_scheduled_animations()


def test_lesson_120x40(snap_compare):
    assert snap_compare(make_app(), terminal_size=(120, 40), run_before=at_step_3)


def test_lesson_80x24(snap_compare):
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=at_step_3)
