"""What a reflector yields for one watched resource, and :class:`~.state.ClusterState` applies.

``kind`` is the resource: ``"pods"``, ``"nodes"`` or ``"events"``; ``"bound pods"`` is the cluster-wide watch of
pods with ``fieldSelector=spec.nodeName!=`` a screen scoped to one namespace keeps for node accounting. Objects are
the raw JSON dicts as served (list items or watch event objects); ClusterState turns them into records once per
change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = [
    "ADDED",
    "BOUND_PODS",
    "CONNECTING",
    "EVENTS",
    "FORBIDDEN",
    "KINDS",
    "LIVE",
    "MODIFIED",
    "NODES",
    "PODS",
    "RESYNCING",
    "STALE",
    "WATCH_STATES",
    "Deleted",
    "Delta",
    "Relisted",
    "Upserted",
    "WatchState",
]

PODS, NODES, EVENTS = "pods", "nodes", "events"
KINDS = (PODS, NODES, EVENTS)
BOUND_PODS = "bound pods"
"""Pods of every namespace with a ``spec.nodeName`` (``fieldSelector=spec.nodeName!=``), for node accounting only."""
ADDED, MODIFIED = "ADDED", "MODIFIED"
CONNECTING, LIVE, RESYNCING, STALE, FORBIDDEN = "connecting", "live", "resyncing", "stale", "forbidden"
WATCH_STATES = (CONNECTING, LIVE, RESYNCING, STALE, FORBIDDEN)


@dataclass(frozen=True, slots=True)
class Upserted:
    """A watch ADDED or MODIFIED event: ``obj`` is the object's new state, ``change`` ``"ADDED"``/``"MODIFIED"``."""

    kind: str
    obj: Mapping[str, Any]
    change: str = MODIFIED


@dataclass(frozen=True, slots=True)
class Deleted:
    """A watch DELETED event: ``obj`` is the object's last state."""

    kind: str
    obj: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Relisted:
    """The complete current set of ``kind`` after a (re)list, at list ``resource_version``.

    State diffs against it: objects it lacks are removed (no ghosts), the others updated (no duplicates).
    ``objs`` may be given as any iterable; it is stored as a tuple. ``rvs_reused``: the list follows a
    resourceVersion that went backwards (the server lost history and may have issued the same RVs again), so an
    object whose RV equals the one held may still differ and is rebuilt, never skipped.
    """

    kind: str
    objs: tuple[Mapping[str, Any], ...]
    resource_version: str = ""
    rvs_reused: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.objs, tuple):
            object.__setattr__(self, "objs", tuple(self.objs))


@dataclass(frozen=True, slots=True)
class WatchState:
    """The connection state of one resource's reflector.

    ``state``: ``"connecting"`` (first list not done), ``"live"`` (watching), ``"resyncing"`` (relisting after
    410 Expired or a dropped watch), ``"stale"`` (cannot reach the server; data as of ``since``) or
    ``"forbidden"`` (403 on list/watch). ``since`` is when this state began (aware), ``detail`` one readable
    sentence (the error, or "").
    """

    kind: str
    state: str
    since: datetime | None = None
    detail: str = ""


Delta = Upserted | Deleted | Relisted | WatchState
"""Anything a reflector yields."""
