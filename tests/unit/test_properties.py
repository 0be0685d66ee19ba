"""Bad input never crashes the record builders and parsers, property-based.

The strategies (:mod:`tests.unit.test_properties_strategies`) generate API JSON with missing, null and malformed
parts, huge messages, odd encodings, numbers for strings and strings for numbers, and bad timestamps. The
properties: the builders and parsers never raise, what they return has the documented types, and anything that
leaves the process as JSON can be encoded. Each bug hypothesis found has a plain regression test at the end, with
the minimal example it found.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from observatory.model.diagnosis import STATES, diagnose
from observatory.model.fit import FitIndex, bind_warnings, fit_preview, pod_info, simulator_preview
from observatory.model.records import EventView, LeaseView, NodeView, PodView, Taint
from observatory.model.rows import pending_row
from observatory.scheduling import quantity
from observatory.scheduling.fiterror import FitErrorParse, parse_fit_error, summary
from tests.unit.test_properties_strategies import (
    PROPERTY_SETTINGS,
    SMALL_SETTINGS,
    anything,
    events,
    fit_message,
    junk,
    leases,
    nodes,
    pods,
    taint,
    timestamp,
)
from tests.unit.test_properties_strategies import (
    quantity as quantities,
)

NOW = datetime(2026, 11, 29, 9, 30, 0, tzinfo=UTC)


def _aware_or_none(value: object) -> bool:
    return value is None or (isinstance(value, datetime) and value.tzinfo is not None)


def _strict_json(value: object) -> str:
    """What ``observatory why -o json`` would write: strict JSON (no NaN), encodable as UTF-8 once surrogates are
    escaped the way :func:`observatory.why.json_text` escapes them."""
    return json.dumps(value, allow_nan=False, ensure_ascii=True)


# -- records ------------------------------------------------------------------------------------------------------

@PROPERTY_SETTINGS
@given(st.one_of(pods(), anything))
def test_pod_view_from_any_json(raw):
    pod = PodView.from_api(raw)
    for field in ("namespace", "name", "uid", "resource_version", "node_name", "scheduler_name", "phase", "status",
                  "ready", "nominated_node", "simulator_filter", "simulator_selected"):
        assert isinstance(getattr(pod, field), str), field
    assert pod.scheduler_name  # defaulted when missing
    assert all(isinstance(g, str) for g in pod.gates)
    assert isinstance(pod.cpu_request_milli, int) and isinstance(pod.memory_request_bytes, int)
    assert isinstance(pod.priority, int) and isinstance(pod.deleting, bool)
    assert _aware_or_none(pod.created)
    assert pod.scheduled is None or all(isinstance(p, str) for p in pod.scheduled)
    hash(pod)  # frozen and hashable: ClusterState compares and caches them


@PROPERTY_SETTINGS
@given(st.one_of(nodes(), anything))
def test_node_view_from_any_json(raw):
    node = NodeView.from_api(raw)
    assert isinstance(node.name, str) and isinstance(node.ready, str) and node.ready
    assert node.state.split(",")[0] in ("Ready", "NotReady", "Unknown")
    assert all(isinstance(t, Taint) and isinstance(str(t), str) for t in node.taints)
    for value in (node.allocatable_cpu_milli, node.allocatable_memory_bytes, node.allocatable_pods):
        assert isinstance(value, int)
    assert list(node.roles) == sorted(node.roles)
    hash(node)


@PROPERTY_SETTINGS
@given(st.one_of(events(), anything))
def test_event_view_from_any_json(raw):
    ev = EventView.from_api(raw)
    for field in ("namespace", "name", "involved_kind", "involved_namespace", "involved_name", "involved_uid",
                  "type", "reason", "source", "message"):
        assert isinstance(getattr(ev, field), str), field
    assert isinstance(ev.count, int)
    assert _aware_or_none(ev.time)
    hash(ev)


@PROPERTY_SETTINGS
@given(st.one_of(leases, anything), st.datetimes(timezones=st.just(UTC)))
def test_lease_view_from_any_json(raw, now):
    lease = LeaseView.from_api(raw)
    assert isinstance(lease.holder, str) and isinstance(lease.duration_seconds, int)
    assert _aware_or_none(lease.renewed)
    assert isinstance(lease.live(now), bool)
    _strict_json(lease.to_json())


@PROPERTY_SETTINGS
@given(st.one_of(taint, junk))
def test_taint_from_any_json(raw):
    assert isinstance(str(Taint.from_api(raw)), str)


@PROPERTY_SETTINGS
@given(timestamp)
def test_timestamps_read_as_aware_utc_or_none(raw):
    ev = EventView.from_api({"metadata": {"name": "e", "creationTimestamp": raw}, "lastTimestamp": raw})
    assert ev.time is None or ev.time.utcoffset().total_seconds() == 0


# -- quantities ---------------------------------------------------------------------------------------------------

@PROPERTY_SETTINGS
@given(st.one_of(quantities, junk))
def test_quantity_parse_never_raises(raw):
    parsed = quantity.parse(raw)
    assert isinstance(parsed, (Decimal, quantity.InvalidQuantity))
    if isinstance(parsed, Decimal):
        assert parsed.is_finite() and abs(parsed) <= quantity.LIMIT
        assert isinstance(quantity.value(parsed), int) and isinstance(quantity.milli_value(parsed), int)
    else:
        assert isinstance(str(parsed), str)


# -- FailedScheduling messages ------------------------------------------------------------------------------------

@PROPERTY_SETTINGS
@given(st.one_of(fit_message, junk, st.binary(max_size=64)), st.integers(0, 6))
def test_parse_fit_error_and_summary_never_raise(message, max_items):
    parse = parse_fit_error(message)
    assert isinstance(parse, FitErrorParse)
    if isinstance(message, str):
        assert parse.raw == message
    line = summary(parse, max_items=max(max_items, 1))
    assert isinstance(line, str)
    assert "\n" not in line, "summary() is one line for the pending pane"
    if parse.recognized and parse.total is not None:
        assert isinstance(parse.available, int)


# -- diagnosis, rows, node fit --------------------------------------------------------------------------------------

def _views(pod_objs, node_objs, event_objs):
    node_views = {}
    for raw in node_objs:
        view = NodeView.from_api(raw)
        node_views[view.name] = view
    return [PodView.from_api(p) for p in pod_objs], node_views, [EventView.from_api(e) for e in event_objs]


@SMALL_SETTINGS
@given(st.lists(pods(), min_size=1, max_size=3), st.lists(nodes(), max_size=3), st.lists(events(), max_size=4),
       st.one_of(st.none(), leases.map(LeaseView.from_api)), st.dictionaries(st.text(max_size=5), st.none() |
       st.datetimes(timezones=st.just(UTC)), max_size=2), st.one_of(st.none(), st.text(max_size=5)))
def test_diagnose_and_pending_row_never_raise(pod_objs, node_objs, event_objs, lease, seen, scope):
    pod_views, node_views, event_views = _views(pod_objs, node_objs, event_objs)
    for pod in pod_views:
        d = diagnose(pod, event_views, node_views, now=NOW, schedulers_seen=seen, lease=lease, scope=scope)
        assert d.state in STATES
        assert isinstance(d.headline, str) and all(isinstance(line, str) for line in d.explanation)
        _strict_json(d.to_json())
        row = pending_row(pod, d, None)
        assert row.state == d.headline


@SMALL_SETTINGS
@given(st.lists(pods(), min_size=1, max_size=3), st.lists(nodes(), max_size=3), st.one_of(st.none(), st.just("ns")))
def test_fit_preview_and_bind_warnings_never_raise(pod_objs, node_objs, scope):
    index = FitIndex()
    pod_views, node_views, _ = _views(pod_objs, node_objs, [])
    for raw in node_objs:
        if NodeView.from_api(raw).name:  # as ClusterState feeds it: nodes with a name
            index.set_node(raw)
    for i, raw in enumerate(pod_objs):
        index.set_pod(f"k/{i}", raw)
    for i, (raw, pod) in enumerate(zip(pod_objs, pod_views, strict=True)):
        info = index.info(f"k/{i}")
        assert info is not None and info.identity == pod_info(raw).identity
        preview = fit_preview(pod, info, index, node_views, scope)
        _strict_json(preview.to_json())
        simulator_preview(pod, node_views)
        for node in [*node_views, "missing-node"]:
            warnings = bind_warnings(f"k/{i}", pod, node, node_views.get(node), preview.get(node), info, scope)
            assert all(isinstance(w, str) for w in warnings)
        index.remove_pod(f"k/{i}")


# -- regressions: the minimal examples hypothesis found -----------------------------------------------------------

def test_regression_timestamp_whose_utc_is_out_of_range_reads_as_none():
    """``0001-01-01T00:00:00+01:00`` parses, but its UTC time is before year 1: ``astimezone`` raised
    OverflowError, so one Event or Pod with it crashed every builder (and the watch worker that applied it)."""
    ev = EventView.from_api({"metadata": {"name": "e"}, "lastTimestamp": "0001-01-01T00:00:00+01:00"})
    assert ev.time is None
    lease = LeaseView.from_api({"spec": {"holderIdentity": "x", "renewTime": "9999-12-31T23:59:59-01:00"}})
    assert lease.renewed is None
    pod = PodView.from_api({"metadata": {"name": "p", "creationTimestamp": "0001-01-01T00:00:00+01:00"}})
    assert pod.created is None


def test_regression_number_where_a_list_belongs_in_a_pod_spec():
    """``spec.containers: -1``, ``matchFields: 91``, ``ports: 5``: the scheduling package iterated ``x or ()``, so a
    truthy number raised TypeError in PodInfo.from_pod, and with it ClusterState.apply (the pods watch worker)."""
    pod = {"metadata": {"name": "a", "namespace": "default"},
           "spec": {"containers": -1,
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "In", "values": 3}],
                                               "matchFields": 91}]},
                        "preferredDuringSchedulingIgnoredDuringExecution": 7}},
                    "tolerations": 1}}
    info = pod_info(pod)
    assert info.host_ports == ()
    pod["spec"]["containers"] = [{"name": "c", "ports": 5}]
    assert pod_info(pod).host_ports == ()
    node = {"metadata": {"name": "n1"}, "spec": {"taints": 2},
            "status": {"allocatable": {"cpu": "1", "pods": "10"}, "conditions": [{"type": "Ready", "status": "True"}]}}
    index = FitIndex()
    index.set_node(node)
    index.set_pod("default/a", pod)
    preview = fit_preview(PodView.from_api(pod), index.info("default/a"), index, {"n1": NodeView.from_api(node)})
    assert [n.node for n in preview.nodes] == ["n1"]


def test_regression_headline_quotes_a_huge_message_in_one_short_line():
    """A 1 MiB SchedulerError message went whole into the pending pane's one-line headline (and its column)."""
    message = "a\nb " + "x" * (1 << 20)
    pod = PodView.from_api({"metadata": {"name": "p", "namespace": "ns"}, "status": {"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "SchedulerError", "message": message}]}})
    d = diagnose(pod, [], {}, now=NOW)
    assert d.state == "scheduler-error" and d.headline.startswith("SchedulerError: a b xx")
    assert "\n" not in d.headline and len(d.headline) <= 120
    assert d.raw_message == "a\nb " + "x" * (1 << 20)  # in full where it is asked for (m, observatory why)
