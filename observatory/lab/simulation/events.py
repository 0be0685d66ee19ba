"""Writing Events the way the two recorders of a real cluster do, seen through core/v1 (reference §4.1-§4.2).

* kube-scheduler uses the events/v1 recorder (client-go ``tools/events``): ``eventTime`` set, ``source: {}``, first
  and last timestamps null, no ``count``, ``reportingComponent``/``reportingInstance`` and ``action`` set. A repeat
  of the same event within six minutes updates the existing object's ``series`` {count, lastObservedTime} instead of
  creating a new one (``event_broadcaster.go`` ``recordToSink``).
* The kubelet uses the legacy recorder (``tools/record``): name ``<object>.<hex unixnano>``, first/last timestamps,
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
from observatory.lab.store import now_rfc3339

SERIES_WINDOW_SECONDS = 6 * 60
"""client-go ``tools/events``: isomorphic events within this window become one event with a series."""


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
    """Creates (and for the events/v1 recorder, aggregates) Events in the lab through its registry."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._series: dict[tuple[str, ...], tuple[str, str, float]] = {}
        """isomorphic key -> (namespace, event name, monotonic time of the first occurrence)"""

    def _create(self, namespace: str, event: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return self.registry.create(CORE_V1["events"], namespace, event)
        except errors.StatusError:
            return None  # e.g. the namespace is gone; a recorder drops the event, as client-go's does

    def scheduler_event(self, pod: dict[str, Any], type_: str, reason: str, action: str, message: str, *,
                        controller: str, instance: str) -> dict[str, Any] | None:
        """An events/v1 event from a scheduler profile, read back as core/v1; repeats update the series."""
        meta = pod["metadata"]
        namespace = meta.get("namespace", "default")
        key = (meta.get("uid", ""), type_, reason, action, message, controller, instance)
        now = time.monotonic()
        seen = self._series.get(key)
        if seen is not None and now - seen[2] < SERIES_WINDOW_SECONDS:
            stored = self.registry.store.get("events", seen[0], seen[1])
            if stored is not None:
                series = dict(stored.get("series") or {"count": 1})
                series["count"] = int(series.get("count", 1)) + 1
                series["lastObservedTime"] = micro_time()
                updated = {**stored, "series": series}
                try:
                    return self.registry.update(CORE_V1["events"], seen[0], seen[1], updated)
                except errors.StatusError:
                    pass
        event = {
            "metadata": {"name": event_name(meta["name"]), "namespace": namespace},
            "involvedObject": involved(pod),
            "reason": reason,
            "message": message,
            "source": {},
            "firstTimestamp": None,
            "lastTimestamp": None,
            "type": type_,
            "eventTime": micro_time(),
            "action": action,
            "reportingComponent": controller,
            "reportingInstance": instance,
        }
        created = self._create(namespace, event)
        if created is not None:
            self._series[key] = (namespace, created["metadata"]["name"], now)
        return created

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
        return self._create(namespace, event)
