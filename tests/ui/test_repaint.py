"""When the screen repaints: the first change after a quiet spell at once, then one repaint per frame gap (twice the
last repaint's cost, at least 1/60 s), so a burst of watch events costs a few repaints and none waits an interval."""

from __future__ import annotations

import copy
import time

import pytest

from observatory.model.deltas import Upserted
from observatory.ui.app import ObservatoryApp
from observatory.ui.areas import Area
from observatory.ui.widgets.pending_pods import PendingPodsPane
from tests.ui.fakes import RecordedSource, frozen_clock
from tests.waiting import eventually


async def test_the_first_change_after_a_quiet_interval_is_painted_without_waiting_for_the_interval():
    """With only the interval's repaint, a lone change waited up to one interval (half of it on average:
    the benchmark's 100 ms reflect-latency median at no churn). Here the interval is an hour, so its timer never
    repaints during the test; the last repaint of changes is set an interval back, as after a quiet spell, and only
    the leading repaint can show the new pod."""
    source = RecordedSource()
    app = ObservatoryApp(source, clock=frozen_clock, refresh_interval=3600)
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.query_one(PendingPodsPane)
        await eventually(lambda: "sched-lab/manual" in pane.rows, "the listed pod", 30, pause=lambda: pilot.pause(0.05))
        app.main._flushed_at = float("-inf")  # an hour of quiet, without waiting for it
        pod = copy.deepcopy(source.objects["pods"]["sched-lab/manual"])
        pod["metadata"].update(name="late", uid="00000000-0000-4000-8000-00000000abcd", resourceVersion="101")
        await source.queues["pods"].put(Upserted("pods", pod, "ADDED"))
        await eventually(lambda: "sched-lab/late" in pane.rows, "the new pod painted", 30,
                         pause=lambda: pilot.pause(0.05))


def _pod(source: RecordedSource, name: str, rv: int) -> dict:
    pod = copy.deepcopy(source.objects["pods"]["sched-lab/manual"])
    pod["metadata"].update(name=name, uid=f"00000000-0000-4000-8000-{rv:012d}", resourceVersion=str(rv))
    return pod


async def test_a_change_right_after_a_repaint_waits_for_the_frame_gap_not_the_interval():
    """A change that lands just after a repaint would wait for the interval's tick (the benchmark's
    probes write right after the previous probe's row was painted). The interval is an hour here: only the paced
    repaint, one frame gap after the last, can show the pod."""
    source = RecordedSource()
    app = ObservatoryApp(source, clock=frozen_clock, refresh_interval=3600)
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.query_one(PendingPodsPane)
        await eventually(lambda: "sched-lab/manual" in pane.rows, "the listed pod", 30, pause=lambda: pilot.pause(0.05))
        app.main._flushed_at, app.main._repaint_cost = time.monotonic(), 0.005  # a cheap repaint has just ended
        assert app.main.frame_gap() == pytest.approx(1 / 60)
        await source.queues["pods"].put(Upserted("pods", _pod(source, "soon", 101), "ADDED"))
        await eventually(lambda: "sched-lab/soon" in pane.rows, "the new pod painted", 30,
                         pause=lambda: pilot.pause(0.05))


async def test_a_burst_of_watch_events_is_coalesced_into_a_few_repaints():
    source = RecordedSource()
    app = ObservatoryApp(source, clock=frozen_clock, refresh_interval=3600)
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.query_one(PendingPodsPane)
        await eventually(lambda: "sched-lab/manual" in pane.rows, "the listed pod", 30, pause=lambda: pilot.pause(0.05))
        repaints = []
        repaint = app.main._repaint
        app.main._repaint = lambda: (repaints.append(set(app.main._dirty)), repaint())[1]  # type: ignore[method-assign]
        burst = [_pod(source, f"burst-{i}", 200 + i) for i in range(200)]
        for pod in burst:
            source.queues["pods"].put_nowait(Upserted("pods", pod, "ADDED"))
        await eventually(lambda: "sched-lab/burst-199" in pane.rows, "the whole burst painted", 30,
                         pause=lambda: pilot.pause(0.05))
        assert all(f"sched-lab/burst-{i}" in pane.rows for i in range(200))
        assert 1 <= len([d for d in repaints if d]) <= 10, f"{len(repaints)} repaints for 200 watch events"


def test_the_frame_gap_is_twice_the_last_repaint_between_a_60th_of_a_second_and_the_interval():
    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.1)
    for cost, gap in ((0.0, 1 / 60), (0.001, 1 / 60), (0.02, 0.04), (0.3, 0.1)):
        app.main._repaint_cost = cost
        assert app.main.frame_gap() == pytest.approx(gap), cost


async def test_the_fit_preview_of_the_selected_pod_is_redone_at_most_every_refit_every_and_then_always(
        monkeypatch):
    """Under churn, pods binding anywhere change the selected pod's fit preview on every repaint, and a
    preview filters every node. It is redone at most every REFIT_EVERY seconds, and the latest change is always
    fitted in the end, by a later repaint with nothing new in it."""
    from observatory.ui import why as why_controller
    from observatory.ui.widgets.why_pane import WhyPane

    source = RecordedSource()
    app = ObservatoryApp(source, clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.query_one(PendingPodsPane)
        await eventually(lambda: "sched-lab/manual" in pane.rows, "the listed pod", 30, pause=lambda: pilot.pause(0.05))
        app.main.selected = "sched-lab/manual"
        why = app.query_one(WhyPane)
        await eventually(lambda: why.preview is not None and why.preview.pod == "sched-lab/manual", "a preview", 30,
                         pause=lambda: pilot.pause(0.05))
        fits = []
        fit = app.main.state.fit
        monkeypatch.setattr(app.main.state, "fit", lambda *a, **k: (fits.append(a), fit(*a, **k))[1])
        monkeypatch.setattr(why_controller, "REFIT_EVERY", 3600)
        app.main.why._fit_at = float("-inf")  # the last preview is old: the next change is fitted at once
        node = next(iter(app.main.state.nodes))
        for i in range(2):  # two pods bound to a node, a repaint apart: what the preview reads changes twice
            generation = app.main.state.fit_generation
            bound = _pod(source, f"bound-{i}", 300 + i)
            bound["spec"]["nodeName"] = node
            await source.queues["pods"].put(Upserted("pods", bound, "ADDED"))
            await eventually(lambda generation=generation: app.main.state.fit_generation != generation
                             and not app.main._dirty, "the repaint", 30, pause=lambda: pilot.pause(0.05))
        await pilot.pause(0.2)  # several interval repaints with nothing new
        assert len(fits) == 1 and app.main.why._refit_waiting  # the second change waits for REFIT_EVERY
        monkeypatch.setattr(why_controller, "REFIT_EVERY", 0)
        await eventually(lambda: len(fits) == 2, "the waiting change fitted by an interval repaint", 30,
                         pause=lambda: pilot.pause(0.05))
        assert not app.main.why._refit_waiting and app.main.why._fit_facts[2] == app.main.state.fit_generation


async def test_a_key_pressed_during_a_burst_is_handled_before_the_whole_burst_is_applied():
    """A watch chunk can hold hundreds of events, all ready at once. The stream
    worker lets the app's messages run every YIELD_EVERY deltas, so a key waits for a few dozen deltas, not all."""
    from observatory.ui.main_screen import YIELD_EVERY

    source = RecordedSource()
    app = ObservatoryApp(source, clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.query_one(PendingPodsPane)
        await eventually(lambda: "sched-lab/manual" in pane.rows, "the listed pod", 30, pause=lambda: pilot.pause(0.05))
        before = len(app.main.state.pods)
        seen_at_key: list[int] = []
        on_event = app.on_event

        async def counting(event):
            if getattr(event, "key", None) == "down":
                seen_at_key.append(len(app.main.state.pods) - before)
            await on_event(event)

        app.on_event = counting  # type: ignore[method-assign]
        burst = 2000
        for i in range(burst):
            source.queues["pods"].put_nowait(Upserted("pods", _pod(source, f"burst-{i}", 500 + i), "ADDED"))
        await pilot.press("down")
        await eventually(lambda: len(app.main.state.pods) - before == burst, "the whole burst applied", 30,
                         pause=lambda: pilot.pause(0.05))
        assert seen_at_key and seen_at_key[0] < burst, f"the key waited for {seen_at_key} of {burst} deltas"
        assert seen_at_key[0] <= 8 * YIELD_EVERY


async def _two_pending_pods(pilot, app, source):
    pane = app.query_one(PendingPodsPane)
    await eventually(lambda: "sched-lab/manual" in pane.rows, "the listed pod", 30, pause=lambda: pilot.pause(0.05))
    await source.queues["pods"].put(Upserted("pods", _pod(source, "second", 700), "ADDED"))
    await eventually(lambda: pane.row_keys == ["sched-lab/manual", "sched-lab/second"] and app.main.selected,
                     "both pods listed, the first selected", 30, pause=lambda: pilot.pause(0.05))
    pane.focus()
    return pane


async def test_moving_the_cursor_to_another_pod_does_not_redraw_the_footer(monkeypatch):
    """Textual's refresh_bindings recomposes the footer, a layout of the whole screen, and
    it ran on every selection. Bind's state does not depend on which pod is selected in one namespace."""
    source = RecordedSource()
    app = ObservatoryApp(source, clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        pane = await _two_pending_pods(pilot, app, source)
        redraws = []
        monkeypatch.setattr(app.main, "refresh_bindings", lambda: redraws.append(app.main.selected))
        for key in ("down", "up", "down"):
            await pilot.press(key)
        await eventually(lambda: app.main.selected == "sched-lab/second", "the second pod selected", 30,
                         pause=lambda: pilot.pause(0.05))
        assert pane.cursor_key == "sched-lab/second" and redraws == []


async def test_a_newly_selected_pods_why_waits_for_the_frame_that_shows_its_cursor():
    """The Why pane's fit preview filters every node. Under churn a repaint of changes ran
    between the key press and the frame showing the cursor, and worked out the new pod's Why first. A repaint
    before that frame leaves the Why pane as it was; the frame's callback then shows the new pod."""
    from observatory.ui.widgets.why_pane import WhyPane

    source = RecordedSource()
    app = ObservatoryApp(source, clock=frozen_clock, refresh_interval=3600)
    async with app.run_test(size=(120, 40)) as pilot:
        await _two_pending_pods(pilot, app, source)
        why = app.query_one(WhyPane)
        await eventually(lambda: why.border_title == "Why: sched-lab/manual", "the first pod's Why", 30,
                         pause=lambda: pilot.pause(0.05))
        app.main.selected = "sched-lab/second"  # as the pending pane's PodHighlighted sets it
        app.main._dirty |= Area.PODS  # and a watch event lands before the next frame
        app.main.flush()
        assert why.border_title == "Why: sched-lab/manual"
        await eventually(lambda: why.border_title == "Why: sched-lab/second", "the new pod's Why after a frame", 30,
                         pause=lambda: pilot.pause(0.05))
