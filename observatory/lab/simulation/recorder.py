"""client-go's legacy event recorder (``tools/record``) for the lab's controllers, with its correlation of repeats.

An event is made as ``tools/record/event.go`` ``makeEvent`` makes it: name ``<object>.<hex unixnano>``, namespace
the object's (``default`` for a cluster-scoped object), ``involvedObject`` the object's reference (kind, namespace,
name, uid, apiVersion, resourceVersion), first and last timestamps, ``count: 1``, ``source.component`` the
recorder's component and ``reportingComponent`` the same, ``reportingInstance`` the source host (empty here).

``events_cache.go``'s ``eventLogger`` then folds a repeat of the same event (same source, involved object kind,
namespace, name, field path, uid and apiVersion, type, reason and message) into the first one: its ``count`` grows
and its ``lastTimestamp`` moves, written as a PATCH of the existing event (``kubectl describe`` shows
``(x3 over 40s)``). The lab keeps the repeats it has seen for the life of the component.
"""

from __future__ import annotations

import json
from typing import Any

from observatory.lab import errors
from observatory.lab.resources import CORE_V1
from observatory.lab.simulation.client import Client
from observatory.lab.simulation.events import event_name
from observatory.lab.store import now_rfc3339

EVENTS = CORE_V1["events"]


def reference(obj: dict[str, Any], kind: str, api_version: str = "v1") -> dict[str, Any]:
    """``ref.GetReference``: the ObjectReference of ``obj`` in ObjectReference's field order."""
    meta = obj.get("metadata") or {}
    ref: dict[str, Any] = {"kind": kind}
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    ref.update({"name": meta.get("name", ""), "uid": meta.get("uid", ""), "apiVersion": api_version,
                "resourceVersion": meta.get("resourceVersion", "")})
    return ref


class Recorder:
    """Records Events as ``component`` (``persistentvolume-controller``, a provisioner's identity...)."""

    def __init__(self, registry: Client, component: str) -> None:
        self.registry = registry
        self.component = component
        self._seen: dict[tuple[str, ...], tuple[str, str, int]] = {}
        """correlation key -> (namespace, event name, count)"""

    def event(self, obj: dict[str, Any], kind: str, type_: str, reason: str, message: str) -> None:
        """Record one event about ``obj`` (of ``kind``), folding it into an earlier identical one."""
        ref = reference(obj, kind)
        namespace = ref.get("namespace") or "default"
        key = (kind, namespace if "namespace" in ref else "", ref["name"], ref["uid"], type_, reason, message)
        now = now_rfc3339()
        seen = self._seen.get(key)
        if seen is not None:
            ns, name, count = seen
            body = json.dumps({"count": count + 1, "lastTimestamp": now, "message": message}).encode()
            try:
                self.registry.patch(EVENTS, ns, name, "application/strategic-merge-patch+json", body)
                self._seen[key] = (ns, name, count + 1)
                return
            except errors.StatusError:
                pass  # the event is gone (expired or deleted): record it anew, as client-go does after a 404
        event = {
            "metadata": {"name": event_name(ref["name"]), "namespace": namespace},
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "source": {"component": self.component},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": type_,
            "eventTime": None,
            "reportingComponent": self.component,
            "reportingInstance": "",
        }
        try:
            created = self.registry.create(EVENTS, namespace, event)
        except errors.StatusError:
            return  # the namespace is gone; client-go's recorder drops the event
        self._seen[key] = (namespace, created["metadata"]["name"], 1)
