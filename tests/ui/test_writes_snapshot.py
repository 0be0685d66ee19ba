"""SVG snapshots of the writes pane and the timeline's writers over a recorded source with an audit feed
(tests/ui/audit_fakes.py), frozen clock: exercise 1 (kubectl's Binding, its 409, the kubelet's status patches) at
120x40 and 80x24, and two Bindings side by side at both sizes."""

from __future__ import annotations

import pytest

from observatory.ui.app import ObservatoryApp
from observatory.ui.screens.compare import CompareScreen
from tests.ui.audit_fakes import AuditedSource
from tests.ui.fakes import frozen_clock
from tests.ui.helpers import select_manual, until, until_painted

pytestmark = pytest.mark.usefixtures("utc_local_time")  # clock times as the snapshots show them


def make_app() -> ObservatoryApp:
    return ObservatoryApp(AuditedSource(), clock=frozen_clock, refresh_interval=0.05)


async def exercise_1(pilot) -> None:
    """kubectl's Binding, kubectl's second (the 409, highlighted), the kubelet's two status patches; the 409's line
    highlighted in the focused writes list (the cursor follows the newest Binding)."""
    app = pilot.app
    source = app.main.source
    await select_manual(pilot)
    source.kubectl_bind()
    source.kubectl_bind()
    source.kubelet_status()
    source.kubelet_status(running=True)
    rows = app.query_one("#writes-list")
    await until_painted(pilot, lambda: rows.row_count == 4 and app.query_one("#timeline").row_count == 4)
    rows.focus()
    await until_painted(pilot, lambda: rows.cursor_row == 1)


async def side_by_side(pilot) -> None:
    """kube-scheduler's Binding of sched-lab/web beside kubectl's of sched-lab/manual."""
    app = pilot.app
    source = app.main.source
    await select_manual(pilot)
    source.add_pod("web")
    source.scheduler_bind("web")
    source.kubectl_bind()
    rows = app.query_one("#writes-list")
    await until_painted(pilot, lambda: len(app.main.writes.store) == 2)
    rows.focus()
    await pilot.press("p")
    await until_painted(pilot, lambda: rows.row_count == 2)
    await pilot.press("up", "v", "down", "v")
    await until(pilot, lambda: isinstance(app.screen, CompareScreen), "the side-by-side view")
    await until_painted(pilot, lambda: True)


def test_writes_120x40(snap_compare):
    assert snap_compare(make_app(), terminal_size=(120, 40), run_before=exercise_1)


def test_writes_80x24(snap_compare):
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=exercise_1)


def test_side_by_side_120x40(snap_compare):
    assert snap_compare(make_app(), terminal_size=(120, 40), run_before=side_by_side)


def test_side_by_side_80x24(snap_compare):
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=side_by_side)
