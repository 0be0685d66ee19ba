"""The scheduler in-process, as the TUI will run it: ``ClusterSource.run_scheduler`` against the in-process lab
(API only: the lab's own scheduler and kubelets are off), decisions read from the async iterator.

Expected texts: the Scheduled message and the FitError of ../shared/k8s-api-reference.md §4.3 and §4.3a.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from observatory.kube import binding
from observatory.kube.source import ClusterSource
from observatory.lab.resources import CORE_V1
from observatory.model.decisions import SchedulingDecision
from observatory.scheduler import SchedulerOptions
from observatory.scheduler import loop as scheduler_loop
from tests.scheduler.conftest import CPU_TOO_MUCH, SCHEDULER, pod_manifest
from tests.waiting import eventually


class Decisions:
    """Iterates ``stream`` in a task, keeping every decision."""

    def __init__(self, stream: AsyncIterator[SchedulingDecision]) -> None:
        self.items: list[SchedulingDecision] = []
        self.stream = stream
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async for decision in self.stream:
            self.items.append(decision)

    def of(self, pod: str, outcome: str | None = None) -> list[SchedulingDecision]:
        return [d for d in self.items if d.pod == pod and (outcome is None or d.outcome == outcome)]

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


async def create(http, body: dict[str, Any]) -> None:
    async with http.post(f"/api/v1/namespaces/{body['metadata']['namespace']}/pods", json=body) as resp:
        assert resp.status == 201, await resp.text()


def events(lab, name: str, reason: str) -> list[dict[str, Any]]:
    return [e for e in lab.store.iter("events") if e["involvedObject"]["name"] == name and e["reason"] == reason]


def node_of(lab, name: str) -> str | None:
    return lab.store.get("pods", "sched-lab", name)["spec"].get("nodeName")


async def test_binds_writes_events_and_refuses_in_upstream_words(lab, conn, http):
    source = ClusterSource(conn, namespace=None, lab=True)
    decisions = Decisions(source.run_scheduler(SchedulerOptions(SCHEDULER, hostname="lab-host")))
    try:
        for name in ("a", "b"):
            await create(http, pod_manifest(name))
        await create(http, pod_manifest("huge", cpu="100"))
        await create(http, pod_manifest("other", scheduler="someone-else"))
        await create(http, pod_manifest("gated", schedulingGates=[{"name": "example.com/wait"}]))
        await eventually(lambda: decisions.of("sched-lab/a", "bound") and decisions.of("sched-lab/b", "bound")
                         and decisions.of("sched-lab/huge", "unschedulable"), "two bindings and one refusal", 30)
        await eventually(lambda: events(lab, "a", "Scheduled") and events(lab, "huge", "FailedScheduling"),
                         "the events", 30)
    finally:
        await decisions.stop()

    bound = decisions.of("sched-lab/a", "bound")[0]
    # pair-control-plane is tainted control-plane:NoSchedule, so only pair-worker is feasible
    assert bound.node == "pair-worker" == node_of(lab, "a")
    assert dict(bound.verdicts) == {"pair-control-plane": "node(s) had untolerated taint "
                                                          "{node-role.kubernetes.io/control-plane: }",
                                    "pair-worker": ""}
    assert set(bound.scores) == {"pair-worker"} and bound.exchange.status == 201
    assert bound.exchange.path == "/api/v1/namespaces/sched-lab/pods/a/binding"
    scheduled = events(lab, "a", "Scheduled")
    assert len(scheduled) == 1
    assert {k: scheduled[0][k] for k in ("type", "message", "action", "reportingComponent", "reportingInstance")} == {
        "type": "Normal", "message": "Successfully assigned sched-lab/a to pair-worker", "action": "Binding",
        "reportingComponent": SCHEDULER, "reportingInstance": f"{SCHEDULER}-lab-host"}
    assert scheduled[0]["source"] == {} and scheduled[0]["eventTime"]

    refused = decisions.of("sched-lab/huge", "unschedulable")[0]
    assert refused.message == CPU_TOO_MUCH and refused.node is None and refused.exchange is None
    failed = events(lab, "huge", "FailedScheduling")[0]
    assert (failed["type"], failed["message"], failed["action"]) == ("Warning", CPU_TOO_MUCH, "Scheduling")
    await eventually(lambda: any(c.get("type") == "PodScheduled"
                                 for c in lab.store.get("pods", "sched-lab", "huge")["status"].get("conditions") or []),
                     "the PodScheduled condition", 15)
    condition = next(c for c in lab.store.get("pods", "sched-lab", "huge")["status"]["conditions"]
                     if c["type"] == "PodScheduled")
    assert (condition["status"], condition["reason"], condition["message"]) == ("False", "Unschedulable", CPU_TOO_MUCH)

    assert not decisions.of("sched-lab/other") and not decisions.of("sched-lab/gated")  # not ours / gated
    assert node_of(lab, "other") is None and node_of(lab, "gated") is None


async def test_a_new_node_requeues_the_refused_pod(lab, conn, http):
    source = ClusterSource(conn, namespace="sched-lab", lab=True)
    decisions = Decisions(source.run_scheduler(SchedulerOptions(SCHEDULER)))
    try:
        await create(http, pod_manifest("big", cpu="6"))
        await eventually(lambda: decisions.of("sched-lab/big", "unschedulable"), "the refusal", 30)
        lab.registry.create(CORE_V1["nodes"], "", {
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": "roomy"},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                       "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}})
        await eventually(lambda: decisions.of("sched-lab/big", "bound"), "the binding after the new node", 30)
    finally:
        await decisions.stop()
    assert node_of(lab, "big") == "roomy"
    assert decisions.of("sched-lab/big", "bound")[0].attempt == 2


async def test_read_only_source_is_a_dry_run(lab, conn, http):
    source = ClusterSource(conn, namespace="sched-lab", lab=True, read_only=True)
    decisions = Decisions(source.run_scheduler(SchedulerOptions(SCHEDULER)))
    try:
        await create(http, pod_manifest("quiet"))
        await create(http, pod_manifest("too-big", cpu="100"))
        await eventually(lambda: decisions.of("sched-lab/quiet", "dry-run")
                         and decisions.of("sched-lab/too-big", "unschedulable"), "two dry-run decisions", 30)
    finally:
        await decisions.stop()
    assert decisions.of("sched-lab/quiet")[0].node == "pair-worker" and node_of(lab, "quiet") is None
    assert all(d.dry_run for d in decisions.items)
    assert not [e for e in lab.store.iter("events") if e.get("reportingComponent") == SCHEDULER]
    assert not lab.store.get("pods", "sched-lab", "too-big")["status"].get("conditions")


async def test_a_409_is_final(lab, conn, http, monkeypatch):
    """Another binder wins between the decision and the POST: the 409 is reported, not retried, no Scheduled."""
    real = binding.post_binding

    async def racing(api, namespace, name, node, **kw):
        lab.registry.bind(namespace, name, {"apiVersion": "v1", "kind": "Binding",
                                            "metadata": {"name": name, "namespace": namespace},
                                            "target": {"kind": "Node", "name": "pair-control-plane"}})
        return await real(api, namespace, name, node, **kw)

    monkeypatch.setattr(scheduler_loop, "post_binding", racing)
    source = ClusterSource(conn, namespace="sched-lab", lab=True)
    decisions = Decisions(source.run_scheduler(SchedulerOptions(SCHEDULER)))
    try:
        await create(http, pod_manifest("raced"))
        await eventually(lambda: decisions.of("sched-lab/raced", "conflict"), "the 409", 30)
        await eventually(lambda: node_of(lab, "raced"), "the winner's binding", 10)
    finally:
        await decisions.stop()
    conflict = decisions.of("sched-lab/raced")
    assert [d.outcome for d in conflict] == ["conflict"]
    assert conflict[0].exchange.status == 409
    assert conflict[0].message == ('Operation cannot be fulfilled on pods/binding "raced": pod raced is already '
                                   'assigned to node "pair-control-plane"')
    assert node_of(lab, "raced") == "pair-control-plane"
    assert not events(lab, "raced", "Scheduled") and not events(lab, "raced", "FailedScheduling")


async def test_invalid_options_are_refused_before_anything_runs(conn):
    with pytest.raises(ValueError, match="policy"):
        ClusterSource(conn).run_scheduler(SchedulerOptions(SCHEDULER, policy="nope"))
