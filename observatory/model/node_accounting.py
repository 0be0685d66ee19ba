"""Node accounting beyond the namespace shown: the bound pods of every namespace, counted in the fit index only.

A screen scoped to one namespace (``-n sched-lab``) shows that namespace's pods in its panes, but what fits on a
node depends on every pod bound there. :class:`BoundPods` applies the deltas of the cluster-wide watch of pods with
``fieldSelector=spec.nodeName!=`` (kind ``"bound pods"``, as ``observatory schedule`` keeps) to the
:class:`~.fit.FitIndex` behind the fit preview, the bind warnings and the diagnosis, never to the panes' pods. A pod
of the shown namespace comes through both watches under the same key; setting it twice is harmless, and a relist
of the bound pods leaves such a pod to the namespace's own watch. Pure, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ._json import mapping, text
from .deltas import FORBIDDEN, Deleted, Delta, Relisted, Upserted, WatchState
from .fit import FitIndex

__all__ = ["BoundPods"]


def _key(obj: Mapping[str, Any]) -> str:
    meta = mapping(mapping(obj).get("metadata"))
    name = text(meta.get("name"))
    return f"{text(meta.get('namespace'))}/{name}" if name else ""


class BoundPods:
    """What the cluster-wide bound pods' watch has put into the fit index: ``keys`` (``namespace/name``), whether it
    has listed, and its latest watch state."""

    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.listed = False
        self.state: WatchState | None = None

    @property
    def forbidden(self) -> bool:
        """The list or watch was refused (403): only the shown namespace's pods count on the nodes."""
        return self.state is not None and self.state.state == FORBIDDEN

    @property
    def counting(self) -> bool:
        """Every namespace's bound pods are in the fit index (listed, and not refused since)."""
        return self.listed and not self.forbidden

    def apply(self, delta: Delta, fit: FitIndex, shown: Callable[[str], bool]) -> bool:
        """Apply one delta to ``fit``; ``shown(key)`` says whether a pod is one of the panes' (the namespace's own
        watch keeps those). Returns whether what the fit preview reads may have changed."""
        if isinstance(delta, WatchState):
            was = self.counting
            self.state = delta
            return self.counting != was
        if isinstance(delta, Relisted):
            was = self.counting
            seen = {key: obj for obj in delta.objs if (key := _key(obj))}
            for key in self.keys - seen.keys():
                if not shown(key):
                    fit.remove_pod(key)
            for key, obj in seen.items():
                fit.set_pod(key, obj)
            self.keys = set(seen)
            self.listed = True
            return bool(seen) or self.counting != was
        if isinstance(delta, Upserted):
            key = _key(delta.obj)
            if key:
                self.keys.add(key)
                fit.set_pod(key, delta.obj)
            return bool(key)
        if isinstance(delta, Deleted):
            key = _key(delta.obj)
            if key:
                self.keys.discard(key)
                fit.remove_pod(key)
            return bool(key)
        return False
