"""``observatory --record FILE``: a Source that passes everything through and writes it down as it happens.

:class:`RecordingSource` wraps any Source (:class:`observatory.model.source.Source`; in practice a
:class:`~observatory.kube.source.ClusterSource`) and writes the JSON Lines recording of
:mod:`observatory.model.recording`: the header when it is made, then every delta each stream yields, every
Binding exchange ``bind()`` returns and every update the inner source's audit feed (``Capabilities.audit``) gives,
stamped with the time it was seen, and each key the app reports with :meth:`RecordingSource.record_key`. Audit
events are written without the bodies of Secrets, TokenReviews and TokenRequests
(:func:`observatory.model.audit_json.credential_free`). ``observatory replay FILE`` plays the file back
(:mod:`observatory.replay`).

Every line passes through :func:`observatory.model.transcript.redact` with the credential values given as
``secrets`` (and their JSON-escaped forms) before it is written, and is flushed at once, so a crash of the app loses
nothing already seen (the operating system still owns the page cache; nothing is fsync'ed).

Cluster text (Event messages, schedulerName, conditions) is kept exactly, never cleaned: the lines are ASCII-only
JSON (:mod:`observatory.model.recording`), so a control character is written as its ``\\uNNNN`` escape. The file
holds no raw ESC, BEL or C1 control (``cat`` of it cannot drive a terminal), and replay shows what was recorded,
through the screen's own filter.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Iterable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from observatory.model.commands import CommandsContext
from observatory.model.deltas import Delta
from observatory.model.recording import Header, Recorder
from observatory.model.records import BindingExchange, LeaseView
from observatory.model.source import AuditFeed, AuditUpdate, Capabilities
from observatory.model.transcript import redact

if TYPE_CHECKING:
    from observatory.model.source import Source

__all__ = ["RecordingAuditFeed", "RecordingSource", "check_writable"]


def check_writable(path: Path) -> str | None:
    """Why ``path`` cannot be recorded to, in a few words (None when it looks writable), without creating it: a
    directory, a missing or unwritable folder, an unwritable file."""
    path = Path(path).expanduser()
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        return "it is a directory"
    if not folder.is_dir():
        return f"the folder {folder} does not exist"
    if path.exists() and not os.access(path, os.W_OK):
        return "permission denied"
    if not path.exists() and not os.access(folder, os.W_OK | os.X_OK):
        return f"permission denied (cannot create files in {folder})"
    return None


class _Writer:
    """The open file shared by a RecordingSource and every copy :meth:`RecordingSource.with_namespace` makes."""

    def __init__(self, path: Path, recorder: Recorder, secrets: Iterable[str],
                 clock: Callable[[], datetime]) -> None:
        self.path, self.recorder, self.clock = path, recorder, clock
        plain = {s for s in secrets if isinstance(s, str) and len(s) >= 4}
        # A secret with a quote, a backslash or a non-ASCII character appears escaped inside a JSON line.
        self.secrets = frozenset(plain | {json.dumps(s)[1:-1] for s in plain})
        self.error: str | None = None
        self._file: TextIO | None = open(path, "w", encoding="utf-8", buffering=1)
        self.write(recorder.header_line())

    def write(self, line: str) -> None:
        if self._file is None:
            return
        clean = redact(line, self.secrets)
        if clean != line:
            clean = _still_json(line, clean, self.secrets)
        try:
            self._file.write(clean + "\n")
            self._file.flush()
        except OSError as exc:  # disk full, say: stop recording, keep the app running
            self.error = f"recording to {self.path} stopped: {exc.strerror or exc}"
            self.close()

    def close(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError as exc:
                self.error = self.error or f"recording to {self.path} could not be closed: {exc.strerror or exc}"
            self._file = None

    @property
    def closed(self) -> bool:
        return self._file is None


def _still_json(line: str, clean: str, secrets: frozenset[str]) -> str:
    """``clean`` when it is still one JSON value; else the line redacted value by value (a secret that looks like
    JSON punctuation or a keyword must not break the file)."""
    try:
        json.loads(clean)
        return clean
    except ValueError:
        pass

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return redact(value, secrets)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    return json.dumps(walk(json.loads(line)), separators=(",", ":"))


def _audit_line(recorder: Recorder, update: AuditUpdate, origin: str, at: datetime) -> str:
    return recorder.audit(update, origin, at)


class RecordingAuditFeed:
    """``inner`` (an AuditFeed) as it is, with every update written (``{"type":"audit",…}``) before it is yielded,
    on the same timeline as the deltas."""

    def __init__(self, inner: AuditFeed, source: RecordingSource) -> None:
        self.inner, self._source = inner, source

    @property
    def origin(self) -> str:
        """The inner feed's."""
        return self.inner.origin

    async def audit_stream(self) -> AsyncIterator[AuditUpdate]:
        origin, recorder = self.inner.origin, self._source._writer.recorder
        async for update in self.inner.audit_stream():
            self._source._write(partial(_audit_line, recorder, update, origin))
            yield update


class RecordingSource:
    """``inner`` as it is, with everything it delivers written to ``path`` (created or truncated now).

    ``secrets`` are the credential values to keep out of the file (``ClusterSource.secrets``); ``clock`` gives the
    aware time each thing is seen (default: now, UTC) and the header's ``started``. The header takes ``context``,
    ``server``, ``namespace`` ("" for all) and ``lab`` from ``inner``.

    Raises OSError when the file cannot be created. Later write failures do not raise: recording stops and
    :attr:`error` says why. Writes are synchronous and small (a relist of many objects is one long line).
    """

    def __init__(self, inner: Source, path: Path, *, secrets: Iterable[str] = frozenset(),
                 clock: Callable[[], datetime] | None = None, _writer: _Writer | None = None) -> None:
        self.inner = inner
        self.path = Path(path)
        if _writer is None:
            clock = clock or (lambda: datetime.now(UTC))
            header = Header(started=clock(), context=inner.context, server=inner.server,
                            namespace=inner.namespace or "", lab=inner.lab)
            _writer = _Writer(self.path, Recorder(header), secrets, clock)
        self._writer = _writer
        self.context, self.server, self.namespace = inner.context, inner.server, inner.namespace
        self.lab, self.read_only = inner.lab, inner.read_only

    def __repr__(self) -> str:
        return f"RecordingSource({self.inner!r}, path={str(self.path)!r})"

    @property
    def error(self) -> str | None:
        """Why recording stopped early (a write failed), or None."""
        return self._writer.error

    @property
    def secrets(self) -> frozenset[str]:
        """The inner source's secrets (its credential values)."""
        return self.inner.secrets

    def commands_context(self) -> CommandsContext:
        """The inner source's."""
        return self.inner.commands_context()

    async def stream(self, kind: str) -> AsyncIterator[Delta]:
        """The inner stream of ``kind``; each delta is written (``{"type":"delta",…}``) before it is yielded."""
        async for delta in self.inner.stream(kind):
            self._write(partial(self._writer.recorder.delta, delta))
            yield delta

    async def bind(self, namespace: str, name: str, node: str, uid: str | None = None) -> BindingExchange:
        """The inner ``bind``; the exchange it returns (any status, also 0) is written when it comes back."""
        exchange = await self.inner.bind(namespace, name, node, uid)
        self._write(lambda at: self._writer.recorder.exchange(exchange, at))
        return exchange

    async def read_lease(self, namespace: str, name: str) -> LeaseView:
        """The inner ``read_lease``, not recorded (a replay answers it with ``LeaseView.unreadable``)."""
        return await self.inner.read_lease(namespace, name)

    def record_key(self, key: str) -> None:
        """Write a key press (Textual's name for it: ``"b"``, ``"enter"``, ``"ctrl+p"``); the app calls this for each
        key it handles, so a replay can press the same keys at the same offsets."""
        self._write(lambda at: self._writer.recorder.key(key, at))

    def capabilities(self) -> Capabilities:
        """Key presses are recorded (:meth:`record_key`), and the inner source's audit feed, when it has one, is
        passed on recorded (:class:`RecordingAuditFeed`). Access reviews are not offered: their answers are not
        recorded, so a replay could not answer them the same way."""
        audit = self.inner.capabilities().audit
        return Capabilities(keys=self, audit=RecordingAuditFeed(audit, self) if audit is not None else None)

    def with_namespace(self, namespace: str | None) -> RecordingSource:
        """The inner source rescoped, still recording into the same file (the header keeps the first scope; the
        relists that follow show the new one)."""
        return RecordingSource(self.inner.with_namespace(namespace), self.path, _writer=self._writer)

    async def close(self) -> None:
        """Close the file (every copy made with :meth:`with_namespace` stops recording; later deltas are passed on
        unrecorded) and then the inner source. Idempotent."""
        self._writer.close()
        await self.inner.close()

    def _write(self, make: Callable[[datetime], str]) -> None:
        if not self._writer.closed:
            self._writer.write(make(self._writer.clock()))
