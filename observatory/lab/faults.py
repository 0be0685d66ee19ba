"""Faults the lab can be told to inject, for tests and for showing failure in class: ``/lab/faults``.

``GET /lab/faults`` answers the active faults; ``POST /lab/faults`` with a JSON object ``{"kind": KIND, ...}``
applies one. Both live outside the Kubernetes paths and are authenticated like every other path (a token lab
answers them 401 without its token). The kinds:

* ``drop-watches``: every open watch connection is cut (the TCP connection is closed without the chunked stream's
  end, as when an API server dies or a network path drops), so clients see a broken stream, reconnect and resume
  from their last resourceVersion.
* ``stall-watches`` ``{"seconds": S}`` (0 < S <= 3600): for S seconds every watch stream, open or opened meanwhile,
  stays connected but sends nothing: no events, no BOOKMARKs (new watches still get their ``200`` headers). Then
  the streams resume normally and deliver, in order, everything that queued meanwhile (a client that gave up on a
  silent stream has reconnected and resumes from its own resourceVersion). ``clear`` ends a stall early.
* ``compact``: drops the watch history (etcd compaction), so any watch from an older resourceVersion gets
  410 Expired ``too old resource version: RV (COMPACTED)``; every open JSON watch receives, after what it already
  queued, the ERROR event etcd3's watcher sends when compaction overtakes it (410 ``Expired``, ``The resourceVersion
  for the provided watch is too old.``, reference §2.2) and ends; a Table watch (``kubectl get -w``) just ends.
* ``errors`` ``{"rate": R, "code": 500|429, "retryAfterSeconds": N}``: that fraction R (0..1) of Kubernetes API
  requests (every path but ``/lab/`` and the health checks) is refused before it reaches the API. 500 is
  ``NewInternalError`` (reference §2.2): ``{"kind":"Status",...,"message":"Internal error occurred: ...","reason":
  "InternalError","details":{"causes":[{"message":...}]},"code":500}``. 429 is what kube-apiserver's max-in-flight
  and priority-and-fairness filters write (apiserver ``pkg/server/filters/maxinflight.go`` ``tooManyRequests``,
  used by ``priority-and-fairness.go``): Go's ``http.Error``, i.e. a ``text/plain; charset=utf-8`` body
  ``Too many requests, please try again later.`` plus a newline, ``X-Content-Type-Options: nosniff`` and
  ``Retry-After: N`` (upstream's constant is 1). That body is not a Status: client-go makes one from it
  (reason TooManyRequests, ``details.retryAfterSeconds`` taken from ``Retry-After``). Watches already open
  are not cut; the fault reaches them when they reconnect.
* ``latency`` ``{"ms": MS}`` (0..60000): every Kubernetes API request waits MS milliseconds before it is served,
  and every write of a watch stream (each batch of events, each BOOKMARK) waits MS milliseconds too.
* ``clear``: removes every fault (an ongoing stall ends at once).

A POST answers ``200`` with ``{"message": <one sentence>, ...}`` and the same document as GET; a bad request
``400`` with a BadRequest Status. GET answers ``{"kind": "LabFaults", "apiVersion": "observatory/v1", "active":
[{"kind": ..., ...}], "openWatches": N, "counts": {...}}``; ``counts`` are totals since the lab started
(``watchesDropped``, ``compactions``, ``errorsInjected``, ``requestsDelayed``).

The watch pump (:mod:`observatory.lab.watch`) calls :func:`open_watch` around each stream and :func:`hold` before
each write; :func:`install` adds the routes and the middleware to the lab's application.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from observatory.lab import errors
from observatory.lab.encoding import go_json
from observatory.lab.request_body import _wants_table
from observatory.lab.store import Change, Store, Watcher

__all__ = ["FAULTS_KEY", "KINDS", "FaultError", "Faults", "hold", "install", "open_watch"]

KINDS = ("drop-watches", "stall-watches", "compact", "errors", "latency", "clear")
"""The fault kinds ``POST /lab/faults`` accepts."""

TOO_MANY_REQUESTS = "Too many requests, please try again later."
"""The 429 text of kube-apiserver's max-in-flight and priority-and-fairness filters (``maxinflight.go``)."""
WATCH_TOO_OLD = "The resourceVersion for the provided watch is too old."
"""etcd3's 410 Expired text for a watch overtaken by compaction (``pkg/storage/etcd3/errors.go``, reference §2.2)."""
INJECTED = "the lab's errors fault answered this request"
"""The error behind the injected 500 (``Internal error occurred: <this>``)."""

MAX_STALL = 3600.0
MAX_LATENCY_MS = 60_000
_EXEMPT_PREFIXES = ("/lab/", "/healthz", "/livez", "/readyz")


class FaultError(ValueError):
    """A fault request that cannot be applied; the message is one readable sentence."""


@dataclass(eq=False)
class _OpenWatch:
    request: web.Request
    watcher: Watcher
    table: bool


class Faults:
    """The active faults of one lab and the watches they can reach. Everything runs on the server's loop.

    ``seed`` seeds the generator that picks which requests an ``errors`` fault refuses (None: unpredictable).
    """

    def __init__(self, store: Store, *, seed: int | None = None) -> None:
        self.store = store
        self.rng = random.Random(seed)
        self.error_rate = 0.0
        self.error_code = 500
        self.retry_after = 1
        self.latency_ms = 0
        self.stall_until: float | None = None
        self.stall_seconds = 0.0
        self.watches: set[_OpenWatch] = set()
        self.counts = {"watchesDropped": 0, "compactions": 0, "errorsInjected": 0, "requestsDelayed": 0}
        self._wake = asyncio.Event()

    # -- what is active ------------------------------------------------------------------------------------------

    def stall_remaining(self) -> float:
        """Seconds left of the current stall (0 when there is none)."""
        if self.stall_until is None:
            return 0.0
        remaining = self.stall_until - asyncio.get_running_loop().time()
        if remaining <= 0:
            self.stall_until = None
            return 0.0
        return remaining

    def describe(self) -> dict[str, Any]:
        """The GET document (see the module docstring)."""
        active: list[dict[str, Any]] = []
        remaining = self.stall_remaining()
        if remaining:
            active.append({"kind": "stall-watches", "seconds": self.stall_seconds,
                           "remainingSeconds": round(remaining, 3)})
        if self.error_rate > 0:
            entry: dict[str, Any] = {"kind": "errors", "rate": self.error_rate, "code": self.error_code}
            if self.error_code == 429:
                entry["retryAfterSeconds"] = self.retry_after
            active.append(entry)
        if self.latency_ms:
            active.append({"kind": "latency", "ms": self.latency_ms})
        return {"kind": "LabFaults", "apiVersion": "observatory/v1", "active": active,
                "openWatches": len(self.watches), "counts": dict(self.counts)}

    def summary(self) -> str:
        """The active faults in a few words, e.g. ``errors 50% 429, latency 200 ms; 3 open watches``."""
        parts = []
        remaining = self.stall_remaining()
        if remaining:
            parts.append(f"watches stalled for {remaining:.1f} s more")
        if self.error_rate > 0:
            parts.append(f"errors {_percent(self.error_rate)} {self.error_code}")
        if self.latency_ms:
            parts.append(f"latency {self.latency_ms} ms")
        return f"{', '.join(parts) or 'no faults'}; {_watches(len(self.watches))} open"

    # -- applying ------------------------------------------------------------------------------------------------

    def apply(self, spec: Mapping[str, Any]) -> str:
        """Apply one fault (the POST body); return what was done in one sentence. Raises FaultError."""
        if not isinstance(spec, Mapping):
            raise FaultError("the body must be a JSON object such as {\"kind\": \"drop-watches\"}")
        kind = spec.get("kind")
        if kind not in KINDS:
            raise FaultError(f"unknown fault kind {kind!r}: choose one of {', '.join(KINDS)}")
        allowed = {"kind", *_PARAMETERS.get(kind, ())}
        extra = sorted(set(spec) - allowed)
        if extra:
            raise FaultError(f"{kind} takes no {', '.join(extra)}"
                             + (f" (it takes {', '.join(sorted(allowed - {'kind'}))})" if allowed != {"kind"} else ""))
        if kind == "drop-watches":
            count = self.drop_watches()
            return f"dropped {_watches(count)}; clients reconnect and resume from their last resourceVersion"
        if kind == "stall-watches":
            seconds = _number(spec, "seconds", low=0.0, high=MAX_STALL, low_open=True)
            self.stall_seconds = seconds
            self.stall_until = asyncio.get_running_loop().time() + seconds
            self._notify()
            return (f"stalling every watch for {seconds:g} s ({_watches(len(self.watches))} now): "
                    "no events, no bookmarks, then what queued is delivered")
        if kind == "compact":
            rv, expired, ended = self.compact()
            tables = f" ({ended} Table watch{'' if ended == 1 else 'es'} just ended)" if ended else ""
            return (f"compacted the history at resourceVersion {rv}: {_watches(expired)} got 410 Expired{tables}, "
                    "and so does any watch from an older resourceVersion")
        if kind == "errors":
            rate = _number(spec, "rate", low=0.0, high=1.0)
            code = spec.get("code", 500)
            if code not in (500, 429) or isinstance(code, bool):
                raise FaultError(f"errors: code must be 500 or 429, not {code!r}")
            retry_after = spec.get("retryAfterSeconds", 1)
            if not isinstance(retry_after, int) or isinstance(retry_after, bool) or not 0 <= retry_after <= 600:
                raise FaultError(f"errors: retryAfterSeconds must be a whole number of seconds from 0 to 600, "
                                 f"not {retry_after!r}")
            if "seed" in spec:
                seed = spec["seed"]
                if not isinstance(seed, int) or isinstance(seed, bool):
                    raise FaultError(f"errors: seed must be an integer, not {seed!r}")
                self.rng.seed(seed)
            self.error_rate, self.error_code, self.retry_after = rate, code, retry_after
            if rate == 0:
                return "errors off: every Kubernetes API request is served"
            what = ("500 InternalError" if code == 500 else f"429 Too Many Requests (Retry-After: {retry_after})")
            return f"answering {_percent(rate)} of Kubernetes API requests with {what}"
        if kind == "latency":
            ms = _number(spec, "ms", low=0, high=MAX_LATENCY_MS, integer=True)
            self.latency_ms = int(ms)
            self._notify()
            if not self.latency_ms:
                return "latency off"
            return f"delaying every Kubernetes API request and every watch write by {self.latency_ms} ms"
        before = self.summary().split(";")[0]
        self.clear()
        return "cleared: there were no faults" if before == "no faults" else f"cleared {before}"

    def drop_watches(self) -> int:
        """Cut every open watch connection; return how many there were."""
        dropped = 0
        for open_watch in list(self.watches):
            transport = open_watch.request.transport
            if transport is not None and not transport.is_closing():
                transport.abort()
                dropped += 1
            open_watch.watcher.close()
        self.watches.clear()  # the lab's own controllers watch the store in-process: untouched
        self.counts["watchesDropped"] += dropped
        return dropped

    def compact(self) -> tuple[int, int, int]:
        """Drop the history, send every open JSON watch the 410 ERROR event and end every open Table watch; return
        (resourceVersion, JSON watches expired, Table watches ended)."""
        self.store.compact()
        rv = self.store.resource_version
        status = errors.expired(WATCH_TOO_OLD).status
        line = go_json({"type": "ERROR", "object": status})
        expired = ended = 0
        for open_watch in list(self.watches):
            watcher = open_watch.watcher
            if watcher.closed:
                continue
            if open_watch.table:
                ended += 1
            else:
                # Encoded in advance: the pump writes a change's cached JSON as is (watch.py ``encode``).
                watcher.queue.put_nowait(Change(rv, "ERROR", watcher.resource, ("", "", ""), status, None,
                                                {"json": line}))
                expired += 1
            watcher.close()
        self.counts["compactions"] += 1
        return rv, expired, ended

    def clear(self) -> None:
        self.error_rate, self.error_code, self.retry_after = 0.0, 500, 1
        self.latency_ms = 0
        self.stall_until = None
        self._notify()

    def _notify(self) -> None:
        """Wake every stream waiting in :meth:`hold`, so a changed fault takes effect at once."""
        wake, self._wake = self._wake, asyncio.Event()
        wake.set()

    # -- hooks ---------------------------------------------------------------------------------------------------

    async def hold(self) -> None:
        """Wait out a stall, then the latency; returns at once when neither is active."""
        while True:
            remaining = self.stall_remaining()
            if not remaining:
                break
            wake = self._wake
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), remaining)
        await self.delay()

    async def delay(self) -> None:
        """Wait the latency, if any; ``clear`` (or a new latency) ends the wait early."""
        if self.latency_ms:
            wake = self._wake
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), self.latency_ms / 1000)

    def refusal(self) -> web.StreamResponse | None:
        """The injected answer for one Kubernetes API request, or None to serve it."""
        if self.error_rate <= 0 or self.rng.random() >= self.error_rate:
            return None
        self.counts["errorsInjected"] += 1
        if self.error_code == 429:
            return web.Response(status=429, text=TOO_MANY_REQUESTS + "\n", content_type="text/plain",
                                charset="utf-8",
                                headers={"Retry-After": str(self.retry_after), "X-Content-Type-Options": "nosniff"})
        raise errors.internal_error(INJECTED)

    @web.middleware
    async def middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """Latency, then errors, for every path but ``/lab/`` and the health checks (after authentication)."""
        if request.path.startswith(_EXEMPT_PREFIXES) or request.path == "/lab":
            return await handler(request)
        if self.latency_ms:
            self.counts["requestsDelayed"] += 1
            await self.delay()
        refused = self.refusal()
        if refused is not None:
            return refused
        return await handler(request)


_PARAMETERS = {"stall-watches": ("seconds",), "errors": ("rate", "code", "retryAfterSeconds", "seed"),
               "latency": ("ms",)}


def _number(spec: Mapping[str, Any], name: str, *, low: float, high: float, low_open: bool = False,
            integer: bool = False) -> float:
    kind = spec.get("kind")
    if name not in spec:
        raise FaultError(f"{kind} needs {name}")
    value = spec[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not float(value).is_integer()):
        raise FaultError(f"{kind}: {name} must be {'a whole number' if integer else 'a number'}, not {value!r}")
    if value != value or (value <= low if low_open else value < low) or value > high:
        bound = f"more than {low:g}" if low_open else f"from {low:g}"
        raise FaultError(f"{kind}: {name} must be {bound} to {high:g}, not {value!r}")
    return int(value) if integer else float(value)


def _percent(rate: float) -> str:
    return f"{rate * 100:g}%"


def _watches(count: int) -> str:
    return f"{count} open watch" if count == 1 else f"{count} open watches"


# -- wiring into the lab ---------------------------------------------------------------------------------------------

FAULTS_KEY = web.AppKey("lab-faults", Faults)


def install(app: web.Application, store: Store, *, seed: int | None = None) -> Faults:
    """Add ``/lab/faults`` and the fault middleware to ``app`` (call before the catch-all route is added and before
    the app starts: aiohttp freezes middlewares then). Returns the app's :class:`Faults`."""
    faults = Faults(store, seed=seed)
    app[FAULTS_KEY] = faults
    app.middlewares.append(faults.middleware)
    app.router.add_get("/lab/faults", _get_faults)
    app.router.add_post("/lab/faults", _post_faults)
    return faults


def _response(doc: Mapping[str, Any], status: int = 200) -> web.Response:
    return web.Response(body=go_json(doc), status=status, content_type="application/json")


async def _get_faults(request: web.Request) -> web.Response:
    return _response(request.app[FAULTS_KEY].describe())


async def _post_faults(request: web.Request) -> web.Response:
    faults = request.app[FAULTS_KEY]
    raw = await request.read()
    try:
        spec = json.loads(raw or b"null")
    except ValueError:
        raise errors.bad_request("the body must be a JSON object such as {\"kind\": \"drop-watches\"}") from None
    try:
        message = faults.apply(spec)
    except FaultError as exc:
        raise errors.bad_request(str(exc)) from None
    return _response({"message": message, **faults.describe()})


@contextlib.contextmanager
def open_watch(request: web.Request, watcher: Watcher) -> Iterator[None]:
    """Make one watch stream reachable by ``drop-watches`` and ``compact`` while it runs."""
    faults = request.app.get(FAULTS_KEY)
    if faults is None:
        yield
        return
    entry = _OpenWatch(request, watcher, _wants_table(request))
    faults.watches.add(entry)
    try:
        yield
    finally:
        faults.watches.discard(entry)


async def hold(request: web.Request) -> bool:
    """Before a watch stream writes: wait out a stall and the latency (see :meth:`Faults.hold`). Returns True, so
    it can stand in a condition."""
    faults = request.app.get(FAULTS_KEY)
    if faults is not None and (faults.stall_until is not None or faults.latency_ms):
        await faults.hold()
    return True
