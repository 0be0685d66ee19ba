"""observatory.kube.audit_feed: one hub parses every origin's input, counts what it cannot read, and batches
updates; the lab's in-process feed through a fake ``auditor.subscribe``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from observatory.kube.audit_feed import AuditHub, InProcessAuditFeed
from observatory.model.source import AuditUpdate
from tests.kube.audit_events import CONFLICT, binding_event, event_list, status_patch_event


class Reader:
    """Reads one hub's stream in a task; ``gate`` holds each update's gathering until the test opens it."""

    def __init__(self, hub: AuditHub) -> None:
        self.gate = asyncio.Event()
        self.updates: asyncio.Queue[AuditUpdate] = asyncio.Queue()
        hub.gather = self._gather  # type: ignore[method-assign]
        self._stream = hub.audit_stream()
        self._task = asyncio.get_running_loop().create_task(self._read())

    async def _gather(self) -> None:
        await self.gate.wait()
        self.gate.clear()

    async def _read(self) -> None:
        async for update in self._stream:
            self.updates.put_nowait(update)

    async def next(self) -> AuditUpdate:
        self.gate.set()
        return await asyncio.wait_for(self.updates.get(), 10)

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


@contextlib.asynccontextmanager
async def reading(hub: AuditHub) -> AsyncIterator[Reader]:
    reader = Reader(hub)
    try:
        yield reader
    finally:
        await reader.close()


async def test_the_first_update_comes_at_once_with_the_counts():
    hub = AuditHub("lab")
    async with reading(hub) as reader:
        first = await asyncio.wait_for(reader.updates.get(), 10)  # no gate: it is not gathered
    assert first == AuditUpdate(events=(), malformed=0, problem="")


async def test_a_burst_of_a_thousand_events_arrives_as_one_update_in_order():
    hub = AuditHub("lab")
    async with reading(hub) as reader:
        await reader.updates.get()
        for i in range(1000):  # one event per loop turn, as a busy lab emits them
            hub.add_event(binding_event(audit_id=f"id-{i}"))
            await asyncio.sleep(0)
        update = await reader.next()
        assert [e.audit_id for e in update.events] == [f"id-{i}" for i in range(1000)]
        assert reader.updates.empty()
    assert hub.received == 1000


async def test_malformed_input_is_counted_with_the_last_problem_and_never_raised():
    hub = AuditHub("log /var/log/audit.log")
    async with reading(hub) as reader:
        await reader.updates.get()
        hub.add_line(json.dumps(binding_event(409)))
        hub.add_line(b"{not json")
        hub.add_line(json.dumps({"kind": "Pod", "apiVersion": "v1"}))
        hub.add_line(json.dumps(status_patch_event()))
        update = await reader.next()
    assert [(e.code, e.message) for e in update.events] == [(409, CONFLICT), (200, "")]
    assert update.events[1].resource_version == "23"
    assert update.malformed == 2
    assert update.problem == "a log line is not an audit.k8s.io/v1 Event: kind 'Pod', apiVersion 'v1'"


async def test_a_malformed_batch_delivers_none_of_its_events():
    hub = AuditHub("webhook")
    assert hub.add_batch(json.dumps(event_list(binding_event(), {"kind": "Pod"}))) != ""
    assert hub.add_batch(b"\xff\xfe") != ""
    assert hub.add_batch(json.dumps(event_list(binding_event(201), binding_event(409)))) == ""
    async with reading(hub) as reader:
        update = await reader.updates.get()  # a stream opened later starts from the backlog
    assert [e.code for e in update.events] == [201, 409]
    assert (update.malformed, hub.received) == (2, 2)


async def test_a_new_origin_text_wakes_the_stream():
    hub = AuditHub("log x (waiting for the file to appear)")
    async with reading(hub) as reader:
        await reader.updates.get()
        hub.set_origin("log x")
        assert (await reader.next()).events == ()
    assert hub.origin == "log x"


async def test_the_backlog_keeps_the_last_events_only():
    hub = AuditHub("lab", backlog=3)
    for i in range(5):
        hub.add_event(binding_event(audit_id=f"id-{i}"))
    async with reading(hub) as reader:
        update = await reader.updates.get()
    assert [e.audit_id for e in update.events] == ["id-2", "id-3", "id-4"]


class FakeAuditor:
    """The lab auditor's subscribe contract: listeners called with each Event mapping; unsubscribe removes one."""

    def __init__(self) -> None:
        self.listeners: list[Callable[[Mapping[str, Any]], None]] = []

    def subscribe(self, listener: Callable[[Mapping[str, Any]], None]) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def emit(self, event: Mapping[str, Any]) -> None:
        for listener in list(self.listeners):
            listener(event)


async def test_the_in_process_feed_subscribes_at_start_and_unsubscribes_at_close():
    auditor = FakeAuditor()
    feed = InProcessAuditFeed(auditor.subscribe)
    auditor.emit(binding_event(audit_id="before-start"))
    async with feed:
        assert len(auditor.listeners) == 1
        async with reading(feed) as reader:
            await reader.updates.get()
            auditor.emit(binding_event(201))
            auditor.emit({"kind": "Event"})  # not an audit Event: counted, never raised into the lab
            auditor.emit(binding_event(409))
            update = await reader.next()
    assert auditor.listeners == []
    assert [e.code for e in update.events] == [201, 409]
    assert update.malformed == 1 and feed.origin == "lab"


async def test_a_listener_called_from_another_thread_wakes_the_reading_loop():
    auditor = FakeAuditor()
    async with InProcessAuditFeed(auditor.subscribe) as feed:
        async with reading(feed) as reader:
            await reader.updates.get()
            thread = threading.Thread(target=auditor.emit, args=(binding_event(201),))
            thread.start()
            thread.join()
            update = await reader.next()
    assert [e.code for e in update.events] == [201]
