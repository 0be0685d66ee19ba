"""Open watches on the lab's store: a bounded queue of committed changes per watch, filtered per watcher.

:class:`Watcher` is the lab's ``cacheWatcher`` (apiserver ``pkg/storage/cacher/cache_watcher.go``): the store offers
it every change of its resource (:meth:`~observatory.lab.store.Store.watch`), it keeps those its namespace and
selector let through, turning a change whose match flips into ADDED or DELETED, and it is closed when it falls too
far behind. :func:`safe_match` runs a selector without letting a bad one stop the fan-out.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from observatory.lab.store import Change

log = logging.getLogger("observatory.lab.store")

Predicate = Callable[[dict[str, Any]], bool]


@dataclass(eq=False)
class Watcher:
    """One open watch. The server drains :attr:`queue`; ``None`` in the queue means the store closed the watch.

    The queue holds at most ``limit`` changes. They are the store's own :class:`Change` objects, shared with the
    history and every other watcher, so a queued change costs a reference, not a copy. A watcher whose queue is full
    cannot keep up and is closed, as the cacher closes a ``cacheWatcher`` whose input channel stays full
    (``cache_watcher.go`` ``add``: "Forcing %v watcher close due to unresponsiveness"); the lab never blocks a write
    on a watcher, so it closes at once, where kube-apiserver first waits out its dispatch budget (at most 100 ms,
    ``time_budget.go``). The queued changes are dropped (``graceful = false``) and the client sees its stream end,
    as kube-apiserver's watcher sees: it watches again from its last resourceVersion, or relists on 410.
    """

    resource: str
    namespace: str | None
    predicate: Predicate | None
    queue: asyncio.Queue[Change | None] = field(default_factory=asyncio.Queue)
    limit: int = 100_000
    closed: bool = False
    min_rv: int = 0
    """Changes at or below this resourceVersion are never delivered (a watch from a future resourceVersion)."""
    identifier: str = ""
    """Who this watch is, for the unresponsive-close log line (the cacher's ``key: %q, labels: %q, fields: %q``).
    Watch streams (HTTP) set it; the lab's in-process informers leave it empty."""
    on_overflow: Callable[[], None] | None = None
    """Called once when the store closes this watcher for falling ``limit`` changes behind (the HTTP stream uses it
    to cut a connection whose writes are blocked, so the bytes waiting for that client are freed)."""

    def offer(self, change: Change) -> None:
        """Translate ``change`` for this watcher's filter and queue it (ADDED/DELETED when the match flips)."""
        if self.closed or change.resource != self.resource or change.rv <= self.min_rv:
            return
        if self.namespace is not None and change.key[1] != self.namespace:
            return
        pred = self.predicate
        if pred is None:
            self._put(change)
            return
        new_match = change.type != "DELETED" and safe_match(pred, change.obj)
        old_obj = change.obj if change.type == "DELETED" else change.old
        old_match = old_obj is not None and safe_match(pred, old_obj)
        if new_match and old_match:
            self._put(change)
        elif new_match:
            self._put(change.as_type("ADDED"))
        elif old_match and old_obj is not None:
            self._put(change.as_type("DELETED"))

    def _put(self, change: Change) -> None:
        if self.queue.qsize() >= self.limit:
            self.close_unresponsive()
            return
        self.queue.put_nowait(change)

    def close_unresponsive(self) -> None:
        """Close a watcher that fell ``limit`` changes behind: drop what it has queued, end it, tell its stream."""
        if self.closed:
            return
        queued = self.queue.qsize()
        # The cacher's klog.V(1) line (cache_watcher.go add); the lab has one queue where it has input and result.
        log.info("Forcing %s watcher close due to unresponsiveness: %s. len(c.input) = %d, len(c.result) = 0, "
                 "graceful = false", self.resource, self.identifier, queued)
        while not self.queue.empty():
            self.queue.get_nowait()
        self.close()
        if self.on_overflow is not None:
            self.on_overflow()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.queue.put_nowait(None)


def safe_match(predicate: Predicate, obj: dict[str, Any]) -> bool:
    """A selector that cannot read an object does not match it; it never stops the fan-out to other watchers."""
    try:
        return bool(predicate(obj))
    except Exception:
        return False

