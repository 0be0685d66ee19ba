"""An in-process informer: list-then-watch one resource of the lab's store into a cache, calling back on changes.

The simulated components are clients of the store, as kube-scheduler and kubelets are clients of the API server:
they read through the store's public list and watch and write through the registry, never into the store's dicts.
Listing and registering the watch happen in one synchronous step on the event loop, so no change falls in between.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from observatory.lab.store import Change, Store

log = logging.getLogger(__name__)

Handler = Callable[[str, dict[str, Any], dict[str, Any] | None], None]
"""handler(type, obj, old): type is ADDED, MODIFIED or DELETED; old is the previous cached state."""


class Informer:
    """A cache of one resource keyed by ``(namespace, name)``, kept current by a watch on the store."""

    def __init__(self, store: Store, resource: str, handler: Handler | None = None) -> None:
        self.store = store
        self.resource = resource
        self.handler = handler
        self.cache: dict[tuple[str, str], dict[str, Any]] = {}
        self._watcher: Any = None

    def start(self) -> list[dict[str, Any]]:
        """Fill the cache from a list and open the watch; returns the listed objects (already in the cache)."""
        items = list(self.store.iter(self.resource))
        self._watcher = self.store.watch(self.resource, None, None, since_rv=None)
        for obj in items:
            meta = obj["metadata"]
            self.cache[(meta.get("namespace", ""), meta["name"])] = obj
        return items

    def apply(self, change: Change) -> None:
        key = (change.key[1], change.key[2])
        old = self.cache.get(key)
        if change.type == "DELETED":
            self.cache.pop(key, None)
        else:
            self.cache[key] = change.obj
        if self.handler is not None:
            try:
                self.handler(change.type, change.obj, old)
            except Exception:
                log.exception("%s informer handler failed on %s", self.resource, key)

    async def run(self) -> None:
        """Deliver changes until cancelled; a watch the store closes is reopened with a fresh list."""
        if self._watcher is None:
            self.start()
        while True:
            change = await self._watcher.queue.get()
            if change is None:
                self.relist()
                continue
            self.apply(change)

    def relist(self) -> None:
        """The store closed the watch: list again and tell the handler what changed meanwhile, with no ghosts."""
        self.store.stop_watch(self._watcher)
        before, self.cache = self.cache, {}
        self.start()
        if self.handler is None:
            return
        for key, obj in self.cache.items():
            old = before.get(key)
            if old is None or old["metadata"].get("resourceVersion") != obj["metadata"].get("resourceVersion"):
                self.handler("ADDED" if old is None else "MODIFIED", obj, old)
        for key, old in before.items():
            if key not in self.cache:
                self.handler("DELETED", old, old)

    def stop(self) -> None:
        if self._watcher is not None:
            self.store.stop_watch(self._watcher)
            self._watcher = None
