"""Bad input never crashes ``observatory why``'s report or the lab's body decoders, property-based.

* ``why``: whatever the API server answered (:class:`~observatory.why.Gathered` of hostile JSON), the text report
  renders, stays printable (no control characters, escape sequences, bidi overrides or lone surrogates reach the
  terminal) and encodes as UTF-8; the ``-o json`` document is valid JSON, encodable as UTF-8, and reads back as
  the same value. The only documented failure is ValueError for a pod without a name.
* the lab: any bytes as a JSON, YAML or protobuf body end in a Status error (400, 413, 415), never in an exception
  the API would answer with 500; what decodes is plain JSON that Go could have sent.
* the panes' times: any timestamp, in any local time zone, prints as ``HH:MM:SS`` (or ``-``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from observatory.lab import decoding, errors, protobuf
from observatory.model.records import EventView, LeaseView
from observatory.ui.text import age, clock_time
from observatory.why import Gathered, json_text, render_text, safe, why_from
from tests.unit.test_properties_strategies import (
    PROPERTY_SETTINGS,
    SCALE,
    SMALL_SETTINGS,
    events,
    junk,
    leases,
    nodes,
    odd_text,
    pods,
    texty,
    unprintable,
)

NOW = datetime(2026, 11, 29, 9, 30, 0, tzinfo=UTC)
RENDER_SETTINGS = settings(SMALL_SETTINGS, max_examples=40 * SCALE)
"""A report with a 1 MiB message takes a second or two to wrap: fewer examples keep the file quick."""


def _report(got: Gathered) -> tuple[str, str] | None:
    """The text and JSON reports of ``got``, or None when the pod has no name (the one documented refusal)."""
    try:
        why = why_from(got, now=NOW)
    except ValueError as exc:
        assert "has no name" in str(exc)
        return None
    out = io.StringIO()
    render_text(why, out, now=NOW)
    return out.getvalue(), json_text(why)


def _check_report(report: tuple[str, str] | None) -> None:
    if report is None:
        return
    text, document = report
    assert not unprintable(text), f"unprintable characters reach the terminal: {unprintable(text)[:5]}"
    text.encode("utf-8")  # strict: what a UTF-8 stdout accepts
    document.encode("utf-8")
    assert json.loads(document)["kind"] == "Why"


@RENDER_SETTINGS
@given(pods(), st.lists(nodes(), max_size=3), st.lists(pods(), max_size=3), st.lists(events(), max_size=4),
       st.one_of(st.none(), leases.map(LeaseView.from_api),
                 odd_text.map(lambda p: LeaseView.unreadable("kube-system", "kube-scheduler", p))),
       st.one_of(st.none(), st.just("ns")), st.lists(texty, max_size=2))
def test_why_report_from_any_answer(pod, node_objs, pod_objs, event_objs, lease, scope, warnings):
    got = Gathered(pod=pod, nodes=node_objs, pods=pod_objs, events=event_objs, lease=lease, pods_scope=scope,
                   events_scope=scope, warnings=warnings)
    _check_report(_report(got))


@PROPERTY_SETTINGS
@given(texty)
def test_safe_leaves_nothing_unprintable(text):
    shown = safe(text)
    assert not unprintable(shown)
    shown.encode("utf-8")


# -- the lab's request bodies ---------------------------------------------------------------------------------------

json_bodies = st.one_of(
    st.binary(max_size=200),
    junk.map(lambda v: json.dumps(v, ensure_ascii=True).encode()),  # lone surrogates as \ud800 escapes, NaN
    junk.map(lambda v: json.dumps(v, ensure_ascii=False).encode("utf-8", "surrogatepass")),  # invalid UTF-8
    st.sampled_from([b"", b"{", b"[" * 5000 + b"]" * 5000, b'{"a": NaN}', b'{"a": Infinity}', b"\xff\xfe{}",
                     b'{"a": "\\ud800"}', b'{"a": 1e999}', b"\x00", b'{"metadata": {"name": "\\u001b[2J"}}',
                     b"a: &a [*a]", b"!!binary aGVsbG8=", b"? [a]\n: b", b"a: !!python/object:os.system x",
                     b"- " * 200 + b"x"]),
)


@PROPERTY_SETTINGS
@given(json_bodies, st.sampled_from(["application/json", "application/yaml", "application/x-yaml", ""]))
def test_lab_decodes_any_body_or_answers_a_status(raw, content_type):
    try:
        value = decoding.decode(raw, content_type)
    except errors.StatusError:
        return
    json.dumps(value, allow_nan=False).encode("utf-8")  # plain JSON, no lone surrogates


def _field(number: int, payload: bytes | int) -> bytes:
    def varint(n: int) -> bytes:
        out = b""
        while True:
            byte, n = n & 0x7F, n >> 7
            out += bytes([byte | (0x80 if n else 0)])
            if not n:
                return out
    if isinstance(payload, int):
        return varint(number << 3) + varint(payload)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


protobuf_parts = st.recursive(
    st.one_of(st.binary(max_size=12), st.sampled_from([b"Namespace", b"Pod", b"v1", b"\xff\xfe", b"Binding"])),
    lambda inner: st.lists(st.tuples(st.integers(1, 16), st.one_of(inner, st.integers(0, 2 ** 64))),
                           max_size=4).map(lambda fs: b"".join(_field(n, p) for n, p in fs)),
    max_leaves=10)
protobuf_bodies = st.one_of(
    st.binary(max_size=100).map(lambda b: protobuf.MAGIC + b),
    st.builds(lambda kind, raw, extra: protobuf.MAGIC + _field(1, _field(1, b"v1") + _field(2, kind)) + _field(2, raw)
              + extra, st.sampled_from([b"Namespace", b"Pod", b"Node", b"Binding", b"\xff"]), protobuf_parts,
              protobuf_parts),
    st.builds(lambda a, b: protobuf.MAGIC + _field(1, a) + _field(2, b), st.one_of(st.integers(0, 9), protobuf_parts),
              st.one_of(st.integers(0, 9), protobuf_parts)),
)


@PROPERTY_SETTINGS
@given(protobuf_bodies)
def test_lab_protobuf_decodes_or_raises_protobuf_error(raw):
    try:
        value = protobuf.decode(raw)
    except protobuf.ProtobufError:
        return
    assert value["kind"] in protobuf.MESSAGES


# -- regressions: the minimal examples hypothesis found -----------------------------------------------------------

@pytest.mark.parametrize("raw", [
    protobuf.MAGIC + _field(1, 5),  # typeMeta is a number, not a message
    protobuf.MAGIC + _field(1, _field(1, b"v1") + _field(2, b"\xff")),  # kind is not UTF-8
])
def test_regression_malformed_protobuf_is_a_protobuf_error(raw):
    """The lab answered these with 500 InternalError (TypeError, UnicodeDecodeError) instead of 415."""
    with pytest.raises(protobuf.ProtobufError):
        protobuf.decode(raw)


def test_regression_lone_surrogate_in_an_event_reaches_neither_terminal_nor_json_output():
    """A lone surrogate (``json.loads('"\\ud800"')``) in an Event message: ``observatory why`` raised
    UnicodeEncodeError writing the report to a UTF-8 stdout, in both the text and the JSON form."""
    got = Gathered(pod={"metadata": {"name": "p", "namespace": "default"},
                        "status": {"conditions": [{"type": "PodScheduled", "status": "False",
                                                   "reason": "Unschedulable", "message": "bad \ud800 byte"}]}})
    text, document = _report(got)
    text.encode("utf-8")
    assert "\\ud800" in text  # shown as an escape, not dropped
    assert json.loads(document)["diagnosis"]["failedScheduling"]["raw"] == "bad \ud800 byte"  # the same value


@pytest.mark.parametrize("body", [None, [], "pod", 5])
def test_regression_pod_answer_that_is_not_an_object_is_refused_in_words(body):
    """A pod GET answered with JSON that is not an object (``null``, a list): ``why_from`` raised AttributeError
    (a traceback at the command line); now it is the documented ValueError, which ``run`` prints in one line."""
    with pytest.raises(ValueError, match="has no name"):
        why_from(Gathered(pod=body), now=NOW)


# -- times in the panes ---------------------------------------------------------------------------------------------

ZONES = ["UTC", "America/New_York", "Asia/Tokyo", "Etc/GMT+12", "Etc/GMT-14"]


@contextlib.contextmanager
def local_zone(zone: str):
    """Run with ``TZ`` set to ``zone`` (what ``astimezone()`` reads), restored afterwards."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old
        time.tzset()


@PROPERTY_SETTINGS
@given(st.one_of(st.none(), st.datetimes(timezones=st.just(UTC)),
                 st.sampled_from([datetime.min.replace(tzinfo=UTC),
                                  datetime.max.replace(tzinfo=UTC)])),
       st.sampled_from(ZONES))
def test_pane_times_of_any_timestamp_in_any_zone(at, zone):
    with local_zone(zone):
        shown = clock_time(at)
        assert shown == "-" if at is None else len(shown) == 8
        assert isinstance(age(at, NOW), str)


@pytest.mark.parametrize("zone, at", [("America/New_York", "0001-01-01T00:00:00Z"),
                                      ("Asia/Tokyo", "9999-12-31T23:59:59Z")])
def test_regression_event_time_local_time_cannot_hold(zone, at):
    """An Event whose lastTimestamp is ``0001-01-01T00:00:00Z`` (Go's zero time, written out) crashed the events
    pane west of Greenwich: ``astimezone()`` raised OverflowError during the repaint."""
    ev = EventView.from_api({"metadata": {"name": "e"}, "lastTimestamp": at})
    with local_zone(zone):
        assert clock_time(ev.time) == at[11:19]
