"""VolumeBinding's PreBind: write what Reserve decided, then wait until the PV controller has bound every claim.

Reproduces ``BindPodVolumes`` of kube-scheduler v1.34.1's ``volumebinding/binder.go``:

1. ``bindAPIUpdate``: ``PUT /api/v1/persistentvolumes/{name}`` for each statically matched PV (its claimRef set),
   then ``PUT /api/v1/namespaces/{ns}/persistentvolumeclaims/{name}`` for each claim to provision (its
   ``volume.kubernetes.io/selected-node`` set). The first failure ends PreBind with the API server's message.
2. ``wait.PollUntilContextTimeout(ctx, time.Second, bindTimeout, false, checkBindings)``: every second (the first
   check after one), :func:`~observatory.scheduling.volumebinding.check_bindings` over the watched versions, until
   every claim is bound, an error, or ``BindTimeoutSeconds`` (600) pass (``context deadline exceeded``, the
   context's error; releases that used ``wait.Poll`` said ``timed out waiting for the condition``); such failures
   are wrapped as ``binding volumes: …``. The pod gone (``pod does not exist any more: pod "NAME" not
   found``) and its node gone (``failed to get node "NODE": node "NODE" not found``) end the wait too.

``RunPreBindPlugins`` turns a failure into ``running PreBind plugin "VolumeBinding": …``, which the scheduler writes
as the FailedScheduling event and the ``PodScheduled=False``/``SchedulerError`` condition before retrying the pod
after its backoff (``handleBindingCycleError``); the Binding is never posted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from observatory.kube.fetch import ApiError, Unreachable, send_json
from observatory.scheduler.cache import ClusterCache
from observatory.scheduling.volumebinding import BIND_TIMEOUT_SECONDS, VOLUME_BINDING, VolumePlan, check_bindings

__all__ = ["POLL_SECONDS", "bind_pod_volumes"]

POLL_SECONDS = 1.0
"""``checkBindings``' polling interval (``time.Second``)."""


def _prebind_error(text: str) -> str:
    return f'running PreBind plugin "{VOLUME_BINDING}": {text}'


async def _write(api: Any, plan: VolumePlan) -> tuple[dict[str, str], str | None]:
    """``bindAPIUpdate``: the resourceVersions written (``pv/NAME``, ``pvc/NS/NAME``), or the error text."""
    written: dict[str, str] = {}
    for obj, is_volume in [(v, True) for v in plan.volumes] + [(c, False) for c in plan.claims]:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "")
        if is_volume:
            path, key = f"/api/v1/persistentvolumes/{quote(name, safe='')}", f"pv/{name}"
        else:
            ns = str(meta.get("namespace") or "")
            path = f"/api/v1/namespaces/{quote(ns, safe='')}/persistentvolumeclaims/{quote(name, safe='')}"
            key = f"pvc/{ns}/{name}"
        body = {"apiVersion": "v1", "kind": "PersistentVolume" if is_volume else "PersistentVolumeClaim", **obj}
        try:
            answer = await send_json(api, "PUT", path, body)
        except ApiError as exc:
            return written, exc.message
        except Unreachable as exc:
            return written, str(exc)
        written[key] = str((answer.get("metadata") or {}).get("resourceVersion") or "")
    return written, None


async def bind_pod_volumes(api: Any, cache: ClusterCache, plan: VolumePlan, pod_exists: Callable[[], bool],
                           pod_name: str, *, timeout: float = BIND_TIMEOUT_SECONDS,
                           poll: float = POLL_SECONDS) -> str | None:
    """PreBind for ``plan``: None once every claim is bound, else the FailedScheduling text. ``pod_exists`` says
    whether the pod is still in the scheduler's cache."""
    written, error = await _write(api, plan)
    if error is not None:
        return _prebind_error(error)
    deadline = time.monotonic() + timeout
    while True:
        await asyncio.sleep(min(poll, max(0.0, deadline - time.monotonic())))
        if time.monotonic() >= deadline:
            return _prebind_error("binding volumes: context deadline exceeded")
        node = cache.snapshot.get(plan.node)
        if node is None:
            return _prebind_error(f'binding volumes: failed to get node "{plan.node}": node "{plan.node}" not found')
        if not pod_exists():
            return _prebind_error(f'binding volumes: pod does not exist any more: pod "{pod_name}" not found')
        done = check_bindings(plan, cache.volumes, node.labels, written)
        if done is True:
            return None
        if isinstance(done, str):
            return _prebind_error(f"binding volumes: {done}")
