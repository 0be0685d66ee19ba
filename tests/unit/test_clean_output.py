"""Cluster text that would drive a terminal never leaves observatory raw: recordings, ``schedule``'s and ``why``'s
output (to a file, as to a pipe), the transcript's JSON twin. Each is written with an Event message and a
schedulerName holding a title sequence, an OSC 52 clipboard write, a screen clear and C1 controls; the bytes
written hold no ESC, BEL or C1 control, and what carries the data (recordings, JSON) still reads back exactly."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta

from observatory.model.decisions import SchedulingDecision
from observatory.model.deltas import Relisted, Upserted
from observatory.model.exchange import BindingExchange
from observatory.model.recording import DeltaEntry, read_recording
from observatory.model.text import safe_json
from observatory.recorder import RecordingSource
from observatory.schedule import decision_line
from observatory.why import Gathered, json_text, render_text, why_from
from tests.unit.test_recording_sources import FakeSource, Ticks, drain

HOSTILE = "\x1b]0;TITLE\x07\x1b]52;c;aGk=\x07\x1b[2J\x9b31m\x9d0;T\x9c\x85\x7f\u202e"
"""Retitle the terminal, put ``hi`` into its clipboard (OSC 52), clear it; then the same through C1 controls (CSI,
OSC, ST, NEL), DEL and a right-to-left override."""
NOW = datetime(2026, 11, 29, 9, 30, tzinfo=UTC)


def raw_controls(data: bytes) -> list[str]:
    """The ESC, BEL, DEL and C1 characters in ``data`` (UTF-8), as the terminal would receive them."""
    text = data.decode("utf-8", errors="surrogateescape")
    return [f"U+{ord(c):04X}" for c in text if c in "\x1b\x07\x7f" or 0x80 <= ord(c) <= 0x9f
            or 0xdc80 <= ord(c) <= 0xdcff or c == "\u202e"]


def pod(name: str = "web", scheduler: str = f"evil{HOSTILE}") -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "sched-lab", "uid": "u-1", "resourceVersion": "7",
                         "creationTimestamp": "2026-11-29T09:00:00Z"},
            "spec": {"schedulerName": scheduler, "containers": [{"name": "c", "image": "nginx"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                            "reason": "Unschedulable", "message": HOSTILE}]}}


def event(message: str = HOSTILE) -> dict:
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "web.1", "namespace": "sched-lab", "resourceVersion": "8"},
            "involvedObject": {"kind": "Pod", "namespace": "sched-lab", "name": "web", "uid": "u-1"},
            "reason": "FailedScheduling", "message": f"0/1 nodes are available: {message}", "type": "Warning",
            "source": {"component": f"x{HOSTILE}"}, "reportingComponent": f"x{HOSTILE}",
            "lastTimestamp": "2026-11-29T09:29:00Z", "count": 1}


async def test_a_recording_holds_no_raw_control_and_replays_the_exact_text(tmp_path):
    deltas = [Relisted("pods", [pod()], "7"), Upserted("events", event(), "ADDED")]
    path = tmp_path / "r.jsonl"
    source = RecordingSource(FakeSource({"pods": deltas[:1], "events": deltas[1:]}, []), path, clock=Ticks())
    await drain(source, "pods")
    await drain(source, "events")
    source.record_key(f"k{HOSTILE}")
    await source.close()
    data = path.read_bytes()
    assert raw_controls(data) == []
    with path.open() as handle:
        recording = read_recording(handle)
    replayed = [e.delta for e in recording.entries if isinstance(e, DeltaEntry)]
    assert replayed == deltas  # JSON's escapes keep every character: the replay is faithful
    assert replayed[1].obj["message"].endswith(HOSTILE)


def got() -> Gathered:
    node = {"metadata": {"name": f"n{HOSTILE}", "resourceVersion": "3"},
            "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}
    return Gathered(pod=pod(), nodes=[node], events=[event()], warnings=[f"w{HOSTILE}"])


def test_why_text_written_to_a_file_holds_no_raw_control(tmp_path):
    path = tmp_path / "why.txt"
    with path.open("w", encoding="utf-8") as out:  # not a terminal: what a pipe gets
        render_text(why_from(got(), now=NOW), out, now=NOW)
    data = path.read_bytes()
    assert raw_controls(data) == []
    assert b"\\x1b]52;c;aGk=\\x07" in data  # shown, so the reader sees what was planted
    assert b"\\x9b31m" in data


def test_why_json_holds_no_raw_control_and_reads_back_the_same_value():
    why = why_from(got(), now=NOW)
    document = json_text(why)
    assert raw_controls(document.encode("utf-8")) == []
    assert json.loads(document) == why.to_json()
    assert json.loads(document)["diagnosis"]["schedulerName"] == f"evil{HOSTILE}"


def decision(outcome: str) -> SchedulingDecision:
    ex = BindingExchange(pod="sched-lab/web", node="n1", method="POST", path="/x", request_headers=(),
                         request_body=b"", http_version="HTTP/1.1", status=409, reason=f"Conflict{HOSTILE}",
                         response_headers=(), response_body=b"", sent_at=NOW, elapsed_ms=1.0)
    return SchedulingDecision(pod=f"sched-lab/web{HOSTILE}", uid="u", scheduler_name=f"evil{HOSTILE}",
                              policy="least-allocated", attempt=2, verdicts={f"n{HOSTILE}": f"taint{HOSTILE}"},
                              scores={}, node=f"n{HOSTILE}", message=f"0/1 nodes are available: {HOSTILE}",
                              exchange=ex, outcome=outcome, time=NOW, started=NOW - timedelta(seconds=1))


def test_schedule_lines_hold_no_raw_control_in_either_output():
    out = io.BytesIO()
    for outcome in ("bound", "conflict", "unschedulable", "error", "skipped"):
        for output in ("text", "json"):
            out.write(decision_line(decision(outcome), output).encode("utf-8") + b"\n")
    data = out.getvalue()
    assert raw_controls(data) == []
    first_json = json.loads(decision_line(decision("unschedulable"), "json"))
    assert first_json["message"].endswith(HOSTILE) and first_json["schedulerName"] == f"evil{HOSTILE}"
    assert "\\x1b]0;TITLE\\x07" in decision_line(decision("unschedulable"), "text")


def test_safe_json_escapes_what_ensure_ascii_false_leaves_raw():
    value = {"m": HOSTILE + "\ud800 caf\u00e9"}
    document = safe_json(json.dumps(value, ensure_ascii=False))
    assert raw_controls(document.encode("utf-8", errors="surrogatepass")) == []
    assert "caf\u00e9" in document  # printable non-ASCII stays as it is
    assert json.loads(document) == value


def test_the_transcripts_json_twin_holds_no_raw_c1_control():
    from observatory.model.transcript import PodSnapshot, Transcript, render
    from tests.unit.model.test_transcript import SERVER, T0, session

    transcript, _ = session()
    record = transcript.records[0]
    planted = type(record.after.events[0])(**{**{f: getattr(record.after.events[0], f)
                                                  for f in record.after.events[0].__slots__}, "message": HOSTILE})
    after = PodSnapshot(record.after.at, record.after.pod, (planted,), record.after.diagnosis)
    markdown, text = render(Transcript("c", SERVER, "", True, T0, T0, (record.with_after(after),)))
    assert raw_controls(markdown.encode("utf-8")) == [] and raw_controls(text.encode("utf-8")) == []
    assert json.loads(text)["binds"][0]["after"]["events"][0]["message"] == HOSTILE
