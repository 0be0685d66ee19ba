"""SVG snapshots of the TUI at 120x40 (start, after the 201, after the 409, the Why pane of a refused pod) and at
80x24, with a frozen clock.

The app runs over a recorded Source (tests/ui/fakes.py) so every run renders the same screen.
"""

from __future__ import annotations

import pytest

from observatory.ui.app import ObservatoryApp
from tests.ui.fakes import RecordedSource, frozen_clock
from tests.ui.helpers import select_manual, until_painted

pytestmark = pytest.mark.usefixtures("utc_local_time")  # clock times as the snapshots show them


def make_app(scenario: str = "manual-binding") -> ObservatoryApp:
    return ObservatoryApp(RecordedSource(scenario=scenario), clock=frozen_clock, refresh_interval=0.05)


async def select_refused(pilot) -> None:
    """The refusals scenario's too-much-cpu, refused by kube-scheduler (recorded), with its node-fit preview."""
    app = pilot.app
    await until_painted(pilot, lambda: "sched-lab/too-much-cpu" in app.query_one("#pending").rows)
    app.query_one("#pending").select("sched-lab/too-much-cpu")
    await until_painted(pilot, lambda: app.main.selected == "sched-lab/too-much-cpu"
                and app.query_one("#why").fit_text("pair-worker"))


async def bind_worker(pilot) -> None:
    await select_manual(pilot)
    await pilot.press("b", *"worker", "enter")
    await until_painted(pilot, lambda: len(pilot.app.main.exchanges) == 1 and pilot.app.main.state.recently_bound())


async def bind_twice(pilot) -> None:
    await bind_worker(pilot)
    await pilot.press("b", *"control", "enter")
    await until_painted(pilot, lambda: pilot.app.screen.__class__.__name__ == "ConfirmScreen")
    await pilot.press("y")
    await until_painted(pilot, lambda: len(pilot.app.main.exchanges) == 2)


def test_start_120x40(snap_compare):
    assert snap_compare(make_app(), terminal_size=(120, 40), run_before=select_manual)


def test_after_201_120x40(snap_compare):
    assert snap_compare(make_app(), terminal_size=(120, 40), run_before=bind_worker)


def test_after_409_120x40(snap_compare):
    assert snap_compare(make_app(), terminal_size=(120, 40), run_before=bind_twice)


def test_why_refused_120x40(snap_compare):
    assert snap_compare(make_app("refusals"), terminal_size=(120, 40), run_before=select_refused)


def test_start_80x24(snap_compare):
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=select_manual)
