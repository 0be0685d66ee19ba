"""``observatory replay FILE [--speed X]``: a Source that plays a recording back, with no cluster.

:class:`ReplaySource` implements :class:`observatory.model.source.Source` over a
:class:`~observatory.model.recording.Recording` (:func:`load_recording` reads one from a file). One timeline drives
everything: a single scheduler task walks the entries in file order and hands each delta to its kind's stream,
each key press to :meth:`ReplaySource.keys` and each audit update to the audit feed (``Capabilities.audit``), at
the entry's recorded offset ``t`` divided by ``speed`` (``math.inf``: no waiting, file order kept).
While a stream, the key iterator or the audit feed is being read, the scheduler waits for its reader to come back
for the next item before it moves on, so the app sees the recorded interleaving across kinds, keys and audit
updates even at ``math.inf``. Entries of a kind nobody reads yet are kept for its first reader.

Determinism: give the app :meth:`ReplaySource.clock` (the recorded time of the latest entry delivered), so ages,
"just bound" windows and lesson ticks follow the recording rather than the wall clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from observatory.model.commands import CommandsContext
from observatory.model.deltas import Delta
from observatory.model.recording import (
    AuditEntry,
    DeltaEntry,
    Entry,
    ExchangeEntry,
    KeyEntry,
    Recording,
    RecordingError,
    read_recording,
    schedule,
)
from observatory.model.records import BindingExchange, LeaseView
from observatory.model.source import AuditUpdate, Capabilities

__all__ = ["NOT_RECORDED", "ReplayAuditFeed", "ReplaySource", "load_recording"]

NOT_RECORDED = "not in the recording"
"""The ``error`` of a bind and the ``problem`` of a Lease that the recording does not hold."""

_KEYS = "\0keys"  # the key presses' channel; no resource is named so
_AUDIT = "\0audit"  # the audit updates' channel


def load_recording(path: str | Path) -> Recording:
    """The recording in the file at ``path``. Raises OSError when it cannot be read and
    :class:`~observatory.model.recording.RecordingError` (``"line N: <what is wrong>"``) when it is not a
    recording, including a line that is not UTF-8."""
    with open(path, "rb") as handle:
        raw = handle.read()

    def lines() -> Any:
        for number, line in enumerate(raw.splitlines(keepends=True), start=1):
            try:
                yield line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise RecordingError(f"not UTF-8 text (byte {exc.start + 1})", number) from None

    return read_recording(lines())


class _Channel:
    """Entries for one reader kind, and the handshake that keeps the timeline in step with its readers."""

    def __init__(self) -> None:
        self.items: deque[Entry] = deque()
        self.readers = 0
        self.out = 0  # items handed to a reader that has not come back for the next one yet
        self._waiters: list[asyncio.Future[None]] = []

    def wake(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    async def wait(self, ready: Callable[[], bool]) -> None:
        while not ready():
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def settled(self) -> bool:
        """Nobody reads, or the reader took everything and came back."""
        return self.readers == 0 or (not self.items and self.out == 0)


class ReplaySource:
    """A recording played back as a Source.

    ``context``, ``server``, ``namespace`` (None when every namespace was recorded) and ``lab`` come from the
    header; ``read_only`` is False (a bind is answered from the recording). ``speed`` > 0 scales the pace
    (2 = twice as fast, ``math.inf`` = as fast as possible, in order); ValueError otherwise. ``sleep`` and
    ``monotonic`` are the timer (``asyncio.sleep`` and ``time.monotonic`` seconds), replaceable in tests.

    Playback starts on the first read of a stream or of :meth:`keys`. Each stream stays open after its last
    recorded delta, idle like a quiet watch, until cancelled; :attr:`finished` turns True when every entry has
    been delivered.
    """

    def __init__(self, recording: Recording, *, speed: float = 1.0,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._timeline = schedule(recording.entries, speed)  # validates speed
        self.recording, self.speed = recording, speed
        header = recording.header
        self.context, self.server, self.lab = header.context, header.server, header.lab
        self.namespace: str | None = header.namespace or None
        self.read_only = False
        self._sleep, self._monotonic = sleep, monotonic
        self._channels: defaultdict[str, _Channel] = defaultdict(_Channel)
        self._exchanges: defaultdict[tuple[str, str], deque[ExchangeEntry]] = defaultdict(deque)
        for entry in recording.entries:
            if isinstance(entry, ExchangeEntry):
                self._exchanges[(entry.exchange.pod, entry.exchange.node)].append(entry)
        self._order = {id(entry): index for index, entry in enumerate(recording.entries)}
        self._latest: tuple[int, datetime] = (-1, header.started)
        self._task: asyncio.Task[None] | None = None
        self.finished = not recording.entries
        origins = [entry.origin for entry in recording.entries if isinstance(entry, AuditEntry)]
        self._audit = ReplayAuditFeed(self, origins[0]) if origins else None

    def __repr__(self) -> str:
        return f"ReplaySource(context={self.context!r}, entries={len(self.recording.entries)}, speed={self.speed})"

    # -- the Source protocol --------------------------------------------------------------------------------------

    async def stream(self, kind: str) -> AsyncIterator[Delta]:
        """The recorded deltas of ``kind`` (any kind recorded, e.g. ``"pods"``), each at its offset on the shared
        timeline; then nothing, until cancelled. Several streams of one kind share its deltas (each delta goes to
        one reader): the app reads each kind once at a time."""
        async for entry in self._read(kind):
            assert isinstance(entry, DeltaEntry)
            yield entry.delta

    async def bind(self, namespace: str, name: str, node: str, uid: str | None = None) -> BindingExchange:
        """The next recorded exchange for pod ``namespace/name`` and ``node``, in recorded order, at once; when
        there is none left, an exchange with ``status == 0`` and ``error`` :data:`NOT_RECORDED`. ``uid`` is
        ignored."""
        recorded = self._exchanges.get((f"{namespace}/{name}", node))
        if recorded:
            entry = recorded.popleft()
            self._delivered(entry)
            return entry.exchange
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/binding"
        return BindingExchange(pod=f"{namespace}/{name}", node=node, method="POST", path=path, request_headers=(),
                               request_body=b"", http_version="HTTP/1.1", status=0, reason="", response_headers=(),
                               response_body=b"", sent_at=self.clock(), elapsed_ms=0.0, error=NOT_RECORDED)

    async def read_lease(self, namespace: str, name: str) -> LeaseView:
        """Always ``LeaseView.unreadable(namespace, name, "not in the recording")``: recordings hold no Leases."""
        return LeaseView.unreadable(namespace, name, NOT_RECORDED)

    def with_namespace(self, namespace: str | None) -> ReplaySource:
        """This same source: a replay keeps the recorded scope (the recording holds only what was watched), and
        streams opened again continue the one timeline where it is."""
        return self

    def capabilities(self) -> Capabilities:
        """A replay (:attr:`finished`): the screen keeps the recorded scope. An audit feed (:class:`ReplayAuditFeed`)
        when the recording holds audit updates; none for a recording made without one (as the live source had
        none)."""
        return Capabilities(replay=self, audit=self._audit)

    def commands_context(self) -> CommandsContext:
        """The recorded server and context; the header holds no auth facts, so ``auth`` is ``"none"``."""
        return CommandsContext(server=self.server, context=self.context)

    @property
    def secrets(self) -> frozenset[str]:
        """None: the recording was redacted when it was written."""
        return frozenset()

    # -- determinism ------------------------------------------------------------------------------------------------

    def clock(self) -> datetime:
        """The recorded ``at`` of the latest entry delivered (a delta yielded, a key yielded, an exchange returned),
        latest in file order; before any, the header's ``started``. Pass it as ``ObservatoryApp(clock=…)``."""
        return self._latest[1] if self._latest[1].tzinfo is not None else self._latest[1].replace(tzinfo=UTC)

    async def keys(self) -> AsyncIterator[str]:
        """The recorded key presses (Textual key names) at their offsets on the same timeline as the deltas, for
        the app to press; then nothing, until cancelled."""
        async for entry in self._read(_KEYS):
            assert isinstance(entry, KeyEntry)
            yield entry.key

    async def audit_updates(self) -> AsyncIterator[AuditUpdate]:
        """The recorded audit updates at their offsets on the same timeline as the deltas; then nothing, until
        cancelled. :class:`ReplayAuditFeed` is how the screen reads them."""
        async for entry in self._read(_AUDIT):
            assert isinstance(entry, AuditEntry)
            yield entry.update

    async def close(self) -> None:
        """Stop the timeline. Idempotent."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    # -- the timeline -----------------------------------------------------------------------------------------------

    def _start(self) -> None:
        if self._task is None and not self.finished:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="replay-timeline")

    async def _run(self) -> None:
        await asyncio.sleep(0)  # let the other readers started in the same tick as the first one register
        start = self._monotonic()
        offset = 0.0
        for delay, entry in self._timeline:
            offset += delay
            if isinstance(entry, ExchangeEntry):
                continue  # answered by bind(), when the app sends that Binding
            wait = start + offset - self._monotonic()
            if wait > 0 and math.isfinite(wait):
                await self._sleep(wait)
            if isinstance(entry, KeyEntry):
                channel = self._channels[_KEYS]
            elif isinstance(entry, AuditEntry):
                channel = self._channels[_AUDIT]
            else:
                channel = self._channels[entry.delta.kind]
            channel.items.append(entry)
            channel.wake()
            await channel.wait(channel.settled)
        self.finished = True

    async def _read(self, name: str) -> AsyncIterator[Entry]:
        channel = self._channels[name]
        channel.readers += 1
        channel.wake()
        try:
            self._start()
            while True:
                await channel.wait(lambda: bool(channel.items))
                entry = channel.items.popleft()
                channel.out += 1
                self._delivered(entry)
                try:
                    yield entry
                finally:
                    channel.out -= 1
                    channel.wake()
        finally:
            channel.readers -= 1
            channel.wake()

    def _delivered(self, entry: Entry) -> None:
        index = self._order.get(id(entry), -1)
        if index > self._latest[0]:
            self._latest = (index, entry.at)


class ReplayAuditFeed:
    """The audit feed of a replay (an :class:`~observatory.model.source.AuditFeed`): the recorded updates, at their
    recorded times, in order with the deltas. ``origin`` is the recorded feed's (``lab``, ``webhook ADDR``,
    ``log PATH``)."""

    def __init__(self, replay: ReplaySource, origin: str) -> None:
        self._replay, self._origin = replay, origin

    @property
    def origin(self) -> str:
        return self._origin

    def audit_stream(self) -> AsyncIterator[AuditUpdate]:
        return self._replay.audit_updates()
