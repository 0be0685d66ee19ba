"""The transcript: per bind the pod, spec.nodeName before and after, the full request and answer (the whole 409
Status and its message), events, diagnosis and commands; Markdown and JSON; never a credential."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from observatory.model.commands import equivalent_commands
from observatory.model.deltas import Deleted, Upserted
from observatory.model.transcript import (
    BindRecord,
    LessonProgress,
    PodSnapshot,
    StepProgress,
    Transcript,
    default_transcript_path,
    json_twin,
    redact,
    render,
)

from . import lab_json
from .test_exchange import CREATED, PATH, REQUEST, exchange
from .test_state import T0, Clock, load

KEY = "sched-lab/manual"
SERVER = "https://127.0.0.1:6443"
TOKEN = "eyJhbGciOiJSUzI1NiIsImtpZCI6Ik9CUyJ9.c2VjcmV0LXRva2Vu.sig"
# k8s-api-reference.md §1.3 item 5: the Status JSON of the 409, verbatim (pod1, minikube) ...
REFERENCE_409 = (
    '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on '
    'pods/binding \\"pod1\\": pod pod1 is already assigned to node \\"minikube\\"","reason":"Conflict","details":'
    '{"name":"pod1","kind":"pods/binding"},"code":409}')
REFERENCE_MESSAGE = ('Operation cannot be fulfilled on pods/binding "pod1": '
                     'pod pod1 is already assigned to node "minikube"')
# ... and the same for the lesson's pod and node.
MANUAL_409 = REFERENCE_409.replace("pod1", "manual").replace("minikube", "pair-worker")
MANUAL_MESSAGE = ('Operation cannot be fulfilled on pods/binding "manual": '
                  'pod manual is already assigned to node "pair-worker"')


def session(token_in_headers: bool = True) -> tuple[Transcript, dict[str, str]]:
    """The manual-binding lesson as it happens: bind (201), the watch shows the pod start, bind again (409)."""
    rec = lab_json.manual_binding()
    clock = Clock()
    state = load(rec.initial, clock)
    headers = (("Content-Type", "application/json"), ("Accept", "application/json"))
    if token_in_headers:
        headers += (("Authorization", f"Bearer {TOKEN}"),)
    rvs = {"initial": rec.initial.pod(KEY)["metadata"]["resourceVersion"]}

    clock.advance(2)
    before = PodSnapshot.take(state, KEY, clock())
    first = exchange(request_headers=headers, sent_at=clock())
    for _rv, type_, kind, obj in rec.changes:
        clock.advance(0.5)
        state.apply(Deleted(kind, obj) if type_ == "DELETED" else Upserted(kind, obj, type_))
        if kind == "pods":
            rvs["last"] = obj["metadata"]["resourceVersion"]
    after = PodSnapshot.take(state, KEY, clock())
    commands = equivalent_commands(first, server=SERVER, auth="token", ca=True)

    clock.advance(3)
    before2 = PodSnapshot.take(state, KEY, clock())
    second = exchange(request_headers=headers, node="pair-control-plane", sent_at=clock(), status=409,
                      reason="Conflict", response_body=MANUAL_409.encode() + b"\n",
                      request_body=REQUEST.replace(b"pair-worker", b"pair-control-plane"))
    clock.advance(0.1)
    after2 = PodSnapshot.take(state, KEY, clock())
    records = (BindRecord(first, before, commands=commands),
               BindRecord(second, before2, commands=equivalent_commands(second, server=SERVER, auth="token")))
    records = (records[0].with_after(after), records[1].with_after(after2))
    transcript = Transcript(context="observatory-lab", server=SERVER, namespace="", lab=True, started=T0,
                            exported=clock(), records=records)
    return transcript, rvs


def section(markdown: str, heading: str, n: int = 0) -> list[str]:
    """The lines under the n-th heading ``heading`` up to the next heading of any level."""
    lines = markdown.splitlines()
    starts = [i for i, line in enumerate(lines) if line == heading]
    start = starts[n] + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("#")), len(lines))
    return lines[start:end]


def test_the_labs_409_is_the_reference_status():
    assert lab_json.manual_binding().conflict == json.loads(MANUAL_409)


def test_markdown_holds_the_full_409_and_node_name_before_and_after():
    transcript, rvs = session()
    md = transcript.to_markdown()
    assert "## Bind 1: sched-lab/manual to pair-worker: HTTP/1.1 201 Created" in md
    assert "## Bind 2: sched-lab/manual to pair-control-plane: HTTP/1.1 409 Conflict" in md
    # the full status line and body, byte for byte, and the message verbatim
    response = "\n".join(section(md, "### Response", 1))
    assert "HTTP/1.1 409 Conflict\n" in response
    assert MANUAL_409 in response
    assert f"```text\n{MANUAL_MESSAGE}\n```" in response
    assert CREATED.decode().strip() in "\n".join(section(md, "### Response", 0))
    # spec.nodeName before and after, with resourceVersions and times
    first = [line for line in section(md, "### spec.nodeName", 0) if line.startswith("| before") or
             line.startswith("| after")]
    assert first[0] == f"| before | `<empty>` | {rvs['initial']} | 2026-11-29T10:00:02Z |"
    assert first[1].startswith(f"| after | `pair-worker` | {rvs['last']} | 2026-11-29T10:00:")
    second = [line for line in section(md, "### spec.nodeName", 1) if line.startswith("| ")][1:]
    assert second[0].startswith(f"| before | `pair-worker` | {rvs['last']} |")
    # the request, exactly
    request = "\n".join(section(md, "### Request", 0))
    assert f"POST {PATH} HTTP/1.1\nContent-Type: application/json\n" in request
    assert REQUEST.decode() in request


def test_markdown_events_diagnosis_and_commands():
    transcript, _ = session()
    md = transcript.to_markdown()
    assert section(md, "#### Before", 0) == ["", "Events: `<none>`", ""]
    after = section(md, "#### After", 0)
    assert "| type | reason | from | message |" in after
    assert "| Normal | Started | kubelet | Started container pause |" in after
    diagnosis = section(md, "### Diagnosis at the moment of the bind", 0)
    assert diagnosis[1] == "**No scheduler has looked**: no scheduler has looked"
    assert "- spec.schedulerName: nobody-at-all" in diagnosis
    assert "kubectl create --raw /api/v1/namespaces/sched-lab/pods/manual/binding -f binding.json" in md
    assert '-H "Authorization: Bearer $TOKEN"' in md


def test_json_twin_shape():
    transcript, rvs = session()
    doc = json.loads(json.dumps(transcript.to_json()))
    assert (doc["format"], doc["version"], doc["lab"], doc["started"]) == (
        "observatory-transcript", 1, True, "2026-11-29T10:00:00Z")
    first, second = doc["binds"]
    assert first["nodeName"]["before"] == {"value": "", "resourceVersion": rvs["initial"],
                                           "at": "2026-11-29T10:00:02Z"}
    assert first["nodeName"]["after"]["value"] == "pair-worker"
    assert first["nodeName"]["after"]["resourceVersion"] == rvs["last"]
    assert first["diagnosis"]["state"] == "no-scheduler" and first["before"]["events"] == []
    assert [e["reason"] for e in first["after"]["events"]] == ["Pulling", "Pulled", "Created", "Started"]
    assert second["statusLine"] == "HTTP/1.1 409 Conflict" and second["message"] == MANUAL_MESSAGE
    assert second["exchange"]["responseBody"] == MANUAL_409 + "\n"
    assert second["exchange"]["responseBodyBase64"] is False and second["exchange"]["status"] == 409
    assert second["nodeName"]["before"]["value"] == "pair-worker"
    assert first["commands"]["kubectl"].endswith("-f binding.json") and doc["lesson"] is None


def test_reference_409_and_a_binary_body():
    conflict = exchange(status=409, reason="Conflict", response_body=REFERENCE_409.encode())
    binary = exchange(status=502, reason="Bad Gateway", response_body=b"\xff\xfe```")
    snapshot = PodSnapshot(T0, None)
    t = Transcript("ctx", SERVER, "sched-lab", False, T0, T0, (BindRecord(conflict, snapshot),
                                                                BindRecord(binary, snapshot)))
    md = t.to_markdown()
    assert REFERENCE_409 in md and REFERENCE_MESSAGE in md
    assert "<5 bytes, not UTF-8; see the JSON twin (base64)>" in md
    assert "| before | pod not seen | - | 2026-11-29T10:00:00Z |" in md
    body = t.to_json()["binds"][1]["exchange"]
    assert body["responseBodyBase64"] is True and body["responseBody"] == "//5gYGA="


def test_a_backquote_run_in_a_body_gets_a_longer_fence():
    ex = exchange(status=500, reason="Internal Server Error", response_body=b"see ```code``` and ````")
    md = Transcript("c", SERVER, "", True, T0, T0, (BindRecord(ex, PodSnapshot(T0, None)),)).to_markdown()
    assert "`````http\nHTTP/1.1 500 Internal Server Error" in md


def test_lesson_progress():
    progress = LessonProgress("manual-binding", "Scheduling, minus the scheduler", (
        StepProgress("Create the pod", T0, "pod sched-lab/manual exists"),
        StepProgress("Confirm the negative result", None, "no pod | yet")))
    t = Transcript("c", SERVER, "", True, T0, T0, lesson=progress)
    md = t.to_markdown()
    assert "| 1 | Create the pod | yes | 2026-11-29T10:00:00Z | pod sched-lab/manual exists |" in md
    assert "| 2 | Confirm the negative result | no | - | no pod \\| yet |" in md
    assert t.to_json()["lesson"]["steps"][1] == {"title": "Confirm the negative result", "ticked": None,
                                                 "detail": "no pod | yet"}
    assert t.to_json()["lesson"]["done"] is False and "No Binding was sent." in md


def test_the_token_never_reaches_the_transcript():
    transcript, _ = session(token_in_headers=True)
    transcript = Transcript(transcript.context, f"https://admin:{TOKEN}@127.0.0.1:6443", transcript.namespace,
                            transcript.lab, transcript.started, transcript.exported, transcript.records)
    md, text = render(transcript)  # no secrets given: nothing to redact, and still no token
    assert TOKEN not in md and TOKEN not in text
    assert md.count("Authorization") == md.count('Authorization: Bearer $TOKEN') == 2  # curl placeholders only
    assert "admin" not in md and "admin" not in text


def test_render_redacts_a_secret_that_leaked_into_cluster_data():
    transcript, _ = session()
    record = transcript.records[0]
    leak = [ev for ev in record.after.events]
    leaked = type(leak[0])(**{**{f: getattr(leak[0], f) for f in leak[0].__slots__},
                              "message": f"pulled with token {TOKEN}"})
    after = PodSnapshot(record.after.at, record.after.pod, (leaked,), record.after.diagnosis)
    transcript = Transcript("c", SERVER, "", True, T0, T0, (record.with_after(after),))
    assert TOKEN in transcript.to_markdown()  # the model does not guess: the writer's redaction does
    md, text = render(transcript, [TOKEN, "", "abc"])
    assert TOKEN not in md and TOKEN not in text
    assert "pulled with token <redacted>" in md and "pulled with token <redacted>" in text
    assert json.loads(text)["binds"][0]["after"]["events"][0]["message"] == "pulled with token <redacted>"


def test_redact():
    assert redact("xx abcdefgh yy abcd", ["abcd", "abcdefgh"]) == "xx <redacted> yy <redacted>"
    assert redact("token abc in a cabinet", ["abc", "", None]) == "token abc in a cabinet"
    assert redact("s3cret s3cret", ("s3cret",)) == "<redacted> <redacted>"


def test_default_path_uses_local_time(monkeypatch):
    now = datetime(2026, 11, 29, 10, 0, 5, tzinfo=UTC)
    for zone, expected in (("UTC", "observatory-transcript-20261129-100005.md"),
                           ("Asia/Tokyo", "observatory-transcript-20261129-190005.md"),
                           ("America/New_York", "observatory-transcript-20261129-050005.md")):
        monkeypatch.setenv("TZ", zone)
        time.tzset()
        assert default_transcript_path(now) == Path(".") / expected
    monkeypatch.delenv("TZ")
    time.tzset()
    assert default_transcript_path(now + timedelta(0), "notes").parent == Path("notes")


def test_json_twin():
    assert json_twin("observatory-transcript-20261129-100005.md") == Path("observatory-transcript-20261129-100005.json")
    assert json_twin(Path("/tmp/lesson/notes.markdown")) == Path("/tmp/lesson/notes.json")
    assert json_twin("transcript") == Path("transcript.json")
    with pytest.raises(ValueError, match="JSON twin"):
        json_twin("t.json")


def test_render_shows_control_characters_in_the_markdown_instead_of_sending_them():
    """An Event message that would retitle the terminal, fill its clipboard (OSC 52) and clear it when the Markdown
    is ``cat``-ed: the file shows the escapes as text; the JSON twin keeps the message, escaped as JSON does."""
    hostile = "\x1b]0;TITLE\x07\x1b]52;c;ZWNobyBoaQ==\x07\x1b[2J done\r\u202e"
    transcript, _ = session()
    record = transcript.records[0]
    event = record.after.events[0]
    planted = type(event)(**{**{f: getattr(event, f) for f in event.__slots__}, "message": hostile})
    after = PodSnapshot(record.after.at, record.after.pod, (planted,), record.after.diagnosis)
    transcript = Transcript("c", SERVER, "", True, T0, T0, (record.with_after(after),))
    md, text = render(transcript)
    assert not any(ch in md for ch in "\x1b\x07\r\u202e")
    assert "\\x1b]0;TITLE\\x07\\x1b]52;c;ZWNobyBoaQ==\\x07\\x1b[2J done \\u202e" in md  # a table cell: CR as a space
    assert "\x1b" not in text and json.loads(text)["binds"][0]["after"]["events"][0]["message"] == hostile
