"""The scheduler's half of DefaultPreemption: nominations, and the API calls that act a preemption out.

Reproduces kube-scheduler v1.34.1 (``pkg/scheduler/schedule_one.go``, ``pkg/scheduler/framework/preemption/
preemption.go``, ``pkg/scheduler/backend/queue`` ``nominator``):

* :class:`Nominator`: pod -> nominated node. A pod's nomination is what this scheduler last decided for it, else
  its ``status.nominatedNodeName`` as the watch shows it (the informer's ``AddNominatedPod``). While another pod is
  filtered, the nominated pods of equal or higher priority count on their nodes (``RunFilterPluginsWithNominatedPods``
  adds them; :func:`counting_nominated`). This counts them for scoring too, where upstream does not.
* :func:`status_patch`: ``updatePod``: the ``PodScheduled=False`` condition and ``status.nominatedNodeName`` in one
  strategic merge patch of ``pods/status`` (``util.PatchPodStatus``); the nomination is written only when it
  changes (``ModeOverride``), ``null`` clears it.
* :func:`act_preemption`, ``prepareCandidateAsync``: clear the nominations of lower-priority pods nominated to the
  chosen node (``getLowerPriorityNominatedPods``, ``clearNominatedNodeName``), then preempt the victims, all but
  the last concurrently, then the last: each gets ``DisruptionTarget=True``/``PreemptionByScheduler`` with message
  ``<schedulerName>: preempting to accommodate a higher priority pod`` through ``pods/status`` (skipped when already
  there; a 404 means it is gone), a DELETE with default options (so its own grace period applies), and the event
  ``Normal Preempted`` (action ``Preempting``), ``Preempted by pod <preemptor uid> on node <node>``, regarding the
  victim and related to the preemptor. A victim already being deleted is left alone.
* :func:`terminating_message`: the FailedScheduling text while the victims terminate.

Upstream's PostFilter starts the victims' goroutine and ``handleSchedulingFailure`` writes the preemptor's event and
status concurrently; here the preemptor's event and status are written first, then the victims', so a watch sees
them in the order of reference A.3's table.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any
from urllib.parse import quote

from observatory import scheduling
from observatory.kube.fetch import ApiError, Unreachable, send_json
from observatory.scheduler.events import EventRecorder
from observatory.scheduler.objects import condition_patch, rfc3339
from observatory.scheduling.messages import DRA_NO_CLAIMS_TO_DEALLOCATE, fit_error_message
from observatory.scheduling.preemption import NOT_ELIGIBLE_TERMINATING_POD

__all__ = ["Nominator", "act_preemption", "counting_nominated", "disruption_target_patch", "preempted_note",
           "status_patch", "terminating_message"]

Key = tuple[str, str]
STRATEGIC = "application/strategic-merge-patch+json"
DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


def _key(pod: Mapping[str, Any]) -> Key:
    meta = pod.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def _status(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    status = pod.get("status")
    return status if isinstance(status, Mapping) else {}


def nominated_node_name(pod: Mapping[str, Any]) -> str:
    """``status.nominatedNodeName`` (``""`` when unset)."""
    value = _status(pod).get("nominatedNodeName")
    return value if isinstance(value, str) else ""


class Nominator:
    """The nominated node of each waiting pod (``PodNominator``): this scheduler's own decisions, which win over
    the ``status.nominatedNodeName`` a pod was last seen with until the pod is bound or gone."""

    def __init__(self) -> None:
        self._decided: dict[Key, str] = {}

    def set(self, key: Key, node: str) -> None:
        """Nominate ``key`` to ``node`` (``""``: no nomination)."""
        self._decided[key] = node

    def forget(self, key: Key) -> None:
        """The pod is assumed, bound or gone: only what the watch shows counts again."""
        self._decided.pop(key, None)

    def node_of(self, key: Key, pod: Mapping[str, Any]) -> str:
        return self._decided.get(key, nominated_node_name(pod))

    def nominated(self, unbound: Mapping[Key, Mapping[str, Any]],
                  skip: Iterable[Key] = ()) -> list[tuple[Key, str, Mapping[str, Any]]]:
        """``(key, node, pod)`` for every waiting pod with a nomination, leaving out ``skip`` (assumed pods)."""
        skipped = set(skip)
        out = []
        for key, pod in unbound.items():
            node = self.node_of(key, pod)
            if node and key not in skipped:
                out.append((key, node, pod))
        return out


@contextlib.contextmanager
def counting_nominated(snapshot: scheduling.Snapshot, pod: scheduling.PodInfo,
                       nominated: Iterable[tuple[Key, str, Mapping[str, Any]]]) -> Iterator[None]:
    """Count, for the duration of the block, each nominated pod of priority >= ``pod``'s (other than ``pod``) on
    its nominated node of ``snapshot``."""
    added = []
    for _, node, other in nominated:
        info = scheduling.PodInfo.from_pod(other)
        if info.identity == pod.identity or info.priority < pod.priority or snapshot.get(node) is None:
            continue
        info = replace(info, node_name=node)
        if snapshot.add_pod(info):
            added.append(info)
    try:
        yield
    finally:
        for info in added:
            snapshot.remove_pod(info)


def status_patch(pod: Mapping[str, Any], reason: str, message: str, nominated: str | None,
                 now: datetime | None = None) -> dict[str, Any] | None:
    """The ``pods/status`` strategic merge patch of ``updatePod``: the PodScheduled condition (see
    :func:`~.objects.condition_patch`) and, when ``nominated`` is not None and differs from the pod's,
    ``nominatedNodeName`` (``null`` for ``""``). None when nothing changes."""
    patch = condition_patch(pod, reason, message, now)
    if nominated is not None and nominated != nominated_node_name(pod):
        patch = patch or {"status": {}}
        patch["status"]["nominatedNodeName"] = nominated or None
    return patch


def disruption_target_patch(victim: Mapping[str, Any], scheduler_name: str,
                            now: datetime | None = None) -> dict[str, Any] | None:
    """The ``pods/status`` patch adding ``DisruptionTarget=True``/``PreemptionByScheduler`` (``UpdatePodCondition``:
    None when the victim already carries exactly that condition)."""
    conditions = [c for c in _status(victim).get("conditions") or [] if isinstance(c, Mapping)]
    message = f"{scheduler_name}: preempting to accommodate a higher priority pod"
    old = next((c for c in conditions if c.get("type") == DISRUPTION_TARGET), None)
    if old is not None and (old.get("status"), old.get("reason"), old.get("message")) == (
            "True", PREEMPTION_BY_SCHEDULER, message):
        return None
    element = {"type": DISRUPTION_TARGET, "status": "True", "lastTransitionTime": rfc3339(now),
               "reason": PREEMPTION_BY_SCHEDULER, "message": message}
    if old is not None and old.get("status") == "True" and old.get("lastTransitionTime"):
        element["lastTransitionTime"] = old["lastTransitionTime"]
    order = [{"type": c.get("type")} for c in conditions]
    if old is None:
        order.append({"type": DISRUPTION_TARGET})
    return {"status": {"$setElementOrder/conditions": order, "conditions": [element]}}


def preempted_note(preemptor: Mapping[str, Any], node: str) -> str:
    """``Preempted by pod %v on node %v`` with the preemptor's UID."""
    return f"Preempted by pod {(preemptor.get('metadata') or {}).get('uid') or ''} on node {node}"


def terminating_message(num_nodes: int, verdicts: Mapping[str, Any], *, dra_fragment: bool = True) -> str:
    """The FitError while victims on the nominated node terminate: ``0/1 nodes are available: 1 Insufficient cpu.
    no new claims to deallocate, preemption: not eligible due to a terminating pod on the nominated node.``"""
    parts = ([DRA_NO_CLAIMS_TO_DEALLOCATE] if dra_fragment else []) + ["preemption: " + NOT_ELIGIBLE_TERMINATING_POD]
    return fit_error_message(num_nodes, verdicts, postfilter_message=", ".join(parts))


def _pod_path(pod: Mapping[str, Any], sub: str = "") -> str:
    ns, name = _key(pod)
    return f"/api/v1/namespaces/{quote(ns, safe='')}/pods/{quote(name, safe='')}" + (f"/{sub}" if sub else "")


async def _preempt_victim(api: Any, recorder: EventRecorder, preemptor: Mapping[str, Any], node: str,
                          victim: Mapping[str, Any], scheduler_name: str, log: Callable[[str], None]) -> None:
    """``PreemptPod``: the DisruptionTarget condition, the DELETE, the Preempted event."""
    ns, name = _key(victim)
    patch = disruption_target_patch(victim, scheduler_name)
    try:
        if patch is not None:
            await send_json(api, "PATCH", _pod_path(victim, "status"), patch, content_type=STRATEGIC)
        await send_json(api, "DELETE", _pod_path(victim), {})
    except ApiError as exc:
        if exc.status != 404:  # 404: already deleted
            log(f"Could not preempt {ns}/{name} ({exc.status}): {exc.message}")
        return
    except Unreachable as exc:
        log(f"Could not preempt {ns}/{name}: {exc}")
        return
    await recorder.record(victim, "Normal", "Preempted", "Preempting", preempted_note(preemptor, node),
                          related=preemptor)


async def clear_nominations(api: Any, pods: Iterable[Mapping[str, Any]], log: Callable[[str], None]) -> None:
    """``clearNominatedNodeName``: ``status.nominatedNodeName`` to null on each pod that has one."""
    for pod in pods:
        if not nominated_node_name(pod):
            continue
        try:
            await send_json(api, "PATCH", _pod_path(pod, "status"), {"status": {"nominatedNodeName": None}},
                            content_type=STRATEGIC)
        except (ApiError, Unreachable) as exc:
            log(f"Cannot clear the nominatedNodeName of {'/'.join(_key(pod))}: {exc}")


async def act_preemption(api: Any, recorder: EventRecorder, preemptor: Mapping[str, Any], node: str,
                         victims: Sequence[Mapping[str, Any]], lower_nominated: Sequence[Mapping[str, Any]],
                         scheduler_name: str, log: Callable[[str], None]) -> None:
    """The body of ``prepareCandidateAsync``'s goroutine (see the module); victims with a deletionTimestamp are
    skipped."""
    await clear_nominations(api, lower_nominated, log)
    pending = [v for v in victims if not (v.get("metadata") or {}).get("deletionTimestamp")]
    if not pending:
        return
    if len(pending) > 1:
        await asyncio.gather(*(_preempt_victim(api, recorder, preemptor, node, v, scheduler_name, log)
                               for v in pending[:-1]))
    await _preempt_victim(api, recorder, preemptor, node, pending[-1], scheduler_name, log)
