"""Writing the kubelet's Events the way its recorder does, seen through core/v1 (reference §4.1-§4.2).

The lab's default-scheduler writes its events/v1 events as a client of the API (``observatory.scheduler.events``).
The kubelet uses the legacy recorder (``tools/record``): name ``<object>.<hex unixnano>``, first/last timestamps,
  ``count: 1``, ``source: {component: kubelet, host: <node>}``, ``reportingComponent: kubelet``,
  ``reportingInstance: <node>``, ``eventTime: null``.

Events are created through the registry, so watchers and field selectors see them as for any client's write.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from observatory.lab import errors
from observatory.lab.registry import Registry
from observatory.lab.resources import CORE_V1
from observatory.lab.simulation.client import Clients
from observatory.lab.store import now_rfc3339


def micro_time() -> str:
    """``metav1.MicroTime`` as serialised: RFC 3339 with microseconds, e.g. ``2026-08-22T14:20:24.123456Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def event_name(object_name: str) -> str:
    """``util.GenerateEventName``: ``<name>.<hex unix nanoseconds>``."""
    return f"{object_name}.{time.time_ns():x}"


def involved(pod: dict[str, Any], field_path: str = "") -> dict[str, Any]:
    """The ObjectReference of ``pod`` as both recorders fill it (``ref.GetReference``)."""
    meta = pod["metadata"]
    ref = {"kind": "Pod", "namespace": meta.get("namespace", ""), "name": meta["name"], "uid": meta.get("uid", ""),
           "apiVersion": "v1", "resourceVersion": meta.get("resourceVersion", "")}
    if field_path:
        ref["fieldPath"] = field_path
    return ref


class EventWriter:
    """Creates the kubelet's Events in the lab through its registry, each as the kubelet of its node (``clients``;
    without them, straight through the registry)."""

    def __init__(self, registry: Registry, clients: Clients | None = None) -> None:
        self.registry = registry
        self.clients = clients

    def _create(self, node: str, namespace: str, event: dict[str, Any]) -> dict[str, Any] | None:
        client = self.registry if self.clients is None else self.clients.kubelet(node)
        try:
            return client.create(CORE_V1["events"], namespace, event)
        except errors.StatusError:
            return None  # e.g. the namespace is gone; a recorder drops the event, as client-go's does

    def kubelet_event(self, pod: dict[str, Any], node: str, reason: str, message: str, *, container: str = "",
                      type_: str = "Normal") -> dict[str, Any] | None:
        """A legacy-recorder event from the kubelet on ``node`` about ``pod`` (or one of its containers)."""
        meta = pod["metadata"]
        namespace = meta.get("namespace", "default")
        now = now_rfc3339()
        event = {
            "metadata": {"name": event_name(meta["name"]), "namespace": namespace},
            "involvedObject": involved(pod, f"spec.containers{{{container}}}" if container else ""),
            "reason": reason,
            "message": message,
            "source": {"component": "kubelet", "host": node},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": type_,
            "eventTime": None,
            "reportingComponent": "kubelet",
            "reportingInstance": node,
        }
        return self._create(node, namespace, event)
