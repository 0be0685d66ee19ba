"""Audit lines of a recording: events written back as audit.k8s.io/v1 Event JSON that reads back equal, the feed's
malformed count, no credential-carrying body, and version 1 recordings (before audit lines) still read."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from observatory.model.audit import parse_event
from observatory.model.audit_json import carries_credentials, credential_free, event_to_json, micro_time
from observatory.model.recording import (
    AuditEntry,
    Header,
    Recorder,
    RecordingError,
    decode_line,
    encode_audit,
    encode_header,
    read_recording,
)
from observatory.model.source import AuditUpdate

from . import audit_events as ev

T0 = datetime(2026, 12, 2, 4, 0, 0, tzinfo=UTC)


def events() -> tuple:
    return tuple(parse_event(e) for e in (ev.bind_201(), ev.status_patch(), ev.bind_409()))


@pytest.mark.parametrize("raw", [ev.bind_201(), ev.status_patch(), ev.bind_409(), ev.secret_create()])
def test_an_event_written_back_reads_back_equal(raw):
    parsed = parse_event(raw)
    assert parse_event(event_to_json(parsed)) == parsed
    raw["responseStatus"].pop("details", None)  # not kept by AuditEvent
    assert event_to_json(parsed) == raw  # upstream's shape, key for key, for what AuditEvent keeps


def test_an_event_with_nothing_optional_round_trips():
    bare = parse_event({"kind": "Event", "apiVersion": "audit.k8s.io/v1", "auditID": "x", "stage": "RequestReceived",
                        "verb": "create", "user": {}})
    assert event_to_json(bare) == {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "auditID": "x",
                                   "stage": "RequestReceived", "verb": "create", "user": {}}
    assert parse_event(event_to_json(bare)) == bare


def test_micro_time_is_apimachinerys_rfc3339_micro_in_utc():
    assert micro_time(datetime(2026, 12, 2, 4, 0, 10, tzinfo=UTC)) == "2026-12-02T04:00:10.000000Z"
    east = datetime(2026, 12, 2, 6, 0, 10, 250000).astimezone(UTC).astimezone()
    assert micro_time(east).endswith("Z")


def test_an_audit_line_round_trips_in_order_with_the_malformed_count():
    update = AuditUpdate(events(), malformed=2, problem="not JSON: Expecting value: line 1 column 1 (char 0)")
    line = encode_audit(update, origin="log /var/log/kubernetes/audit.log", t=1.5, at=T0)
    assert "\n" not in line and line.isascii()
    entry = decode_line(line)
    assert entry == AuditEntry(1.5, T0, update, "log /var/log/kubernetes/audit.log")
    assert [e.audit_id for e in entry.update.events] == ["a1", "a2", "a3"]
    assert entry.update.events[2].response_object["message"] == ev.MESSAGE_409


def test_a_secrets_body_never_reaches_the_line_only_its_metadata():
    secret = parse_event(ev.secret_create())
    assert carries_credentials(secret)
    line = encode_audit(AuditUpdate((secret,)), origin="lab", t=0, at=T0)
    assert ev.SECRET_VALUE not in line and "password" not in line
    kept = decode_line(line).update.events[0]
    assert (kept.request_object, kept.response_object, kept.level) == (None, None, "Metadata")
    assert (kept.user, kept.verb, kept.target, kept.code) == ("kubernetes-admin", "create", "secrets/db", 201)


@pytest.mark.parametrize(("resource", "subresource", "group", "kind"), [
    ("tokenreviews", "", "authentication.k8s.io", "TokenReview"),
    ("serviceaccounts", "token", "", "TokenRequest"),
    ("configmaps", "", "", "Secret"),  # a Secret body under another resource is still a Secret
])
def test_token_reviews_and_token_requests_lose_their_bodies(resource, subresource, group, kind):
    raw = ev.event("t1", "16.000000", resource=resource, name="x", subresource=subresource,
                   request={"kind": kind, "spec": {"token": "eyJhbGciOi.user-supplied.token"}},
                   response={"kind": kind, "status": {"token": "eyJhbGciOi.issued.token"}})
    if group:
        raw["objectRef"]["apiGroup"] = group
    clean = credential_free(parse_event(raw))
    assert (clean.request_object, clean.response_object, clean.level) == (None, None, "Metadata")
    assert "eyJhbGciOi" not in encode_audit(AuditUpdate((parse_event(raw),)), origin="lab", t=0, at=T0)


def test_other_writes_keep_their_bodies():
    binding = parse_event(ev.bind_409())
    assert not carries_credentials(binding) and credential_free(binding) is binding


def test_a_recorder_writes_audit_lines_between_deltas():
    recorder = Recorder(Header(started=T0))
    lines = [recorder.header_line(), recorder.key("b", T0 + timedelta(seconds=1)),
             recorder.audit(AuditUpdate(events()[:1]), "lab", T0 + timedelta(seconds=2))]
    recording = read_recording(lines)
    assert recording.header.version == 2
    assert recording.entries[1] == AuditEntry(2.0, T0 + timedelta(seconds=2), AuditUpdate(events()[:1]), "lab")


def test_a_version_1_recording_still_reads():
    old = ('{"type":"header","format":"observatory-recording","version":1,"started":"2026-11-29T10:00:00Z",'
           '"context":"c","server":"s","namespace":"","lab":false}')
    key = '{"type":"key","t":1,"at":"2026-11-29T10:00:01Z","key":"b"}'
    recording = read_recording([old, key])
    assert recording.header.version == 1 and len(recording.entries) == 1
    assert encode_header(replace(recording.header, version=1)) == old


@pytest.mark.parametrize(("change", "expected"), [
    ({"events": {}}, "'events' must be a list of audit events"),
    ({"events": [{"kind": "Pod"}]}, "event 1: not an audit.k8s.io/v1 Event"),
    ({"malformed": "2"}, "'malformed' must be an integer"),
    ({"problem": None}, "'problem' must be a string"),
])
def test_a_bad_audit_line_names_the_line(change, expected):
    good = json.loads(encode_audit(AuditUpdate(events()), origin="lab", t=0, at=T0))
    with pytest.raises(RecordingError, match=f"^line 3: audit entry: {expected}"):
        decode_line(json.dumps({**good, **change}), number=3)
