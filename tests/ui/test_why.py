"""The Why pane over the recorded source: kube-scheduler's Lease for a pod no default-scheduler has looked at (read
in a worker, at most every ``lease_interval`` seconds, only while such a pod is selected), and ``m`` with nothing
to show."""

from __future__ import annotations

import copy

from textual.widgets import TextArea

from observatory.model.deltas import Upserted
from observatory.ui.app import ObservatoryApp
from observatory.ui.screens.help import HelpScreen
from observatory.ui.screens.raw_message import RawMessageScreen
from observatory.ui.widgets.why_pane import WhyPane
from tests.ui.fakes import CREATED, SCHEDULER_LEASE, RecordedSource, frozen_clock
from tests.ui.helpers import select_manual, until_painted

WAITING = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "waiting", "namespace": "default", "uid": "00000000-0000-4000-8000-0000000000aa",
                        "resourceVersion": "200", "creationTimestamp": CREATED},
           "spec": {"schedulerName": "default-scheduler",
                    "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10"}]},
           "status": {"phase": "Pending", "qosClass": "BestEffort"}}
"""A pod for the default scheduler that no scheduler has looked at: no condition, no event."""


def why_text(app: ObservatoryApp) -> str:
    return app.query_one("#why-text").content.plain


async def select(pilot, key: str) -> None:
    app = pilot.app
    await until_painted(pilot, lambda: key in app.query_one("#pending").rows)
    app.query_one("#pending").select(key)
    await until_painted(pilot, lambda: app.main.selected == key)


async def test_the_lease_holder_is_shown_for_a_default_scheduler_pod_nobody_looked_at():
    source = RecordedSource()
    app = ObservatoryApp(source, clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)  # schedulerName nobody-at-all: the Lease says nothing about it
        assert source.lease_reads == []
        source.queues["pods"].put_nowait(Upserted("pods", copy.deepcopy(WAITING), "ADDED"))
        await select(pilot, "default/waiting")
        await until_painted(pilot, lambda: SCHEDULER_LEASE.holder in why_text(app))
        text = why_text(app)
        assert text.startswith("No scheduler has looked")
        assert "kube-system/kube-scheduler" in text
        # one read, however many repaints: the next is due after lease_interval (10 s by default)
        await pilot.pause(0.5)
        assert source.lease_reads == [("kube-system", "kube-scheduler")]


async def test_the_lease_is_read_again_every_lease_interval_only_while_needed():
    source = RecordedSource()
    app = ObservatoryApp(source, clock=frozen_clock, refresh_interval=0.05, lease_interval=0.1)
    async with app.run_test(size=(120, 40)) as pilot:
        source.queues["pods"].put_nowait(Upserted("pods", copy.deepcopy(WAITING), "ADDED"))
        await select(pilot, "default/waiting")
        await until_painted(pilot, lambda: len(source.lease_reads) >= 3)
        await select(pilot, "sched-lab/manual")
        await pilot.pause(0.2)  # a read already under way may still land
        reads = len(source.lease_reads)
        await pilot.pause(0.5)
        assert len(source.lease_reads) == reads


async def test_an_unreadable_lease_is_said_so():
    source = RecordedSource(lease=None)  # the fake answers "not found"
    app = ObservatoryApp(source, clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        source.queues["pods"].put_nowait(Upserted("pods", copy.deepcopy(WAITING), "ADDED"))
        await select(pilot, "default/waiting")
        await until_painted(pilot, lambda: "not found" in why_text(app))
        assert "kube-system/kube-scheduler" in why_text(app)


async def test_why_pane_follows_the_selection_and_says_when_nothing_is_selected():
    app = ObservatoryApp(RecordedSource(pods=False), clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_painted(pilot, lambda: app.main.state.nodes)
        assert why_text(app) == "Select a pod in the pending pods pane to see why it is pending."
        assert app.query_one(WhyPane).border_title == "Why (select a pod)"


async def test_m_shows_that_there_is_no_message_and_escape_closes():
    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        await pilot.press("m")
        await until_painted(pilot, lambda: isinstance(app.screen, RawMessageScreen))
        assert app.screen.query_one(TextArea).text == "No scheduler message for this pod."
        await pilot.press("escape")
        await until_painted(pilot, lambda: not isinstance(app.screen, RawMessageScreen))


async def test_m_with_nothing_selected_says_so():
    app = ObservatoryApp(RecordedSource(pods=False), clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_painted(pilot, lambda: app.main.state.nodes)
        await pilot.press("m")
        await until_painted(pilot, lambda: any("Select a pod" in n.message for n in app._notifications))
        assert not isinstance(app.screen, RawMessageScreen)


async def test_m_is_in_the_help_and_the_footer():
    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        footer = {binding.id for _, binding, enabled, _ in app.screen.active_bindings.values() if binding.show}
        assert "raw-message" in footer
        await pilot.press("question_mark")
        await until_painted(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert any(b.id == "raw-message" and b.key == "m" for b in app.screen.bindings)
