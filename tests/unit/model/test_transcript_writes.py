"""The transcript's writes: exercise 1 as the audit log shows it (kubectl's Binding 201, the kubelet's status patch,
kubectl's second Binding 409 with its message), each timeline frame with its write (exact, matched by order, no write
seen), in the Markdown and the JSON twin; no credential."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from observatory.model.audit import parse_event
from observatory.model.records import TimelineFrame
from observatory.model.source import AuditUpdate
from observatory.model.transcript import PodWrites, Transcript, render
from observatory.model.transcript_writes import write_message
from observatory.model.writes import Write, WriteStore

from . import audit_events as ev

T0 = datetime(2026, 12, 2, 4, 0, 0, tzinfo=UTC)
KEY = "sched-lab/manual"
TOKEN = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2Vu.sig"


def frames() -> list[TimelineFrame]:
    """The pod's timeline: created before the audit feed started (RV 17), bound (22), running (28), then a frame no
    write explains (31)."""
    return [TimelineFrame("17", T0 + timedelta(seconds=1), "ADDED", "", "Pending", "Pending"),
            TimelineFrame("22", T0 + timedelta(seconds=10.3), "MODIFIED", "pair-worker", "Pending", "Pending"),
            TimelineFrame("28", T0 + timedelta(seconds=11.6), "MODIFIED", "pair-worker", "Running", "Running"),
            TimelineFrame("31", T0 + timedelta(seconds=20), "MODIFIED", "pair-worker", "Running", "NotReady")]


def pod_writes() -> PodWrites:
    store = WriteStore()
    store.apply(AuditUpdate(tuple(parse_event(e) for e in (ev.bind_201(), ev.status_patch(), ev.bind_409()))))
    return PodWrites.take(store, KEY, frames())


def transcript(writes: tuple[PodWrites, ...], audit: str | None = "lab") -> Transcript:
    return Transcript(context="observatory-lab", server="http://127.0.0.1:6443", namespace="sched-lab", lab=True,
                      started=T0, exported=T0 + timedelta(minutes=1), audit=audit, writes=writes)


def test_the_frames_are_joined_to_their_writes():
    links = pod_writes().frames
    assert [(f.frame.resource_version, f.how, f.write.event.audit_id if f.write else None) for f in links] == [
        ("17", "none", None), ("22", "order", "a1"), ("28", "exact", "a2"), ("31", "none", None)]


def test_the_json_twin_has_every_write_the_bindings_bodies_and_the_frame_links():
    _, text = render(transcript((pod_writes(),)))
    twin = json.loads(text)
    assert twin["audit"] == {"origin": "lab"}
    (pod,) = twin["writes"]
    assert pod["pod"] == KEY
    assert [(w["method"], w["target"], w["writer"], w["code"], w["reason"]) for w in pod["writes"]] == [
        ("POST", "pods/manual/binding", "kubectl", 201, ""),
        ("PATCH", "pods/manual/status", "kubelet pair-worker", 200, ""),
        ("POST", "pods/manual/binding", "kubectl", 409, "Conflict")]
    first, patch, conflict = pod["writes"]
    assert conflict["message"] == ev.MESSAGE_409
    assert (first["user"], first["time"]) == ("kubernetes-admin", "2026-12-02T04:00:10.250000Z")
    assert (first["requestObject"], first["responseObject"]) == (ev.BINDING, ev.STATUS_201)
    assert conflict["responseObject"] == ev.STATUS_409
    assert "requestObject" not in patch  # bodies are kept for the Bindings only
    assert [(f["resourceVersion"], f["link"], f["write"], f["label"]) for f in pod["frames"]] == [
        ("17", "none", None, "no write seen"),
        ("22", "order", "a1", "← POST pods/manual/binding · kubectl · 201 (matched by order)"),
        ("28", "exact", "a2", "← PATCH pods/manual/status · kubelet pair-worker · 200"),
        ("31", "none", None, "no write seen")]


def test_the_markdown_shows_the_201_the_409_with_its_exact_text_and_the_frame_links():
    markdown, _ = render(transcript((pod_writes(),)))
    assert "- Writes: from the audit feed `lab`" in markdown
    assert "## Writes to `sched-lab/manual`" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    assert ("| 1 | 2026-12-02T04:00:10.250000Z | kubernetes-admin | kubectl | POST | pods/manual/binding | 201 | - "
            "| - |") in rows
    assert (f"| 3 | 2026-12-02T04:00:14.000000Z | kubernetes-admin | kubectl | POST | pods/manual/binding | 409 "
            f"| Conflict | {ev.MESSAGE_409} |") in rows
    assert f"Message:\n\n```text\n{ev.MESSAGE_409}\n```" in markdown
    assert '"name": "pair-worker"' in markdown  # the Binding's target, in its request body
    assert ("| 22 | 2026-12-02T04:00:10.300000Z | MODIFIED | `pair-worker` | Pending | "
            "POST pods/manual/binding · kubectl · 201 | matched by order |") in rows
    assert ("| 28 | 2026-12-02T04:00:11.600000Z | MODIFIED | `pair-worker` | Running | "
            "PATCH pods/manual/status · kubelet pair-worker · 200 | exact |") in rows
    assert "| 31 | 2026-12-02T04:00:20Z | MODIFIED | `pair-worker` | Running | - | no write seen |" in rows


def test_without_an_audit_feed_the_transcript_says_so():
    markdown, text = render(transcript((), audit=None))
    assert "No audit feed: who wrote each change is not known." in markdown
    assert json.loads(text)["audit"] is None and json.loads(text)["writes"] == []
    markdown, _ = render(transcript((PodWrites(KEY, (), ()),)))
    assert "The audit log showed no write to this pod." in markdown and "No frame seen." in markdown


def test_no_credential_reaches_either_text():
    secret = Write(parse_event(ev.secret_create()), KEY, 7)  # even a Secret's write handed to the transcript
    leaky = ev.event("p1", "12.000000", subresource="binding", request={**ev.BINDING, "note": f"Bearer {TOKEN}"},
                     response=ev.STATUS_201)
    writes = PodWrites(KEY, (secret, Write(parse_event(leaky), KEY, 8)), ())
    markdown, text = render(transcript((writes,)), secrets={TOKEN})
    for out in (markdown, text):
        assert ev.SECRET_VALUE not in out and TOKEN not in out and "Bearer <redacted>" in out
    assert json.loads(text)["writes"][0]["writes"][0]["level"] == "Metadata"


def test_the_message_comes_from_the_status_answer_when_response_status_lacks_it():
    older = ev.bind_409()
    del older["responseStatus"]["message"]  # an API server that copied only status, reason and code
    assert write_message(parse_event(older)) == ev.MESSAGE_409
    del older["responseObject"]  # and at Metadata level there is no body either
    assert write_message(parse_event(older)) == ""
    assert write_message(parse_event(ev.bind_409())) == ev.MESSAGE_409
