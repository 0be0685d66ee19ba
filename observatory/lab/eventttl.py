"""Event expiry: every Event is deleted ``--event-ttl`` after its last write, as etcd's lease deletes it.

kube-apiserver stores Events with a TTL (``pkg/registry/core/event/storage/storage.go``: ``TTLFunc`` returns the
``--event-ttl`` seconds, default ``1h0m0s``, "Amount of time to retain events."), so each create and each update
attaches the key to an etcd lease of that length (``pkg/storage/etcd3/store.go`` ``ttlOpts``). When the lease runs
out etcd deletes the key: no admission, no finalizers, and watchers see DELETED with a new resourceVersion. A TTL
of 0 attaches no lease (``ttlOpts``: ``if ttl == 0 { return nil, nil }``): Events are then kept forever. The
apiserver passes ``uint64(EventTTL.Seconds())``, so the TTL is whole seconds.

core/v1 and events.k8s.io/v1 Events are one storage (:mod:`observatory.lab.events_v1`), the store's ``events``, so
this covers both. The lab deletes an Event exactly TTL after its last write; kube-apiserver's lease manager reuses a
lease granted up to ``min(5 % of the TTL, 60 s)`` longer (``lease_manager.go`` ``GetLease``), so upstream an Event
goes between TTL and TTL plus that. Events already stored when the lab starts (a restored state) count from the
newest time they carry (``lastTimestamp``, ``eventTime``, ``series.lastObservedTime``, ``creationTimestamp``), as
their lease kept running while the lab was down.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from observatory.lab.store import Change, Key, Store
from observatory.model.timefmt import timestamp

__all__ = ["RESOURCE", "EventTTL"]

log = logging.getLogger(__name__)

RESOURCE = "events"


class EventTTL:
    """Deletes each stored Event ``ttl`` seconds after its last write. ``clock`` gives seconds since the epoch.

    :meth:`start` lists the Events already stored and listens to the store's commits; :meth:`expire` deletes what is
    due; :meth:`run` does both until cancelled. Deadlines are kept in write order, which is deadline order because
    the TTL is one constant, so each write and each expiry costs O(1).
    """

    def __init__(self, store: Store, ttl: float, *, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.ttl = ttl
        self.clock = clock
        self._deadlines: collections.OrderedDict[Key, tuple[float, str]] = collections.OrderedDict()
        """Event key -> (deadline, resourceVersion of the write it counts from), soonest first."""
        self._wake = asyncio.Event()
        self.expired = 0
        """Events deleted so far."""

    def start(self) -> None:
        """Take the Events already stored (their deadline from the newest time each carries) and follow the store's
        commits from now on; one synchronous step, so no write falls in between."""
        now = self.clock()
        seeded = []
        for event in self.store.iter(RESOURCE):
            meta = event["metadata"]
            written = min(now, _last_write(event) or now)
            seeded.append((written + self.ttl, (RESOURCE, meta.get("namespace", ""), meta["name"]),
                           meta["resourceVersion"]))
        for deadline, key, rv in sorted(seeded):
            self._deadlines[key] = (deadline, rv)
        self.store.listeners.append(self.on_change)

    def stop(self) -> None:
        with contextlib.suppress(ValueError):
            self.store.listeners.remove(self.on_change)

    def on_change(self, change: Change) -> None:
        """A store listener: a created or updated Event gets a fresh lease; a deleted one is forgotten."""
        if change.resource != RESOURCE:
            return
        self._deadlines.pop(change.key, None)
        if change.type == "DELETED":
            return
        was_empty = not self._deadlines
        self._deadlines[change.key] = (self.clock() + self.ttl, change.obj["metadata"]["resourceVersion"])
        if was_empty:
            self._wake.set()

    def expire(self) -> float | None:
        """Delete every Event whose lease has run out; return the next deadline (None: no Event is waiting)."""
        now = self.clock()
        while self._deadlines:
            key, (deadline, rv) = next(iter(self._deadlines.items()))
            if deadline > now:
                return deadline
            self._deadlines.popitem(last=False)
            _, namespace, name = key
            current = self.store.get(RESOURCE, namespace, name)
            if current is not None and current["metadata"].get("resourceVersion") == rv:
                self.store.delete(RESOURCE, namespace, name)
                self.expired += 1
        return None

    @property
    def pending(self) -> int:
        """Events waiting for their lease to run out."""
        return len(self._deadlines)

    async def run(self) -> None:
        """:meth:`start`, then expire Events as their deadlines come, until cancelled."""
        self.start()
        try:
            while True:
                self._wake.clear()
                deadline = self.expire()
                if deadline is None:
                    await self._wake.wait()
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), max(0.0, deadline - self.clock()))
        finally:
            self.stop()


def _last_write(event: dict[str, Any]) -> float | None:
    """The newest time an Event carries, in seconds since the epoch, or None when it carries none."""
    series = event.get("series") if isinstance(event.get("series"), dict) else {}
    times = [timestamp(value) for value in (event["metadata"].get("creationTimestamp"), event.get("lastTimestamp"),
                                            event.get("eventTime"), (series or {}).get("lastObservedTime"))]
    known = [t for t in times if t is not None and t > datetime(1970, 1, 1, tzinfo=UTC)]
    return max(known).timestamp() if known else None
