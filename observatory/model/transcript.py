"""The lab transcript that ``e`` exports: one Markdown file and its JSON twin, built from values (no I/O here).

For each Binding sent it records the pod, ``spec.nodeName`` before and after with resourceVersions and times, the
request, the full status line and body, the pod's events before and after, the diagnosis at the moment of the bind
and the equivalent kubectl and curl commands; optionally the progress of a lesson. With an audit feed, for each pod
of the transcript every write the API server's audit log showed, whoever sent it, and which write made each frame of
the pod's timeline (:mod:`.transcript_writes`).

Credentials: a :class:`~.exchange.BindingExchange` never carries them (``Authorization``, ``Proxy-Authorization``,
``Cookie`` and ``Set-Cookie`` are dropped when it is built), the equivalent commands hold placeholders only, and
server URLs lose any ``user:password@``. Audit events carry no request headers, and the bodies of Secrets,
TokenReviews and TokenRequests are never written (:func:`~.audit_json.credential_free`). As a last line of
defence the writer runs both texts through :func:`redact` with every credential value of the kubeconfig (see
:func:`render`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ._markdown import code as _code
from ._markdown import fenced as _fenced
from ._markdown import table as _table
from .commands import EquivalentCommands, strip_userinfo
from .diagnosis import Diagnosis
from .exchange import BindingExchange
from .recording import exchange_to_json
from .records import EventView, PodView
from .state import ClusterState
from .text import safe, safe_json
from .timefmt import rfc3339
from .transcript_writes import PodWrites, pod_writes_json, pod_writes_markdown

__all__ = [
    "REDACTED", "BindRecord", "LessonProgress", "PodSnapshot", "PodWrites", "StepProgress", "Transcript",
    "default_transcript_path", "json_twin", "redact", "render",
]

REDACTED = "<redacted>"
FORMAT = "observatory-transcript"
VERSION = 1


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret replaced by ``<redacted>``, longest secrets first (so a
    secret containing another goes whole). Secrets shorter than 4 characters are ignored: they would shred the text
    and are not credentials anyone issues."""
    for secret in sorted({s for s in secrets if isinstance(s, str) and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def default_transcript_path(now: datetime, folder: str | Path = ".") -> Path:
    """``<folder>/observatory-transcript-YYYYmmdd-HHMMSS.md`` in local time (an aware ``now`` is converted to the
    local zone; a naive one is taken as local)."""
    local = now.astimezone() if now.tzinfo is not None else now
    return Path(folder) / f"observatory-transcript-{local:%Y%m%d-%H%M%S}.md"


def json_twin(path: str | Path) -> Path:
    """The JSON twin of a Markdown transcript path: same folder and stem, suffix ``.json``
    (``notes/t.md`` -> ``notes/t.json``). ValueError when ``path`` itself ends in ``.json``."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        raise ValueError(f"{path} ends in .json, which is the JSON twin's name; choose a .md path")
    return path.with_suffix(".json")


# -- values -------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PodSnapshot:
    """One pod as observatory saw it at ``at`` (aware UTC): its record (None when not seen), its events sorted by
    time, and its diagnosis (None when the pod was not seen)."""

    at: datetime
    pod: PodView | None
    events: tuple[EventView, ...] = ()
    diagnosis: Diagnosis | None = None

    @classmethod
    def take(cls, state: ClusterState, pod_key: str, at: datetime, *, scope: str | None = None) -> PodSnapshot:
        """The pod ``"namespace/name"`` in ``state`` now (``at`` is the caller's clock reading; ``scope`` the one
        namespace watched, if any, for the diagnosis)."""
        return cls(at, state.pods.get(pod_key), tuple(state.events_for(pod_key)),
                   state.diagnosis(pod_key, scope=scope))

    @property
    def node_name(self) -> str:
        """``spec.nodeName`` ("" when unbound or unknown)."""
        return self.pod.node_name if self.pod is not None else ""

    @property
    def resource_version(self) -> str:
        return self.pod.resource_version if self.pod is not None else ""


@dataclass(frozen=True, slots=True)
class BindRecord:
    """One bind: the ``exchange``; the pod ``before`` (taken when the bind was requested, with the diagnosis at
    that moment) and ``after`` (taken when the answer arrived or the watch showed the change; None until then);
    the ``commands`` that send the same Binding by hand."""

    exchange: BindingExchange
    before: PodSnapshot
    after: PodSnapshot | None = None
    commands: EquivalentCommands | None = None

    @property
    def diagnosis(self) -> Diagnosis | None:
        """The diagnosis at the moment of the bind."""
        return self.before.diagnosis

    def with_after(self, after: PodSnapshot) -> BindRecord:
        """A copy with ``after`` set (records are frozen)."""
        return replace(self, after=after)


@dataclass(frozen=True, slots=True)
class StepProgress:
    """One lesson step: its ``title``, when it was ticked (aware UTC; None while not) and the last check's detail."""

    title: str
    ticked_at: datetime | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class LessonProgress:
    """A lesson's progress, as :meth:`observatory.model.lessons.LessonRun.progress` reports it."""

    name: str
    title: str
    steps: tuple[StepProgress, ...]

    @property
    def done(self) -> bool:
        return all(s.ticked_at is not None for s in self.steps)


@dataclass(frozen=True, slots=True)
class Transcript:
    """Everything one export writes. ``namespace`` is the one namespace watched ("" for all); ``lab`` is True for
    the embedded lab; ``started`` / ``exported`` are aware times; ``records`` are in the order the binds were
    sent. ``audit`` is the origin of the audit feed (``lab``, ``webhook ADDR``, ``log PATH``; None: there was none,
    so who wrote what is not known) and ``writes`` the writes and timeline of each pod of the transcript."""

    context: str
    server: str
    namespace: str
    lab: bool
    started: datetime
    exported: datetime
    records: tuple[BindRecord, ...] = ()
    lesson: LessonProgress | None = None
    audit: str | None = None
    writes: tuple[PodWrites, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The JSON twin. Times are RFC 3339 (``Z`` for UTC); bodies are text when UTF-8, else base64 with the
        ``…Base64`` flag true::

            {"format": "observatory-transcript", "version": 1, "context": "...", "server": "https://...",
             "namespace": "" | "sched-lab", "lab": true, "started": "...", "exported": "...",
             "lesson": null | {"name": "manual-binding", "title": "...", "done": false,
                               "steps": [{"title": "...", "ticked": "..." | null, "detail": "..."}]},
             "binds": [{
               "pod": "sched-lab/manual", "node": "pair-worker",
               "statusLine": "HTTP/1.1 409 Conflict", "message": "Operation cannot be fulfilled ..." | null,
               "exchange": {"pod", "node", "method", "path", "requestHeaders": [[name, value]], "requestBody",
                            "requestBodyBase64", "httpVersion", "status", "reason", "responseHeaders",
                            "responseBody", "responseBodyBase64", "sentAt", "elapsedMs", "error"},
               "nodeName": {"before": {"value": "", "resourceVersion": "712", "at": "..."},
                            "after": {...} | null},
               "before": {"at": "...", "pod": POD | null, "events": [EVENT], "diagnosis": DIAGNOSIS | null},
               "after": {...same...} | null,
               "diagnosis": DIAGNOSIS | null,
               "commands": {"bindingJson": "...", "kubectl": "...", "curl": "..."} | null}],
             "audit": null | {"origin": "lab"},
             "writes": [POD_WRITES]}

        ``exchange`` has the shape of a recording's exchange entry (:mod:`.recording`). POD is ``{"namespace",
        "name", "uid", "resourceVersion", "nodeName", "schedulerName", "phase", "status", "ready"}``; EVENT is
        ``{"type", "reason", "from", "message", "count", "time": "..." | null, "name"}``; DIAGNOSIS is
        :meth:`Diagnosis.to_json <observatory.model.diagnosis.Diagnosis.to_json>`; POD_WRITES is
        :func:`~.transcript_writes.pod_writes_json`.
        """
        lesson = None
        if self.lesson is not None:
            lesson = {"name": self.lesson.name, "title": self.lesson.title, "done": self.lesson.done,
                      "steps": [{"title": s.title, "ticked": _time(s.ticked_at), "detail": s.detail}
                                for s in self.lesson.steps]}
        return {"format": FORMAT, "version": VERSION, "context": self.context, "server": strip_userinfo(self.server),
                "namespace": self.namespace, "lab": self.lab, "started": rfc3339(self.started),
                "exported": rfc3339(self.exported), "lesson": lesson,
                "binds": [_record_json(r) for r in self.records],
                "audit": None if self.audit is None else {"origin": self.audit},
                "writes": [pod_writes_json(w) for w in self.writes]}

    def to_markdown(self) -> str:
        """The Markdown transcript (ends with a newline): a header list (context, server, namespace, times), the
        lesson's steps when there is a lesson, then per bind a ``## Bind N: <pod> to <node>: <status line>``
        heading, the ``spec.nodeName`` before/after table (value or ``<empty>``, resourceVersion, time), the request
        (line, headers, exact body) and the response (full status line, headers, exact body) in fenced blocks, the
        Status message verbatim, the events before and after (type, reason, from, message), the diagnosis at the
        bind (title, headline, explanation, likely cause) and the equivalent kubectl and curl commands; then, per pod
        of ``writes``, its writes and the write of each timeline frame
        (:func:`~.transcript_writes.pod_writes_markdown`), or a line saying there was no audit feed."""
        return _markdown(self)


def render(transcript: Transcript, secrets: Iterable[str] = ()) -> tuple[str, str]:
    """``(markdown, json_text)`` ready to write, both passed through :func:`redact` with ``secrets`` (the
    kubeconfig's credential values). The Markdown shows control characters as escapes (:func:`~.text.safe`), so
    ``cat`` of the file cannot drive a terminal; the JSON text writes them as JSON ``\\uNNNN`` escapes
    (:func:`~.text.safe_json`: the same value, no raw control byte), is indented by 2 and ends with a newline."""
    secrets = list(secrets)
    markdown = safe(redact(transcript.to_markdown(), secrets))
    text = safe_json(json.dumps(transcript.to_json(), indent=2, ensure_ascii=False) + "\n")
    return markdown, redact(text, secrets)


# -- JSON ---------------------------------------------------------------------------------------------------------

def _time(when: datetime | None) -> str | None:
    return rfc3339(when) if when is not None else None


def _pod_json(pod: PodView | None) -> dict[str, Any] | None:
    if pod is None:
        return None
    return {"namespace": pod.namespace, "name": pod.name, "uid": pod.uid, "resourceVersion": pod.resource_version,
            "nodeName": pod.node_name, "schedulerName": pod.scheduler_name, "phase": pod.phase,
            "status": pod.status, "ready": pod.ready}


def _event_json(ev: EventView) -> dict[str, Any]:
    return {"type": ev.type, "reason": ev.reason, "from": ev.source, "message": ev.message, "count": ev.count,
            "time": _time(ev.time), "name": ev.name}


def _snapshot_json(snap: PodSnapshot | None) -> dict[str, Any] | None:
    if snap is None:
        return None
    return {"at": rfc3339(snap.at), "pod": _pod_json(snap.pod), "events": [_event_json(e) for e in snap.events],
            "diagnosis": snap.diagnosis.to_json() if snap.diagnosis is not None else None}


def _node_json(snap: PodSnapshot | None) -> dict[str, Any] | None:
    if snap is None:
        return None
    return {"value": snap.node_name, "resourceVersion": snap.resource_version, "at": rfc3339(snap.at)}


def _record_json(record: BindRecord) -> dict[str, Any]:
    ex = record.exchange
    commands = record.commands
    return {"pod": ex.pod, "node": ex.node, "statusLine": ex.status_line, "message": ex.status_message,
            "exchange": exchange_to_json(ex),
            "nodeName": {"before": _node_json(record.before), "after": _node_json(record.after)},
            "before": _snapshot_json(record.before), "after": _snapshot_json(record.after),
            "diagnosis": record.diagnosis.to_json() if record.diagnosis is not None else None,
            "commands": None if commands is None else {"bindingJson": commands.binding_json,
                                                       "kubectl": commands.kubectl, "curl": commands.curl}}


# -- Markdown -----------------------------------------------------------------------------------------------------

def _show_time(when: datetime | None) -> str:
    return rfc3339(when) if when is not None else "-"


def _body_text(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return f"<{len(body)} bytes, not UTF-8; see the JSON twin (base64)>"


def _events(title: str, snap: PodSnapshot | None) -> list[str]:
    lines = [f"#### {title}", ""]
    if snap is None:
        return [*lines, "Not captured.", ""]
    if not snap.events:
        return [*lines, "Events: `<none>`", ""]
    rows = [[e.type, e.reason, e.source, e.message + (f" (x{e.count})" if e.count > 1 else "")] for e in snap.events]
    return lines + _table(["type", "reason", "from", "message"], rows) + [""]


def _diagnosis(diagnosis: Diagnosis | None) -> list[str]:
    lines = ["### Diagnosis at the moment of the bind", ""]
    if diagnosis is None:
        return [*lines, "The pod was not in the watched state.", ""]
    lines += [f"**{diagnosis.title}**: {diagnosis.headline}", ""]
    lines += [f"- {line.strip()}" for line in diagnosis.explanation if line.strip()]
    if diagnosis.likely:
        lines += ["", f"Likely: {diagnosis.likely}"]
    return [*lines, ""]


def _bind_markdown(n: int, record: BindRecord) -> list[str]:
    ex = record.exchange
    outcome = ex.status_line or f"no answer ({ex.error or 'unknown error'})"
    lines = [f"## Bind {n}: {ex.pod} to {ex.node}: {outcome}", "",
             f"Sent {_show_time(ex.sent_at)}, answered in {ex.elapsed_ms:.1f} ms.", "",
             "### spec.nodeName", ""]
    rows = []
    for label, snap in (("before", record.before), ("after", record.after)):
        if snap is None:
            rows.append([label, "not captured", "-", "-"])
        elif snap.pod is None:
            rows.append([label, "pod not seen", "-", _show_time(snap.at)])
        else:
            rows.append([label, _code(snap.node_name) if snap.node_name else "`<empty>`", snap.resource_version,
                         _show_time(snap.at)])
    lines += [*_table(["", "spec.nodeName", "resourceVersion", "time"], rows), ""]

    request = [ex.request_line, *(f"{k}: {v}" for k, v in ex.request_headers), "", _body_text(ex.request_body)]
    lines += ["### Request", "", _fenced("\n".join(request), "http"), ""]
    lines += ["### Response", ""]
    if not ex.status:
        lines += [f"No answer: {ex.error or 'unknown error'}", ""]
    else:
        response = [ex.status_line, *(f"{k}: {v}" for k, v in ex.response_headers), "",
                    _body_text(ex.response_body)]
        lines += [_fenced("\n".join(response), "http"), ""]
        message = ex.status_message
        if message:
            lines += ["Message:", "", _fenced(message, "text"), ""]
    lines += ["### Events", ""]
    lines += _events("Before", record.before) + _events("After", record.after)
    lines += _diagnosis(record.diagnosis)
    if record.commands is not None:
        lines += ["### Equivalent commands", "", "With kubectl:", "", _fenced(record.commands.kubectl, "sh"), "",
                  "With curl:", "", _fenced(record.commands.curl, "sh"), ""]
    return lines


def _markdown(t: Transcript) -> str:
    where = f"namespace {_code(t.namespace)}" if t.namespace else "all namespaces"
    lines = ["# observatory transcript", "",
             f"- Context: {_code(t.context) if t.context else '-'}{' (lab)' if t.lab else ''}",
             f"- Server: {_code(strip_userinfo(t.server)) if t.server else '-'}",
             f"- Watching: {where}",
             f"- Started: {_show_time(t.started)}; exported: {_show_time(t.exported)}",
             f"- Binds: {len(t.records)}",
             f"- Writes: {'from the audit feed ' + _code(t.audit) if t.audit is not None else 'no audit feed'}", ""]
    if t.lesson is not None:
        done = "done" if t.lesson.done else "not finished"
        lines += [f"## Lesson {_code(t.lesson.name)}: {t.lesson.title} ({done})", ""]
        rows = [[str(i), s.title, "yes" if s.ticked_at else "no", _show_time(s.ticked_at), s.detail]
                for i, s in enumerate(t.lesson.steps, start=1)]
        lines += [*_table(["#", "step", "ticked", "at", "check"], rows), ""]
    if not t.records:
        lines += ["No Binding was sent.", ""]
    for n, record in enumerate(t.records, start=1):
        lines += _bind_markdown(n, record)
    if t.audit is None:
        lines += ["No audit feed: who wrote each change is not known.", ""]
    for writes in t.writes:
        lines += pod_writes_markdown(writes)
    return "\n".join(lines).rstrip("\n") + "\n"
