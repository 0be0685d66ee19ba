"""Whether a watch stream still continues what a reflector holds, or the server lost history it had acknowledged.

A server restored from an older state after a crash hands out resourceVersions it already issued, and a watch
resumed across that restart delivers a history that does not continue the client's. :class:`Continuity` keeps what
a reflector needs to notice (the RV held, and which objects it holds) and :meth:`Continuity.check` names the break:

* an event or BOOKMARK whose RV is lower than the RV held (:func:`went_backwards`): the list RV the watch resumed
  from or the last event's. This covers an event older than the RV held for its object, and a resumed watch whose
  first event is older than what the reflector holds;
* a MODIFIED or DELETED event for an object not held (neither listed nor ADDED since): kube-apiserver's
  ``cacheWatcher`` (``apiserver/pkg/storage/cacher/cache_watcher.go``, ``convertToWatchEvent``) and etcd3's watcher
  (``apiserver/pkg/storage/etcd3/watcher.go``) send ADDED when an object starts to match the watch and DELETED when
  it stops, so a consistent stream never does this. A restored server that had issued the old RV again by the time
  the watch resumed accepts the resume and skips what came between; this is how the reflector notices.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["Continuity", "went_backwards"]

_DECIMAL = re.compile("0|[1-9][0-9]{0,30}")


def went_backwards(held: str, seen: str) -> bool:
    """True when resourceVersion ``seen`` (a watch event's or BOOKMARK's) is lower than ``held`` (the list RV the
    watch resumed from, or the last event's).

    resourceVersions are opaque to Kubernetes clients: in v1.34 the API conventions allow only equality, and
    client-go's reflector (``tools/cache/reflector.go``) stores whatever RV it last saw without comparing. Every
    etcd-backed server (kube-apiserver, and the lab) issues them as etcd revisions, decimal integers that only grow
    (KEP-5504 makes that comparison official from v1.35). So the comparison is applied only when both are canonical
    decimal integers (no sign, no leading zero, no ``_``, ASCII digits); any other pair never counts as backwards,
    and the reflector behaves as client-go's. An event whose RV equals the one held is not backwards (a BOOKMARK
    may repeat it)."""
    if not (_DECIMAL.fullmatch(held) and _DECIMAL.fullmatch(seen)):
        return False
    return int(seen) < int(held)


def _key(meta: Mapping[str, Any]) -> tuple[str, str]:
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class Continuity:
    """The ``(namespace, name)`` of every object a reflector of ``kind`` holds: its last list, plus ADDED, minus
    DELETED. The RV held is the reflector's own ``resource_version``, passed to :meth:`check`."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._held: set[tuple[str, str]] = set()

    def relisted(self, objs: Iterable[Mapping[str, Any]]) -> None:
        """Hold exactly the objects of a (re)list."""
        self._held = {_key(o.get("metadata") or {}) for o in objs}

    def check(self, type_: str, meta: Mapping[str, Any], held_rv: str) -> str | None:
        """The sentence saying why event ``type_`` (``ADDED``, ``MODIFIED``, ``DELETED``, ``BOOKMARK``) with object
        metadata ``meta`` does not continue what is held at ``held_rv``, or None when it does."""
        if type_ in ("MODIFIED", "DELETED") and _key(meta) not in self._held:
            name = "/".join(part for part in _key(meta) if part)
            return (f"The API server sent {type_} for {self.kind} {name}, which it never listed or added: it lost "
                    f"history, so the {self.kind} are listed again.")
        rv = str(meta.get("resourceVersion") or "")
        if rv and went_backwards(held_rv, rv):
            return (f"The API server sent {self.kind} at resourceVersion {rv}, older than the {held_rv} already "
                    f"seen: it lost history, so the {self.kind} are listed again.")
        return None

    def applied(self, type_: str, meta: Mapping[str, Any]) -> None:
        """Record an ADDED, MODIFIED or DELETED event that was passed on."""
        if type_ == "DELETED":
            self._held.discard(_key(meta))
        elif type_ in ("ADDED", "MODIFIED"):
            self._held.add(_key(meta))
