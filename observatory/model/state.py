"""ClusterState: the pods, nodes and events one app has seen, kept current by deltas, with selectors for the panes.

``apply(delta)`` costs O(1) for one Upserted/Deleted (plus building one record) and O(n) for a Relisted of n
objects; it keeps indexes (unbound pods, pods by node, per-node request totals, events by involved pod uid and
name) so that selectors never rescan everything per row. Selectors are O(rows · log rows) and cache what did not
change, so a burst of 500 deltas followed by one ``pending()`` or ``placement()`` call is cheap.

All times come from the injected ``clock`` (aware UTC datetimes), so tests can drive the "recently bound" window.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ._json import mapping, text
from .access import NODE_DETAILS_FORBIDDEN, forbidden_node_warnings, node_details_forbidden
from .deltas import BOUND_PODS, EVENTS, FORBIDDEN, NODES, PODS, Deleted, Delta, Relisted, Upserted, WatchState
from .diagnosis import SCHEDULER_REASONS, Diagnosis, diagnose
from .fit import FitIndex, FitPreview, bind_warnings, fit_preview
from .node_accounting import BoundPods
from .records import EventView, LeaseView, NodeView, PodView, TimelineFrame
from .rows import NodePlacement, PendingRow, pending_row
from .timeline import Timelines

if TYPE_CHECKING:
    from observatory.scheduling.volumes import VolumeCatalog

__all__ = ["ClusterState", "NodePlacement", "PendingRow"]

Areas = frozenset[str]
_NONE: Areas = frozenset()
_EARLIEST = datetime.min.replace(tzinfo=UTC)


def utc_now() -> datetime:
    """The default clock: the current time, aware UTC."""
    return datetime.now(UTC)


def _sort_key(key: str) -> tuple[str, str, str]:
    """Sort ``"namespace/name"`` keys as (namespace, name) ("team" before "team-web")."""
    return key.partition("/")


def _event_order(ev: EventView) -> tuple[datetime, str, str]:
    """By time to the second (the legacy recorder's precision; events/v1 times carry microseconds), then by name,
    whose ``<object>.<hex unix nanoseconds>`` suffix orders events of the same second by creation, as kubectl's
    describe shows them."""
    return ((ev.time or _EARLIEST).replace(microsecond=0), ev.name, ev.namespace)


def _index_add(index: dict[str, set[str]], key: str, value: str) -> None:
    if key:
        index.setdefault(key, set()).add(value)


def _index_remove(index: dict[str, set[str]], key: str, value: str) -> None:
    members = index.get(key)
    if members is not None:
        members.discard(value)
        if not members:
            del index[key]


def _is_pod_event(ev: EventView) -> bool:
    return ev.involved_kind in ("Pod", "") and bool(ev.involved_name)


def _is_pending(pod: PodView | None) -> bool:
    """kubectl's Pending, and more: no node yet, or bound and not yet started (phase Pending, or no phase)."""
    return pod is not None and (not pod.node_name or pod.phase in ("", "Pending"))


class ClusterState:
    """Everything the panes show, built from deltas.

    ``apply`` returns which areas changed, a subset of ``{"pods", "nodes", "events", "watch", "timeline",
    "pending"}`` ("timeline": a pod timeline got a frame; "pending": pending rows may read differently, including
    a scheduler event about a pending pod). An empty set means the delta changed nothing.

    ``recent_seconds`` is the "recently bound" highlight window; ``timeline_length`` the frames kept per pod;
    timelines of deleted pods are forgotten after ``forget_seconds`` or beyond ``max_forgotten`` of them.
    """

    def __init__(self, clock: Callable[[], datetime] = utc_now, *, recent_seconds: float = 10.0,
                 timeline_length: int = 50, forget_seconds: float = 600.0, max_forgotten: int = 1000) -> None:
        self._clock = clock
        self.recent_seconds = recent_seconds
        self._pods: dict[str, PodView] = {}
        self._nodes: dict[str, NodeView] = {}
        self._events: dict[str, EventView] = {}
        self._watch: dict[str, WatchState] = {}
        self._list_rv: dict[str, str] = {}
        self._pending: set[str] = set()
        self._by_node: dict[str, set[str]] = {}
        self._node_totals: dict[str, tuple[int, int, int]] = {}
        self._events_by_uid: dict[str, set[str]] = {}
        self._events_by_name: dict[str, set[str]] = {}
        self._bound: dict[str, tuple[str, datetime]] = {}
        self._timelines = Timelines(timeline_length, forget_seconds, max_forgotten)
        self._sorted_pending: list[str] | None = []
        self._sorted_nodes: list[str] | None = []
        self._rows: dict[str, PendingRow] = {}
        self._node_pods: dict[str, tuple[PodView, ...]] = {}
        self._placements: dict[str, NodePlacement] = {}  # the last placement() of each node, reused while it holds
        self._fit = FitIndex()
        self._bound_pods = BoundPods()
        self._schedulers: dict[str, datetime | None] = {}

    # -- read-only views ---------------------------------------------------------------------------------------

    @property
    def pods(self) -> Mapping[str, PodView]:
        """Pods by ``"namespace/name"`` (a live read-only view)."""
        return MappingProxyType(self._pods)

    @property
    def nodes(self) -> Mapping[str, NodeView]:
        """Nodes by name (a live read-only view)."""
        return MappingProxyType(self._nodes)

    @property
    def events(self) -> Mapping[str, EventView]:
        """Events by ``"namespace/name"`` of the Event (a live read-only view)."""
        return MappingProxyType(self._events)

    @property
    def watch_states(self) -> Mapping[str, WatchState]:
        """The latest :class:`WatchState` per kind (a live read-only view)."""
        return MappingProxyType(self._watch)

    @property
    def nodes_forbidden(self) -> bool:
        """True while the nodes list/watch is refused (403): nodes are then known only by the pods'
        ``spec.nodeName``, and a node not in :attr:`nodes` is not "missing" (see :mod:`.access`)."""
        watch = self._watch.get(NODES)
        return watch is not None and watch.state == FORBIDDEN

    @property
    def resource_versions(self) -> Mapping[str, str]:
        """The list resourceVersion of each kind's latest Relisted (a live read-only view)."""
        return MappingProxyType(self._list_rv)

    # -- apply -------------------------------------------------------------------------------------------------

    def node_scope(self, namespace: str | None) -> str | None:
        """The namespace whose pods alone are counted on the nodes, for the fit preview and the bind warnings:
        None when every namespace's are (all namespaces shown, or the cluster-wide bound pods listed and not
        refused); else ``namespace``."""
        return None if namespace is None or self._bound_pods.counting else namespace

    @property
    def bound_pods_forbidden(self) -> bool:
        """The cluster-wide watch of bound pods was refused (403): node counts see only the shown namespace."""
        return self._bound_pods.forbidden

    def apply(self, delta: Delta) -> Areas:
        """Apply one delta; return the areas that changed (empty when nothing did)."""
        if delta.kind == BOUND_PODS:
            if not self._bound_pods.apply(delta, self._fit, self._pods.__contains__):
                return _NONE
            return frozenset({"nodes", "watch"}) if isinstance(delta, WatchState) else frozenset({"nodes"})
        if isinstance(delta, WatchState):
            if self._watch.get(delta.kind) == delta:
                return _NONE
            was = self.nodes_forbidden
            self._watch[delta.kind] = delta
            if self.nodes_forbidden != was:  # bound pods' diagnoses change between "missing" and "forbidden"
                self._rows.clear()
                return frozenset({"watch", "pending", NODES})
            return frozenset({"watch"})
        if isinstance(delta, Upserted):
            return self._apply_one(delta.kind, delta.obj, delta.change or "MODIFIED", deleted=False)
        if isinstance(delta, Deleted):
            return self._apply_one(delta.kind, delta.obj, "DELETED", deleted=True)
        if isinstance(delta, Relisted):
            return self._relist(delta)
        return _NONE

    def _apply_one(self, kind: str, obj: Mapping[str, Any], change: str, *, deleted: bool) -> Areas:
        areas: set[str] = set()
        if kind == PODS:
            key = self._key(obj)
            if key:
                now = self._clock()
                if deleted:
                    # The DELETED event carries the last state with the deletion's own resourceVersion.
                    self._set_pod(key, None, change, now, areas, last=PodView.from_api(obj))
                    self._fit.remove_pod(key)
                else:
                    self._set_pod(key, PodView.from_api(obj), change, now, areas)
                    self._fit.set_pod(key, obj)
                self._timelines.forget(now)
        elif kind == NODES:
            name = text(mapping(mapping(obj).get("metadata")).get("name"))
            if name:
                self._set_node(name, None if deleted else NodeView.from_api(obj), areas)
                if deleted:
                    self._fit.remove_node(name)
                else:
                    self._fit.set_node(obj)
        elif kind == EVENTS:
            key = self._key(obj)
            if key:
                self._set_event(key, None if deleted else EventView.from_api(obj), areas)
        return frozenset(areas)

    def _relist(self, delta: Relisted) -> Areas:
        kind = delta.kind
        if kind not in (PODS, NODES, EVENTS):
            return _NONE
        self._list_rv[kind] = delta.resource_version
        areas: set[str] = set()
        stores: dict[str, Mapping[str, Any]] = {PODS: self._pods, NODES: self._nodes, EVENTS: self._events}
        current = stores[kind]
        seen: dict[str, Mapping[str, Any]] = {}
        for obj in delta.objs:
            key = self._key(obj) if kind != NODES else text(mapping(mapping(obj).get("metadata")).get("name"))
            if key:
                seen[key] = obj
        now = self._clock()
        for key in [k for k in current if k not in seen]:  # ghosts: gone while we were not watching
            if kind == PODS:
                self._set_pod(key, None, "DELETED", now, areas)
                self._fit.remove_pod(key)
            elif kind == NODES:
                self._set_node(key, None, areas)
                self._fit.remove_node(key)
            else:
                self._set_event(key, None, areas)
        for key, obj in seen.items():
            old = current.get(key)
            rv = text(mapping(mapping(obj).get("metadata")).get("resourceVersion"))
            if old is not None and rv and old.resource_version == rv and not delta.rvs_reused:
                continue  # unchanged since we saw it: skip building the record
            if kind == PODS:
                self._set_pod(key, PodView.from_api(obj), "RELISTED", now, areas)
                self._fit.set_pod(key, obj)
            elif kind == NODES:
                self._set_node(key, NodeView.from_api(obj), areas)
                self._fit.set_node(obj)
            else:
                self._set_event(key, EventView.from_api(obj), areas)
        if kind == PODS:
            self._timelines.forget(now)
        return frozenset(areas)

    @staticmethod
    def _key(obj: Mapping[str, Any]) -> str:
        meta = mapping(mapping(obj).get("metadata"))
        name = text(meta.get("name"))
        return f"{text(meta.get('namespace'))}/{name}" if name else ""

    # -- pods --------------------------------------------------------------------------------------------------

    def _set_pod(self, key: str, new: PodView | None, change: str, now: datetime, areas: set[str], *,
                 last: PodView | None = None) -> None:
        old = self._pods.get(key)
        if old == new:
            return
        areas.add(PODS)
        was, now_pending = _is_pending(old), _is_pending(new)
        if was or now_pending or key in self._bound:
            areas.add("pending")
        if was != now_pending:
            self._sorted_pending = None  # membership changed; a modified pending pod keeps its place
            if now_pending:
                self._pending.add(key)
            else:
                self._pending.discard(key)
        if old is not None:
            self._unindex_pod(key, old)
        if new is None:
            del self._pods[key]
            self._bound.pop(key, None)
        else:
            self._pods[key] = new
            self._index_pod(key, new)
            bound = self._bound.get(key)
            if old is not None and not old.node_name and new.node_name and old.uid == new.uid:
                self._bound[key] = (new.node_name, now)  # an observed transition, not a pod first seen bound
            elif bound is not None and bound[0] != new.node_name:
                del self._bound[key]
        self._rows.pop(key, None)
        if self._timelines.record(key, last if new is None and last is not None else old, new, change, now):
            areas.add("timeline")

    def _index_pod(self, key: str, pod: PodView) -> None:
        """Pods by node and the node's totals (the unbound set is kept by :meth:`_set_pod`)."""
        if not pod.node_name:
            return
        _index_add(self._by_node, pod.node_name, key)
        self._node_pods.pop(pod.node_name, None)
        if not pod.terminal:
            cpu, mem, count = self._node_totals.get(pod.node_name, (0, 0, 0))
            self._node_totals[pod.node_name] = (cpu + pod.cpu_request_milli, mem + pod.memory_request_bytes, count + 1)

    def _unindex_pod(self, key: str, pod: PodView) -> None:
        if not pod.node_name:
            return
        _index_remove(self._by_node, pod.node_name, key)
        self._node_pods.pop(pod.node_name, None)
        if not pod.terminal:
            cpu, mem, count = self._node_totals[pod.node_name]
            totals = (cpu - pod.cpu_request_milli, mem - pod.memory_request_bytes, count - 1)
            if totals == (0, 0, 0) and pod.node_name not in self._by_node:
                del self._node_totals[pod.node_name]
            else:
                self._node_totals[pod.node_name] = totals

    # -- nodes and events ------------------------------------------------------------------------------------

    def _set_node(self, name: str, new: NodeView | None, areas: set[str]) -> None:
        old = self._nodes.get(name)
        if old == new:
            return
        areas.add(NODES)
        for key in self._by_node.get(name, ()):
            if key in self._pending:  # bound, not yet running: the node's readiness is part of the diagnosis
                self._rows.pop(key, None)
                areas.add("pending")
        if new is None:
            del self._nodes[name]
        else:
            self._nodes[name] = new
        if (old is None) != (new is None):
            self._sorted_nodes = None

    def _set_event(self, key: str, new: EventView | None, areas: set[str]) -> None:
        old = self._events.get(key)
        if old == new:
            return
        areas.add(EVENTS)
        for ev in (old, new):
            if ev is not None and _is_pod_event(ev):
                pod_key = ev.involved_key
                self._rows.pop(pod_key, None)
                if pod_key in self._pending and ev.reason in SCHEDULER_REASONS:
                    areas.add("pending")
        if old is not None and _is_pod_event(old):
            _index_remove(self._events_by_uid, old.involved_uid, key)
            _index_remove(self._events_by_name, old.involved_key, key)
        if new is None:
            del self._events[key]
            return
        self._events[key] = new
        if new.reason in SCHEDULER_REASONS and new.source:
            last = self._schedulers.get(new.source)
            if new.source not in self._schedulers or (new.time is not None and (last is None or new.time > last)):
                self._schedulers[new.source] = new.time
        if _is_pod_event(new):
            _index_add(self._events_by_uid, new.involved_uid, key)
            _index_add(self._events_by_name, new.involved_key, key)

    # -- selectors ---------------------------------------------------------------------------------------------

    def recently_bound(self) -> Mapping[str, str]:
        """Pod key -> node for pods seen going from no node to a node within ``recent_seconds`` (the initial
        list is not a transition). Expired entries are dropped here."""
        cutoff = self._clock() - timedelta(seconds=self.recent_seconds)
        for key in [k for k, (_, when) in self._bound.items() if when < cutoff]:
            del self._bound[key]
            self._rows.pop(key, None)
        return {key: node for key, (node, _) in self._bound.items()}

    def recently_bound_expiry(self) -> datetime | None:
        """When the next "recently bound" highlight ends (bound time + ``recent_seconds``), None when there is
        none: the moment to refresh the pending and node panes even if no delta comes."""
        self.recently_bound()
        if not self._bound:
            return None
        return min(when for _, when in self._bound.values()) + timedelta(seconds=self.recent_seconds)

    def _pod_event_keys(self, pod_key: str) -> set[str]:
        """The pod's events: by involved uid when the pod's uid is known (plus events that name no uid), else by
        involved namespace/name."""
        by_name = self._events_by_name.get(pod_key, ())
        pod = self._pods.get(pod_key)
        if pod is None or not pod.uid:
            return set(by_name)
        keys = set(self._events_by_uid.get(pod.uid, ()))
        keys.update(k for k in by_name if not self._events[k].involved_uid)
        return keys

    def _pod_events(self, pod_key: str) -> list[EventView]:
        return [self._events[k] for k in self._pod_event_keys(pod_key)]

    def _pending_keys(self) -> list[str]:
        if self._sorted_pending is None:
            self._sorted_pending = sorted(self._pending, key=_sort_key)
        return self._sorted_pending

    def pending(self) -> list[PendingRow]:
        """Every pod with an empty ``spec.nodeName`` or bound and still phase Pending, plus pods bound within
        ``recent_seconds`` (``bound_to`` set), sorted by (namespace, name). Each row carries its
        :class:`~.diagnosis.Diagnosis` (without the schedulers-seen and Lease details: see :meth:`diagnosis`)."""
        bound = self.recently_bound()
        keys = self._pending_keys()
        if bound:
            keys = sorted({*keys, *bound}, key=_sort_key)
        rows = []
        now = self._clock()
        for key in keys:
            row = self._rows.get(key)
            if row is None:
                pod = self._pods[key]
                diagnosis = diagnose(pod, self._pod_events(key), self._nodes, now=now)
                row = pending_row(pod, node_details_forbidden(diagnosis) if self.nodes_forbidden else diagnosis,
                                  bound.get(key))
                self._rows[key] = row
            rows.append(row)
        return rows

    def schedulers_seen(self) -> Mapping[str, datetime | None]:
        """Scheduler names seen emitting Scheduled or FailedScheduling events (``reportingComponent``, else
        ``source.component``) -> the latest such event's time. Names stay once seen."""
        return MappingProxyType(self._schedulers)

    def diagnosis(self, pod_key: str, *, lease: LeaseView | None = None, scope: str | None = None) -> Diagnosis | None:
        """The full :class:`~.diagnosis.Diagnosis` of one pod (None when unknown), with the schedulers seen and
        kube-scheduler's ``lease`` when given; ``scope`` is the one namespace watched, if any."""
        pod = self._pods.get(pod_key)
        if pod is None:
            return None
        diagnosis = diagnose(pod, self._pod_events(pod_key), self._nodes, now=self._clock(),
                             schedulers_seen=self._schedulers, lease=lease, scope=scope)
        return node_details_forbidden(diagnosis) if self.nodes_forbidden else diagnosis

    @property
    def fit_generation(self) -> int:
        """Changes whenever something :meth:`fit` reads changed (:attr:`~.fit.FitIndex.generation`): an equal
        number means the last preview still holds."""
        return self._fit.generation

    def set_volumes(self, catalog: VolumeCatalog | None) -> None:
        """The PVCs, PVs and StorageClasses :meth:`fit` gives the volume plugins (None: it cannot see volumes)."""
        self._fit.set_volumes(catalog)

    def fit(self, pod_key: str, scope: str | None = None) -> FitPreview | None:
        """The node-fit preview of one pod (None when unknown): :func:`~.fit.fit_preview` over the cached nodes and
        pods. ``scope``: the only namespace whose pods are watched (so counted on the nodes), if any."""
        pod, info = self._pods.get(pod_key), self._fit.info(pod_key)
        if pod is None or info is None:
            return None
        preview = fit_preview(pod, info, self._fit, self._nodes, scope)
        if self.nodes_forbidden and not preview.nodes:
            return replace(preview, label=f"no verdicts: {NODE_DETAILS_FORBIDDEN} (listing nodes is refused)")
        return preview

    def bind_warnings(self, pod_key: str, node: str, scope: str | None = None) -> list[str]:
        """What stands in the way of binding ``pod_key`` to ``node`` (see :func:`~.fit.bind_warnings`); ``scope``
        is the only namespace watched, if any."""
        if self.nodes_forbidden and node not in self._nodes:
            return forbidden_node_warnings(pod_key, self._pods.get(pod_key), node, scope)
        preview = self.fit(pod_key, scope)
        return bind_warnings(pod_key, self._pods.get(pod_key), node, self._nodes.get(node),
                             preview.get(node) if preview is not None else None, self._fit.info(pod_key), scope)

    def events_for(self, pod_key: str | None) -> list[EventView]:
        """The events of one pod (``"namespace/name"``), or with None those of every pending row's pod; sorted by
        time (missing times first), then event name. One row per Event object: a repeat replaces it."""
        if pod_key is not None:
            keys = self._pod_event_keys(pod_key)
        else:
            keys = set()
            for key in [*self._pending_keys(), *self.recently_bound()]:
                keys |= self._pod_event_keys(key)
        return sorted((self._events[k] for k in keys), key=_event_order)

    def placement(self) -> list[NodePlacement]:
        """One :class:`NodePlacement` per node, sorted by node name. Pods bound to nodes that do not exist are
        in :meth:`orphans`."""
        if self._sorted_nodes is None:
            self._sorted_nodes = sorted(self._nodes)
        recent: dict[str, set[str]] = {}
        for key, bound_to in self.recently_bound().items():
            recent.setdefault(bound_to, set()).add(key)
        out = []
        made = self._placements
        for name in self._sorted_nodes:
            # The placement of an unchanged node is the same object as last time, so the nodes pane finds the
            # change by identity; 1,000 nodes cost 1,000 look-ups, not 1,000 new objects.
            node, pods = self._nodes[name], self._pods_on(name)
            cpu, mem, count = self._node_totals.get(name, (0, 0, 0))
            bound_here = recent.get(name)
            was = made.get(name)
            if (was is None or was.node is not node or was.pods is not pods or was.pods_count != count
                    or was.cpu_requested_milli != cpu or was.memory_requested_bytes != mem
                    or (was.recently_bound != bound_here if bound_here else was.recently_bound)):
                was = made[name] = NodePlacement(node, pods, cpu, mem, count, frozenset(bound_here or ()))
            out.append(was)
        if len(made) > 2 * len(self._nodes) + 64:  # forget deleted nodes now and then
            self._placements = {name: made[name] for name in self._nodes if name in made}
        return out

    def _pods_on(self, node: str) -> tuple[PodView, ...]:
        pods = self._node_pods.get(node)
        if pods is None:
            pods = tuple(self._pods[k] for k in sorted(self._by_node.get(node, ()), key=_sort_key))
            self._node_pods[node] = pods
        return pods

    def orphans(self) -> list[PodView]:
        """Pods bound to a node that does not exist, sorted by (namespace, name)."""
        pods = [p for node in self._by_node if node not in self._nodes for p in self._pods_on(node)]
        return sorted(pods, key=lambda p: (p.namespace, p.name))

    def timeline(self, pod_key: str) -> list[TimelineFrame]:
        """The pod's frames, oldest first: its first sighting, then each delta that changed ``spec.nodeName``,
        phase or STATUS text, and its deletion. The last ``timeline_length`` are kept."""
        return self._timelines.get(pod_key)
