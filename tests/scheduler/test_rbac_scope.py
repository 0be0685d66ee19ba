"""``observatory schedule -n NS`` as a user whose Role covers one namespace.

The scheduler watches the bound pods of every namespace, to count what each node runs. A user with rights in
team-a only (tests/lab/test_rbac.py POLICY, ``binder``: pods in team-a, Bindings in team-a, nodes) is refused that
watch with the API server's 403; the scheduler then says so and counts team-a's bound pods only, and still binds.
"""

from __future__ import annotations

import asyncio
import contextlib

from kubernetes_asyncio import client

from observatory.kube.connect import connect
from observatory.kube.source import ClusterSource
from observatory.scheduler import SchedulerOptions
from observatory.scheduler.host import InProcessScheduler
from tests.scheduler.conftest import SCHEDULER, pod_manifest
from tests.waiting import eventually

FORBIDDEN_EVERYWHERE = ('pods is forbidden: User "binder" cannot list resource "pods" in API group "" at the '
                        'cluster scope')


async def test_a_user_with_one_namespace_schedules_there_counting_its_bound_pods_only(rbac_lab):
    admin = await connect(str(rbac_lab.user_kubeconfigs["admin"]))
    binder = await connect(str(rbac_lab.user_kubeconfigs["binder"]))
    try:
        await client.CoreV1Api(admin.api).create_namespaced_pod(
            "team-a", pod_manifest("queued", namespace="team-a"))
        lines: list[str] = []
        source = ClusterSource(binder, namespace="team-a", lab=True,
                               reflector_options={"backoff_initial": 0.05, "backoff_max": 0.5})
        decisions = InProcessScheduler(source).run_scheduler(SchedulerOptions(SCHEDULER, hostname="lab-host"),
                                                             namespace=source.namespace, log=lines.append)
        seen = []

        async def consume() -> None:
            async for decision in decisions:
                seen.append(decision)

        task = asyncio.create_task(consume())
        try:
            await eventually(lambda: any(d.pod == "team-a/queued" and d.outcome == "bound" for d in seen),
                             "team-a/queued bound", 30)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        assert any(FORBIDDEN_EVERYWHERE in line and "namespace team-a only" in line for line in lines), lines
        assert any(line.startswith("Synced:") for line in lines), lines
        assert rbac_lab.store.get("pods", "team-a", "queued")["spec"]["nodeName"] == "pair-worker"
    finally:
        await binder.close()
        await admin.close()
