"""kube-apiserver's audit backends: the log file (``--audit-log-*``) and the webhook (``--audit-webhook-*``).

The log backend (``staging/src/k8s.io/apiserver/plugin/pkg/audit/log/backend.go``, format ``json``) writes each
event as one line of JSON (the JSON serializer's bytes, newline included) and, in kube-apiserver's default
``blocking`` mode, before the request goes on; the lab also flushes each line, so a follower sees it at once.
``--audit-log-path -`` is standard output. A file is rotated as ``gopkg.in/natefinch/lumberjack.v2`` does
(``lumberjack.go``): before a write that would take it past ``--audit-log-maxsize`` megabytes (0: lumberjack's
``defaultMaxSize`` of 100), it is renamed ``<name>-<time><ext>`` where ``<time>`` is the UTC time of the rotation in
``backupTimeFormat`` ``2006-01-02T15-04-05.000`` (``audit-2026-12-02T03-54-36.123.log``) and a new file is opened
(mode 0600, as ``ensureLogFile`` creates it); then backups beyond ``--audit-log-maxbackup`` (0: all kept) and older
than ``--audit-log-maxage`` days by the time in their names (0: no limit) are removed, oldest first. A single line
bigger than the maximum is refused (``write length %d exceeds maximum file size %d``), as lumberjack does.

The webhook backend (``plugin/pkg/audit/webhook/webhook.go``) POSTs ``audit.k8s.io/v1`` ``EventList`` objects to the
server of a kubeconfig-format file (``--audit-webhook-config-file``). In ``batch`` mode (the default; ``buffered``
backend, ``plugin/pkg/audit/buffered/buffered.go``) events wait in a buffer of 10000 and are sent in batches of at
most ``--audit-webhook-batch-max-size`` (400), a batch leaving when full or ``--audit-webhook-batch-max-wait``
(30s) after its collection began; in ``blocking`` mode each event is sent on its own, in order (the lab's handlers
share one event loop with the sender, so nothing waits for it). A failed POST is retried with
``DefaultRetryBackoffWithInitialDelay``: ``--audit-webhook-initial-backoff`` (10s), factor 1.5, jitter 0.2, 5
attempts; then the batch is dropped, counted in :attr:`WebhookBackend.dropped`, and logged (the first time as a
warning, upstream's ``Error in audit plugin 'webhook' affecting %d audit events: %v``; later drops at debug level).
A full buffer drops the event (``audit buffer queue blocked``). The lab is never slowed or stopped by its webhook.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import re
import ssl
import sys
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any, Protocol

import aiohttp
import yaml

from observatory.lab.encoding import go_json

__all__ = ["Backend", "LogBackend", "RotatingFile", "WebhookBackend", "WebhookConfig", "WebhookConfigError",
           "load_webhook_config"]

log = logging.getLogger(__name__)

BACKUP_TIME_FORMAT = "%Y-%m-%dT%H-%M-%S"
"""lumberjack's ``backupTimeFormat`` ``2006-01-02T15-04-05.000`` up to the seconds (milliseconds added after)."""
MEGABYTE = 1024 * 1024
DEFAULT_MAX_SIZE_MB = 100
"""lumberjack's ``defaultMaxSize``: the size in megabytes a log is rotated at when ``MaxSize`` is 0."""
BUFFER_SIZE = 10000
"""``defaultBatchBufferSize``: events the webhook's buffer holds before it drops new ones."""
RETRY_FACTOR, RETRY_JITTER, RETRY_STEPS = 1.5, 0.2, 5
"""``DefaultRetryBackoffWithInitialDelay`` (``k8s.io/apiserver/pkg/util/webhook``): the webhook's retries."""


class Backend(Protocol):
    """Where events go: :meth:`process` takes one event (its dict and its JSON line), in the order emitted."""

    def process(self, event: Mapping[str, Any], line: bytes) -> None: ...

    async def close(self) -> None: ...


class RotatingFile:
    """An append-only file rotated as lumberjack rotates (see the module docstring). ``max_size_mb`` 0 is 100 MB."""

    def __init__(self, path: Path, max_size_mb: int = 0, max_backups: int = 0, max_age_days: int = 0,
                 now: Any = None) -> None:
        self.path = Path(path).expanduser()
        self.max_bytes = (max_size_mb or DEFAULT_MAX_SIZE_MB) * MEGABYTE
        self.max_backups = max_backups
        self.max_age_days = max_age_days
        self._now = now or (lambda: datetime.now(UTC))
        self._file: IO[bytes] | None = None
        self.size = 0
        self._open()

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600)
        self._file = os.fdopen(fd, "ab", buffering=0)
        self.size = os.fstat(fd).st_size

    def backup_name(self, at: datetime) -> Path:
        """``backupName``: ``<name>-<2006-01-02T15-04-05.000><ext>`` beside the file, in UTC."""
        stem, ext = os.path.splitext(self.path.name)
        stamp = at.astimezone(UTC).strftime(BACKUP_TIME_FORMAT) + f".{at.microsecond // 1000:03d}"
        return self.path.with_name(f"{stem}-{stamp}{ext}")

    def write(self, data: bytes) -> None:
        """Append ``data`` (unbuffered: on disk for any reader at once), rotating first when it would not fit.
        Raises ValueError for data larger than the maximum, OSError when the file cannot be written."""
        if len(data) > self.max_bytes:
            raise ValueError(f"write length {len(data)} exceeds maximum file size {self.max_bytes}")
        if self._file is None:  # closed with its lab; a lab started again writes on
            self._open()
        if self.size + len(data) > self.max_bytes:
            self.rotate()
        assert self._file is not None
        self._file.write(data)
        self.size += len(data)

    def rotate(self) -> None:
        """Rename the file to its backup name, open a new one, and remove the backups beyond the limits."""
        if self._file is not None:
            self._file.close()
            self._file = None
        if self.path.exists():
            os.replace(self.path, self.backup_name(self._now()))
        self._open()
        self._mill()

    def backups(self) -> list[tuple[datetime, Path]]:
        """The rotated files (``oldLogFiles``), newest first, with the time in their names."""
        stem, ext = os.path.splitext(self.path.name)
        pattern = re.compile(re.escape(stem) + r"-(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3})" + re.escape(ext) + "$")
        found = []
        for entry in self.path.parent.iterdir():
            match = pattern.match(entry.name)
            if match:
                stamp = datetime.strptime(match.group(1) + "000", "%Y-%m-%dT%H-%M-%S.%f").replace(tzinfo=UTC)
                found.append((stamp, entry))
        return sorted(found, reverse=True)

    def _mill(self) -> None:
        backups = self.backups()
        remove = []
        if self.max_backups > 0:
            remove += backups[self.max_backups:]
            backups = backups[:self.max_backups]
        if self.max_age_days > 0:
            cutoff = self._now() - timedelta(days=self.max_age_days)
            remove += [b for b in backups if b[0] < cutoff]
        for _, path in remove:
            try:
                path.unlink()
            except OSError as exc:
                log.warning("audit log: cannot remove the old log %s: %s", path, exc.strerror or exc)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class LogBackend:
    """``--audit-log-path``: one JSON line per event, on a :class:`RotatingFile` or (``-``) standard output."""

    def __init__(self, path: str, max_age_days: int = 0, max_backups: int = 0, max_size_mb: int = 0) -> None:
        self.path = path
        self.file = None if path == "-" else RotatingFile(Path(path), max_size_mb, max_backups, max_age_days)
        self.errors = 0
        """Events that could not be written (each logged)."""

    def process(self, event: Mapping[str, Any], line: bytes) -> None:
        try:
            if self.file is None:
                sys.stdout.buffer.write(line)
                sys.stdout.buffer.flush()
            else:
                self.file.write(line)
        except (OSError, ValueError) as exc:
            self.errors += 1
            log.error("Error in audit plugin 'log' affecting 1 audit events: %s", exc)

    async def close(self) -> None:
        if self.file is not None:
            self.file.close()


class WebhookConfigError(ValueError):
    """An ``--audit-webhook-config-file`` that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class WebhookConfig:
    """The receiver a webhook kubeconfig names: its URL, the TLS context (None for http) and a bearer token."""

    server: str
    ssl_context: ssl.SSLContext | None = None
    token: str = ""


def _data_or_file(entry: Mapping[str, Any], key: str, base: Path) -> bytes | None:
    import base64

    data = entry.get(f"{key}-data")
    if data:
        return base64.b64decode(data)
    name = entry.get(key)
    if name:
        return (base / str(name)).expanduser().read_bytes() if not os.path.isabs(name) else Path(name).read_bytes()
    return None


def load_webhook_config(path: Path | str) -> WebhookConfig:
    """Read a kubeconfig-format webhook configuration as client-go would (its current context, else its only
    one): ``server``, ``certificate-authority(-data)``, ``insecure-skip-tls-verify``, the user's ``token`` or
    ``tokenFile`` and ``client-certificate(-data)``/``client-key(-data)``. Raises :class:`WebhookConfigError`."""
    where = Path(path).expanduser()
    try:
        doc = yaml.safe_load(where.read_text(encoding="utf-8"))
    except OSError as exc:
        raise WebhookConfigError(f"initializing audit webhook: {where}: {exc.strerror or exc}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise WebhookConfigError(f"initializing audit webhook: {where}: not a kubeconfig: "
                                 f"{str(exc).splitlines()[0]}") from None
    if not isinstance(doc, dict):
        raise WebhookConfigError(f"initializing audit webhook: {where}: not a kubeconfig")

    def named(section: str, name: str | None) -> dict[str, Any]:
        entries = [e for e in doc.get(section) or [] if isinstance(e, dict)]
        chosen = next((e for e in entries if e.get("name") == name), None) if name else None
        if chosen is None and len(entries) == 1 and not name:
            chosen = entries[0]
        key = section[:-1] if section != "users" else "user"
        return dict((chosen or {}).get(key) or {})

    context = named("contexts", doc.get("current-context") or None)
    cluster = named("clusters", context.get("cluster"))
    user = named("users", context.get("user"))
    server = str(cluster.get("server") or "")
    if not server.startswith(("http://", "https://")):
        raise WebhookConfigError("initializing audit webhook: invalid configuration: no server found for cluster "
                                 f"in {where} (clusters[].cluster.server must be an http(s) URL)")
    base = where.parent
    ssl_context = None
    try:
        if server.startswith("https://"):
            ca = _data_or_file(cluster, "certificate-authority", base)
            ssl_context = ssl.create_default_context(cadata=ca.decode("ascii") if ca else None)
            if cluster.get("insecure-skip-tls-verify"):
                ssl_context.check_hostname = False
                ssl_context.verify_mode = ssl.CERT_NONE
            cert = _data_or_file(user, "client-certificate", base)
            key = _data_or_file(user, "client-key", base)
            if cert and key:
                _load_client_pair(ssl_context, cert, key)
        token = str(user.get("token") or "")
        if not token and user.get("tokenFile"):
            token = Path(str(user["tokenFile"])).expanduser().read_text().strip()
    except (OSError, ValueError, ssl.SSLError) as exc:
        raise WebhookConfigError(f"initializing audit webhook: {where}: {exc}") from None
    return WebhookConfig(server, ssl_context, token)


def _load_client_pair(context: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        cert_path, key_path = Path(tmp, "cert.pem"), Path(tmp, "key.pem")
        cert_path.write_bytes(cert)
        key_path.write_bytes(key)
        context.load_cert_chain(cert_path, key_path)


class WebhookBackend:
    """``--audit-webhook-config-file``: EventList batches POSTed to the receiver (module docstring). Events are
    queued synchronously by :meth:`process`; a task started on first use (on the running loop) sends them."""

    def __init__(self, config: WebhookConfig, *, mode: str = "batch", max_batch_size: int = 400,
                 max_batch_wait: float = 30.0, initial_backoff: float = 10.0, buffer_size: int = BUFFER_SIZE) -> None:
        self.config = config
        self.batch_size = max_batch_size if mode == "batch" else 1
        self.max_wait = max_batch_wait if mode == "batch" else 0.0
        self.initial_backoff = initial_backoff
        self.buffer: deque[Mapping[str, Any]] = deque()
        self.buffer_size = buffer_size
        self.sent = 0
        """Events the receiver accepted."""
        self.dropped = 0
        """Events given up on: after the retries, or because the buffer was full."""
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None
        self._warned = False
        self._closing = False

    def process(self, event: Mapping[str, Any], line: bytes) -> None:
        if len(self.buffer) >= self.buffer_size:
            self._drop(1, "audit buffer queue blocked")
            return
        self.buffer.append(event)
        if self._task is not None and self._task.done():  # closed with its lab; a lab started again sends on
            self._task, self._closing = None, False
        if self._task is None:
            try:
                self._task = asyncio.get_running_loop().create_task(self._run())
            except RuntimeError:  # no loop (a test writing events directly): sent once one runs
                pass
        self._wake.set()

    def _drop(self, count: int, why: str) -> None:
        self.dropped += count
        if not self._warned:
            self._warned = True
            log.warning("Error in audit plugin 'webhook' affecting %d audit events: %s (later drops are counted in "
                        "the lab's webhook backend, not logged)", count, why)
        else:
            log.debug("Error in audit plugin 'webhook' affecting %d audit events: %s", count, why)

    async def _collect(self) -> list[Mapping[str, Any]]:
        """``collectEvents``: up to the batch size, or what arrived ``max_wait`` seconds after collection began."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.max_wait
        while len(self.buffer) < self.batch_size and not self._closing:
            remaining = deadline - loop.time()
            if remaining <= 0 and self.buffer:
                break
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), remaining if remaining > 0 else None)
            except TimeoutError:
                if self.buffer:
                    break
                deadline = loop.time() + self.max_wait
        return [self.buffer.popleft() for _ in range(min(self.batch_size, len(self.buffer)))]

    async def _run(self) -> None:
        while not (self._closing and not self.buffer):
            batch = await self._collect()
            if batch:
                await self._send(batch)

    async def _send(self, batch: list[Mapping[str, Any]]) -> None:
        body = go_json({"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "metadata": {}, "items": batch})
        headers = {"Content-Type": "application/json", "Accept": "application/json, */*"}
        if self.config.token:
            headers["Authorization"] = f"Bearer {self.config.token}"
        delay, error = self.initial_backoff, ""
        for step in range(RETRY_STEPS):
            try:
                if self._session is None:
                    self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
                async with self._session.post(self.config.server, data=body, headers=headers,
                                              ssl=self.config.ssl_context or True) as answer:
                    await answer.read()
                    if 200 <= answer.status < 300:
                        self.sent += len(batch)
                        return
                    error = f"the server answered {answer.status} {answer.reason or ''}".rstrip()
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                error = str(exc) or type(exc).__name__
            if step == RETRY_STEPS - 1 or self._closing:
                break
            await asyncio.sleep(delay * (1 + RETRY_JITTER * random.random()))
            delay *= RETRY_FACTOR
        self._drop(len(batch), error)

    async def close(self) -> None:
        """Send what is buffered (one attempt each, no retries), then stop."""
        self._closing = True
        self._wake.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, 5.0)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()
        if self._session is not None:
            await self._session.close()
            self._session = None
