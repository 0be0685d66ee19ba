"""Leader election through a coordination.k8s.io/v1 Lease against the in-process lab (client-go's semantics:
an abandoned Lease is taken after its duration as observed by the candidate; a leader that cannot renew stops)."""

from __future__ import annotations

import asyncio
import contextlib

from observatory.kube.source import ClusterSource
from observatory.lab.resources import ALL
from observatory.model.decisions import SchedulerStopped
from observatory.scheduler import SchedulerOptions
from observatory.scheduler.election import LeaderElector
from observatory.scheduler.host import InProcessScheduler
from tests.scheduler.conftest import SCHEDULER
from tests.waiting import eventually

FAST = {"lease_duration": 2.0, "renew_deadline": 1.5, "retry_period": 0.25}


def lease(lab, name: str) -> dict:
    return lab.store.get("leases", "kube-system", name)


async def test_an_abandoned_lease_is_taken_once_it_expires(lab, conn):
    a = LeaderElector(conn.api, "kube-system", "abandoned", "host-a_1", **FAST)
    b = LeaderElector(conn.api, "kube-system", "abandoned", "host-b_2", **FAST)
    await a.acquire()
    assert lease(lab, "abandoned")["spec"]["holderIdentity"] == "host-a_1"
    assert not await b.try_acquire_or_renew()  # held, and b has just observed it: valid for 2 s from now
    renewing = asyncio.create_task(a.renew())
    taking = asyncio.create_task(b.acquire())
    await eventually(lambda: lease(lab, "abandoned")["spec"]["renewTime"] != lease(lab, "abandoned")["spec"][
        "acquireTime"], "a's first renewal", 10)
    assert not taking.done()  # a keeps renewing, so b keeps standing by
    renewing.cancel()  # a dies without releasing
    with contextlib.suppress(asyncio.CancelledError):
        await renewing
    await asyncio.wait_for(taking, 30)
    spec = lease(lab, "abandoned")["spec"]
    assert (spec["holderIdentity"], spec["leaseTransitions"], spec["leaseDurationSeconds"]) == ("host-b_2", 1, 2)
    assert b.leading.is_set()


async def test_release_empties_the_holder(lab, conn):
    a = LeaderElector(conn.api, "kube-system", "released", "host-a_1", **FAST)
    await a.acquire()
    assert await a.release()
    spec = lease(lab, "released")["spec"]
    assert (spec["holderIdentity"], spec["leaseDurationSeconds"]) == ("", 1)
    b = LeaderElector(conn.api, "kube-system", "released", "host-b_2", **FAST)
    assert await b.try_acquire_or_renew()  # no holder: taken at once, without waiting out the lease


async def test_a_leader_that_loses_its_lease_stops(lab, conn):
    source = ClusterSource(conn, namespace="sched-lab", lab=True)
    options = SchedulerOptions(SCHEDULER, leader_elect=True, lease_name="stolen", **FAST)
    logs: list[str] = []
    stream = InProcessScheduler(source).run_scheduler(options, namespace=source.namespace, log=logs.append)
    outcome: list[BaseException] = []

    async def consume() -> None:
        try:
            async for _ in stream:
                pass
        except SchedulerStopped as exc:
            outcome.append(exc)

    task = asyncio.create_task(consume())
    try:
        await eventually(lambda: any(line.startswith("Leading:") for line in logs), "leadership", 30)
        current = lease(lab, "stolen")
        lab.registry.update(ALL["leases"], "kube-system", "stolen",
                            {**current, "spec": {**current["spec"], "holderIdentity": "intruder_0",
                                                 "leaseDurationSeconds": 60}})
        await eventually(lambda: outcome, "the scheduler to stop", 30)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert "Lost the Lease kube-system/stolen" in str(outcome[0])
    assert lease(lab, "stolen")["spec"]["holderIdentity"] == "intruder_0"  # nothing was released over it


async def test_a_lease_that_cannot_be_created_is_said_once_per_problem(lab, conn):
    """Break-it finding: a Lease in a namespace that does not exist failed silently forever. Each failed attempt is
    logged in client-go's words, a repeated one only once."""
    lines: list[str] = []
    elector = LeaderElector(conn.api, "no-such-namespace", "my-lease", "host-a_1", log=lines.append, **FAST)
    assert not await elector.try_acquire_or_renew()
    assert not await elector.try_acquire_or_renew()
    assert lines == ['error initially creating leader election record: namespaces "no-such-namespace" not found']
