"""The --record / replay JSON Lines format: exact round trips, readable errors with line numbers, replay timing."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta, timezone

import pytest

from observatory.model.deltas import Deleted, Relisted, Upserted, WatchState
from observatory.model.recording import (
    DeltaEntry,
    ExchangeEntry,
    Header,
    KeyEntry,
    Recorder,
    RecordingError,
    decode_line,
    encode_delta,
    encode_exchange,
    encode_header,
    encode_key,
    read_recording,
    schedule,
)
from observatory.model.state import ClusterState

from . import lab_json
from .test_exchange import exchange

T0 = datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC)


def header(**over) -> Header:
    fields = dict(started=T0, context="observatory-lab", server="http://127.0.0.1:43121", namespace="", lab=True)
    fields.update(over)
    return Header(**fields)


def every_delta() -> list:
    rec = lab_json.manual_binding()
    pod = rec.initial.pod("sched-lab/manual")
    pod["metadata"]["annotations"] = {"note": "caf\u00e9 \u2028 line\nbreak"}  # non-ASCII and line breaks
    return [
        Relisted("pods", rec.initial.pods, rec.initial.resource_version),
        Relisted("nodes", (), ""),
        Relisted("pods", rec.initial.pods, "495", rvs_reused=True),
        Upserted("pods", pod, "ADDED"),
        Upserted("pods", rec.changes[0][3], "MODIFIED"),
        Deleted("events", rec.initial.events[0] if rec.initial.events else {"metadata": {"name": "e"}}),
        WatchState("pods", "live", T0 + timedelta(seconds=1, microseconds=250), ""),
        WatchState("events", "stale", datetime(2026, 11, 29, 11, 0, tzinfo=timezone(timedelta(hours=2))),
                   "The connection to 127.0.0.1:43121 was refused."),
        WatchState("nodes", "connecting"),
    ]


@pytest.mark.parametrize("index", range(9))
def test_every_delta_round_trips(index):
    delta = every_delta()[index]
    line = encode_delta(delta, t=1.25, at=T0)
    assert "\n" not in line and line.isascii()
    entry = decode_line(line)
    assert entry == DeltaEntry(1.25, T0, delta)
    assert type(entry.delta) is type(delta)
    assert json.loads(line)["type"] == "delta" and json.loads(line)["kind"] == delta.kind


def test_exchanges_round_trip_text_binary_and_failed():
    conflict = json.dumps(lab_json.manual_binding().conflict, separators=(",", ":")).encode() + b"\n"
    cases = [
        exchange(),
        exchange(status=409, reason="Conflict", response_body=conflict),
        exchange(response_body=b"\xff\xfe\x00binary", request_body=b"caf\xc3\xa9"),
        exchange(status=0, reason="", response_headers=(), response_body=b"",
                 error="The connection to 127.0.0.1:6443 was refused.",
                 sent_at=datetime(2026, 11, 29, 11, 0, 0, 123456, tzinfo=timezone(timedelta(hours=-5)))),
    ]
    for ex in cases:
        line = encode_exchange(ex, t=2.5, at=T0)
        assert "\n" not in line
        assert decode_line(line) == ExchangeEntry(2.5, T0, ex)
    binary = json.loads(encode_exchange(cases[2], t=0, at=T0))
    assert binary["responseBodyBase64"] is True and binary["requestBodyBase64"] is False
    assert binary["requestBody"] == "caf\u00e9"


def test_header_and_key_round_trip():
    assert decode_line(encode_header(header())) == header()
    assert decode_line(encode_key("ctrl+p", t=0.0, at=T0)) == KeyEntry(0.0, T0, "ctrl+p")
    assert json.loads(encode_header(header())) == {
        "type": "header", "format": "observatory-recording", "version": 2, "started": "2026-11-29T10:00:00Z",
        "context": "observatory-lab", "server": "http://127.0.0.1:43121", "namespace": "", "lab": True}


def test_no_credential_reaches_a_recording():
    token = "s3cr3t-bearer-token-0123"
    lines = [encode_header(header(server=f"https://admin:{token}@10.0.0.1:6443")),
             encode_exchange(exchange(request_headers=(("Authorization", f"Bearer {token}"),
                                                       ("Cookie", f"session={token}"))), t=1, at=T0)]
    assert all(token not in line and "admin" not in line for line in lines)
    assert read_recording(lines).header.server == "https://10.0.0.1:6443"


def test_recorder_writes_a_file_that_reads_back():
    recorder = Recorder(header())
    deltas = every_delta()
    lines = [recorder.header_line()]
    lines += [recorder.delta(d, T0 + timedelta(seconds=i * 0.5)) for i, d in enumerate(deltas)]
    lines.append(recorder.key("b", T0 + timedelta(seconds=5)))
    lines.append(recorder.exchange(exchange(), T0 + timedelta(seconds=5, milliseconds=4)))
    text = "\n".join(lines) + "\n\n"
    recording = read_recording(text.splitlines(keepends=True))
    assert recording.header == header()
    assert [e.delta for e in recording.entries if isinstance(e, DeltaEntry)] == deltas
    assert [e.t for e in recording.entries] == [i * 0.5 for i in range(len(deltas))] + [5.0, 5.004]
    assert isinstance(recording.entries[-2], KeyEntry) and recording.entries[-2].key == "b"
    assert recording.entries[-1].exchange == exchange() and recording.duration == 5.004


def test_replaying_a_recording_rebuilds_the_same_state():
    rec = lab_json.manual_binding()
    deltas = [Relisted(kind, getattr(rec.initial, kind), rec.initial.resource_version)
              for kind in ("nodes", "pods", "events")]
    deltas += [Deleted(kind, obj) if type_ == "DELETED" else Upserted(kind, obj, type_)
               for _rv, type_, kind, obj in rec.changes]
    recorder = Recorder(header())
    lines = [recorder.header_line()] + [recorder.delta(d, T0 + timedelta(seconds=i)) for i, d in enumerate(deltas)]

    def build(entries) -> ClusterState:
        now = [T0]
        state = ClusterState(lambda: now[0])
        for entry in entries:
            now[0] = entry.at
            state.apply(entry.delta)
        return state

    recorded = [DeltaEntry(float(i), T0 + timedelta(seconds=i), d) for i, d in enumerate(deltas)]
    once, twice = build(recorded), build(read_recording(lines).entries)
    key = "sched-lab/manual"
    assert once.timeline(key) == twice.timeline(key) and len(twice.timeline(key)) >= 3
    assert [r.pod for r in once.pending()] == [r.pod for r in twice.pending()]
    assert once.events_for(key) == twice.events_for(key)


@pytest.mark.parametrize(("lines", "expected"), [
    ([], "the recording is empty: no header line"),
    (["", "   "], "the recording is empty: no header line"),
    (["{not json"], "line 1: not valid JSON"),
    (['{"type":"key","t":0,"at":"2026-11-29T10:00:00Z","key":"b"}'], "line 1: KeyEntry before the header"),
    ([encode_header(header()), encode_header(header())], "line 2: a second header"),
    ([encode_header(header()), "[1, 2]"], "line 2: not a JSON object"),
    ([encode_header(header()), '{"type":"mouse"}'], "line 2: unknown entry type 'mouse'"),
    ([encode_header(header()), "", '{"type":"delta","t":1,"at":"2026-11-29T10:00:01Z","delta":"upserted",'
                                    '"change":"ADDED","obj":{}}'], "line 3: delta entry: 'kind' is missing"),
    ([encode_header(header()), '{"type":"delta","t":"soon","at":"2026-11-29T10:00:01Z"}'],
     "line 2: delta entry: 't' must be a number"),
    ([encode_header(header()), '{"type":"key","t":1,"at":"yesterday","key":"b"}'],
     "line 2: key entry: 'at' is not an RFC 3339 time"),
    ([encode_header(header()), '{"type":"delta","t":1,"at":"2026-11-29T10:00:01Z","delta":"moved","kind":"pods"}'],
     "line 2: delta entry: unknown delta 'moved'"),
    ([encode_header(header()), '{"type":"delta","t":1,"at":"2026-11-29T10:00:01Z","delta":"relisted",'
                               '"kind":"pods","objs":[1],"resourceVersion":"1"}'],
     "line 2: delta entry: 'objs' must be a list of JSON objects"),
    (['{"type":"header","format":"asciinema","version":1}'], "line 1: header: 'format' must be"),
    ([encode_header(header(version=3))], "line 1: header: version 3 is not one this observatory reads (1 to 2)"),
])
def test_bad_input_names_the_line(lines, expected):
    with pytest.raises(RecordingError) as info:
        read_recording(lines)
    assert str(info.value).startswith(expected)


def test_bad_exchange_fields_are_recording_errors():
    good = json.loads(encode_exchange(exchange(), t=1, at=T0))
    for key, value, expected in [("responseBody", "!!!", "'responseBody' is not valid base64"),
                                 ("status", "201", "'status' must be an integer"),
                                 ("requestHeaders", [["a"]], "'requestHeaders' must be a list of"),
                                 ("elapsedMs", True, "'elapsedMs' must be a number")]:
        bad = dict(good, **{key: value})
        if key == "responseBody":
            bad["responseBodyBase64"] = True
        with pytest.raises(RecordingError, match=f"^line 4: exchange: {expected}"):
            decode_line(json.dumps(bad), number=4)
    missing = {k: v for k, v in good.items() if k != "sentAt"}
    with pytest.raises(RecordingError, match=r"^line 7: exchange: 'sentAt' is missing$"):
        read_recording([encode_header(header())] + [""] * 5 + [json.dumps(missing)])


def test_schedule_spaces_entries_by_t_over_speed():
    entries = [KeyEntry(t, T0 + timedelta(seconds=t), "x") for t in (0.5, 1.0, 1.0, 3.0, 2.0, 4.0)]
    assert [d for d, _ in schedule(entries, 1)] == [0.5, 0.5, 0.0, 2.0, 0.0, 1.0]
    assert [d for d, _ in schedule(entries, 2)] == [0.25, 0.25, 0.0, 1.0, 0.0, 0.5]
    assert [d for d, _ in schedule(entries, 0.5)] == [1.0, 1.0, 0.0, 4.0, 0.0, 2.0]
    assert [e for _, e in schedule(entries, 2)] == entries
    assert [d for d, _ in schedule(entries, math.inf)] == [0.0] * 6
    assert schedule([], 3) == []
    for speed in (0, -1, math.nan):
        with pytest.raises(ValueError, match="speed must be a number greater than 0"):
            schedule(entries, speed)
