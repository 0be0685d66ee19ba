"""One path for the API server's audit events, wherever they come from: parse, count what cannot be read, batch.

:class:`AuditHub` is the :class:`~observatory.model.source.AuditFeed` every origin is: the lab observatory started
(:class:`InProcessAuditFeed`, the lab's ``auditor.subscribe``), a webhook it listens on
(:class:`~observatory.kube.audit_webhook.AuditWebhookFeed`, ``EventList`` POSTs) and a log file it follows
(:class:`~observatory.kube.audit_log.AuditLogFeed`, one Event per line). An origin hands the hub raw input
(:meth:`AuditHub.add_event` a decoded Event, :meth:`AuditHub.add_line` a log line, :meth:`AuditHub.add_batch` a
webhook body); the hub parses it with :mod:`observatory.model.audit`, never raises for bad input (it counts it in
``malformed`` and keeps its sentence as ``problem``), and fans the events out to every :meth:`AuditHub.audit_stream`.

Updates are batched: a stream yields one :class:`~observatory.model.source.AuditUpdate` at once (what the hub holds,
its counts), then waits for news and gathers for ``flush_seconds`` (0.2 s) before the next, so a burst of 1,000
events a second reaches the screen as five updates, not 1,000. The hub keeps the last ``backlog`` events (5,000) so a
stream opened later (the screen rescoped to another namespace) starts from them; a stream whose reader stops reading
keeps at most as many.

Feeding methods run on the event loop's thread; a listener called from another thread is handed over to the loop
that reads (``call_soon_threadsafe``). An origin is an async context manager: ``async with feed:`` starts it (binds the
webhook, starts following the file, subscribes to the lab) and stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from types import TracebackType
from typing import Any

from observatory.model.audit import AuditEvent, AuditFormatError, parse_batch, parse_event, parse_line
from observatory.model.source import AuditUpdate

__all__ = ["BACKLOG", "FLUSH_SECONDS", "AuditHub", "AuditOriginError", "InProcessAuditFeed", "Subscribe"]

FLUSH_SECONDS = 0.2
"""How long a stream gathers after the first news before it yields the next update."""
BACKLOG = 5_000
"""Events the hub keeps for streams opened later, and the most a stream that is not read holds."""

Subscribe = Callable[[Callable[[Mapping[str, Any]], None]], Callable[[], None]]
"""The lab auditor's ``subscribe(listener) -> unsubscribe`` (``observatory.lab.audit.types.Auditor.subscribe``):
the listener is called with each audit Event as the JSON mapping the log backend writes."""


class AuditOriginError(Exception):
    """An origin that cannot start (a listen address in use, a log path that is a directory); the message is one
    sentence for the command line, which exits 2."""


class _Stream:
    """One reader of the hub: its pending events and the loop event that wakes it."""

    __slots__ = ("loop", "pending", "wake")

    def __init__(self, backlog: int, events: tuple[AuditEvent, ...]) -> None:
        self.loop = asyncio.get_running_loop()
        self.pending: deque[AuditEvent] = deque(events, maxlen=backlog)
        self.wake = asyncio.Event()

    def notify(self) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self.wake.set()
        else:
            with contextlib.suppress(RuntimeError):  # the reading loop is closed: nobody to wake
                self.loop.call_soon_threadsafe(self.wake.set)


class AuditHub:
    """The audit feed of one origin (see the module docstring). ``origin`` is its text for the screen; ``malformed``
    counts input that was not an audit Event (or EventList), ``problem`` is the last such input's sentence;
    ``received`` counts the events read."""

    def __init__(self, origin: str, *, flush_seconds: float = FLUSH_SECONDS, backlog: int = BACKLOG) -> None:
        self._origin = origin
        self._flush_seconds = flush_seconds
        self._backlog_size = backlog
        self._backlog: deque[AuditEvent] = deque(maxlen=backlog)
        self._streams: list[_Stream] = []
        self.malformed = 0
        self.problem = ""
        self.received = 0

    @property
    def origin(self) -> str:
        """Where the events come from (``lab``, ``webhook 127.0.0.1:9444 …``, ``log PATH``), with the origin's state
        when it is not receiving (``log PATH (waiting for the file)``)."""
        return self._origin

    def set_origin(self, origin: str) -> None:
        """Change the origin text; every stream yields an update so the screen shows it."""
        if origin != self._origin:
            self._origin = origin
            self._notify()

    def announcement(self) -> list[str]:
        """Lines to print before the screen takes the terminal (the webhook's kubeconfig and flags); none here."""
        return []

    def add_events(self, events: tuple[AuditEvent, ...] | list[AuditEvent]) -> None:
        """Deliver parsed events, in order, to the backlog and every stream."""
        if not events:
            return
        self.received += len(events)
        self._backlog.extend(events)
        for stream in self._streams:
            stream.pending.extend(events)
        self._notify()

    def add_event(self, obj: Any) -> AuditEvent | None:
        """One decoded audit Event (a JSON mapping); counted as malformed when it is not one. Never raises."""
        try:
            event = parse_event(obj)
        except AuditFormatError as exc:
            self.count_malformed(str(exc))
            return None
        self.add_events((event,))
        return event

    def add_line(self, line: bytes | str) -> AuditEvent | None:
        """One line of an audit log (JSON, ``--audit-log-format=json``); counted when it is not an Event."""
        try:
            event = parse_line(line)
        except AuditFormatError as exc:
            self.count_malformed(_sentence("a log line", str(exc)))
            return None
        self.add_events((event,))
        return event

    def add_batch(self, body: bytes | str) -> str:
        """The body of one webhook POST, an ``audit.k8s.io/v1`` EventList: its events are delivered, or nothing of
        it when any part is malformed (the batch is one object). Returns "" or the problem, which is counted."""
        try:
            events = parse_batch(json.loads(body))
        except (ValueError, UnicodeDecodeError) as exc:
            problem = _sentence("a webhook batch", str(exc) if isinstance(exc, AuditFormatError) else
                                f"not JSON: {exc}")
            self.count_malformed(problem)
            return problem
        self.add_events(events)
        return ""

    def count_malformed(self, problem: str) -> None:
        """Count one piece of input that could not be read, keeping ``problem`` (one sentence) as the last."""
        self.malformed += 1
        self.problem = problem
        self._notify()

    def _notify(self) -> None:
        for stream in self._streams:
            stream.notify()

    def _update(self, stream: _Stream) -> AuditUpdate:
        pending = stream.pending
        events = tuple(pending.popleft() for _ in range(len(pending)))
        return AuditUpdate(events=events, malformed=self.malformed, problem=self.problem)

    async def gather(self) -> None:
        """What a stream waits between its first news and its update: ``flush_seconds``."""
        await asyncio.sleep(self._flush_seconds)

    async def audit_stream(self) -> AsyncIterator[AuditUpdate]:
        """Updates until cancelled: the first at once (the backlog, the counts), then one per ``flush_seconds`` of
        news (events, a malformed count that moved, a new origin text). Never raises for bad input."""
        stream = _Stream(self._backlog_size, tuple(self._backlog))
        self._streams.append(stream)
        try:
            yield self._update(stream)
            while True:
                await stream.wake.wait()
                await self.gather()
                stream.wake.clear()
                yield self._update(stream)
        finally:
            self._streams.remove(stream)

    async def start(self) -> None:
        """Start receiving; raises :class:`AuditOriginError` when the origin cannot start. Nothing to do here."""

    async def aclose(self) -> None:
        """Stop receiving; idempotent. Nothing to do here."""

    async def __aenter__(self) -> AuditHub:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()


def _sentence(what: str, problem: str) -> str:
    """``a log line is not JSON: …``, ``a webhook batch: audit event without auditID``."""
    return f"{what} is {problem}" if problem.startswith("not ") else f"{what}: {problem}"


class InProcessAuditFeed(AuditHub):
    """The audit events of the lab observatory started, in the same process: ``subscribe`` is the lab auditor's
    (:data:`Subscribe`), called at :meth:`start`; each event arrives as the mapping the log backend would write, with
    no file and no HTTP in between. A listener never raises into the lab: what cannot be read is counted."""

    def __init__(self, subscribe: Subscribe, *, origin: str = "lab", **options: Any) -> None:
        super().__init__(origin, **options)
        self._subscribe = subscribe
        self._unsubscribe: Callable[[], None] | None = None

    def listen(self, event: Mapping[str, Any]) -> None:
        """The listener handed to the lab's auditor."""
        try:
            self.add_event(event)
        except Exception as exc:  # a listener must never fail the lab's request
            self.count_malformed(f"an audit event could not be read: {type(exc).__name__}: {exc}")

    async def start(self) -> None:
        if self._unsubscribe is None:
            self._unsubscribe = self._subscribe(self.listen)

    async def aclose(self) -> None:
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()
