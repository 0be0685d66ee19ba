"""List-then-watch for one core/v1 resource, yielding typed deltas and the connection state.

What it does, as client-go's reflector does (``k8s.io/client-go/tools/cache/reflector.go``):

1. **List** ``GET /api/v1[/namespaces/{ns}]/{resource}?limit=N[&continue=T]`` page by page. The pages share one
   snapshot; its ``metadata.resourceVersion`` is the list RV. ``410 Expired`` on a continue token (the snapshot was
   compacted mid-list) restarts the list, and a second expiry falls back to one unpaged list, as client-go's pager
   does with ``FullListIfExpired``; a server that hands back a continue token it already gave is trouble (4), not a
   list that never ends. The pages come from the one pager, :func:`observatory.kube.fetch.list_all`. The whole
   list becomes ONE :class:`Relisted`.
2. **Watch** ``GET ...?watch=true&resourceVersion=RV&allowWatchBookmarks=true&timeoutSeconds=S``: a chunked 200 of
   newline-delimited ``{"type": ..., "object": ...}`` lines, read here with a plain line splitter over the raw
   aiohttp stream and ``json.loads`` (no generated models: about 30x cheaper per object). ADDED/MODIFIED become
   :class:`Upserted`, DELETED :class:`Deleted`; every event and every BOOKMARK advances the RV. When the server
   ends the watch (``timeoutSeconds``, or a dropped watch closed cleanly) it re-watches from the last RV.
3. **410 Expired** (an ERROR event with ``code: 410``, or an HTTP 410): ``resyncing``, then a fresh list
   (:class:`Relisted`, which the state diffs: no ghosts, no duplicates), then ``live``.
4. **Trouble** (connection refused or reset, 5xx, 429, 401, a watch silent for ``read_timeout`` seconds, a line
   that is not JSON): ``stale`` with ``since`` = the first failure and a readable ``detail``; retry after a jittered
   exponential backoff (``backoff_initial`` doubling up to ``backoff_max``; a ``Retry-After`` header wins),
   resuming the watch from the last RV (or relisting if the list never finished). ``live`` returns when the new
   watch is accepted; after a silent watch, only when it sends its first line.
5. **403 Forbidden** on list or watch: ``forbidden`` with the API server's message, retried every ``backoff_max``.
6. **A stream that does not continue what it holds** (:mod:`observatory.kube.continuity`): an event or BOOKMARK
   whose resourceVersion is lower than the RV held, or a MODIFIED or DELETED event for an object not held. The
   server lost history it had acknowledged (restored from an older state, then handing out the same RVs again), so
   what the reflector built on is stale: ``resyncing``, then a fresh list (:class:`Relisted` with ``rvs_reused``,
   which replaces everything held: ghosts vanish, missed objects appear), then ``live``. The event itself is not
   passed on. A watch answered ``504 Too large resource version`` (the server is behind the RV held) is handled
   the same way.

Objects are passed through as the dicts ``json.loads`` made, with ``metadata.managedFields`` removed. List items
have no ``kind``/``apiVersion`` (the API server leaves them out); watch objects have them.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import random
import statistics
import time
from collections.abc import AsyncGenerator
from datetime import UTC, datetime
from typing import Any, NoReturn

import aiohttp
from kubernetes_asyncio import client

from observatory.kube.continuity import Continuity
from observatory.kube.fetch import list_all
from observatory.kube.rawhttp import ApiError, Unreachable, api_error, drop_managed_fields, open_response, unreachable
from observatory.model.deltas import Deleted, Delta, Relisted, Upserted, WatchState

__all__ = ["CLUSTER_SCOPED", "KINDS", "Reflector"]

KINDS = {"pods": True, "events": True, "nodes": False, "namespaces": False, "persistentvolumeclaims": True,
         "persistentvolumes": False, "storageclasses": False}
"""The resources a reflector can watch, and whether each is namespaced."""
GROUP_PATHS = {"storageclasses": "/apis/storage.k8s.io/v1"}
"""Where a kind outside core/v1 is served (every other kind: ``/api/v1``)."""
CLUSTER_SCOPED = frozenset(k for k, namespaced in KINDS.items() if not namespaced)
MAX_LINE = 32 * 1024 * 1024
"""A watch line longer than this (bytes) is treated as a broken stream; etcd objects are at most 1.5 MiB."""


class _Expired(Exception):
    """410: the resourceVersion (or continue token) is older than the server's history."""


class _Backwards(Exception):
    """A watch event or BOOKMARK older than the resourceVersion held (module docstring, 6)."""


class _Forbidden(Exception):
    """403 on list or watch; the message is the API server's."""


class _Trouble(Exception):
    """No usable answer: transport failure, 5xx, 429, 401, silence, garbage. ``retry_after`` in seconds or None."""

    def __init__(self, detail: str, retry_after: float | None = None, silent: bool = False) -> None:
        super().__init__(detail)
        self.retry_after = retry_after
        self.silent = silent


class Reflector:
    """List-then-watch of ``kind`` (one of :data:`KINDS`: pods, events, nodes, namespaces, PersistentVolumeClaims,
    PersistentVolumes, StorageClasses) in ``namespace``
    (None: all namespaces; ignored for cluster-scoped kinds) through ``api``.

    ``page_size``: items per list page (0: unpaged). ``watch_timeout``: the ``timeoutSeconds`` asked of the server
    (seconds). ``read_timeout``: seconds without a byte before a watch is declared stale and reopened (pick it above
    the server's bookmark interval: kube-apiserver sends one about every minute). Once a watch has shown its
    bookmark rhythm, silence is judged by it: three median bookmark gaps (of the last few), at least
    ``min_silence`` seconds and at most ``read_timeout`` — so a server that bookmarks every 5 s (the lab) is called
    stale after 15 s of silence, not 90. ``backoff_initial`` and
    ``backoff_max``: seconds, for retries. ``field_selector`` (e.g. ``spec.nodeName!=``) is sent with every list
    and watch. ``resource_version`` is the last RV seen; ``relists``, ``reconnects`` and ``backwards`` (RVs that
    went backwards) count what happened (for the resilience figures).
    """

    def __init__(self, api: client.ApiClient, kind: str, namespace: str | None, *, page_size: int = 500,
                 watch_timeout: int = 300, read_timeout: float = 90.0, backoff_initial: float = 0.5,
                 backoff_max: float = 30.0, field_selector: str = "", min_silence: float = 10.0) -> None:
        if kind not in KINDS:
            raise ValueError(f"cannot watch {kind!r}: choose one of {', '.join(KINDS)}")
        self.api = api
        self.kind = kind
        self.namespace = namespace if KINDS[kind] else None
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.read_timeout = read_timeout
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.field_selector = field_selector
        self.min_silence = min_silence
        self._bookmark_gaps: collections.deque[float] = collections.deque(maxlen=5)
        self._last_bookmark: float | None = None
        self.resource_version = ""
        self.relists = 0
        self.reconnects = 0
        self.backwards = 0
        self._continuity = Continuity(kind)
        self._state: tuple[str, str] | None = None
        root = GROUP_PATHS.get(kind, "/api/v1")
        base = f"{root}/namespaces/{self.namespace}" if self.namespace else root
        self.path = f"{base}/{kind}"

    async def run(self) -> AsyncGenerator[Delta, None]:
        """Yield deltas until cancelled (or ``aclose()``): ``WatchState("connecting")``, one :class:`Relisted`,
        ``WatchState("live")``, then :class:`Upserted`/:class:`Deleted` as they happen, with ``WatchState`` changes
        and further :class:`Relisted` as the module docstring describes. Never raises for API or network trouble."""
        connecting = self._enter("connecting")
        if connecting is not None:  # always: "connecting" is announced even when repeated
            yield connecting
        need_list = True
        failures = 0
        expired_streak = 0
        short_streak = 0
        stale_since: datetime | None = None
        need_bytes = False
        rvs_reused = False
        while True:
            try:
                if need_list:
                    objs, rv = await self._list()
                    need_list, failures, stale_since, need_bytes = False, 0, None, False
                    self.resource_version = rv
                    self._continuity.relisted(objs)
                    self.relists += 1
                    yield Relisted(self.kind, tuple(objs), rv, rvs_reused=rvs_reused)
                    rvs_reused = False
                    state = self._enter("live")
                    if state is not None:
                        yield state
                started = time.monotonic()
                events = 0
                async with contextlib.aclosing(self._watch(need_bytes)) as stream:
                    async for delta in stream:
                        if isinstance(delta, WatchState):  # the watch is answering again
                            failures, stale_since, need_bytes = 0, None, False
                            state = self._enter("live")
                            if state is not None:
                                yield state
                            continue
                        events += 1
                        expired_streak = 0
                        yield delta
                if events == 0 and time.monotonic() - started < 1.0:
                    # client-go's "very short watch": a server ending watches at once must not be hammered.
                    short_streak += 1
                    await self._pause(self._backoff(short_streak))
                else:
                    short_streak = 0
            except (_Expired, _Backwards) as exc:
                rvs_reused = rvs_reused or isinstance(exc, _Backwards)
                expired_streak += 1
                need_list = True
                state = self._enter("resyncing", detail=str(exc))
                if state is not None:
                    yield state
                if expired_streak > 1:
                    await self._pause(self._backoff(expired_streak - 1))
            except _Forbidden as exc:
                state = self._enter("forbidden", detail=str(exc))
                if state is not None:
                    yield state
                await self._pause(random.uniform(0.8, 1.0) * self.backoff_max)
            except _Trouble as exc:
                stale_since = stale_since or datetime.now(UTC)
                need_bytes = need_bytes or exc.silent
                state = self._enter("stale", since=stale_since, detail=str(exc))
                if state is not None:
                    yield state
                failures += 1
                self.reconnects += 1
                delay = exc.retry_after if exc.retry_after is not None else self._backoff(failures)
                await self._pause(delay)

    # -- list --------------------------------------------------------------------------------------------------

    async def _list(self) -> tuple[list[dict[str, Any]], str]:
        """Every object and the list RV, through the pager (:func:`~observatory.kube.fetch.list_all`), each read
        within ``read_timeout``. Raises _Expired, _Forbidden or _Trouble."""
        try:
            return await list_all(self.api, self.path, field_selector=self.field_selector, page_size=self.page_size,
                                  timeout=None, read_timeout=self.read_timeout)
        except Unreachable as exc:
            raise _Trouble(str(exc)) from None
        except ApiError as exc:
            if 200 <= exc.status < 300:  # an answer that is no usable list: not JSON, or a pager that would loop
                raise _Trouble(f"The list of {self.kind} from the API server cannot be used: {exc.message}.") from None
            self._refuse(exc, listing=True)

    # -- watch -------------------------------------------------------------------------------------------------

    async def _watch(self, need_bytes: bool) -> AsyncGenerator[Delta, None]:
        """One watch from ``self.resource_version``. Yields ``WatchState("live")`` once the watch is answering
        (on the 200, or on its first line when ``need_bytes``), then the deltas; returns when the server ends the
        stream. Raises _Expired, _Forbidden or _Trouble."""
        params = [("watch", "true"), ("resourceVersion", self.resource_version), ("allowWatchBookmarks", "true"),
                  ("timeoutSeconds", str(self.watch_timeout))]
        if self.field_selector:
            params.append(("fieldSelector", self.field_selector))
        try:
            async with asyncio.timeout(self.read_timeout):
                resp = await open_response(self.api, "GET", self.path, params=params,
                                           connect_timeout=self.read_timeout)
        except Unreachable as exc:
            raise _Trouble(str(exc)) from None
        except TimeoutError:
            raise _Trouble(f"The API server accepted no watch of {self.kind} within {self.read_timeout:g} s.",
                           silent=True) from None
        clean = False
        try:
            if resp.status != 200:
                data = await self._read_error_body(resp)
                if not 200 <= resp.status < 300:
                    headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in resp.raw_headers]
                    self._refuse(api_error(resp.status, resp.reason or "", data, headers), listing=False)
                raise _Trouble(f"The watch of {self.kind} was answered with {resp.status} {resp.reason or ''}.")
            if not need_bytes:
                yield WatchState(self.kind, "live")
            buffer = bytearray()
            answered = not need_bytes
            self._last_bookmark = None  # gaps are measured within one stream, never across a reconnect
            while True:
                silence = self.silence_limit()
                try:
                    async with asyncio.timeout(silence):
                        chunk = await resp.content.readany()
                except TimeoutError:
                    rhythm = (f" (bookmarks had come every {statistics.median(self._bookmark_gaps):.3g} s)"
                              if silence < self.read_timeout else "")
                    raise _Trouble(f"The watch of {self.kind} sent nothing (no events, no bookmarks) for "
                                   f"{silence:.3g} s{rhythm}.", silent=True) from None
                except (aiohttp.ClientError, OSError) as exc:
                    raise _Trouble(self._transport(exc)) from None
                if not chunk:
                    if buffer.strip():  # a last line without its newline
                        for delta in self._event(bytes(buffer)):
                            yield delta
                    clean = True
                    return
                buffer += chunk
                while (end := buffer.find(b"\n")) >= 0:
                    line = bytes(buffer[:end])
                    del buffer[:end + 1]
                    if not line.strip():
                        continue
                    if not answered:
                        answered = True
                        yield WatchState(self.kind, "live")
                    for delta in self._event(line):
                        yield delta
                if len(buffer) > MAX_LINE:
                    raise _Trouble(f"The watch of {self.kind} sent a line longer than {MAX_LINE} bytes.")
        finally:
            if clean:
                resp.release()
            else:
                resp.close()

    def silence_limit(self) -> float:
        """Seconds of silence after which the open watch is stale: ``read_timeout`` until two bookmark gaps are
        known, then three times their median, kept within ``[min_silence, read_timeout]``."""
        if len(self._bookmark_gaps) < 2:
            return self.read_timeout
        return max(self.min_silence, min(self.read_timeout, 3 * statistics.median(self._bookmark_gaps)))

    def _event(self, line: bytes) -> list[Delta]:
        """The deltas of one watch line (none for a BOOKMARK); raises _Expired for a 410 ERROR, _Forbidden for a
        403 one, _Trouble for any other ERROR or an unparsable line and _Backwards for an RV lower than the one
        held."""
        try:
            event = json.loads(line)
            type_, obj = event["type"], event["object"]
            if not isinstance(obj, dict):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            raise _Trouble(f"The watch of {self.kind} sent a line that is not a watch event.") from None
        if type_ == "ERROR":
            code, message = obj.get("code"), str(obj.get("message") or obj.get("reason") or "error")
            if code == 410:
                raise _Expired(message)
            if code == 403:
                raise _Forbidden(message)
            raise _Trouble(f"The watch of {self.kind} ended with an error: {message}.")
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        broken = self._continuity.check(type_, meta, self.resource_version)
        if broken is not None:
            self.backwards += 1
            raise _Backwards(broken)
        rv = meta.get("resourceVersion")
        if rv:
            self.resource_version = str(rv)
        if type_ == "BOOKMARK":
            now = time.monotonic()
            if self._last_bookmark is not None:
                self._bookmark_gaps.append(now - self._last_bookmark)
            self._last_bookmark = now
            return []
        drop_managed_fields(obj)
        self._continuity.applied(type_, meta)
        if type_ in ("ADDED", "MODIFIED"):
            return [Upserted(self.kind, obj, type_)]
        if type_ == "DELETED":
            return [Deleted(self.kind, obj)]
        return []

    # -- HTTP --------------------------------------------------------------------------------------------------

    async def _read_error_body(self, resp: Any) -> bytes:
        try:
            async with asyncio.timeout(self.read_timeout):
                return await resp.read()
        except (aiohttp.ClientError, OSError, TimeoutError):
            return b""

    def _refuse(self, error: ApiError, *, listing: bool) -> NoReturn:
        """Raise for a non-2xx answer: 410 _Expired, 403 _Forbidden, anything else _Trouble (with Retry-After)."""
        status, phrase = error.status, error.phrase
        message = " ".join(error.message.split())[:300] or f"{status} {phrase}".strip()
        verb = "list" if listing else "watch"
        if "Too large resource version" in message:
            # 504 "Too large resource version": the server is behind our resourceVersion (restarted, restored from
            # an older state); like client-go's reflector, relist rather than wait for it.
            raise _Backwards(message)
        if status == 410:
            raise _Expired(message)
        if status == 403:
            raise _Forbidden(message)
        retry_after = _retry_after(error.header("Retry-After"))
        if status == 401:
            raise _Trouble(f"The API server rejected the credentials for the {verb} of {self.kind} "
                           "(401 Unauthorized).", retry_after=max(retry_after or 0.0, self.backoff_max))
        raise _Trouble(f"The {verb} of {self.kind} failed: {status} {phrase}: {message}.", retry_after=retry_after)

    async def _pause(self, seconds: float) -> None:
        """Wait ``seconds`` before a retry (tests override this to record the delays)."""
        await asyncio.sleep(seconds)

    def _transport(self, exc: BaseException) -> str:
        return str(unreachable(self.api, exc, self.read_timeout))

    def _backoff(self, failures: int) -> float:
        """Seconds to wait after ``failures`` consecutive failures: ``backoff_initial * 2**(n-1)`` capped at
        ``backoff_max``, jittered to between half and all of it."""
        delay = min(self.backoff_max, self.backoff_initial * (2 ** max(failures - 1, 0)))
        return random.uniform(delay / 2, delay)

    def _enter(self, state: str, *, since: datetime | None = None, detail: str = "") -> WatchState | None:
        """The WatchState to yield on a change of state or detail; None when nothing changed."""
        key = (state, detail)
        if key == self._state and state != "connecting":
            return None
        self._state = key
        return WatchState(self.kind, state, since or datetime.now(UTC), detail)


def _retry_after(value: str | None) -> float | None:
    """``Retry-After`` in seconds (the API server sends whole seconds), capped at 10 minutes; None if absent."""
    if not value:
        return None
    try:
        return min(max(float(value), 0.0), 600.0)
    except ValueError:
        return None
