"""A leader acts only while its Lease was renewed within the renew deadline (client-go's renewDeadline), checked
before every act, not only when its renew loop times out: with a fake clock and renewals held back (a paused
process, an API server that hangs), nothing is bound, and a Binding already on its way is not sent, until a renewal
succeeds again. The real pause (SIGSTOP) is in test_election_pause.py."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from observatory.lab.resources import CORE_V1
from observatory.scheduler import SchedulerOptions
from observatory.scheduler.election import LeaderElector
from observatory.scheduler.loop import Scheduler
from tests.scheduler.conftest import SCHEDULER, pod_manifest
from tests.waiting import eventually

FAST = {"lease_duration": 2.0, "renew_deadline": 1.5, "retry_period": 0.25}
SLOW = {"lease_duration": 40.0, "renew_deadline": 30.0, "retry_period": 0.2}
"""Real renew timeouts far away (the test controls the deadline through the fake clock), quick retries."""


class Clock:
    """A clock the test moves by hand (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_holds_until_the_renew_deadline_then_again_after_a_renewal(lab, conn):
    clock = Clock()
    elector = LeaderElector(conn.api, "kube-system", "deadline", "host-a_1", clock=clock, **FAST)
    assert not elector.holds() and "is not held" in elector.lapse()
    await elector.acquire()
    assert elector.holds()
    clock.now += 1.4
    assert elector.holds()
    clock.now += 0.2  # 1.6 s since the acquire started: past the 1.5 s renew deadline
    assert not elector.holds()
    assert elector.lapse() == ("the Lease kube-system/deadline was last renewed 1.6 s ago, longer than its renew "
                               "deadline of 1.5 s")
    elector.renewed.clear()
    assert await elector.try_acquire_or_renew()
    assert elector.holds() and elector.renewed.is_set()


class HeldRenewals:
    """Wraps an elector's ``try_acquire_or_renew`` so renewals wait while ``open`` is cleared."""

    def __init__(self, elector: LeaderElector) -> None:
        self.open = asyncio.Event()
        self.open.set()
        self._inner = elector.try_acquire_or_renew
        elector.try_acquire_or_renew = self  # type: ignore[method-assign]

    async def __call__(self) -> bool:
        await self.open.wait()
        return await self._inner()


def node_of(lab, name: str) -> str:
    return (lab.store.get("pods", "sched-lab", name).get("spec") or {}).get("nodeName") or ""


async def test_a_leader_past_its_renew_deadline_binds_nothing_until_renewed(lab, conn):
    options = SchedulerOptions(SCHEDULER, leader_elect=True, lease_name="paused", bind_delay=0.3, **SLOW)
    logs: list[str] = []
    scheduler = Scheduler(conn.api, options, namespace="sched-lab", log=logs.append)
    clock = Clock()
    scheduler.elector = elector = LeaderElector(conn.api, "kube-system", "paused", scheduler.identity, clock=clock,
                                                log=logs.append, **SLOW)
    held = HeldRenewals(elector)
    decisions: list[Any] = []

    async def consume() -> None:
        async for decision in scheduler.decisions():
            decisions.append(decision)

    task = asyncio.create_task(consume())
    try:
        await eventually(lambda: any(line.startswith("Leading:") for line in logs), "leadership", 30)

        # A Binding on its way (bind_delay) when the deadline passes is not sent.
        lab.registry.create(CORE_V1["pods"], "sched-lab", pod_manifest("in-flight"))
        await eventually(lambda: ("sched-lab", "in-flight") in scheduler.cache.assumed, "the decision", 30)
        held.open.clear()
        clock.now += 31
        skipped = await eventually(lambda: [d for d in decisions if d.pod == "sched-lab/in-flight"], "its outcome",
                                   30)
        assert skipped[0].outcome == "skipped" and skipped[0].exchange is None
        assert skipped[0].message.startswith("not bound to pair-worker: the Lease kube-system/paused was last renewed")
        assert skipped[0].message.endswith("(only the Lease holder schedules)")

        # A pod that arrives while the Lease is not renewed is not even tried.
        lab.registry.create(CORE_V1["pods"], "sched-lab", pod_manifest("while-lapsed"))
        await eventually(lambda: ("sched-lab", "while-lapsed") in scheduler.unbound, "the pod watched", 30)
        await eventually(lambda: any(line.startswith("Not scheduling: the Lease kube-system/paused") for line in logs),
                         "the scheduler standing still", 30)
        assert node_of(lab, "in-flight") == node_of(lab, "while-lapsed") == ""
        assert [d.outcome for d in decisions] == ["skipped"]

        held.open.set()  # a renewal succeeds: the holder schedules again
        await eventually(lambda: node_of(lab, "in-flight") and node_of(lab, "while-lapsed"), "both bound", 30)
        assert {d.pod for d in decisions if d.outcome == "bound"} == {"sched-lab/in-flight", "sched-lab/while-lapsed"}
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
