"""Watch events as bytes: each encoded once for every stream that sends it, and written in bounded pieces.

kube-apiserver's cacher wraps each event it dispatches in a ``cachingObject``, so an event going to many watchers is
serialized once per encoding (apiserver ``pkg/storage/cacher/caching_object.go``, ``cacher.go`` ``dispatchEvent``).
The lab does the same in two places:

* a committed change caches its encodings on itself (:attr:`~observatory.lab.store.Change.encoded`, keyed by the
  group version the stream serves), so a fan-out to N watchers serializes it once;
* the synthetic ADDED events a watch starts with (``resourceVersion`` unset or ``0``, and watch-list's
  ``sendInitialEvents=true``) come from :class:`SharedInitialEvents`: one table per (resource, group version) of
  object version -> ADDED line, shared by every stream sending initial events at the same time and dropped when
  the last of them has sent its own. N watches opened together over M bytes of objects hold M bytes of encodings,
  not N x M; once they are done sending, nothing of it is kept.

Streams write at most :data:`WRITE_CHUNK` bytes at a time and wait for the socket to drain in between (aiohttp's
``StreamWriter.write`` drains past 64 KiB), so a stream holds about that much of its own however far behind its
client is. Table watches (``as=Table``) are encoded per stream: only their first event carries
``columnDefinitions``, and the age cells depend on the moment they are printed.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from observatory.lab import printing
from observatory.lab.encoding import go_json, with_kind
from observatory.lab.resources import ResourceType
from observatory.lab.store import Change, Store

__all__ = ["WRITE_CHUNK", "Encoder", "SharedInitialEvents", "identifier", "shared_initial_events"]

WRITE_CHUNK = 64 * 1024
"""Bytes of watch events gathered into one write: aiohttp's ``StreamWriter.write`` waits for the transport to
drain once more than 64 KiB are buffered (its ``LIMIT``), so this bounds what one stream has buffered."""

ObjectKey = tuple[str, str]
"""(namespace, name) of a stored object; namespace is "" for cluster-scoped resources."""


class SharedInitialEvents:
    """ADDED lines of stored objects, shared by the watch streams sending initial events at the same time.

    :meth:`share` hands out the table of one (resource, group version) for the duration of a ``with`` block; the
    table lives while at least one block is open. Entries are keyed by object and checked by identity: the store
    never mutates a stored object, so the same dict is the same version.
    """

    def __init__(self) -> None:
        self._tables: dict[tuple[str, str], tuple[int, dict[ObjectKey, tuple[dict[str, Any], bytes]]]] = {}

    @contextlib.contextmanager
    def share(self, resource: str, api_version: str) -> Iterator[dict[ObjectKey, tuple[dict[str, Any], bytes]]]:
        key = (resource, api_version)
        users, table = self._tables.get(key, (0, {}))
        self._tables[key] = (users + 1, table)
        try:
            yield table
        finally:
            users, table = self._tables[key]
            if users == 1:
                del self._tables[key]
            else:
                self._tables[key] = (users - 1, table)

    def open_tables(self) -> dict[tuple[str, str], int]:
        """(resource, group version) -> streams sharing its table now; empty when no stream is sending."""
        return {key: users for key, (users, _) in self._tables.items()}


_SHARED: weakref.WeakKeyDictionary[Store, SharedInitialEvents] = weakref.WeakKeyDictionary()


def shared_initial_events(store: Store) -> SharedInitialEvents:
    """The :class:`SharedInitialEvents` of ``store`` (one per lab)."""
    shared = _SHARED.get(store)
    if shared is None:
        shared = _SHARED[store] = SharedInitialEvents()
    return shared


class Encoder:
    """Turns changes and stored objects into the newline-delimited WatchEvent bytes of one watch stream.

    ``wire`` turns a stored object into the object sent (default: the object with ``rt``'s kind and apiVersion),
    for a group that serves another's storage (events.k8s.io/v1 events). ``table`` encodes Table events.
    """

    def __init__(self, rt: ResourceType, *, wire: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                 table: bool = False, include_object: str = "Metadata") -> None:
        self.rt = rt
        self.wire = wire
        self.table = table
        self.include_object = include_object
        self._first_table = True

    def _object(self, obj: dict[str, Any]) -> dict[str, Any]:
        return self.wire(obj) if self.wire is not None else with_kind(obj, self.rt.kind, self.rt.api_version)

    def _encode(self, type_: str, obj: dict[str, Any]) -> bytes:
        if self.table:
            # Like the apiserver's watch encoder, only the first Table carries columnDefinitions.
            rt = self.rt
            obj = printing.table(rt.name, [obj], datetime.now(UTC), resource_version=obj["metadata"]["resourceVersion"],
                                 include_object=self.include_object, kind=rt.kind, api_version=rt.api_version,
                                 include_column_definitions=self._first_table, to_object=self.wire)
            self._first_table = False
            return go_json({"type": type_, "object": obj})
        return go_json({"type": type_, "object": self._object(obj)})

    def change(self, change: Change) -> bytes:
        """One WatchEvent line for ``change``, from the change's cache when another stream encoded it already.

        An ERROR change (a compaction's 410, see :mod:`observatory.lab.faults`) carries its Status as is."""
        if change.type == "ERROR":
            return go_json({"type": "ERROR", "object": change.obj})
        if self.table:
            return self._encode(change.type, change.obj)
        key = self.rt.api_version
        cached = change.encoded.get(key)
        if cached is None:
            cached = change.encoded[key] = self._encode(change.type, change.obj)
        return cached

    def added(self, obj: dict[str, Any], table: dict[ObjectKey, tuple[dict[str, Any], bytes]] | None) -> bytes:
        """The synthetic ADDED line for stored ``obj``, through ``table`` (from :meth:`SharedInitialEvents.share`)
        unless this is a Table stream."""
        if self.table or table is None:
            return self._encode("ADDED", obj)
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        hit = table.get(key)
        if hit is not None and hit[0] is obj:
            return hit[1]
        data = self._encode("ADDED", obj)
        table[key] = (obj, data)
        return data


def identifier(rt: ResourceType, namespace: str | None, label_selector: str, field_selector: str) -> str:
    """The cacher's name for a watch in its log lines: ``key: %q, labels: %q, fields: %q`` (``cacher.go``
    ``Watch``), the key being the storage key below the etcd prefix (``/pods`` or ``/pods/<namespace>``)."""
    key = f"/{rt.name}" + (f"/{namespace}" if namespace else "")
    return f"key: {_go_quote(key)}, labels: {_go_quote(label_selector)}, fields: {_go_quote(field_selector)}"


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
