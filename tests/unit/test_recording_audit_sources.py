"""RecordingSource records the audit feed the screen reads, in order with the deltas and without credentials;
ReplaySource offers the recorded updates as its audit feed at their recorded times; a recording made without an
audit feed replays without one."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

from observatory.model.audit import parse_event
from observatory.model.deltas import Relisted, Upserted
from observatory.model.recording import AuditEntry, DeltaEntry, read_recording
from observatory.model.source import AuditUpdate, Capabilities
from observatory.model.state import ClusterState
from observatory.model.transcript import PodWrites, Transcript, render
from observatory.model.writes import Write, WriteStore, join_frames
from observatory.recorder import RecordingSource
from observatory.replay import ReplaySource, load_recording

from .model import audit_events as ev
from .test_clean_output import HOSTILE, raw_controls
from .test_recording_sources import SECRET, FakeSource, Ticks, pod

T0 = datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC)


class FakeAudit:
    """An audit feed that yields scripted updates, each after the pods delta it follows (``after``: the pods
    stream's item count), as a live feed interleaves with the watch."""

    origin = "webhook 127.0.0.1:9444"

    def __init__(self, updates: list[AuditUpdate]) -> None:
        self.updates = updates

    async def audit_stream(self) -> AsyncIterator[AuditUpdate]:
        for update in self.updates:
            yield update


class AuditedSource(FakeSource):
    def __init__(self, deltas: dict, updates: list[AuditUpdate]) -> None:
        super().__init__(deltas, [])
        self.audit = FakeAudit(updates)

    def capabilities(self) -> Capabilities:
        return Capabilities(audit=self.audit)


class PlainSource(FakeSource):
    def capabilities(self) -> Capabilities:
        return Capabilities()


def updates() -> list[AuditUpdate]:
    bind, patch, conflict = (parse_event(e) for e in (ev.bind_201(), ev.status_patch(), ev.bind_409()))
    return [AuditUpdate((bind, patch)), AuditUpdate((), malformed=1, problem="not JSON: truncated line"),
            AuditUpdate((conflict,), malformed=1, problem="not JSON: truncated line")]


async def read_audit(feed) -> list[AuditUpdate]:
    return [update async for update in feed.audit_stream()]


async def test_the_audit_feed_is_passed_through_and_recorded_in_order_with_the_deltas(tmp_path):
    pods = [Relisted("pods", [pod("manual")], "10"), Upserted("pods", pod("manual", "pair-worker", "22"))]
    path = tmp_path / "r.jsonl"
    source = RecordingSource(AuditedSource({"pods": pods}, updates()), path, clock=Ticks())
    feed = source.capabilities().audit
    assert feed is not None and feed.origin == "webhook 127.0.0.1:9444"
    stream = source.stream("pods")
    assert await anext(stream) == pods[0]
    assert await read_audit(feed) == updates()  # passed on unchanged
    assert [d async for d in stream] == pods[1:]
    await source.close()

    recording = read_recording(path.read_text().splitlines())
    kinds = [type(e).__name__ for e in recording.entries]
    assert kinds == ["DeltaEntry", "AuditEntry", "AuditEntry", "AuditEntry", "DeltaEntry"]
    audits = [e for e in recording.entries if isinstance(e, AuditEntry)]
    assert [e.update for e in audits] == updates()
    assert {e.origin for e in audits} == {"webhook 127.0.0.1:9444"}
    assert [e.t for e in recording.entries] == [0.25, 0.5, 0.75, 1.0, 1.25]


async def test_a_source_without_an_audit_feed_records_none(tmp_path):
    source = RecordingSource(PlainSource({}, []), tmp_path / "r.jsonl")
    assert source.capabilities().audit is None and source.capabilities().keys is source
    await source.close()


async def test_record_then_replay_gives_the_same_audit_updates_at_their_times(tmp_path):
    pods = [Relisted("pods", [pod("manual")], "10"), Upserted("pods", pod("manual", "pair-worker", "22"))]
    path = tmp_path / "r.jsonl"
    recorder = RecordingSource(AuditedSource({"pods": pods}, updates()), path, clock=Ticks())
    stream = recorder.stream("pods")
    await anext(stream)
    await read_audit(recorder.capabilities().audit)
    assert [d async for d in stream] == pods[1:]
    await recorder.close()

    replay = ReplaySource(load_recording(path), speed=math.inf)
    feed = replay.capabilities().audit
    assert feed is not None and feed.origin == "webhook 127.0.0.1:9444"
    log: list[tuple[str, object, datetime]] = []
    done = asyncio.Event()

    async def read(name: str, iterator) -> None:
        async for item in iterator:
            log.append((name, item, replay.clock()))
            if len(log) == 5:
                done.set()

    tasks = [asyncio.create_task(read("audit", feed.audit_stream())),
             asyncio.create_task(read("pods", replay.stream("pods")))]
    await asyncio.wait_for(done.wait(), 5)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await replay.close()
    assert [(name, item) for name, item, _ in log] == [
        ("pods", pods[0]), *(("audit", u) for u in updates()), ("pods", pods[1])]
    assert [clock for _, _, clock in log] == [T0 + timedelta(seconds=0.25 * n) for n in range(1, 6)]
    assert replay.finished


async def test_an_old_recording_without_audit_still_replays_without_an_audit_feed(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_text(
        '{"type":"header","format":"observatory-recording","version":1,"started":"2026-11-29T10:00:00Z",'
        '"context":"observatory-lab","server":"http://127.0.0.1:4321","namespace":"","lab":true}\n'
        '{"type":"delta","t":0.5,"at":"2026-11-29T10:00:00.500000Z","delta":"upserted","kind":"pods",'
        '"change":"ADDED","obj":{"metadata":{"namespace":"sched-lab","name":"manual","resourceVersion":"1"}}}\n')
    replay = ReplaySource(load_recording(path), speed=math.inf)
    assert replay.capabilities().audit is None and replay.capabilities().replay is replay
    delta = await asyncio.wait_for(anext(replay.stream("pods")), 5)
    assert delta.obj["metadata"]["name"] == "manual" and replay.clock() == T0 + timedelta(seconds=0.5)
    await replay.close()


async def test_a_secret_write_at_request_response_is_recorded_with_metadata_only(tmp_path):
    secret = parse_event(ev.secret_create())
    assert secret.request_object["data"]["password"] == ev.SECRET_VALUE  # the feed gave the body
    path = tmp_path / "r.jsonl"
    source = RecordingSource(AuditedSource({}, [AuditUpdate((secret,))]), path)
    assert await read_audit(source.capabilities().audit) == [AuditUpdate((secret,))]  # the screen's, unchanged
    await source.close()
    text = path.read_text()
    assert ev.SECRET_VALUE not in text and '"password"' not in text
    kept = read_recording(text.splitlines()).entries[0].update.events[0]
    assert (kept.level, kept.request_object, kept.response_object) == ("Metadata", None, None)
    assert (kept.verb, kept.target, kept.code, kept.writer) == ("create", "secrets/db", 201, "kubectl")


async def test_a_known_token_in_a_request_body_is_redacted_and_the_line_still_reads(tmp_path):
    raw = ev.event("p1", "12.000000", verb="patch", code=200, status="",
                   request={"metadata": {"annotations": {"note": f"Bearer {SECRET}"}}},
                   response=ev.pod("30", "pair-worker"))
    path = tmp_path / "r.jsonl"
    source = RecordingSource(AuditedSource({}, [AuditUpdate((parse_event(raw),))]), path, secrets={SECRET})
    await read_audit(source.capabilities().audit)
    await source.close()
    text = path.read_text()
    assert SECRET not in text
    kept = read_recording(text.splitlines()).entries[0].update.events[0]
    assert kept.request_object["metadata"]["annotations"]["note"] == "Bearer <redacted>"
    assert json.loads(text.splitlines()[1])["events"][0]["kind"] == "Event"
    assert isinstance(read_recording(text.splitlines()).entries[0], AuditEntry)
    assert not any(isinstance(e, DeltaEntry) for e in read_recording(text.splitlines()).entries)


class StepClock:
    """A clock that moves one second each time it is read, remembering the last reading."""

    def __init__(self, start: datetime) -> None:
        self.now, self.last = start, start

    def __call__(self) -> datetime:
        self.last = self.now
        self.now += timedelta(seconds=1)
        return self.last


def manual(rv: str, node: str = "", phase: str = "Pending") -> dict:
    obj = ev.pod(rv, node, phase)
    obj["metadata"]["uid"] = "00000000-0000-4000-8000-000000000001"
    return obj


async def test_a_replay_gives_the_screen_the_same_writes_and_frame_labels_as_live(tmp_path):
    key = "sched-lab/manual"
    pods = [Relisted("pods", [manual("17")], "17"), Upserted("pods", manual("22", "pair-worker"), "MODIFIED"),
            Upserted("pods", manual("28", "pair-worker", "Running"), "MODIFIED")]
    audit = [AuditUpdate((parse_event(e),)) for e in (ev.bind_201(), ev.status_patch(), ev.bind_409())]
    clock = StepClock(datetime(2026, 12, 2, 4, 0, 9, tzinfo=UTC))
    path = tmp_path / "r.jsonl"
    recorder = RecordingSource(AuditedSource({"pods": pods}, audit), path, clock=clock)
    live_state, live_store = ClusterState(lambda: clock.last), WriteStore()  # the screen's, on the recorder's clock
    stream, feed = recorder.stream("pods"), recorder.capabilities().audit.audit_stream()
    for _ in range(3):  # the watch and the audit feed interleave: a frame, then the write that made the next one
        live_state.apply(await anext(stream))
        live_store.apply(await anext(feed))
    await recorder.close()
    live = [f.label for f in join_frames(live_state.timeline(key), live_store.for_pod(key))]
    assert live == ["no write seen", "← POST pods/manual/binding · kubectl · 201 (matched by order)",
                    "← PATCH pods/manual/status · kubelet pair-worker · 200"]

    replay = ReplaySource(load_recording(path), speed=math.inf)
    state, store = ClusterState(replay.clock), WriteStore()
    seen = asyncio.Event()

    async def read(iterator, apply) -> None:
        async for item in iterator:
            apply(item)
            if len(state.timeline(key)) == 3 and len(store.for_pod(key)) == 3:
                seen.set()

    tasks = [asyncio.create_task(read(replay.stream("pods"), state.apply)),
             asyncio.create_task(read(replay.capabilities().audit.audit_stream(), store.apply))]
    await asyncio.wait_for(seen.wait(), 5)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await replay.close()
    assert [w.event for w in store.for_pod(key)] == [w.event for w in live_store.for_pod(key)]
    assert state.timeline(key) == live_state.timeline(key)
    assert [f.label for f in join_frames(state.timeline(key), store.for_pod(key))] == live


async def test_hostile_text_in_audit_events_is_escaped_in_the_recording_and_the_transcript(tmp_path):
    raw = ev.event("h1", "12.000000", subresource="binding", agent=f"kubectl/{HOSTILE}", code=409, status="Failure",
                   reason="Conflict", message=f"no {HOSTILE}", request={**ev.BINDING, "note": HOSTILE},
                   response={**ev.STATUS_409, "message": f"no {HOSTILE}"})
    event = parse_event(raw)
    path = tmp_path / "r.jsonl"
    source = RecordingSource(AuditedSource({}, [AuditUpdate((event,))]), path)
    await read_audit(source.capabilities().audit)
    await source.close()
    assert raw_controls(path.read_bytes()) == []
    assert read_recording(path.read_text().splitlines()).entries[0].update.events == (event,)  # the exact text
    transcript = Transcript(context="c", server="s", namespace="", lab=True, started=T0, exported=T0, audit="lab",
                            writes=(PodWrites("sched-lab/manual", (Write(event, "sched-lab/manual", 0),)),))
    markdown, text = render(transcript)
    assert raw_controls(markdown.encode()) == [] and raw_controls(text.encode()) == []
    assert json.loads(text)["writes"][0]["writes"][0]["message"] == f"no {HOSTILE}"
