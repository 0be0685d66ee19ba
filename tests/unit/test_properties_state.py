"""ClusterState.apply with arbitrary delta sequences never raises and never loses or invents objects.

Deltas (:mod:`observatory.model.deltas`) of any kind, about objects drawn from small pools of names so that they
collide (update, delete, relist), carrying hostile JSON; the clock moves on by random steps. After every delta each
selector the panes use is called, and the state is compared with a plain reference model: the pods, nodes and
events it holds are exactly those the deltas left (no ghosts, nothing lost), and its per-node indexes agree with
its pods.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from observatory.model._json import mapping, text
from observatory.model.deltas import EVENTS, NODES, PODS, WATCH_STATES, Deleted, Relisted, Upserted, WatchState
from observatory.model.state import ClusterState
from tests.unit.test_properties_strategies import (
    SMALL_SETTINGS,
    events,
    junk,
    nodes,
    odd_text,
    pods,
    timestamp,
    valid_pod,
)

T0 = datetime(2026, 11, 29, 9, 30, 0, tzinfo=UTC)
POOL = st.sampled_from(["a", "b", "c"])
NS_POOL = st.sampled_from(["default", "team"])
NODE_POOL = st.sampled_from(["n1", "n2", "gone"])


def _pool_pods():
    """Pods of three names in two namespaces, bound to one of three node names (one never exists) or to none."""
    return pods(POOL, NS_POOL, st.one_of(st.just(""), NODE_POOL))


KIND_OBJECTS = {PODS: _pool_pods(), NODES: nodes(NODE_POOL), EVENTS: events(POOL, POOL, NS_POOL)}
kinds = st.sampled_from([PODS, PODS, NODES, EVENTS])
upserts = kinds.flatmap(lambda k: st.builds(Upserted, st.just(k), KIND_OBJECTS[k],
                                            st.sampled_from(["ADDED", "MODIFIED", "MODIFIED", "", "BOGUS"])))
deltas = st.one_of(
    upserts, upserts, upserts,
    kinds.flatmap(lambda k: st.builds(Deleted, st.just(k), KIND_OBJECTS[k])),
    kinds.flatmap(lambda k: st.builds(Relisted, st.just(k), st.lists(KIND_OBJECTS[k], max_size=4).map(tuple),
                                      st.one_of(st.integers(0, 99).map(str), odd_text))),
    st.builds(WatchState, st.one_of(kinds, odd_text), st.one_of(st.sampled_from(WATCH_STATES), odd_text),
              st.one_of(st.none(), st.datetimes(timezones=st.just(UTC))), odd_text),
    st.builds(Upserted, st.one_of(odd_text, st.just("bogus")), junk),
).map(lambda d: [d])


def _bound(pod: dict, node: str) -> dict:
    return {**pod, "spec": {**pod["spec"], "nodeName": node}}


binds = st.builds(lambda pod, node: [Upserted(PODS, pod), Upserted(PODS, _bound(pod, node))],
                  valid_pod(POOL, NS_POOL, st.just("")), NODE_POOL)
"""A pod seen unbound, then bound: the "recently bound" transition."""
node_lists = st.lists(nodes(NODE_POOL), min_size=1, max_size=3).map(lambda objs: [Relisted(NODES, tuple(objs))])
steps_strategy = st.lists(st.tuples(st.one_of(deltas, deltas, deltas, binds, node_lists), st.floats(0, 30)),
                          min_size=4, max_size=20)
"""Any delta, including for kinds nobody watches, and objects that are not objects."""


def _key(obj, kind: str) -> str:
    meta = mapping(mapping(obj).get("metadata"))
    name = text(meta.get("name"))
    if not name:
        return ""
    return name if kind == NODES else f"{text(meta.get('namespace'))}/{name}"


class Reference:
    """What the deltas leave, by kind: key -> last object."""

    def __init__(self) -> None:
        self.objs: dict[str, dict[str, object]] = {PODS: {}, NODES: {}, EVENTS: {}}

    def apply(self, delta) -> None:
        if isinstance(delta, WatchState) or delta.kind not in self.objs:
            return
        table = self.objs[delta.kind]
        if isinstance(delta, Relisted):
            table.clear()
            for obj in delta.objs:
                if key := _key(obj, delta.kind):
                    table[key] = obj
            return
        key = _key(delta.obj, delta.kind)
        if not key:
            return
        if isinstance(delta, Deleted):
            table.pop(key, None)
        else:
            table[key] = delta.obj


def _check(state: ClusterState, ref: Reference) -> None:
    assert set(state.pods) == set(ref.objs[PODS]), "pods lost or ghosts left"
    assert set(state.nodes) == set(ref.objs[NODES]), "nodes lost or ghosts left"
    assert set(state.events) == set(ref.objs[EVENTS]), "events lost or ghosts left"
    pending = state.pending()
    keys = [row.pod.key for row in pending]
    assert len(keys) == len(set(keys)), "a pending pod listed twice"
    for key, pod in state.pods.items():
        if not pod.node_name or pod.phase in ("", "Pending"):
            assert key in keys, f"pending pod {key!r} missing from the pending rows"
    for place in state.placement():
        on_node = sorted((p for p in state.pods.values() if p.node_name == place.node.name),
                         key=lambda p: (p.namespace, p.name))
        assert [p.key for p in place.pods] == [p.key for p in on_node]
        live = [p for p in on_node if not p.terminal]
        assert place.pods_count == len(live)
        assert place.cpu_requested_milli == sum(p.cpu_request_milli for p in live)
        assert place.memory_requested_bytes == sum(p.memory_request_bytes for p in live)
    orphans = {p.key for p in state.orphans()}
    assert orphans == {k for k, p in state.pods.items() if p.node_name and p.node_name not in state.nodes}
    state.events_for(None)
    state.recently_bound_expiry()
    for key in list(state.pods)[:3]:
        state.events_for(key)
        state.timeline(key)
        assert state.diagnosis(key) is not None
        preview = state.fit(key, scope=None)
        assert preview is not None
        for node in [*list(state.nodes)[:2], "gone"]:
            assert all(isinstance(w, str) for w in state.bind_warnings(key, node))


@SMALL_SETTINGS
@given(steps_strategy)
def test_apply_any_delta_sequence(steps):
    now = [T0]
    state = ClusterState(lambda: now[0], recent_seconds=10.0, timeline_length=5, forget_seconds=20.0,
                         max_forgotten=3)
    ref = Reference()
    for batch, step in steps:
        now[0] += timedelta(seconds=step)
        for delta in batch:
            areas = state.apply(delta)
            assert areas <= {"pods", "nodes", "events", "watch", "timeline", "pending"}
            ref.apply(delta)
            _check(state, ref)
    for kind in (PODS, NODES, EVENTS):  # a final relist of nothing leaves nothing behind
        state.apply(Relisted(kind, ()))
    assert not state.pods and not state.nodes and not state.events and not state.pending()
    assert state.placement() == [] and state.orphans() == []


@SMALL_SETTINGS
@given(st.lists(st.one_of(_pool_pods(), pods()), max_size=6), st.lists(timestamp, min_size=1, max_size=6))
def test_events_with_any_timestamps_sort(pod_objs, stamps):
    """Events of one pod with null, absent, malformed and out-of-range times sort without comparing None."""
    state = ClusterState(lambda: T0)
    state.apply(Relisted(PODS, tuple(pod_objs)))
    evs = [{"metadata": {"name": f"e{i}", "namespace": "default", "creationTimestamp": stamp},
            "involvedObject": {"kind": "Pod", "name": "a", "namespace": "default"}, "reason": "FailedScheduling",
            "message": "0/1 nodes are available: 1 Insufficient cpu.", "lastTimestamp": stamp,
            "series": {"lastObservedTime": stamp} if i % 2 else None}
           for i, stamp in enumerate(stamps)]
    state.apply(Relisted(EVENTS, tuple(evs)))
    assert len(state.events_for("default/a")) == len(evs)
    state.events_for(None)
    state.pending()
    state.diagnosis("default/a")
