"""RecordingSource writes what a source delivers (redacted, flushed); ReplaySource plays it back on one timeline."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from observatory.classroom import app_options
from observatory.model.commands import CommandsContext
from observatory.model.deltas import Deleted, Relisted, Upserted, WatchState
from observatory.model.exchange import BindingExchange
from observatory.model.recording import (
    DeltaEntry,
    ExchangeEntry,
    Header,
    KeyEntry,
    Recording,
    RecordingError,
    read_recording,
)
from observatory.model.records import LeaseView
from observatory.recorder import RecordingSource, check_writable
from observatory.replay import ReplaySource, load_recording

T0 = datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC)
SECRET = "s3cret-bearer-token-abcdef"
QUOTED_SECRET = 'pa"ss\\word-with-escapes'


def pod(name: str, node: str = "", rv: str = "1", **extra) -> dict:
    return {"metadata": {"namespace": "sched-lab", "name": name, "resourceVersion": rv, **extra},
            "spec": {"nodeName": node}, "status": {"phase": "Pending"}}


def exchange(node: str = "pair-worker", status: int = 201, body: bytes = b'{"kind":"Status","code":201}',
             sent_at: datetime = T0) -> BindingExchange:
    return BindingExchange(pod="sched-lab/manual", node=node, method="POST",
                           path="/api/v1/namespaces/sched-lab/pods/manual/binding",
                           request_headers=(("Content-Type", "application/json"),),
                           request_body=b'{"kind":"Binding"}', http_version="HTTP/1.1", status=status,
                           reason="Created" if status == 201 else "Conflict", response_headers=(),
                           response_body=body, sent_at=sent_at, elapsed_ms=3.5)


class FakeSource:
    """A Source that yields scripted deltas and answers binds from a list."""

    def __init__(self, deltas: dict, answers: list[BindingExchange], namespace: str | None = None) -> None:
        self.context, self.server, self.namespace = "observatory-lab", "http://127.0.0.1:4321", namespace
        self.lab, self.read_only = True, False
        self.deltas, self.answers, self.closed, self.scopes = deltas, answers, False, []
        self.secrets = frozenset({SECRET})

    async def stream(self, kind: str) -> AsyncIterator:
        for delta in self.deltas.get(kind, ()):
            yield delta

    async def bind(self, namespace, name, node, uid=None) -> BindingExchange:
        return self.answers.pop(0)

    async def read_lease(self, namespace, name) -> LeaseView:
        return LeaseView(namespace, name, holder="scheduler-1")

    def commands_context(self) -> CommandsContext:
        return CommandsContext(server=self.server, context=self.context, auth="token")

    def with_namespace(self, namespace):
        self.scopes.append(namespace)
        return FakeSource(self.deltas, self.answers, namespace)

    async def close(self) -> None:
        self.closed = True


class Ticks:
    """A clock that moves 0.25 s each time it is read."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        current = self.now
        self.now += timedelta(seconds=0.25)
        return current


async def drain(source, kind: str) -> list:
    return [delta async for delta in source.stream(kind)]


# -- recording ---------------------------------------------------------------------------------------------------------


async def test_a_recording_reads_back_identically(tmp_path):
    pods = [Relisted("pods", [pod("manual")], "10"), WatchState("pods", "live", T0, ""),
            Upserted("pods", pod("manual", "pair-worker", "11"), "MODIFIED"), Deleted("pods", pod("manual", rv="12"))]
    nodes = [Relisted("nodes", [{"metadata": {"name": "pair-worker", "resourceVersion": "3"}}], "10")]
    answer = exchange()
    path = tmp_path / "session.jsonl"
    source = RecordingSource(FakeSource({"pods": pods, "nodes": nodes}, [answer]), path, clock=Ticks())
    assert await drain(source, "pods") == pods  # passed through unchanged
    assert await drain(source, "nodes") == nodes
    assert await source.bind("sched-lab", "manual", "pair-worker") is answer
    source.record_key("b")
    await source.close()

    with path.open() as handle:
        recording = read_recording(handle)
    assert recording.header == Header(started=T0, context="observatory-lab", server="http://127.0.0.1:4321",
                                      namespace="", lab=True)
    seen = [(n + 1) * 0.25 for n in range(7)]
    at = [T0 + timedelta(seconds=s) for s in seen]
    assert recording.entries == (
        *(DeltaEntry(seen[i], at[i], d) for i, d in enumerate(pods)),
        DeltaEntry(seen[4], at[4], nodes[0]),
        ExchangeEntry(seen[5], at[5], answer),
        KeyEntry(seen[6], at[6], "b"),
    )


async def test_every_line_is_written_and_flushed_as_it_happens(tmp_path):
    path = tmp_path / "r.jsonl"
    source = RecordingSource(FakeSource({"pods": [Upserted("pods", pod("a"), "ADDED")]}, []), path)
    assert path.read_text().count("\n") == 1  # the header, already on disk
    await drain(source, "pods")
    source.record_key("q")
    assert path.read_text().count("\n") == 3  # before close()
    await source.close()


async def test_no_secret_reaches_the_file(tmp_path):
    leaky = Upserted("events", {"metadata": {"name": "e1", "namespace": "sched-lab"},
                                "message": f"pulled with token {SECRET} and {QUOTED_SECRET}"}, "ADDED")
    answer = exchange(status=409, body=json.dumps({"kind": "Status", "message": f"echo {SECRET}"}).encode(),
                      sent_at=T0)
    path = tmp_path / "r.jsonl"
    inner = FakeSource({"events": [leaky]}, [answer])
    source = RecordingSource(inner, path, secrets=inner.secrets | {QUOTED_SECRET})
    await drain(source, "events")
    await source.bind("sched-lab", "manual", "pair-worker")
    await source.close()
    text = path.read_text()
    assert SECRET not in text
    assert QUOTED_SECRET not in text and json.dumps(QUOTED_SECRET)[1:-1] not in text  # nor in its escaped form
    assert text.count("<redacted>") == 3
    recording = read_recording(text.splitlines())  # still a valid recording
    assert recording.entries[0].delta.obj["message"] == "pulled with token <redacted> and <redacted>"


async def test_a_secret_that_looks_like_json_does_not_break_the_file(tmp_path):
    path = tmp_path / "r.jsonl"
    source = RecordingSource(FakeSource({"pods": [Upserted("pods", pod("a"), "ADDED")]}, []), path,
                             secrets={'":"'})  # would cut through the JSON structure
    await drain(source, "pods")
    await source.close()
    assert read_recording(path.read_text().splitlines()).entries[0].delta.kind == "pods"


async def test_rescoping_keeps_recording_into_the_same_file(tmp_path):
    path = tmp_path / "r.jsonl"
    inner = FakeSource({"pods": [Upserted("pods", pod("a"), "ADDED")]}, [])
    source = RecordingSource(inner, path)
    assert (source.secrets, source.commands_context().auth) == (frozenset({SECRET}), "token")
    scoped = source.with_namespace("sched-lab")
    assert isinstance(scoped, RecordingSource) and scoped.namespace == "sched-lab" and inner.scopes == ["sched-lab"]
    await drain(source, "pods")
    await drain(scoped, "pods")
    await scoped.close()
    assert inner.closed is False  # close() closes the inner source it wraps: here the rescoped copy's
    await drain(source, "pods")  # after close: passed on, not recorded, no error
    assert len(read_recording(path.read_text().splitlines()).entries) == 2


def test_an_unwritable_path(tmp_path):
    assert check_writable(tmp_path / "ok.jsonl") is None
    assert check_writable(tmp_path) == "it is a directory"
    assert check_writable(tmp_path / "missing" / "r.jsonl") == f"the folder {tmp_path / 'missing'} does not exist"
    with pytest.raises(OSError):
        RecordingSource(FakeSource({}, []), tmp_path / "missing" / "r.jsonl")


def test_the_new_modules_load_neither_textual_nor_kubernetes_asyncio():
    code = ("import sys, observatory.recorder, observatory.replay, observatory.classroom, observatory.lessons; "
            "print(sorted(m for m in ('textual', 'kubernetes_asyncio') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# -- replay ------------------------------------------------------------------------------------------------------------


def at(t: float) -> datetime:
    return T0 + timedelta(seconds=t)


def recorded() -> Recording:
    """pods, nodes, a key, pods, a bind answer, events, another key: the interleaving a replay must keep."""
    entries = (
        DeltaEntry(0.1, at(0.1), Relisted("pods", [pod("manual")], "10")),
        DeltaEntry(0.2, at(0.2), Relisted("nodes", [{"metadata": {"name": "pair-worker"}}], "10")),
        KeyEntry(0.5, at(0.5), "b"),
        DeltaEntry(1.0, at(1.0), Upserted("pods", pod("manual", "pair-worker", "11"))),
        ExchangeEntry(1.1, at(1.1), exchange(sent_at=at(1.0))),
        DeltaEntry(1.5, at(1.5), Upserted("events", {"metadata": {"name": "e"}, "reason": "Scheduled"}, "ADDED")),
        KeyEntry(2.0, at(2.0), "q"),
    )
    header = Header(started=T0, context="kind-lab", server="https://127.0.0.1:6443", namespace="sched-lab", lab=False)
    return Recording(header, entries)


async def play(source: ReplaySource, kinds: tuple[str, ...], count: int) -> list[tuple[str, object, datetime]]:
    """Read every stream and the keys concurrently, as the app does; log what arrives, in arrival order, with the
    replay clock at that moment."""
    log: list[tuple[str, object, datetime]] = []
    done = asyncio.Event()

    async def read(name: str, iterator) -> None:
        async for item in iterator:
            log.append((name, item, source.clock()))
            if len(log) == count:
                done.set()

    tasks = [asyncio.create_task(read(kind, source.stream(kind))) for kind in kinds]
    tasks.append(asyncio.create_task(read("keys", source.keys())))
    await asyncio.wait_for(done.wait(), 5)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await source.close()
    return log


async def test_replay_delivers_the_recorded_interleaving_and_clock():
    recording = recorded()
    source = ReplaySource(recording, speed=math.inf)
    assert (source.context, source.server, source.namespace, source.lab, source.read_only) == (
        "kind-lab", "https://127.0.0.1:6443", "sched-lab", False, False)
    assert source.clock() == T0  # before anything: the header's start
    log = await play(source, ("events", "nodes", "pods"), 6)
    expected = [(("keys", e.key) if isinstance(e, KeyEntry) else (e.delta.kind, e.delta), e.at)
                for e in recording.entries if not isinstance(e, ExchangeEntry)]
    assert [((name, item), clock) for name, item, clock in log] == expected
    assert source.finished


async def test_replay_waits_the_recorded_offsets_scaled_by_speed():
    now = [0.0]
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(round(seconds, 6))
        now[0] += seconds
        await asyncio.sleep(0)

    source = ReplaySource(recorded(), speed=2.0, sleep=sleep, monotonic=lambda: now[0])
    await play(source, ("pods", "nodes", "events"), 6)
    # offsets 0.1, 0.2, 0.5, 1.0, (1.1 is the bind answer: no wait), 1.5, 2.0 at twice the pace
    assert waits == [0.05, 0.05, 0.15, 0.25, 0.25, 0.25]


async def test_a_stream_opened_late_still_gets_its_deltas_in_order():
    recording = recorded()
    source = ReplaySource(recording, speed=math.inf)
    pods: list = []

    async def read_pods() -> None:
        async for delta in source.stream("pods"):
            pods.append(delta)

    reader = asyncio.create_task(read_pods())
    for _ in range(100):  # the timeline runs to its end: nobody reads nodes, events or keys, so nothing waits
        await asyncio.sleep(0)
        if source.finished:
            break
    assert source.finished and pods == [recording.entries[0].delta, recording.entries[3].delta]
    nodes = source.stream("nodes")
    assert await asyncio.wait_for(anext(nodes), 1) == recording.entries[1].delta  # kept for its first reader
    assert source.clock() == at(1.0)  # the latest delivered in file order is still the second pods delta
    await nodes.aclose()
    reader.cancel()
    await asyncio.gather(reader, return_exceptions=True)
    await source.close()


async def test_bind_answers_from_the_recording_then_says_it_is_not_there():
    recording = recorded()
    source = ReplaySource(recording)
    answer = await source.bind("sched-lab", "manual", "pair-worker", uid="any")
    assert answer == recording.entries[4].exchange
    assert source.clock() == at(1.1)  # delivering the exchange moves the clock to it
    again = await source.bind("sched-lab", "manual", "pair-worker")
    assert (again.status, again.error, again.pod, again.node) == (0, "not in the recording", "sched-lab/manual",
                                                                  "pair-worker")
    other = await source.bind("sched-lab", "manual", "pair-control-plane")
    assert other.error == "not in the recording"
    lease = await source.read_lease("kube-system", "kube-scheduler")
    assert lease == LeaseView.unreadable("kube-system", "kube-scheduler", "not in the recording")
    assert source.with_namespace(None) is source
    assert source.commands_context() == CommandsContext(server="https://127.0.0.1:6443", context="kind-lab")
    assert source.secrets == frozenset()


async def test_record_then_replay_gives_the_same_deltas(tmp_path):
    pods = [Relisted("pods", [pod("manual")], "10"), Upserted("pods", pod("manual", "pair-worker", "11"))]
    path = tmp_path / "r.jsonl"
    recorder = RecordingSource(FakeSource({"pods": pods}, []), path, clock=Ticks())
    await drain(recorder, "pods")
    await recorder.close()
    replay = ReplaySource(load_recording(path), speed=math.inf)
    log = await play(replay, ("pods",), 2)
    assert [item for _, item, _ in log] == pods
    assert [clock for _, _, clock in log] == [T0 + timedelta(seconds=0.25), T0 + timedelta(seconds=0.5)]


def test_speed_must_be_greater_than_zero():
    for bad in (0, -1, math.nan):
        with pytest.raises(ValueError):
            ReplaySource(recorded(), speed=bad)


def test_load_recording_names_the_bad_line(tmp_path):
    path = tmp_path / "r.jsonl"
    header = '{"type":"header","format":"observatory-recording","version":1,"started":"2026-11-29T10:00:00Z",' \
             '"context":"c","server":"s","namespace":"","lab":false}\n'
    path.write_bytes(header.encode() + b'{"type":"key","t":1,"at":"2026-11-29T10:00:01Z","key":"\xff"}\n')
    with pytest.raises(RecordingError) as err:
        load_recording(path)
    assert err.value.line == 2 and str(err.value).startswith("line 2: ")
    with pytest.raises(OSError):
        load_recording(tmp_path / "missing.jsonl")


def test_app_options_pass_only_what_the_app_declares():
    class Before:
        def __init__(self, source, *, clock=None) -> None: ...

    class After:
        def __init__(self, source, *, clock=None, lesson=None, key_script=None) -> None: ...

    assert app_options(Before, lesson="L", key_script="K") == {}
    assert app_options(After, lesson="L", key_script="K") == {"lesson": "L", "key_script": "K"}
    assert app_options(After, lesson=None, key_script="K") == {"key_script": "K"}
