"""kubectl's pod STATUS and READY columns, computed as the API server's Table printer does.

Reproduces k/k ``pkg/printers/internalversion/printers.go`` ``printPod`` (reference §5), the status parts only:

1. start from ``status.phase``, overridden by ``status.reason`` when set;
2. a ``PodScheduled`` condition with reason ``SchedulingGated`` gives ``SchedulingGated``;
3. init containers, in order: a non-zero termination gives ``Init:<reason>`` / ``Init:Signal:N`` /
   ``Init:ExitCode:N``, a waiting reason other than PodInitializing ``Init:<reason>``, anything else unfinished
   ``Init:i/n``; restartable (sidecar) init containers that have started count as ready and do not block;
4. unless still initializing (and the Initialized condition is not True), the regular containers from last to
   first: a waiting reason, a terminated reason, ``Signal:N`` or ``ExitCode:N`` replaces the status (so the first
   container with one wins); a ready, running container counts toward READY; ``Completed`` with a container still
   running becomes ``Running`` (pod Ready) or ``NotReady``;
5. a deleting pod shows ``Unknown`` when its reason is ``NodeLost``, else ``Terminating`` unless its phase is
   terminal (Succeeded, Failed).

READY is ``<ready>/<total>``, total counting regular containers plus restartable init containers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._json import integer, items, mapping, text

__all__ = ["pod_status"]

_TERMINAL = ("Succeeded", "Failed")


def _restartable(container: Any) -> bool:
    return isinstance(container, Mapping) and container.get("restartPolicy") == "Always"


def _condition_true(conditions: list[Any], kind: str) -> bool:
    for cond in conditions:
        cond = mapping(cond)
        if cond.get("type") == kind:
            return cond.get("status") == "True"
    return False


def pod_status(pod: Mapping[str, Any]) -> tuple[str, str]:
    """``(STATUS, READY)`` of a Pod as JSON, e.g. ``("CrashLoopBackOff", "0/1")`` or ``("Init:1/2", "0/1")``."""
    meta, spec, status = mapping(pod.get("metadata")), mapping(pod.get("spec")), mapping(pod.get("status"))
    conditions = items(status.get("conditions"))
    phase = text(status.get("phase"))
    reason = text(status.get("reason")) or phase
    for cond in conditions:
        cond = mapping(cond)
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    init_specs = items(spec.get("initContainers"))
    restartable_names = {text(mapping(c).get("name")) for c in init_specs if _restartable(c)}
    total = len(items(spec.get("containers"))) + sum(1 for c in init_specs if _restartable(c))
    ready = 0

    initializing = False
    for i, cs in enumerate(items(status.get("initContainerStatuses"))):
        cs = mapping(cs)
        state = mapping(cs.get("state"))
        term, waiting = state.get("terminated"), state.get("waiting")
        if isinstance(term, Mapping) and integer(term.get("exitCode")) == 0:
            continue
        if text(cs.get("name")) in restartable_names and cs.get("started") is True:
            if cs.get("ready") is True:
                ready += 1
            continue
        if isinstance(term, Mapping):
            if text(term.get("reason")):
                reason = "Init:" + text(term.get("reason"))
            elif integer(term.get("signal")):
                reason = f"Init:Signal:{integer(term.get('signal'))}"
            else:
                reason = f"Init:ExitCode:{integer(term.get('exitCode'))}"
        elif isinstance(waiting, Mapping) and text(waiting.get("reason")) not in ("", "PodInitializing"):
            reason = "Init:" + text(waiting.get("reason"))
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break

    if not initializing or _condition_true(conditions, "Initialized"):
        has_running = False
        for cs in reversed(items(status.get("containerStatuses"))):
            cs = mapping(cs)
            state = mapping(cs.get("state"))
            waiting, term = state.get("waiting"), state.get("terminated")
            if isinstance(waiting, Mapping) and text(waiting.get("reason")):
                reason = text(waiting.get("reason"))
            elif isinstance(term, Mapping) and text(term.get("reason")):
                reason = text(term.get("reason"))
            elif isinstance(term, Mapping):
                signal = integer(term.get("signal"))
                reason = f"Signal:{signal}" if signal else f"ExitCode:{integer(term.get('exitCode'))}"
            elif cs.get("ready") is True and isinstance(state.get("running"), Mapping):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            pod_ready = any(mapping(c).get("type") == "Ready" and mapping(c).get("status") == "True"
                            for c in conditions)  # hasPodReadyCondition: any Ready=True
            reason = "Running" if pod_ready else "NotReady"

    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in _TERMINAL:
        reason = "Terminating"
    return reason, f"{ready}/{total}"
