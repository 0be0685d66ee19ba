"""The scheduler in-process, as the TUI will run it: ``InProcessScheduler(source).run_scheduler`` against the
in-process lab (API only: the lab's own scheduler and kubelets are off), decisions read from the async iterator.

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
from observatory.scheduler.host import InProcessScheduler
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
    decisions = Decisions(InProcessScheduler(source).run_scheduler(SchedulerOptions(SCHEDULER, hostname="lab-host"),
                                                                   namespace=source.namespace))
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
    decisions = Decisions(InProcessScheduler(source).run_scheduler(SchedulerOptions(SCHEDULER),
                                                                   namespace=source.namespace))
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
    decisions = Decisions(InProcessScheduler(source).run_scheduler(SchedulerOptions(SCHEDULER),
                                                                   namespace=source.namespace))
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
    """Another binder wins between the decision and the POST: the 409 is reported, not retried, no Scheduled.
    As kube-scheduler, the failed binding cycle still goes through ``handleSchedulingFailure``: a FailedScheduling
    event ``binding rejected: running Bind plugin "DefaultBinder": …`` and PodScheduled=False/SchedulerError (the
    lab's default-scheduler, the same code, is held to the reference's captured text in tests/lab/test_cluster.py)."""
    real = binding.post_binding

    async def racing(api, namespace, name, node, **kw):
        lab.registry.bind(namespace, name, {"apiVersion": "v1", "kind": "Binding",
                                            "metadata": {"name": name, "namespace": namespace},
                                            "target": {"kind": "Node", "name": "pair-control-plane"}})
        return await real(api, namespace, name, node, **kw)

    monkeypatch.setattr(scheduler_loop, "post_binding", racing)
    source = ClusterSource(conn, namespace="sched-lab", lab=True)
    decisions = Decisions(InProcessScheduler(source).run_scheduler(SchedulerOptions(SCHEDULER),
                                                                   namespace=source.namespace))
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
    rejected = 'binding rejected: running Bind plugin "DefaultBinder": ' + conflict[0].message
    [failed] = await eventually(lambda: events(lab, "raced", "FailedScheduling"), "the FailedScheduling event", 10)
    assert failed["message"] == rejected and failed["reportingComponent"] == SCHEDULER
    assert not events(lab, "raced", "Scheduled")
    condition = await eventually(lambda: next((c for c in lab.store.get("pods", "sched-lab", "raced")["status"]
                                               .get("conditions", []) if c["type"] == "PodScheduled"), None))
    assert (condition["status"], condition["reason"], condition["message"]) == ("False", "SchedulerError", rejected)


async def test_invalid_options_are_refused_before_anything_runs(conn):
    with pytest.raises(ValueError, match="policy"):
        InProcessScheduler(ClusterSource(conn)).run_scheduler(SchedulerOptions(SCHEDULER, policy="nope"),
                                                              namespace=None)


async def delete_a_bound_pod(http, name: str) -> None:
    """An assigned pod deleted: NodeResourcesFit's QueueingHint queues the pods it refused (a node label change
    would not)."""
    body = pod_manifest(name, cpu="10m", nodeName="pair-worker")
    await create(http, body)
    async with http.delete(f"/api/v1/namespaces/sched-lab/pods/{name}?gracePeriodSeconds=0") as resp:
        assert resp.status == 200, await resp.text()


async def test_decisions_carry_their_scheduling_cycle_so_queue_order_survives_slow_bindings(lab, conn, http,
                                                                                            monkeypatch):
    """A refusal is known at once, a Binding when answered; the cycle numbers keep the
    order in which the pods left the queue."""
    real = binding.post_binding
    decisions: Decisions | None = None

    async def slow(api, namespace, name, node, **kw):  # answered only after the later pod was refused
        await eventually(lambda: decisions is not None and decisions.of("sched-lab/huge", "unschedulable"),
                         "the refusal of the pod queued after this one", 30)
        return await real(api, namespace, name, node, **kw)

    monkeypatch.setattr(scheduler_loop, "post_binding", slow)
    await create(http, pod_manifest("a"))
    await create(http, pod_manifest("huge", cpu="100"))  # queued after a: same priority, created later
    source = ClusterSource(conn, namespace="sched-lab", lab=True)
    decisions = Decisions(InProcessScheduler(source).run_scheduler(SchedulerOptions(SCHEDULER),
                                                                   namespace=source.namespace))
    try:
        await eventually(lambda: decisions.of("sched-lab/a", "bound"), "a's binding", 30)
    finally:
        await decisions.stop()
    assert [d.pod for d in decisions.items] == ["sched-lab/huge", "sched-lab/a"]  # arrival order
    bound, refused = decisions.of("sched-lab/a")[0], decisions.of("sched-lab/huge")[0]
    assert (bound.cycle, refused.cycle) == (1, 2)
    assert bound.started <= refused.started <= refused.time <= bound.time
    assert [d.pod for d in sorted(decisions.items, key=lambda d: d.queue_order)] == ["sched-lab/a", "sched-lab/huge"]


async def test_repeated_refusals_become_a_series_as_under_kube_scheduler(lab, conn, http):
    """Kept to upstream's ``getKey`` (the whole ``regarding``, resourceVersion included): the
    status patch after the first refusal bumps the pod's resourceVersion, so the second refusal is a new event, and
    the third (no status change between them) PATCHes that event's series to count 2."""
    source = ClusterSource(conn, namespace="sched-lab", lab=True)
    decisions = Decisions(InProcessScheduler(source).run_scheduler(SchedulerOptions(SCHEDULER),
                                                                   namespace=source.namespace))
    try:
        await create(http, pod_manifest("huge", cpu="100"))
        await eventually(lambda: decisions.of("sched-lab/huge", "unschedulable"), "the first refusal", 30)
        first = await eventually(lambda: events(lab, "huge", "FailedScheduling"), "the first event", 15)
        await eventually(lambda: lab.store.get("pods", "sched-lab", "huge")["status"].get("conditions"),
                         "the PodScheduled condition", 15)
        patched = lab.store.get("pods", "sched-lab", "huge")["metadata"]["resourceVersion"]
        assert patched != first[0]["involvedObject"]["resourceVersion"]  # the status patch bumped it
        await delete_a_bound_pod(http, "filler-2")
        await eventually(lambda: len(decisions.of("sched-lab/huge", "unschedulable")) >= 2, "the second refusal", 30)
        await eventually(lambda: len(events(lab, "huge", "FailedScheduling")) == 2, "a second event", 15)
        await delete_a_bound_pod(http, "filler-3")
        await eventually(lambda: len(decisions.of("sched-lab/huge", "unschedulable")) >= 3, "the third refusal", 30)
        await eventually(lambda: any((e.get("series") or {}).get("count") == 2
                                     for e in events(lab, "huge", "FailedScheduling")), "the series", 15)
    finally:
        await decisions.stop()
    written = events(lab, "huge", "FailedScheduling")
    assert len(written) == 2
    series = [e for e in written if e.get("series")]
    assert len(series) == 1 and series[0]["metadata"]["name"] != first[0]["metadata"]["name"]
    assert series[0]["involvedObject"]["resourceVersion"] == patched
    assert series[0]["series"]["lastObservedTime"] > series[0]["eventTime"]


async def test_a_deleted_pod_no_longer_counts_where_a_dry_run_placed_it(lab, conn, http):
    """Break-it finding: a dry run assumed pod a (3 of pair-worker's 4 CPUs) and kept counting it after a was deleted,
    so pod b (3 CPUs) was refused with Insufficient cpu."""
    source = ClusterSource(conn, namespace="sched-lab", lab=True)
    decisions = Decisions(InProcessScheduler(source).run_scheduler(SchedulerOptions(SCHEDULER, dry_run=True),
                                                                   namespace=source.namespace))
    try:
        await create(http, pod_manifest("a", cpu="3"))
        placed = await eventually(lambda: decisions.of("sched-lab/a", "dry-run"), "a placed (dry run)", 30)
        assert placed[0].node == "pair-worker"
        async with http.delete("/api/v1/namespaces/sched-lab/pods/a") as resp:
            assert resp.status == 200, await resp.text()
        await create(http, pod_manifest("b", cpu="3"))
        decided = await eventually(lambda: decisions.of("sched-lab/b"), "b decided", 30)
    finally:
        await decisions.stop()
    assert (decided[0].outcome, decided[0].node) == ("dry-run", "pair-worker"), decided[0].message
