"""The lab's object store: objects, one global resourceVersion, bounded watch history and watch fan-out.

This plays the part of etcd plus kube-apiserver's watch cache:

* Objects are JSON dicts keyed by ``(resource, namespace, name)`` (namespace ``""`` for cluster-scoped kinds). They
  are stored *without* ``kind``/``apiVersion`` (list items carry neither) and are never mutated after a write: every
  write stores a new dict, so readers may hold on to what they got.
* Every write bumps one global counter, which becomes the object's ``metadata.resourceVersion`` (as etcd's revision
  does) and the list's ``metadata.resourceVersion``.
* The last ``history_size`` changes of each resource are kept, as kube-apiserver keeps one watch cache per
  resource. A watch from resourceVersion ``rv`` replays the changes after ``rv``; an ``rv`` older than the window
  gets ``too old resource version: %d (%d)``, as the cacher's ``getAllEventsSinceLocked`` answers (apiserver
  ``pkg/storage/cacher/watch_cache.go``).
* A watcher whose filter stops matching a modified object receives DELETED, and one that starts matching receives
  ADDED, as the cacher's ``processEvent`` does for selector watches.

Everything here is synchronous and runs on the server's event loop, so each write is atomic. It raises
:class:`~observatory.lab.errors.StatusError` for API errors and knows nothing of HTTP.
"""

from __future__ import annotations

import bisect
import collections
import logging
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from observatory.lab import errors
from observatory.lab.watchers import Predicate, Watcher, safe_match

__all__ = ["Change", "Key", "Predicate", "Store", "Watcher", "now_rfc3339", "safe_match"]

log = logging.getLogger(__name__)

Key = tuple[str, str, str]
"""(resource, namespace, name); namespace is "" for cluster-scoped resources."""


def now_rfc3339() -> str:
    """The current time as Kubernetes serialises ``metav1.Time``: RFC 3339, seconds, ``Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Change:
    """One committed write: ``type`` is ADDED, MODIFIED or DELETED; ``old`` is the previous state (None on ADDED).

    ``encoded`` caches wire encodings of this change (keyed by the encoder), so a fan-out to many watchers
    serialises each event once, as the cacher's ``cachingObject`` does. ``derived`` holds the ADDED or DELETED this
    change becomes for a selector watch whose match flips, made once and shared by every such watcher. Both live
    while the change is in the resource's history window or a watcher's queue, and are dropped when the last watch
    stream of the resource closes (:meth:`Store.stop_watch`).
    """

    rv: int
    type: str
    resource: str
    key: Key
    obj: dict[str, Any]
    old: dict[str, Any] | None
    encoded: dict[Any, bytes] = field(default_factory=dict, compare=False, repr=False)
    derived: dict[str, Change] = field(default_factory=dict, compare=False, repr=False)

    def as_type(self, type_: str) -> Change:
        """This change delivered as ``type_`` (ADDED or DELETED) to a watcher whose filter flipped, one per change.

        DELETED carries the last state that matched with this change's resourceVersion, as cacheWatcher's
        ``convertToWatchEvent`` sends it (apiserver ``pkg/storage/cacher/cache_watcher.go``).
        """
        made = self.derived.get(type_)
        if made is None:
            if type_ == "ADDED":
                made = Change(self.rv, "ADDED", self.resource, self.key, self.obj, None)
            else:
                old_obj = self.obj if self.type == "DELETED" else self.old
                assert old_obj is not None
                last = {**old_obj, "metadata": {**old_obj["metadata"], "resourceVersion": str(self.rv)}}
                made = Change(self.rv, "DELETED", self.resource, self.key, last, old_obj)
            self.derived[type_] = made
        return made


class Store:
    """Objects, the global resourceVersion, history and watchers. See the module docstring."""

    def __init__(self, history_size: int = 10_000, watch_queue_limit: int = 100_000) -> None:
        self._objects: dict[Key, dict[str, Any]] = {}
        self._sorted: dict[str, list[Key]] = collections.defaultdict(list)
        self._history_size = history_size
        self._history: dict[str, collections.deque[Change]] = collections.defaultdict(
            lambda: collections.deque(maxlen=history_size))
        self._watchers: set[Watcher] = set()
        self._watch_queue_limit = watch_queue_limit
        self.resource_version = 0
        self._compacted: dict[str, int] = collections.defaultdict(int)
        """resource -> every change of it with rv <= this has left its history window."""
        self._compacted_all = 0
        self.listeners: list[Callable[[Change], None]] = []
        """Synchronous callbacks run after each commit (simulations)."""
        self.journal: Callable[[Change], None] | None = None
        """Runs first in each commit, before any watcher or listener sees the change: the durable state
        (:meth:`observatory.lab.persistence.StateDatabase.record`). When it raises, the write is undone."""

    # -- reads ---------------------------------------------------------------------------------------------------

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        """The stored object, or None. ``namespace`` is "" for cluster-scoped resources."""
        return self._objects.get((resource, namespace, name))

    def iter(self, resource: str, namespace: str | None = None, after: Key | None = None) -> Iterator[dict[str, Any]]:
        """Objects of ``resource`` in etcd key order (namespace, then name), optionally in one namespace and
        strictly after ``after`` (for ``continue``)."""
        keys = self._sorted.get(resource, [])
        start = 0
        if after is not None:
            start = bisect.bisect_right(keys, after)
        elif namespace is not None:
            start = bisect.bisect_left(keys, (resource, namespace, ""))
        for i in range(start, len(keys)):
            key = keys[i]
            if namespace is not None and key[1] != namespace:
                if key[1] > namespace:
                    break
                continue
            yield self._objects[key]

    def count_after(self, resource: str, namespace: str | None, after: Key) -> int:
        """How many objects of ``resource`` (in ``namespace``, or all) sort after ``after``, in O(log n)."""
        keys = self._sorted.get(resource, [])
        start = bisect.bisect_right(keys, after)
        end = len(keys)
        if namespace is not None:
            start = max(start, bisect.bisect_left(keys, (resource, namespace, "")))
            end = bisect.bisect_left(keys, (resource, namespace + "\x00", ""))
        return max(0, end - start)

    def count(self, resource: str) -> int:
        return len(self._sorted.get(resource, ()))

    # -- writes --------------------------------------------------------------------------------------------------

    def _commit(self, type_: str, resource: str, key: Key, obj: dict[str, Any], old: dict[str, Any] | None) -> Change:
        change = Change(self.resource_version, type_, resource, key, obj, old)
        if self.journal is not None:
            self._write_ahead(change)
        history = self._history[resource]
        if len(history) == history.maxlen:
            self._compacted[resource] = history[0].rv
        history.append(change)
        for watcher in list(self._watchers):
            watcher.offer(change)
        for listener in self.listeners:
            try:
                listener(change)
            except Exception:
                log.exception("store listener failed on %s", key)
        return change

    def _next_rv(self) -> str:
        self.resource_version += 1
        return str(self.resource_version)

    def create(self, resource: str, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        """Store a new object, stamping uid, resourceVersion and creationTimestamp.

        Raises AlreadyExists (409) when the key is taken. ``obj`` must already be defaulted and validated.
        """
        meta = obj["metadata"]
        key = (resource, meta.get("namespace", ""), meta["name"])
        if key in self._objects:
            raise errors.already_exists(resource, meta["name"])
        meta = dict(meta)
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", now_rfc3339())
        meta.pop("resourceVersion", None)
        if dry_run:
            return _with_metadata(obj, meta)
        meta["resourceVersion"] = self._next_rv()
        new = _with_metadata(obj, meta)
        self._objects[key] = new
        bisect.insort(self._sorted[resource], key)
        self._commit("ADDED", resource, key, new, None)
        return new

    def update(
        self,
        resource: str,
        obj: dict[str, Any],
        *,
        expect_rv: str | None = None,
        expect_uid: str | None = None,
        dry_run: bool = False,
        conflict_resource: str | None = None,
    ) -> dict[str, Any]:
        """Replace an existing object, bumping its resourceVersion.

        ``expect_rv`` enforces optimistic concurrency: a different stored resourceVersion raises the upstream
        Conflict ``the object has been modified; …`` on ``conflict_resource`` (default ``resource``). A missing
        object raises NotFound. ``uid`` and ``creationTimestamp`` are kept from the stored object.
        """
        meta_in = obj["metadata"]
        key = (resource, meta_in.get("namespace", ""), meta_in["name"])
        old = self._objects.get(key)
        if old is None:
            raise errors.not_found(resource, meta_in["name"])
        if expect_rv and expect_rv != old["metadata"]["resourceVersion"]:
            raise errors.conflict(conflict_resource or resource, meta_in["name"], errors.OPTIMISTIC_LOCK_MESSAGE)
        if expect_uid and expect_uid != old["metadata"].get("uid"):
            raise errors.conflict(
                conflict_resource or resource,
                meta_in["name"],
                f"Precondition failed: UID in precondition: {expect_uid}, "
                f"UID in object meta: {old['metadata'].get('uid')}",
            )
        meta = dict(meta_in)
        for fixed in ("uid", "creationTimestamp"):
            if fixed in old["metadata"]:
                meta[fixed] = old["metadata"][fixed]
        if "deletionTimestamp" in old["metadata"]:
            meta.setdefault("deletionTimestamp", old["metadata"]["deletionTimestamp"])
            meta.setdefault("deletionGracePeriodSeconds", old["metadata"].get("deletionGracePeriodSeconds"))
        meta["resourceVersion"] = old["metadata"]["resourceVersion"]
        if dry_run:
            return _with_metadata(obj, meta)
        meta["resourceVersion"] = self._next_rv()
        new = _with_metadata(obj, meta)
        self._objects[key] = new
        self._commit("MODIFIED", resource, key, new, old)
        return new

    def delete(self, resource: str, namespace: str, name: str, *, dry_run: bool = False) -> dict[str, Any]:
        """Remove an object and return its last state; watchers get DELETED with a new resourceVersion."""
        key = (resource, namespace, name)
        old = self._objects.get(key)
        if old is None:
            raise errors.not_found(resource, name)
        if dry_run:
            return old
        meta = dict(old["metadata"])
        meta["resourceVersion"] = self._next_rv()
        last = _with_metadata(old, meta)
        del self._objects[key]
        keys = self._sorted[resource]
        keys.pop(bisect.bisect_left(keys, key))
        self._commit("DELETED", resource, key, last, old)
        return last

    # -- watch ---------------------------------------------------------------------------------------------------

    def watch(
        self,
        resource: str,
        namespace: str | None,
        predicate: Predicate | None,
        since_rv: int | None,
        *,
        limit: int | None = None,
        identifier: str = "",
    ) -> Watcher:
        """Open a watch delivering changes after ``since_rv`` (None: from now, the caller sends initial ADDEDs).

        Raises Expired (410) ``too old resource version: <rv> (<oldest-1>)`` when ``since_rv`` is older than the
        history window. For a ``since_rv`` ahead of the store only changes after it are delivered. ``limit`` is the
        most changes the watcher may fall behind before it is closed (default: the store's ``watch_queue_limit``),
        or what the replay from ``since_rv`` queued when that is more, so a resume is never closed for its replay
        (the cacher reads a resume's history from its watch cache, not through the watcher's input channel).
        """
        limit = limit or self._watch_queue_limit
        # The replay below is not a watcher falling behind: it may fill the queue past the limit (it holds the
        # history's own changes), and the limit then counts from what the replay left queued.
        watcher = Watcher(resource, namespace, predicate, limit=self._history_size + limit, identifier=identifier)
        if since_rv is not None and since_rv > self.resource_version:
            watcher.min_rv = since_rv
        elif since_rv is not None and since_rv < self.resource_version:
            compacted = self.compacted_rv(resource)
            if since_rv < compacted:
                raise errors.expired(f"too old resource version: {since_rv} ({compacted})")
            history = self._history[resource]
            start = bisect.bisect_right(_RvView(history), since_rv)
            for i in range(start, len(history)):
                watcher.offer(history[i])
        watcher.limit = max(limit, watcher.queue.qsize())
        self._watchers.add(watcher)
        return watcher

    def stop_watch(self, watcher: Watcher) -> None:
        """Forget ``watcher``. When it was the last watch stream of its resource (a watcher with an
        ``identifier``; the lab's in-process informers have none and encode nothing), the encodings cached on that
        resource's history are dropped, as the cacher drops its serializations once an event is dispatched: a
        later resume encodes what it replays again."""
        self._watchers.discard(watcher)
        watcher.closed = True
        resource = watcher.resource
        if watcher.identifier and not any(w.identifier and w.resource == resource for w in self._watchers):
            for change in self._history.get(resource, ()):
                change.encoded.clear()
                change.derived.clear()

    def close_all_watches(self) -> None:
        """End every open watch (lab shutdown, and later the ``drop-watches`` fault)."""
        for watcher in list(self._watchers):
            watcher.close()
        self._watchers.clear()

    def compacted_rv(self, resource: str) -> int:
        """Changes of ``resource`` up to this resourceVersion have left its history window."""
        return max(self._compacted[resource], self._compacted_all)

    def compact(self) -> None:
        """Drop all history, so every resume from an older resourceVersion gets 410 (etcd compaction)."""
        self._history.clear()
        self._compacted_all = self.resource_version

    @property
    def watcher_count(self) -> int:
        return len(self._watchers)

    # -- persistence ---------------------------------------------------------------------------------------------

    def _write_ahead(self, change: Change) -> None:
        """Hand ``change`` to the journal before anyone sees it. If the journal fails, the object map and the
        resourceVersion go back to what they were (nobody has observed the new RV yet, so it is not lost) and the
        write is answered ``500 InternalError`` ``Internal error occurred: ...``, as kube-apiserver answers a
        write etcd refused (``storage.NewInternalError``)."""
        assert self.journal is not None
        try:
            self.journal(change)
        except Exception as exc:
            log.error("the lab state refused the write of %s: %s", change.key, exc)
            key = change.key
            keys = self._sorted[change.resource]
            if change.type == "ADDED":
                del self._objects[key]
                keys.pop(bisect.bisect_left(keys, key))
            else:
                assert change.old is not None
                self._objects[key] = change.old
                if change.type == "DELETED":
                    bisect.insort(keys, key)
            self.resource_version -= 1
            raise errors.internal_error(f"the lab state database refused the write: {exc}") from None

    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready snapshot: ``{"resourceVersion": int, "objects": {resource: [obj, ...]}}``."""
        out: dict[str, list[dict[str, Any]]] = {}
        for resource, keys in self._sorted.items():
            out[resource] = [self._objects[k] for k in keys]
        return {"resourceVersion": self.resource_version, "objects": out}

    def restore(self, snap: dict[str, Any]) -> None:
        """Load a :meth:`snapshot`; the resourceVersion continues from the saved one and history starts empty."""
        self._objects.clear()
        self._sorted.clear()
        self._history.clear()
        for resource, objs in snap["objects"].items():
            for obj in objs:
                meta = obj["metadata"]
                key = (resource, meta.get("namespace", ""), meta["name"])
                self._objects[key] = obj
                self._sorted[resource].append(key)
            self._sorted[resource].sort()
        self.resource_version = int(snap["resourceVersion"])
        self._compacted.clear()
        self._compacted_all = self.resource_version


class _RvView:
    """A sequence view of the history's resourceVersions, for bisect."""

    __slots__ = ("_h",)

    def __init__(self, history: collections.deque[Change]) -> None:
        self._h = history

    def __len__(self) -> int:
        return len(self._h)

    def __getitem__(self, i: int) -> int:
        return self._h[i].rv


_META_ORDER = (
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
)


_EMPTY: tuple[Any, ...] = (None, {}, [], "")


def _with_metadata(obj: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``obj`` without kind/apiVersion whose metadata is ``meta`` in ObjectMeta's field order."""
    ordered = {k: meta[k] for k in _META_ORDER if meta.get(k) not in _EMPTY}
    ordered.update((k, v) for k, v in meta.items() if k not in ordered and v not in _EMPTY)
    new = {"metadata": ordered}
    new.update((k, v) for k, v in obj.items() if k not in ("kind", "apiVersion", "metadata"))
    return new
