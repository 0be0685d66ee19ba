"""The scheduler program: watch, decide, bind, record; one :class:`SchedulingDecision` per attempt.

This is observatory's one scheduler: ``observatory schedule`` runs it, the screen runs it in-process, and the lab's
default-scheduler is this class too, connected to the lab's API server over HTTP as kube-scheduler connects to
kube-apiserver (:mod:`observatory.embedded`).

What :meth:`Scheduler.decisions` runs, over one kubernetes-asyncio ApiClient (everything through
:mod:`observatory.kube`):

1. Seven reflectors (list then watch, :class:`~observatory.kube.reflector.Reflector`): the pods waiting for this
   scheduler, ``fieldSelector=spec.schedulerName=NAME,spec.nodeName=`` in the scheduled namespace (or all; with
   several profiles, ``spec.nodeName=`` and the names checked here, as kube-scheduler's ``responsibleForPod``); the
   bound pods of every namespace, ``fieldSelector=spec.nodeName!=``, so what each node already runs is counted; the
   nodes; and the Namespaces, whose labels pod affinity terms' namespace selectors read (when listing them is
   forbidden, scheduling goes on without their labels); and the PersistentVolumeClaims, PersistentVolumes and
   StorageClasses the volume plugins read (when one cannot be listed, they do not run). Scheduling starts once all
   have listed (``WaitForCacheSync``) and, with leader election, once this instance leads.
2. Pods go through :class:`~.queue.SchedulingQueue` (priority, then age; backoff 1 s doubling to 10 s). Gated pods
   (``spec.schedulingGates``) are held out, as the SchedulingGates PreEnqueue plugin does; a pod being deleted
   when its turn comes gets upstream's ``skip schedule deleting pod: NS/NAME`` FailedScheduling event.
3. A scheduling cycle runs the one framework (:func:`observatory.scheduling.schedule_one` over a
   :class:`~observatory.scheduling.Snapshot` kept up to date from the watches, filtering from a round-robin start
   until ``percentageOfNodesToScore`` worth of nodes are feasible, :mod:`observatory.scheduling.sampling`) and the
   ``--policy`` (:mod:`.policies`). The Services, controllers and workloads PodTopologySpread's system default
   constraints read are not watched (the lab does not serve those kinds yet): ``cache.snapshot.spread_selectors``
   stays empty, so pods without constraints get no default spreading. The chosen pod is *assumed* on its node at
   once, so the next cycle counts it; an update of an assumed pod (a label, a controller's patch) does not queue it
   again (``updatePodInSchedulingQueue`` in ``eventhandlers.go`` returns for an assumed pod), so it is never
   decided twice. Cycles are numbered from 1 in the order pods leave the queue; each decision carries its cycle's
   number and start time (``SchedulingDecision.cycle``/``started``), since a refusal is known at once and a
   Binding only when answered.
4. The binding cycle runs concurrently (up to ``bind_concurrency`` Bindings in flight), ``bind_delay`` seconds
   after the decision: ``POST /api/v1/namespaces/{ns}/pods/{name}/binding``
   (:func:`observatory.kube.binding.post_binding`). 2xx: a Normal ``Scheduled`` event ``Successfully assigned
   NS/NAME to NODE`` (action ``Binding``). Any failure: the assumption is dropped, and ``handleBindingCycleError``
   → ``handleSchedulingFailure`` write a FailedScheduling event ``binding rejected: running Bind plugin
   "DefaultBinder": …`` and ``PodScheduled=False``/``SchedulerError`` with the same text. A 409 (another binder won
   the race; the pod is assigned) is final: upstream does not queue an assigned pod again. A 404 (the pod is gone)
   writes nothing. Any other failure is retried after the backoff.
   Before the POST, when VolumeBinding's Reserve planned PV or PVC updates, its PreBind writes them and waits for
   the claims to be bound (:mod:`.volumebinder`); a PreBind failure is written and retried like a failed Binding.
5. No feasible node: a Warning ``FailedScheduling`` event with the FitError text (truncated to 1,024 characters as
   ``truncateMessage`` does; action ``Scheduling``), and ``PodScheduled=False``/``Unschedulable`` with the full
   text through ``PATCH pods/{name}/status`` (:func:`~.objects.condition_patch`). The pod waits for a change of the
   nodes or of the bound pods, and for its backoff.
6. Dry run: the same decisions, nothing written (no Binding, event, status or Lease); a decided pod is assumed and
   not tried again unless its spec changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import socket
import time
import uuid
from collections.abc import AsyncGenerator, Callable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from observatory import scheduling
from observatory.kube.binding import post_binding
from observatory.kube.fetch import ApiError, Unreachable, send_json
from observatory.kube.reflector import Reflector
from observatory.model.decisions import SchedulerStopped, SchedulingDecision
from observatory.model.deltas import Deleted, Relisted, Upserted, WatchState
from observatory.model.exchange import BindingExchange
from observatory.scheduler.cache import ClusterCache, pod_key
from observatory.scheduler.cluster_events import (
    ChangeEvent,
    assumed_pod_deleted,
    bound_pod_events,
    node_events,
    unbound_pod_deleted,
)
from observatory.scheduler.election import LeaderElector
from observatory.scheduler.events import EventRecorder
from observatory.scheduler.options import SchedulerOptions, field_selector
from observatory.scheduler.policies import choose
from observatory.scheduler.preempting import (
    Nominator,
    act_preemption,
    counting_nominated,
    status_patch,
    terminating_message,
)
from observatory.scheduler.volumebinder import bind_pod_volumes
from observatory.scheduling.hints import rejecting_plugins
from observatory.scheduling.messages import truncate_message
from observatory.scheduling.preemption import NOT_ELIGIBLE_TERMINATING_POD, Preemption, preempt
from observatory.scheduling.queue import SchedulingQueue
from observatory.scheduling.volumebinding import VolumePlan, unreserve
from observatory.scheduling.volumeplugins import reserve_volumes

__all__ = ["Scheduler", "SchedulerOptions"]

Key = tuple[str, str]
STRATEGIC = "application/strategic-merge-patch+json"
UNBOUND, BOUND, NODES, NAMESPACES = "unbound pods", "bound pods", "nodes", "namespaces"
VOLUME_KINDS = ("persistentvolumeclaims", "persistentvolumes", "storageclasses")
"""The volume plugins' watches (each stream is named for its resource)."""
STREAMS = 4 + len(VOLUME_KINDS)


class Scheduler:
    """One scheduler instance for ``options.scheduler_name`` over ``api`` (a kubernetes-asyncio ApiClient),
    scheduling the pods of ``namespace`` (None: every namespace). ``log`` gets one sentence per happening that is
    not a decision (synced, leading, a watch in trouble, a write that failed). ``reflector_options`` are passed to
    each :class:`~observatory.kube.reflector.Reflector`. ``lease_api`` is the client the leader election uses
    (default ``api``), as kube-scheduler's Lease has a client of its own (``resourcelock.NewFromKubeconfig``)."""

    def __init__(self, api: Any, options: SchedulerOptions, *, namespace: str | None = None,
                 log: Callable[[str], None] | None = None,
                 reflector_options: Mapping[str, Any] | None = None, lease_api: Any = None) -> None:
        options.validate()
        self.api = api
        self.options = options
        self.name = options.scheduler_name
        self.namespace = namespace
        self.log = log or (lambda _line: None)
        self.reflector_options = dict(reflector_options or {})
        self.hostname = options.hostname or socket.gethostname()
        self.identity = f"{self.hostname}_{uuid.uuid4()}"
        self.instance = f"{self.name}-{self.hostname}"
        self.names = options.names
        self.queue = SchedulingQueue()
        self.cache = ClusterCache()
        self.unbound: dict[Key, dict[str, Any]] = {}
        self.recorders = {name: EventRecorder(api, name, f"{name}-{self.hostname}", log=self.log)
                          for name in self.names}
        """One events/v1 recorder per profile: its events' reportingController and reportingInstance."""
        self.recorder = self.recorders[self.name]
        self.elector: LeaderElector | None = None
        if options.leader_elect:
            self.elector = LeaderElector(lease_api or api, options.lease_namespace, options.lease_name or self.name,
                                         self.identity, lease_duration=options.lease_duration,
                                         renew_deadline=options.renew_deadline, retry_period=options.retry_period,
                                         log=self.log)
        self.rng = random.Random(options.seed)
        self.sampler = scheduling.NodeSampler(options.percentage_of_nodes_to_score,
                                              dict(options.profile_percentages))
        """``percentageOfNodesToScore`` and ``nextStartNodeIndex``, shared by every profile as upstream's."""
        self._out: asyncio.Queue[SchedulingDecision | BaseException] = asyncio.Queue()
        self._wake = asyncio.Event()
        self._synced: set[str] = set()
        self._ready = asyncio.Event()
        self._slots = asyncio.Semaphore(options.bind_concurrency)
        self._binds: set[asyncio.Task[None]] = set()
        self._writes: set[asyncio.Task[None]] = set()
        self._states: dict[str, str] = {}
        self._lease_task: asyncio.Task[None] | None = None
        self._cycles = 0
        """Scheduling cycles started so far: the next decision's ``cycle`` is one more."""
        self.nominator = Nominator()
        self._preempting: set[Key] = set()
        """Preemptors whose victims are still being preempted: DefaultPreemption's PreEnqueue holds them back."""

    # -- running -------------------------------------------------------------------------------------------------

    async def decisions(self) -> AsyncGenerator[SchedulingDecision, None]:
        """Run the scheduler and yield each decision as it is made, until the consumer stops iterating (or the task
        is cancelled): then the watches stop, Bindings in flight get up to 2 s, and a held Lease is released.
        Raises :class:`~observatory.model.decisions.SchedulerStopped` when the Lease is lost."""
        selector = field_selector(self.name) if len(self.names) == 1 else "spec.nodeName="
        streams = [
            (UNBOUND, Reflector(self.api, "pods", self.namespace, field_selector=selector, **self.reflector_options)),
            (BOUND, Reflector(self.api, "pods", None, field_selector="spec.nodeName!=", **self.reflector_options)),
            (NODES, Reflector(self.api, "nodes", None, **self.reflector_options)),
            (NAMESPACES, Reflector(self.api, "namespaces", None, **self.reflector_options)),
            *((kind, Reflector(self.api, kind, None, **self.reflector_options)) for kind in VOLUME_KINDS),
        ]
        tasks = [asyncio.create_task(self._guard(self._consume(name, reflector))) for name, reflector in streams]
        tasks.append(asyncio.create_task(self._guard(self._schedule_loop())))
        if not self.options.dry_run:
            tasks.extend(asyncio.create_task(self._guard(recorder.maintain())) for recorder in self.recorders.values())
        try:
            while True:
                item = await self._out.get()
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            if self._lease_task is not None:
                tasks.append(self._lease_task)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            pending = self._binds | self._writes
            if pending:
                await asyncio.wait(pending, timeout=2.0)
            for task in self._binds | self._writes:
                task.cancel()
            await asyncio.gather(*self._binds, *self._writes, return_exceptions=True)
            if self.elector is not None and self.elector.is_leader:
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(5.0):
                        if await self.elector.release():
                            self.log(f"Released Lease {self.elector.key}.")

    async def _guard(self, coro: Any) -> None:
        """Run ``coro``; an unexpected exception ends :meth:`decisions` with it instead of vanishing."""
        try:
            await coro
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._out.put_nowait(exc)

    def _holds(self) -> bool:
        """Whether this instance may act now: no leader election, or the Lease renewed within its renew deadline
        (:meth:`~.election.LeaderElector.holds`, checked before every Binding and write)."""
        return self.elector is None or self.elector.holds()

    def _spawn_write(self, coro: Any, *, guarded: bool = True) -> None:
        """Run the write ``coro`` in the background; ``guarded``: only while :meth:`_holds` when it starts (else
        it is closed unstarted)."""
        task = asyncio.get_running_loop().create_task(self._when_holding(coro) if guarded else coro)
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _when_holding(self, coro: Any) -> None:
        if not self._holds():
            coro.close()
            return
        await coro

    # -- watches -------------------------------------------------------------------------------------------------

    async def _consume(self, stream: str, reflector: Reflector) -> None:
        while True:
            narrower = await self._consume_until_forbidden(stream, reflector)
            if narrower is None:
                return
            reflector = narrower

    async def _consume_until_forbidden(self, stream: str, reflector: Reflector) -> Reflector | None:
        """Apply ``reflector``'s deltas. When the bound pods of every namespace are forbidden and only one
        namespace is scheduled, return a reflector of that namespace's bound pods instead (a user with a Role in
        one namespace can still schedule there; pods of other namespaces are then not counted on their nodes)."""
        async with contextlib.aclosing(reflector.run()) as deltas:
            async for delta in deltas:
                if isinstance(delta, WatchState):
                    if (delta.state == "forbidden" and stream == BOUND and self.namespace is not None
                            and reflector.namespace is None):
                        self.log(f"Cannot watch the bound pods of every namespace ({delta.detail}); counting the "
                                 f"bound pods of namespace {self.namespace} only: pods of other namespaces on the "
                                 f"same nodes are not seen.")
                        return Reflector(self.api, "pods", self.namespace, field_selector="spec.nodeName!=",
                                         **self.reflector_options)
                    if delta.state == "forbidden" and stream == NAMESPACES and stream not in self._synced:
                        self.log(f"Cannot list the Namespaces ({delta.detail}): pod affinity terms with a "
                                 "namespaceSelector see no namespace labels.")
                        self._stream_synced(stream)
                        return None
                    if delta.state in ("forbidden", "stale") and stream in VOLUME_KINDS and stream not in self._synced:
                        # A 403, or a server that does not serve the kind: schedule without the volume plugins
                        # (the watch goes on; a later list brings them back).
                        self.log(f"Cannot list the {stream} ({delta.detail}): the volume plugins (VolumeBinding, "
                                 "VolumeZone, VolumeRestrictions) do not run, so pods with claims are placed as if "
                                 "they had none.")
                        self.cache.volumes_forbidden(stream)
                        self._stream_synced(stream)
                        continue
                    self._watch_state(stream, delta)
                    continue
                if stream == UNBOUND:
                    self._apply_unbound(delta)
                elif stream == NAMESPACES:
                    if self.cache.apply_namespace(delta):
                        self._cluster_changed()
                elif stream in VOLUME_KINDS:
                    if self.cache.apply_volume(stream, delta):
                        self._cluster_changed()
                elif stream == BOUND:
                    events = bound_pod_events(delta, self.cache.bound)
                    self.cache.apply_bound(delta)
                    self._cluster_changed(events)
                else:
                    events = node_events(delta, self.cache.nodes)
                    self.cache.apply_node(delta)
                    self._cluster_changed(events)
                if isinstance(delta, Relisted) and stream not in self._synced:
                    self._stream_synced(stream)
        return None

    def _stream_synced(self, stream: str) -> None:
        """``WaitForCacheSync``: scheduling starts once every stream has listed."""
        self._synced.add(stream)
        if len(self._synced) == STREAMS:
            self.log(f"Synced: {len(self.cache.nodes)} nodes, {len(self.cache.bound)} bound pods, "
                     f"{len(self.unbound)} waiting for {', '.join(self.names)}.")
            self._ready.set()
            self._wake.set()

    def _watch_state(self, stream: str, state: WatchState) -> None:
        previous = self._states.get(stream)
        self._states[stream] = state.state
        if state.state in ("stale", "forbidden", "resyncing"):
            self.log(f"The watch of {stream} is {state.state}: {state.detail}".rstrip(": "))
        elif state.state == "live" and previous in ("stale", "forbidden", "resyncing"):
            self.log(f"The watch of {stream} is live again.")

    def profile(self, pod: Mapping[str, Any]) -> str:
        """The profile that answers for ``pod``: its schedulerName when this instance serves it, else the first."""
        name = (pod.get("spec") or {}).get("schedulerName") or scheduling.DEFAULT_SCHEDULER_NAME
        return name if name in self.names else self.name

    def _not_responsible(self, pod: Mapping[str, Any]) -> str | None:
        return scheduling.not_responsible_reason(pod, self.profile(pod))

    def _offer(self, key: Key, pod: dict[str, Any]) -> None:
        """Queue a waiting pod, or hold it out (gated, not ours, bound). A pod assumed on a node, whose Binding is on
        its way, stays out whatever changed in it: ``updatePodInSchedulingQueue`` returns for an assumed pod, so a
        label or a controller's patch inside the binding cycle never decides it twice. A dry run never binds, so
        there a changed spec is decided again."""
        if key in self.cache.assumed and not self.options.dry_run:
            return
        reason = self._not_responsible(pod)
        if reason is None or reason == "being deleted":
            if self.queue.add(key, pod, time.monotonic()):
                self._wake.set()
        else:
            self.queue.remove(key)

    def _apply_unbound(self, delta: Any) -> None:
        if isinstance(delta, Relisted):
            fresh = {pod_key(obj): dict(obj) for obj in delta.objs}
            for key in set(self.unbound) - set(fresh):
                self.queue.remove(key)
            self.unbound = fresh
            for key, pod in fresh.items():
                self._offer(key, pod)
        elif isinstance(delta, Upserted):
            key = pod_key(delta.obj)
            self.unbound[key] = dict(delta.obj)
            self._offer(key, self.unbound[key])
        elif isinstance(delta, Deleted):
            key = pod_key(delta.obj)
            self.unbound.pop(key, None)
            self.nominator.forget(key)
            self.queue.remove(key)
            # The unbound watch also says DELETED when a pod leaves spec.nodeName= by being bound: then its last
            # state has a nodeName and the bound watch takes over. Without one the pod is gone, so a decision
            # assumed for it (a dry run, or a Binding that never landed) no longer counts on its node.
            if (delta.obj.get("spec") or {}).get("nodeName"):
                return
            assumed = self.cache.assumed.get(key)
            if assumed is not None:
                self.cache.forget(key)
                # Only a dry run's assumption is freed room here. A Binding reports its own failure (then the
                # binding cycle hands the queue AssignedPodDelete); a DELETED for a pod the Binding took out of
                # spec.nodeName= carries its last unbound state, and kube-scheduler's OnDelete for it requeues
                # nothing.
                if self.options.dry_run:
                    self._cluster_changed(assumed_pod_deleted(delta.obj, assumed.node_name))
            else:
                self._cluster_changed(unbound_pod_deleted(delta.obj))

    def _cluster_changed(self, events: list[ChangeEvent] | None = None) -> None:
        """Hand cluster events to the queue (its QueueingHints decide which parked pods move); None: the wildcard
        (a relist, or a Namespace change)."""
        now = time.monotonic()
        moved = False
        for event, old, new in [(None, None, None)] if events is None else events:
            moved = self.queue.cluster_changed(now, event, old, new) or moved
        if moved:
            self._wake.set()

    # -- scheduling ----------------------------------------------------------------------------------------------

    async def _schedule_loop(self) -> None:
        await self._ready.wait()
        if self.elector is not None:
            await self.elector.acquire()
            self._lease_task = asyncio.create_task(self._lead(self.elector))
        while True:
            if self.elector is not None and not self.elector.leading.is_set():
                return  # the Lease is lost: decisions() raises SchedulerStopped
            if self.elector is not None and not self.elector.holds():
                # Past the renew deadline without a renewal (a pause, a slow API server): act on nothing until a
                # renewal succeeds, or the renewal gives up and decisions() raises SchedulerStopped.
                self.log(f"Not scheduling: {self.elector.lapse()}.")
                self.elector.renewed.clear()
                await self.elector.renewed.wait()
                continue
            key, due = self.queue.pop(time.monotonic())
            if key is None:
                self._wake.clear()
                timeout = None if due is None else max(0.0, due - time.monotonic())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout)
                continue
            await self._slots.acquire()
            started = False
            try:
                started = self._cycle(key)
            finally:
                if not started:
                    self._slots.release()
            await asyncio.sleep(0)

    async def _lead(self, elector: LeaderElector) -> None:
        """Renew the Lease (the renewal's coroutine is made only once this task runs, so a stop that cancels the
        task before its first step leaves no coroutine unawaited)."""
        await self._guard(self._keep_lease(elector))

    async def _keep_lease(self, elector: LeaderElector) -> None:
        await elector.renew()
        self._out.put_nowait(SchedulerStopped(
            f"Lost the Lease {elector.key}: no renewal succeeded within {elector.renew_deadline:g} s, so this "
            "instance stopped scheduling (kube-scheduler exits the same way)."))

    def _decision(self, pod: Mapping[str, Any], cycle: tuple[int, datetime], attempt: int,
                  verdicts: Mapping[str, str], *, outcome: str, node: str | None = None, message: str | None = None,
                  scores: Mapping[str, int] | None = None, plugin_scores: Mapping[str, Mapping[str, int]] | None = None,
                  exchange: BindingExchange | None = None) -> SchedulingDecision:
        """The decision of the scheduling cycle ``cycle`` (its number and start time)."""
        meta = pod.get("metadata") or {}
        return SchedulingDecision(
            pod=f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}", uid=str(meta.get("uid") or ""),
            scheduler_name=self.profile(pod), policy=self.options.policy, attempt=attempt, verdicts=dict(verdicts),
            scores=dict(scores or {}), node=node, message=message, exchange=exchange, outcome=outcome,
            time=datetime.now(UTC), plugin_scores=dict(plugin_scores or {}), dry_run=self.options.dry_run,
            cycle=cycle[0], started=cycle[1])

    def _cycle(self, key: Key) -> bool:
        """One scheduling cycle for ``key``; True when a binding cycle was started (it holds a slot)."""
        pod = self.unbound.get(key)
        if pod is None:
            self.queue.remove(key)
            return False
        reason = self._not_responsible(pod)
        if reason is not None and reason != "being deleted":
            self.queue.remove(key)
            return False
        self._cycles += 1
        cycle = (self._cycles, datetime.now(UTC))
        if reason == "being deleted":
            self.queue.remove(key)
            message = f"skip schedule deleting pod: {key[0]}/{key[1]}"
            if not self.options.dry_run:
                self._spawn_write(self._recorder(pod).record(pod, "Warning", "FailedScheduling", "Scheduling",
                                                             message))
            self._out.put_nowait(self._decision(pod, cycle, self.queue.attempts(key) + 1, {}, outcome="skipped",
                                                message=message))
            return False
        if key in self._preempting:  # DefaultPreemption's PreEnqueue: its victims are still being preempted
            self.queue.unschedulable(key, time.monotonic())
            return False
        attempt = self.queue.attempts(key) + 1
        info = scheduling.PodInfo.from_pod(pod)
        nominated_node = self.nominator.node_of(key, pod)
        snapshot = self.cache.snapshot
        with counting_nominated(snapshot, info, self.nominator.nominated(self.unbound, self.cache.assumed)):
            decision = scheduling.schedule_one(info, snapshot, sampler=self.sampler, profile=self.profile(pod),
                                               resource_tables=False)
            preemption = None
            if decision.node is None and decision.verdicts and not decision.error:
                nodes = {n.name: n for n in snapshot}
                preemption = preempt(info, nodes, decision.verdicts, decision.cycle, nominated_node=nominated_node,
                                     offset=self.rng.randrange(len(nodes)))
        verdicts = {n: "" if v.feasible else ", ".join(v.reasons) for n, v in decision.verdicts.items()}
        if decision.error:
            self._record_failure(pod, "SchedulerError", decision.error)
            self.queue.retry(key, time.monotonic())
            self._out.put_nowait(self._decision(pod, cycle, attempt, verdicts, outcome="error",
                                                message=decision.error))
            return False
        choice = choose(self.options.policy, info, decision, self.cache.snapshot, self.rng)
        if nominated_node and nominated_node in decision.feasible:
            choice = dataclasses.replace(choice, node=nominated_node)  # the nominated node is tried first
        if choice.node is None:
            message = decision.message or scheduling.NO_NODES_AVAILABLE
            if preemption is not None and preemption.message == NOT_ELIGIBLE_TERMINATING_POD:
                message = terminating_message(len(decision.verdicts), decision.verdicts)
            self._unschedulable(key, pod, info, message, preemption, rejecting_plugins(decision.verdicts))
            self._out.put_nowait(self._decision(pod, cycle, attempt, verdicts, outcome="unschedulable",
                                                message=message))
            return False
        self.nominator.forget(key)
        volumes = None if self.options.dry_run else reserve_volumes(info, self.cache.snapshot, choice.node)
        self.cache.assume(key, dataclasses.replace(info, node_name=choice.node))
        if self.options.dry_run:
            self._out.put_nowait(self._decision(pod, cycle, attempt, verdicts, outcome="dry-run", node=choice.node,
                                                scores=choice.scores, plugin_scores=choice.plugin_scores))
            return False
        task = asyncio.get_running_loop().create_task(self._bind(key, pod, choice, cycle, attempt, verdicts,
                                                                 volumes))
        self._binds.add(task)
        task.add_done_callback(self._binds.discard)
        return True

    async def _bind(self, key: Key, pod: dict[str, Any], choice: Any, cycle: tuple[int, datetime], attempt: int,
                    verdicts: Mapping[str, str], volumes: VolumePlan | None = None) -> None:
        """The binding cycle: VolumeBinding's PreBind when Reserve planned volume updates, POST the Binding, then
        record the outcome."""
        meta = pod.get("metadata") or {}
        try:
            if self.options.bind_delay:
                await asyncio.sleep(self.options.bind_delay)
            if not self._holds():
                return self._not_holding(key, pod, choice, cycle, attempt, verdicts, volumes)
            if volumes is not None:
                failed = await bind_pod_volumes(self.api, self.cache, volumes, lambda: key in self.unbound,
                                                key[1])
                if failed is not None:
                    self._prebind_failed(key, pod, choice, cycle, attempt, verdicts, volumes, failed)
                    return
                if not self._holds():
                    return self._not_holding(key, pod, choice, cycle, attempt, verdicts, None)
            exchange = await post_binding(self.api, key[0], key[1], choice.node, uid=meta.get("uid") or None)
        finally:
            self._slots.release()
        scored = {"scores": choice.scores, "plugin_scores": choice.plugin_scores}
        if exchange.ok:
            note = scheduling.scheduled_message(key[0], key[1], choice.node)
            self._spawn_write(self._recorder(pod).record(pod, "Normal", "Scheduled", "Binding", note))
            self._out.put_nowait(self._decision(pod, cycle, attempt, verdicts, outcome="bound", node=choice.node,
                                                exchange=exchange, **scored))
            return
        self.cache.forget(key)
        self._cluster_changed(assumed_pod_deleted(pod, choice.node))
        message = exchange.status_message or exchange.error or exchange.status_line
        error = f'binding rejected: running Bind plugin "DefaultBinder": {message}'
        if exchange.status == 409:
            self.queue.remove(key)
            self._record_failure(self.unbound.get(key, pod), "SchedulerError", error)
            self._out.put_nowait(self._decision(pod, cycle, attempt, verdicts, outcome="conflict", node=choice.node,
                                                message=message, exchange=exchange, **scored))
            return
        if exchange.status == 404:
            self.queue.remove(key)
        else:
            self._record_failure(self.unbound.get(key, pod), "SchedulerError", error)
            delay = self.queue.retry(key, time.monotonic())
            message = f"{error} (retrying in {delay:g} s)"
            self._wake.set()
        self._out.put_nowait(self._decision(pod, cycle, attempt, verdicts, outcome="error", node=choice.node,
                                            message=message, exchange=exchange, **scored))

    def _not_holding(self, key: Key, pod: dict[str, Any], choice: Any, cycle: tuple[int, datetime], attempt: int,
                     verdicts: Mapping[str, str], volumes: VolumePlan | None) -> None:
        """The binding cycle reached its Binding past the Lease's renew deadline: nothing is sent; the assumption
        (and an unbound volume plan) is undone and the pod goes back to the queue for whoever leads next."""
        if volumes is not None:
            unreserve(self.cache.volumes, volumes)
        self.cache.forget(key)
        self._cluster_changed(assumed_pod_deleted(pod, choice.node))
        if key in self.unbound:
            self.queue.retry(key, time.monotonic())
        assert self.elector is not None
        self._out.put_nowait(self._decision(pod, cycle, attempt, verdicts, outcome="skipped", node=choice.node,
                                            message=f"not bound to {choice.node}: {self.elector.lapse()} (only the "
                                                    "Lease holder schedules)"))

    def _prebind_failed(self, key: Key, pod: dict[str, Any], choice: Any, cycle: tuple[int, datetime], attempt: int,
                        verdicts: Mapping[str, str], volumes: VolumePlan, message: str) -> None:
        """``handleBindingCycleError`` after PreBind: Unreserve (the assumed PVs and PVCs), forget the pod, write the
        failure, retry after the backoff."""
        unreserve(self.cache.volumes, volumes)
        self.cache.forget(key)
        if key in self.unbound:
            self._record_failure(self.unbound[key], "SchedulerError", message)
            self.queue.retry(key, time.monotonic())
            self._wake.set()
        self._out.put_nowait(self._decision(pod, cycle, attempt, verdicts, outcome="error", node=choice.node,
                                            message=message, scores=choice.scores,
                                            plugin_scores=choice.plugin_scores))

    def _unschedulable(self, key: Key, pod: dict[str, Any], info: scheduling.PodInfo, message: str,
                       preemption: Preemption | None, plugins: frozenset[str]) -> None:
        """A FitError: ``handleSchedulingFailure`` with the PostFilter's nominating info. A preemption that found a
        node nominates it and acts out its victims (:func:`~.preempting.act_preemption`), holding the pod back
        until that is done; no candidate clears the nomination; a pod not eligible keeps it. ``plugins``: the
        plugins that rejected it, whose QueueingHints decide when it is tried again."""
        self.queue.unschedulable(key, time.monotonic(), plugins)
        if self.options.dry_run:
            return
        nominated = preemption.nominated_node if preemption is not None else None
        if nominated is not None:
            self.nominator.set(key, nominated)
        candidate = preemption.candidate if preemption is not None else None
        if candidate is None:
            self._spawn_write(self._fail(pod, "Unschedulable", message, nominated=nominated))
            return
        victims = [self.cache.bound.get(v.identity) or {"metadata": {"namespace": v.namespace,
                                                                    "name": v.key.split("/", 1)[-1]}}
                   for v in candidate.victims]
        lower = [other for other_key, node, other in self.nominator.nominated(self.unbound, self.cache.assumed)
                 if node == candidate.node and other_key != key
                 and scheduling.PodInfo.from_pod(other).priority < info.priority]
        for other in lower:
            self.nominator.set(pod_key(other), "")
        self._preempting.add(key)
        self._spawn_write(self._preempt(key, pod, message, candidate.node, victims, lower), guarded=False)

    async def _preempt(self, key: Key, pod: dict[str, Any], message: str, node: str, victims: list[dict[str, Any]],
                       lower: list[Mapping[str, Any]]) -> None:
        try:
            await self._fail(pod, "Unschedulable", message, nominated=node)
            if not self._holds():  # the victims stay: only the Lease holder deletes pods
                return
            await act_preemption(self.api, self._recorder(pod), pod, node, victims, lower, self.profile(pod),
                                 self.log)
        finally:
            self._preempting.discard(key)

    def _record_failure(self, pod: dict[str, Any], reason: str, message: str) -> None:
        """``handleSchedulingFailure``: the FailedScheduling event, then the PodScheduled=False condition."""
        if self.options.dry_run:
            return
        self._spawn_write(self._fail(pod, reason, message))

    def _recorder(self, pod: Mapping[str, Any]) -> EventRecorder:
        return self.recorders[self.profile(pod)]

    async def _fail(self, pod: dict[str, Any], reason: str, message: str, *, nominated: str | None = None) -> None:
        if not self._holds():
            return
        await self._recorder(pod).record(pod, "Warning", "FailedScheduling", "Scheduling", truncate_message(message))
        patch = status_patch(pod, reason, message, nominated)
        if patch is None:
            return
        ns, name = pod_key(pod)
        path = f"/api/v1/namespaces/{quote(ns, safe='')}/pods/{quote(name, safe='')}/status"
        try:
            await send_json(self.api, "PATCH", path, patch, content_type=STRATEGIC)
        except ApiError as exc:
            if exc.status != 404:
                self.log(f"The PodScheduled condition of {ns}/{name} could not be written ({exc.status}): "
                         f"{exc.message}")
        except Unreachable as exc:
            self.log(f"The PodScheduled condition of {ns}/{name} could not be written: {exc}")
