"""An update of a pod the scheduler has assumed (decided, Binding on its way) never schedules it a second time.

kube-scheduler's ``updatePodInSchedulingQueue`` (``pkg/scheduler/eventhandlers.go``) returns for an assumed pod, so
``kubectl run race --image=nginx; kubectl label pod race touched=1``, or a controller's merge patch, inside the
binding cycle gives one ``Scheduled`` event and no ``FailedScheduling`` (no second Binding and its 409). The same
test runs against the lab's default-scheduler and against ``observatory schedule``'s scheduler: one code path.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest

from observatory.embedded import EmbeddedLab
from observatory.kube.connect import connect
from observatory.scheduler.loop import Scheduler
from observatory.scheduler.options import SchedulerOptions
from observatory.settings import LabSettings
from tests.conftest import API_ONLY
from tests.waiting import eventually

BIND_DELAY = 1.0
"""Seconds between the decision and its Binding: the window the updates land in."""


@dataclass
class Target:
    lab: EmbeddedLab
    http: aiohttp.ClientSession
    scheduler_name: str
    current: Any  # () -> the running Scheduler

    @property
    def scheduler(self) -> Scheduler:
        scheduler = self.current()
        assert scheduler is not None, "no scheduler is running"
        return scheduler


@pytest.fixture(params=["lab default-scheduler", "observatory schedule"])
async def target(request, tmp_path) -> AsyncIterator[Target]:
    if request.param == "lab default-scheduler":
        settings = LabSettings(bind_delay=BIND_DELAY, kubelet=False, podgc=False, bookmark_interval=0.2)
    else:
        settings = LabSettings(bookmark_interval=0.2, **API_ONLY)
    lab = EmbeddedLab(settings, scenario="manual-binding", kubeconfig_path=tmp_path / "kubeconfig")
    await lab.start()
    task: asyncio.Task[None] | None = None
    connection = None
    try:
        if request.param == "lab default-scheduler":
            name, current = "default-scheduler", (lambda: lab.scheduler)
        else:
            connection = await connect(str(lab.kubeconfig_path))
            scheduler = Scheduler(connection.api, SchedulerOptions("my-scheduler", bind_delay=BIND_DELAY))
            name, current = "my-scheduler", (lambda: scheduler)

            async def drain() -> None:
                async with contextlib.aclosing(scheduler.decisions()) as decisions:
                    async for _decision in decisions:
                        pass

            task = asyncio.create_task(drain())
        async with aiohttp.ClientSession(base_url=lab.url) as http:
            yield Target(lab, http, name, current)
    finally:
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if connection is not None:
            await connection.close()
        await lab.stop()


def events(lab: EmbeddedLab, reason: str) -> list[dict[str, Any]]:
    return [e for e in lab.store.iter("events", "default") if e["involvedObject"]["name"] == "race"
            and e["reason"] == reason]


async def patch(http: aiohttp.ClientSession, body: dict[str, Any]) -> None:
    async with http.patch("/api/v1/namespaces/default/pods/race", data=json.dumps(body),
                          headers={"Content-Type": "application/merge-patch+json"}) as resp:
        assert resp.status == 200, await resp.text()


async def kubectl_label(kubectl: str, lab: EmbeddedLab) -> None:
    proc = await asyncio.create_subprocess_exec(
        kubectl, "label", "pod", "race", "touched=1", env={**os.environ, "KUBECONFIG": str(lab.kubeconfig_path)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert out.decode().strip() == "pod/race labeled"


async def test_updates_inside_the_binding_cycle_give_one_scheduled_event_and_no_failed_scheduling(target, kubectl):
    lab, http = target.lab, target.http
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "race", "labels": {"run": "race"}},
           "spec": {"schedulerName": target.scheduler_name, "containers": [{"name": "race", "image": "nginx"}]}}
    async with http.post("/api/v1/namespaces/default/pods", json=pod) as resp:
        assert resp.status == 201, await resp.text()
    await eventually(lambda: target.current() is not None and ("default", "race") in target.scheduler.cache.assumed,
                     "the scheduler's decision", 20)

    await kubectl_label(kubectl, lab)  # what `kubectl label pod race touched=1` sends: a strategic merge patch
    # a controller's merge patch, changing the spec too (activeDeadlineSeconds may be set on a running pod)
    await patch(http, {"metadata": {"annotations": {"example.com/touched": "1"}},
                       "spec": {"activeDeadlineSeconds": 600}})
    assert ("default", "race") in target.scheduler.cache.assumed, "the updates landed after the Binding"

    await eventually(lambda: events(lab, "Scheduled"), "the Scheduled event", 20)
    scheduler = target.scheduler
    await eventually(lambda: not scheduler._binds and not scheduler._writes and len(scheduler.queue) == 0,
                     "the scheduler to be idle", 20)
    assert [e["message"] for e in events(lab, "Scheduled")] == [
        f"Successfully assigned default/race to {lab.store.get('pods', 'default', 'race')['spec']['nodeName']}"]
    assert events(lab, "FailedScheduling") == []
    stored = lab.store.get("pods", "default", "race")
    assert stored["metadata"]["labels"]["touched"] == "1" and stored["spec"]["activeDeadlineSeconds"] == 600
    assert all(c["status"] == "True" for c in stored["status"].get("conditions", []) if c["type"] == "PodScheduled")
