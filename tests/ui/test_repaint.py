"""When the screen repaints: the first change after a quiet interval at once, a burst on the interval."""

from __future__ import annotations

import copy

from observatory.model.deltas import Upserted
from observatory.ui.app import ObservatoryApp
from observatory.ui.widgets.pending_pods import PendingPodsPane
from tests.ui.fakes import RecordedSource, frozen_clock
from tests.waiting import eventually


async def test_the_first_change_after_a_quiet_interval_is_painted_without_waiting_for_the_interval():
    """issue 8: with only the interval's repaint, a lone change waited up to one interval (half of it on average:
    the benchmark's 100 ms reflect-latency median at no churn). Here the interval is an hour, so its timer never
    repaints during the test; the last repaint of changes is set an interval back, as after a quiet spell, and only
    the leading repaint can show the new pod."""
    source = RecordedSource()
    app = ObservatoryApp(source, clock=frozen_clock, refresh_interval=3600)
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.query_one(PendingPodsPane)
        await eventually(lambda: "sched-lab/manual" in pane.rows, "the listed pod", 30, pause=lambda: pilot.pause(0.05))
        app._flushed_at = float("-inf")  # an hour of quiet, without waiting for it
        pod = copy.deepcopy(source.objects["pods"]["sched-lab/manual"])
        pod["metadata"].update(name="late", uid="00000000-0000-4000-8000-00000000abcd", resourceVersion="101")
        await source.queues["pods"].put(Upserted("pods", pod, "ADDED"))
        await eventually(lambda: "sched-lab/late" in pane.rows, "the new pod painted", 30,
                         pause=lambda: pilot.pause(0.05))
