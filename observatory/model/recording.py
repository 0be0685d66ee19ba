"""The JSON Lines format of ``observatory --record FILE`` and ``observatory replay FILE [--speed X]``.

One JSON object per line, ASCII only (``\\n``, every control character and every non-ASCII character inside
strings are escaped as ``\\uNNNN``), so a line never holds a newline and the file never holds a raw ESC, BEL or C1
control: ``cat`` of a recording cannot drive a terminal, while replay decodes the exact text that was recorded.
The first line is the header; every later line is an entry with ``t``, seconds since the header's ``started`` (a
float), and ``at``, the wall-clock time (RFC 3339)::

    {"type":"header","format":"observatory-recording","version":1,"started":"2026-11-29T10:00:00Z",
     "context":"observatory-lab","server":"http://127.0.0.1:43121","namespace":"","lab":true}
    {"type":"delta","t":0.012,"at":"...","delta":"relisted","kind":"pods","objs":[{...}],"resourceVersion":"17"}
    {"type":"delta","t":0.5,"at":"...","delta":"upserted","kind":"pods","change":"MODIFIED","obj":{...}}
    {"type":"delta","t":0.6,"at":"...","delta":"deleted","kind":"events","obj":{...}}
    {"type":"delta","t":0.7,"at":"...","delta":"watch","kind":"pods","state":"live","since":"..."|null,"detail":""}
    {"type":"exchange","t":1.2,"at":"...","pod":"sched-lab/manual","node":"pair-worker","method":"POST",
     "path":"/api/v1/namespaces/sched-lab/pods/manual/binding","requestHeaders":[["Content-Type","application/json"]],
     "requestBody":"{...}","requestBodyBase64":false,"httpVersion":"HTTP/1.1","status":201,"reason":"Created",
     "responseHeaders":[...],"responseBody":"...","responseBodyBase64":false,"sentAt":"...","elapsedMs":4.2,
     "error":null}
    {"type":"key","t":3.4,"at":"...","key":"b"}
    {"type":"audit","t":3.5,"at":"...","origin":"lab","events":[{"kind":"Event","apiVersion":"audit.k8s.io/v1",...}],
     "malformed":0,"problem":""}

``namespace`` is "" when every namespace was watched. ``delta`` names the :mod:`.deltas` class (``upserted``,
``deleted``, ``relisted``, ``watch`` for WatchState) and ``kind`` is its resource (``pods``, ``nodes``,
``events``); a ``relisted`` line carries ``"rvsReused":true`` when the list followed a resourceVersion that went
backwards (:attr:`.deltas.Relisted.rvs_reused`). A body is text when it is valid UTF-8, else base64 with the
``…Base64`` flag true, so every value decodes to one equal to what was encoded. Aware times are written with
their offset (``Z`` for UTC).

An ``audit`` line is one :class:`~.source.AuditUpdate` the screen received from its audit feed (``origin`` is the
feed's :attr:`~.source.AuditFeed.origin`): its events as ``audit.k8s.io/v1`` Event objects
(:func:`.audit_json.event_to_json`, read back by :func:`.audit.parse_event` to equal events), in the order the
feed gave them, and the feed's running ``malformed`` count and last ``problem``.

Versions: 1 has header, delta, exchange and key lines; 2 adds audit lines. This code writes :data:`VERSION` and
reads every version from 1 to it, so a recording made before audit lines existed replays as it did; a newer
version is refused with the versions this one reads.

Credentials: exchanges never carry them (:mod:`.exchange` drops ``Authorization`` and cookies on construction),
audit events carry no request headers and lose the bodies of Secrets, TokenReviews and TokenRequests
(:func:`.audit_json.credential_free`) when they are encoded, and a server URL's ``user:password@`` is dropped from
the header; the writer should still pass every line through :func:`observatory.model.transcript.redact` with the
kubeconfig's secrets.

Replay is deterministic when it feeds entries in file order, waits :func:`schedule`'s delays, and drives the
ClusterState clock from each entry's ``at`` rather than the wall clock.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ._fields import Fields, RecordingError
from .audit import AuditFormatError, parse_event
from .audit_json import credential_free, event_to_json
from .commands import strip_userinfo
from .deltas import Deleted, Delta, Relisted, Upserted, WatchState
from .exchange import BindingExchange
from .source import AuditUpdate
from .timefmt import parse_time, rfc3339

__all__ = [
    "FORMAT", "VERSION", "AuditEntry", "DeltaEntry", "Entry", "ExchangeEntry", "Header", "KeyEntry", "Recorder",
    "Recording", "RecordingError", "decode_line", "encode_audit", "encode_delta", "encode_exchange", "encode_header",
    "encode_key",
    "exchange_from_json", "exchange_to_json", "parse_time", "read_recording", "rfc3339", "schedule",
]

FORMAT = "observatory-recording"
VERSION = 2
"""The version this code writes, and the newest it reads (2: audit lines)."""


# -- values ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Header:
    """The first line: when recording ``started`` (aware), the kube ``context``, the API ``server`` URL, the one
    ``namespace`` watched ("" for all) and whether it was the embedded ``lab``."""

    started: datetime
    context: str = ""
    server: str = ""
    namespace: str = ""
    lab: bool = False
    version: int = VERSION


@dataclass(frozen=True, slots=True)
class DeltaEntry:
    """A watch delta ``t`` seconds after the start, received at ``at``."""

    t: float
    at: datetime
    delta: Delta


@dataclass(frozen=True, slots=True)
class ExchangeEntry:
    """A Binding exchange, recorded when its answer (or failure) arrived."""

    t: float
    at: datetime
    exchange: BindingExchange


@dataclass(frozen=True, slots=True)
class KeyEntry:
    """A key press, as Textual names it (``"b"``, ``"enter"``, ``"ctrl+p"``)."""

    t: float
    at: datetime
    key: str


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """An update of the audit feed named ``origin``, as the screen received it."""

    t: float
    at: datetime
    update: AuditUpdate
    origin: str = ""


Entry = DeltaEntry | ExchangeEntry | KeyEntry | AuditEntry


@dataclass(frozen=True, slots=True)
class Recording:
    """A whole recording: the header and the entries in file order."""

    header: Header
    entries: tuple[Entry, ...]

    @property
    def duration(self) -> float:
        """Seconds from the start to the last entry (0.0 when there is none)."""
        return max((e.t for e in self.entries), default=0.0)


# -- times and bodies -----------------------------------------------------------------------------------------------

def _body(body: bytes) -> tuple[str, bool]:
    try:
        return body.decode("utf-8"), False
    except UnicodeDecodeError:
        return base64.b64encode(body).decode("ascii"), True


def exchange_to_json(exchange: BindingExchange) -> dict[str, Any]:
    """The exchange as a JSON object (the fields of an ``exchange`` entry, without ``type``, ``t`` and ``at``)."""
    request, request_b64 = _body(exchange.request_body)
    response, response_b64 = _body(exchange.response_body)
    return {
        "pod": exchange.pod, "node": exchange.node, "method": exchange.method, "path": exchange.path,
        "requestHeaders": [list(h) for h in exchange.request_headers],
        "requestBody": request, "requestBodyBase64": request_b64,
        "httpVersion": exchange.http_version, "status": exchange.status, "reason": exchange.reason,
        "responseHeaders": [list(h) for h in exchange.response_headers],
        "responseBody": response, "responseBodyBase64": response_b64,
        "sentAt": rfc3339(exchange.sent_at), "elapsedMs": exchange.elapsed_ms, "error": exchange.error,
    }


# -- encoding -------------------------------------------------------------------------------------------------------

def _line(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))  # ensure_ascii: no raw newline or U+2028 inside a line


def _stamp(kind: str, t: float, at: datetime) -> dict[str, Any]:
    return {"type": kind, "t": float(t), "at": rfc3339(at)}


def encode_header(header: Header) -> str:
    """The header line (no newline). The server URL loses any ``user:password@``."""
    return _line({"type": "header", "format": FORMAT, "version": header.version, "started": rfc3339(header.started),
                  "context": header.context, "server": strip_userinfo(header.server),
                  "namespace": header.namespace, "lab": header.lab})


def encode_delta(delta: Delta, *, t: float, at: datetime) -> str:
    """One ``delta`` line; ``decode_line`` of it gives back an equal delta. TypeError for a value that is not a
    Delta, or objects that are not JSON."""
    out = _stamp("delta", t, at)
    if isinstance(delta, Upserted):
        out.update(delta="upserted", kind=delta.kind, change=delta.change, obj=delta.obj)
    elif isinstance(delta, Deleted):
        out.update(delta="deleted", kind=delta.kind, obj=delta.obj)
    elif isinstance(delta, Relisted):
        out.update(delta="relisted", kind=delta.kind, objs=list(delta.objs), resourceVersion=delta.resource_version)
        if delta.rvs_reused:
            out["rvsReused"] = True
    elif isinstance(delta, WatchState):
        out.update(delta="watch", kind=delta.kind, state=delta.state,
                   since=rfc3339(delta.since) if delta.since is not None else None, detail=delta.detail)
    else:
        raise TypeError(f"not a Delta: {type(delta).__name__}")
    return json.dumps(out, separators=(",", ":"), default=_mapping_default)


def _mapping_default(value: Any) -> Any:
    if isinstance(value, Mapping):  # MappingProxyType and other read-only mappings of the deltas
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def encode_exchange(exchange: BindingExchange, *, t: float, at: datetime) -> str:
    """One ``exchange`` line; decodes to an equal BindingExchange."""
    return _line({**_stamp("exchange", t, at), **exchange_to_json(exchange)})


def encode_key(key: str, *, t: float, at: datetime) -> str:
    """One ``key`` line."""
    return _line({**_stamp("key", t, at), "key": key})


def encode_audit(update: AuditUpdate, *, origin: str, t: float, at: datetime) -> str:
    """One ``audit`` line: each event made :func:`~.audit_json.credential_free`, then written as its Event JSON;
    decodes to an equal AuditUpdate (of the credential-free events). TypeError for bodies that are not JSON."""
    events = [event_to_json(credential_free(event)) for event in update.events]
    return _line({**_stamp("audit", t, at), "origin": origin, "events": events, "malformed": update.malformed,
                  "problem": update.problem})


class Recorder:
    """Makes the lines of one recording, ``t`` measured from ``header.started``: call :meth:`header_line` once,
    then one method per thing seen, passing the time it was seen (aware). Writes nothing itself."""

    def __init__(self, header: Header) -> None:
        self.header = header

    def _t(self, at: datetime) -> float:
        return (at - self.header.started).total_seconds()

    def header_line(self) -> str:
        return encode_header(self.header)

    def delta(self, delta: Delta, at: datetime) -> str:
        return encode_delta(delta, t=self._t(at), at=at)

    def exchange(self, exchange: BindingExchange, at: datetime) -> str:
        return encode_exchange(exchange, t=self._t(at), at=at)

    def key(self, key: str, at: datetime) -> str:
        return encode_key(key, t=self._t(at), at=at)

    def audit(self, update: AuditUpdate, origin: str, at: datetime) -> str:
        return encode_audit(update, origin=origin, t=self._t(at), at=at)


# -- decoding -------------------------------------------------------------------------------------------------------

def exchange_from_json(obj: Mapping[str, Any], *, line: int | None = None) -> BindingExchange:
    """The inverse of :func:`exchange_to_json`; RecordingError (naming ``line`` when given) on a bad value."""
    f = Fields(obj, "exchange", line)
    status = f.get("status", int, "an integer")
    error = f.text("error", optional=True)
    return BindingExchange(
        pod=f.text("pod"), node=f.text("node"), method=f.text("method"), path=f.text("path"),
        request_headers=f.headers("requestHeaders"), request_body=f.body("requestBody"),
        http_version=f.text("httpVersion"), status=status, reason=f.text("reason"),
        response_headers=f.headers("responseHeaders"), response_body=f.body("responseBody"),
        sent_at=f.time("sentAt"), elapsed_ms=f.number("elapsedMs"), error=error)


def _decode_delta(f: Fields) -> Delta:
    tag, kind = f.text("delta"), f.text("kind")
    if tag == "upserted":
        return Upserted(kind, f.obj_of("obj"), f.text("change"))
    if tag == "deleted":
        return Deleted(kind, f.obj_of("obj"))
    if tag == "relisted":
        objs = f.get("objs", list, "a list of JSON objects")
        if not all(isinstance(o, dict) for o in objs):
            raise f.fail("'objs' must be a list of JSON objects")
        return Relisted(kind, tuple(objs), f.text("resourceVersion"),
                        rvs_reused=f.get("rvsReused", bool, "true or false", optional=True) or False)
    if tag == "watch":
        return WatchState(kind, f.text("state"), f.time("since", optional=True), f.text("detail"))
    raise f.fail(f"unknown delta {tag!r} (expected upserted, deleted, relisted or watch)")


def decode_line(line: str, *, number: int | None = None) -> Header | Entry:
    """One line (a trailing newline is allowed) as a :class:`Header` or an entry.

    Raises :class:`RecordingError` (``"line N: …"`` when ``number`` is given) for text that is not one JSON object,
    an unknown ``type``, a missing or mistyped key, a header of another format or of a newer version.
    """
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RecordingError(f"not valid JSON ({exc.msg} at column {exc.colno})", number) from None
    if not isinstance(obj, dict):
        raise RecordingError("not a JSON object", number)
    kind = obj.get("type")
    if kind == "header":
        f = Fields(obj, "header", number)
        if obj.get("format") != FORMAT:
            raise f.fail(f"'format' must be {FORMAT!r}, not {obj.get('format')!r}")
        version = f.get("version", int, "an integer")
        if version < 1 or version > VERSION:
            raise f.fail(f"version {version} is not one this observatory reads (1 to {VERSION})")
        return Header(started=f.time("started"), context=f.text("context"), server=f.text("server"),
                      namespace=f.text("namespace"), lab=f.get("lab", bool, "true or false"), version=version)
    if kind not in ("delta", "exchange", "key", "audit"):
        raise RecordingError(f"unknown entry type {kind!r} (expected header, delta, exchange, key or audit)",
                             number)
    f = Fields(obj, f"{kind} entry", number)
    t, at = f.number("t"), f.time("at")
    if kind == "delta":
        return DeltaEntry(t, at, _decode_delta(f))
    if kind == "exchange":
        return ExchangeEntry(t, at, exchange_from_json(obj, line=number))
    if kind == "audit":
        return AuditEntry(t, at, _decode_audit(f), f.text("origin"))
    return KeyEntry(t, at, f.text("key"))


def _decode_audit(f: Fields) -> AuditUpdate:
    events = []
    for index, obj in enumerate(f.get("events", list, "a list of audit events")):
        try:
            events.append(parse_event(obj))
        except AuditFormatError as exc:
            raise f.fail(f"event {index + 1}: {exc}") from None
    malformed = f.get("malformed", int, "an integer")
    return AuditUpdate(tuple(events), malformed, f.text("problem"))


def read_recording(lines: Iterable[str]) -> Recording:
    """A whole recording from its lines (an open file works). Blank lines are skipped; the first other line must
    be the header and no later one may be. Raises :class:`RecordingError` naming the first bad line."""
    header: Header | None = None
    entries: list[Entry] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        item = decode_line(line, number=number)
        if isinstance(item, Header):
            if header is not None:
                raise RecordingError("a second header (a recording has one, on its first line)", number)
            header = item
        elif header is None:
            raise RecordingError(f"{item.__class__.__name__} before the header (the first line must be the "
                                 '{"type":"header",...} line)', number)
        else:
            entries.append(item)
    if header is None:
        raise RecordingError("the recording is empty: no header line")
    return Recording(header, tuple(entries))


def schedule(entries: Iterable[Entry], speed: float = 1.0) -> list[tuple[float, Entry]]:
    """``(delay_seconds, entry)`` in order: how long to wait after the previous entry (the first: after the start)
    before delivering this one, at ``speed`` times the recorded pace (2 = twice as fast; ``math.inf`` = no waits).
    An entry whose ``t`` is earlier than its predecessor's waits 0. ValueError unless ``speed`` > 0."""
    if not isinstance(speed, (int, float)) or isinstance(speed, bool) or math.isnan(speed) or speed <= 0:
        raise ValueError(f"speed must be a number greater than 0, not {speed!r}")
    out: list[tuple[float, Entry]] = []
    previous = 0.0
    for entry in entries:
        out.append((max(0.0, entry.t - previous) / speed, entry))
        previous = max(previous, entry.t)
    return out
