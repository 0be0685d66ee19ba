"""Server-side printing: ``meta.k8s.io/v1`` Tables for pods, nodes, events and namespaces.

This reproduces what kube-apiserver answers when a client (kubectl get) sends
``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``:

* columns and cells: kubernetes/kubernetes ``pkg/printers/internalversion/printers.go``
  (``AddHandlers``, ``printPod``, ``printNode``, ``printEvent``, ``printNamespace``). The server always prints
  with ``Wide: true`` (``pkg/printers/storage/storage.go`` ``TableConvertor``), so every row carries the
  priority-1 cells too and kubectl hides them unless ``-o wide``;
* ages: apimachinery ``pkg/util/duration`` ``HumanDuration`` (:func:`observatory.model.timefmt.human_duration`);
* the Table envelope: ``pkg/printers/tablegenerator.go`` ``GenerateTable`` (ListMeta copied from the list, or
  the object's resourceVersion for a single object; columnDefinitions omitted -> JSON ``null`` when
  ``NoHeaders``, which the apiserver sets for every watch event after the first) and apiserver
  ``pkg/endpoints/handlers/response.go`` ``asTable`` (``row.object`` per ``includeObject``).

Objects are plain JSON dicts in core/v1 wire form. Cells are JSON values: strings, except Event ``Count``
(an int64). The column definitions live in :mod:`observatory.lab.printing_columns`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from observatory.lab.kinds import STRATEGIES
from observatory.lab.printcells import parse_time as _parse_time
from observatory.lab.printcells import translate_timestamp_since
from observatory.lab.printing_columns import POD_FAILED, POD_SUCCEEDED, column_definitions
from observatory.lab.volumes import printing as volume_printing
from observatory.model.timefmt import human_duration

__all__ = [
    "RESOURCES",
    "column_definitions",
    "human_duration",
    "include_object_error",
    "row_cells",
    "table",
    "translate_timestamp_since",
]

RESOURCES = ("pods", "nodes", "events", "namespaces", "leases", "persistentvolumeclaims", "persistentvolumes",
             "storageclasses", "priorityclasses")



# --- pods -----------------------------------------------------------------------------------------------------
def _pod_cells(pod: dict, now: datetime) -> tuple[list[Any], list[dict] | None]:
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    conditions = status.get("conditions") or []
    restarts = 0
    restartable_init_restarts = 0
    total = len(spec.get("containers") or [])
    ready = 0
    last_restart: datetime | None = None
    last_restartable_init_restart: datetime | None = None

    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    for c in conditions:
        if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    row_conditions = {"Succeeded": POD_SUCCEEDED, "Failed": POD_FAILED}.get(phase)

    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    for c in spec.get("initContainers") or []:
        if c.get("restartPolicy") == "Always":  # podutil.IsRestartableInitContainer (sidecar)
            total += 1

    def later(cur: datetime | None, cs: dict) -> datetime | None:
        term = (cs.get("lastState") or {}).get("terminated")
        if term is None:
            return cur
        t = _parse_time(term.get("finishedAt"))
        if t is not None and (cur is None or cur < t):
            return t
        return cur

    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    n_init = len(spec.get("initContainers") or [])
    for i, cs in enumerate(init_statuses):
        restarts += int(cs.get("restartCount") or 0)
        last_restart = later(last_restart, cs)
        restartable = (init_specs.get(cs.get("name")) or {}).get("restartPolicy") == "Always"
        if restartable:
            restartable_init_restarts += int(cs.get("restartCount") or 0)
            last_restartable_init_restart = later(last_restartable_init_restart, cs)
        state = cs.get("state") or {}
        term, waiting = state.get("terminated"), state.get("waiting")
        if term is not None and int(term.get("exitCode") or 0) == 0:
            continue
        if restartable and cs.get("started") is True:
            if cs.get("ready"):
                ready += 1
            continue
        if term is not None:
            if not term.get("reason"):
                if term.get("signal"):
                    reason = f"Init:Signal:{int(term['signal'])}"
                else:
                    reason = f"Init:ExitCode:{int(term.get('exitCode') or 0)}"
            else:
                reason = "Init:" + term["reason"]
        elif waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{n_init}"
        initializing = True
        break

    initialized = False
    for c in conditions:
        if c.get("type") == "Initialized":
            initialized = c.get("status") == "True"
            break
    if not initializing or initialized:
        restarts = restartable_init_restarts
        last_restart = last_restartable_init_restart
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += int(cs.get("restartCount") or 0)
            last_restart = later(last_restart, cs)
            state = cs.get("state") or {}
            waiting, term = state.get("waiting"), state.get("terminated")
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif term is not None and term.get("reason"):
                reason = term["reason"]
            elif term is not None:
                if term.get("signal"):
                    reason = f"Signal:{int(term['signal'])}"
                else:
                    reason = f"ExitCode:{int(term.get('exitCode') or 0)}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            pod_ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
            reason = "Running" if pod_ready else "NotReady"

    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":  # node.NodeUnreachablePodReason
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"

    restarts_cell = str(restarts)
    if restarts != 0 and last_restart is not None:
        restarts_cell = f"{restarts} ({translate_timestamp_since(last_restart.isoformat(), now)} ago)"

    # v1 -> internal conversion: podIPs wins; a lone podIP becomes podIPs[0].
    pod_ips = status.get("podIPs") or []
    ip = (pod_ips[0] or {}).get("ip", "") if pod_ips else (status.get("podIP") or "")
    gates = spec.get("readinessGates") or []
    gates_cell = "<none>"
    if gates:
        true_count = 0
        for gate in gates:
            for c in conditions:
                if c.get("type") == gate.get("conditionType"):
                    if c.get("status") == "True":
                        true_count += 1
                    break
        gates_cell = f"{true_count}/{len(gates)}"
    cells = [
        meta.get("name", ""), f"{ready}/{total}", reason, restarts_cell,
        translate_timestamp_since(meta.get("creationTimestamp"), now),
        ip or "<none>", spec.get("nodeName") or "<none>", status.get("nominatedNodeName") or "<none>", gates_cell,
    ]
    return cells, row_conditions


# --- nodes, events, namespaces --------------------------------------------------------------------------------
def _node_cells(node: dict, now: datetime) -> list[Any]:
    meta = node.get("metadata") or {}
    status = node.get("status") or {}
    info = status.get("nodeInfo") or {}
    states: list[str] = []
    ready = None
    for c in status.get("conditions") or []:  # conditionMap: the last Ready condition wins
        if c.get("type") == "Ready":
            ready = c
    if ready is not None:
        states.append("Ready" if ready.get("status") == "True" else "NotReady")
    if not states:
        states.append("Unknown")
    if (node.get("spec") or {}).get("unschedulable"):
        states.append("SchedulingDisabled")
    roles: set[str] = set()
    for k, v in (meta.get("labels") or {}).items():
        if k.startswith("node-role.kubernetes.io/"):
            role = k[len("node-role.kubernetes.io/"):]
            if role:
                roles.add(role)
        elif k == "kubernetes.io/role" and v:
            roles.add(v)

    def address(kind: str) -> str:
        for a in status.get("addresses") or []:
            if a.get("type") == kind:
                return a.get("address", "")
        return "<none>"

    return [
        meta.get("name", ""), ",".join(states), ",".join(sorted(roles)) or "<none>",
        translate_timestamp_since(meta.get("creationTimestamp"), now), info.get("kubeletVersion", ""),
        address("InternalIP"), address("ExternalIP"), info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>", info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _event_cells(ev: dict, now: datetime) -> list[Any]:
    first = translate_timestamp_since(ev.get("firstTimestamp"), now)
    if _parse_time(ev.get("firstTimestamp")) is None:
        first = translate_timestamp_since(ev.get("eventTime"), now)
    last = translate_timestamp_since(ev.get("lastTimestamp"), now)
    if _parse_time(ev.get("lastTimestamp")) is None:
        last = first
    count = int(ev.get("count") or 0)
    series = ev.get("series")
    if series is not None:
        last = translate_timestamp_since(series.get("lastObservedTime"), now)
        count = int(series.get("count") or 0)
    elif count == 0:
        count = 1  # singleton events have no count in the new API
    ref = ev.get("involvedObject") or {}
    kind = (ref.get("kind") or "").lower()
    target = f"{kind}/{ref['name']}" if ref.get("name") else kind
    src = ev.get("source") or {}
    component = src.get("component") or ev.get("reportingComponent") or ""
    instance = src.get("host") or ev.get("reportingInstance") or ""
    source = f"{component}, {instance}" if instance else component
    return [
        last, ev.get("type", ""), ev.get("reason", ""), target, ref.get("fieldPath", ""), source,
        (ev.get("message") or "").strip(), first, count, (ev.get("metadata") or {}).get("name", ""),
    ]


def _namespace_cells(ns: dict, now: datetime) -> list[Any]:
    meta = ns.get("metadata") or {}
    return [meta.get("name", ""), (ns.get("status") or {}).get("phase", ""),
            translate_timestamp_since(meta.get("creationTimestamp"), now)]


def _row(resource: str, obj: dict, now: datetime) -> tuple[list[Any], list[dict] | None]:
    if resource == "pods":
        return _pod_cells(obj, now)
    if resource == "nodes":
        return _node_cells(obj, now), None
    if resource == "events":
        return _event_cells(obj, now), None
    if resource == "namespaces":
        return _namespace_cells(obj, now), None
    if resource == "leases":
        meta = obj.get("metadata") or {}
        holder = (obj.get("spec") or {}).get("holderIdentity") or ""  # printLease: nil holder prints empty
        return [meta.get("name", ""), holder, translate_timestamp_since(meta.get("creationTimestamp"), now)], None
    if resource in volume_printing.ROW_PRINTERS:
        return volume_printing.cells(resource, obj, now, translate_timestamp_since), None
    if resource == "priorityclasses":
        return _priority_class_cells(obj, now), None
    if resource in STRATEGIES:
        printer = STRATEGIES[resource].printer
        if printer is None:  # rest.NewDefaultTableConvertor: Name, Created At
            meta = obj.get("metadata") or {}
            return [meta.get("name", ""), meta.get("creationTimestamp")], None
        return printer.cells(obj, now), None
    raise KeyError(resource)


def _priority_class_cells(pc: dict, now: datetime) -> list[Any]:
    """printers.go ``printPriorityClass``: name, value (int64), globalDefault (bool), age, preemptionPolicy ("" when
    unset)."""
    meta = pc.get("metadata") or {}
    return [meta.get("name", ""), int(pc.get("value") or 0), bool(pc.get("globalDefault")),
            translate_timestamp_since(meta.get("creationTimestamp"), now), pc.get("preemptionPolicy") or ""]


def row_cells(resource: str, obj: dict, now: datetime) -> list[Any]:
    """The wide cells (one per :func:`column_definitions` entry) printers.go computes for ``obj``."""
    return _row(resource, obj, now)[0]


# --- the Table ------------------------------------------------------------------------------------------------
_INCLUDE_OBJECT = ("Metadata", "Object", "None", "")


def include_object_error(value: str) -> str | None:
    """The 400 BadRequest message for a bad ``includeObject`` query value, or None when it is valid.

    Source: apimachinery ``pkg/apis/meta/v1/validation`` ``ValidateTableOptions`` wrapped by apiserver
    ``response.go`` ``optionsForTransform``.
    """
    if value in _INCLUDE_OBJECT:
        return None
    return (f'Unable to convert to Table as requested: includeObject: Invalid value: "{value}": '
            "must be 'Metadata', 'Object', 'None', or empty")


def table(resource: str, objs: Iterable[dict], now: datetime, *, resource_version: str,
          continue_token: str = "", remaining: int | None = None, include_object: str = "Metadata",
          kind: str, api_version: str, include_column_definitions: bool = True,
          to_object: Callable[[dict], dict] | None = None) -> dict[str, Any]:
    """A ``meta.k8s.io/v1`` Table dict for ``objs`` in kube-apiserver's JSON key order.

    * ``metadata``: ListMeta with omitempty ``resourceVersion``/``continue``/``remainingItemCount``. For a single
      object (GET by name, or one watch event) pass the object's own resourceVersion.
    * ``columnDefinitions``: all columns, or ``None`` (JSON null) when ``include_column_definitions`` is False,
      as for every watch event after the first.
    * each row: ``cells``, ``conditions`` (only for Succeeded/Failed pods), ``object``: ``Metadata`` (or "")
      gives a PartialObjectMetadata carrying the object's full ``metadata`` (managedFields included, as
      ``meta.AsPartialObjectMetadata`` copies the whole ObjectMeta); ``Object`` the object with ``kind``/``apiVersion``
      set from ``kind``/``api_version`` (or ``to_object(obj)`` when given: another group's view of a stored object,
      e.g. events.k8s.io/v1); ``None`` gives ``"object": null``.

    Raises ValueError(:func:`include_object_error` text) for another ``include_object``; KeyError for an
    unsupported resource.
    """
    err = include_object_error(include_object)
    if err:
        raise ValueError(err)
    meta: dict[str, Any] = {}
    if resource_version:
        meta["resourceVersion"] = resource_version
    if continue_token:
        meta["continue"] = continue_token
    if remaining is not None:
        meta["remainingItemCount"] = remaining
    rows = []
    for obj in objs:
        cells, conditions = _row(resource, obj, now)
        row: dict[str, Any] = {"cells": cells}
        if conditions:
            row["conditions"] = [dict(c) for c in conditions]
        if include_object in ("Metadata", ""):
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": dict(obj.get("metadata") or {})}
        elif include_object == "Object" and to_object is not None:
            row["object"] = to_object(obj)
        elif include_object == "Object":
            full = {"kind": kind, "apiVersion": api_version}
            full.update({k: v for k, v in obj.items() if k not in ("kind", "apiVersion")})
            row["object"] = full
        else:
            row["object"] = None
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": column_definitions(resource) if include_column_definitions else None,
        "rows": rows,
    }
