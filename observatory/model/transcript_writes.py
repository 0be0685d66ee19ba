"""The writes part of a transcript: every write to a pod the API server's audit log showed, whoever sent it, and
which write made each frame of the pod's ``spec.nodeName`` timeline (:func:`observatory.model.writes.join_frames`).

A :class:`PodWrites` is one pod's: its writes in order (time, user, writer, verb, target, code, reason, message; the
Bindings with their request and response bodies) and its frames, each ``exact``, ``matched by order`` or ``no write
seen``. :func:`pod_writes_json` and :func:`pod_writes_markdown` are its two texts. Every event is made
:func:`~.audit_json.credential_free` before it is written: no Secret, TokenReview or TokenRequest body appears, and
audit events carry no request headers (so no ``Authorization``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ._json import mapping, text
from ._markdown import code as _code
from ._markdown import fenced as _fenced
from ._markdown import table as _table
from .audit import AuditEvent
from .audit_json import credential_free, micro_time
from .records import TimelineFrame
from .timefmt import rfc3339
from .writes import MATCHED_BY_ORDER, NO_WRITE_SEEN, FrameWrite, Write, WriteStore, join_frames

__all__ = ["LINK_WORDS", "MAX_PODS", "PodWrites", "pod_writes_json", "pod_writes_markdown",
           "transcript_pods", "write_message"]

LINK_WORDS = {"exact": "exact", "order": MATCHED_BY_ORDER, "none": NO_WRITE_SEEN}
"""How a frame found its write, as the transcript says it (the JSON twin keeps the key: ``exact``, ``order``,
``none``)."""


@dataclass(frozen=True, slots=True)
class PodWrites:
    """One pod's writes (oldest first) and its timeline's frames with their writes (oldest first)."""

    pod: str
    writes: tuple[Write, ...]
    frames: tuple[FrameWrite, ...] = ()

    @classmethod
    def take(cls, store: WriteStore, pod: str, frames: Sequence[TimelineFrame]) -> PodWrites:
        """``pod``'s writes in ``store`` now, and ``frames`` (its timeline, oldest first) joined to them."""
        writes = store.for_pod(pod)
        return cls(pod, tuple(writes), tuple(join_frames(frames, writes)))


MAX_PODS = 20
"""The most pods a transcript shows the writes of (a scheduler binding a thousand pods would otherwise make it a
book)."""


def transcript_pods(store: WriteStore, bound: Sequence[str], namespace: str | None,
                    limit: int = MAX_PODS) -> list[str]:
    """The pods whose writes a transcript shows: ``bound`` (the pods of observatory's own Bindings, in order), then
    every pod of ``namespace`` (None: all) anyone sent a Binding for, in the order of their first Binding; each
    once, at most ``limit`` (the latest ``limit`` when there are more)."""
    keys = list(dict.fromkeys([*bound, *(w.pod for w in store.in_scope(namespace) if w.event.is_binding)]))
    return keys[-limit:] if limit > 0 else []


def write_message(event: AuditEvent) -> str:
    """The answer's message: ``responseStatus.message`` when the event has it (kube-apiserver copies a Status
    answer's ``status``, ``message``, ``reason``, ``details`` and ``code`` there:
    ``staging/src/k8s.io/apiserver/pkg/audit/context.go``, ``AuditContext.LogResponseObject``), else the message of a
    Status ``responseObject`` (older API servers copied only ``status``, ``reason`` and ``code``,
    ``pkg/audit/request.go``); "" when neither."""
    if event.message:
        return event.message
    body = mapping(event.response_object)
    return text(body.get("message")) if text(body.get("kind")) == "Status" else ""


def _reason(event: AuditEvent) -> str:
    body = mapping(event.response_object)
    return event.reason or (text(body.get("reason")) if text(body.get("kind")) == "Status" else "")


def _time(when: datetime | None) -> str | None:
    return micro_time(when) if when is not None else None


def _write_json(write: Write) -> dict[str, Any]:
    event = credential_free(write.event)
    out: dict[str, Any] = {
        "auditID": event.audit_id, "time": _time(write.at), "user": event.user, "groups": list(event.groups),
        "userAgent": event.user_agent, "writer": event.writer, "verb": event.verb, "method": write.method,
        "target": event.target, "requestURI": event.request_uri, "code": event.code, "reason": _reason(event),
        "message": write_message(event), "resourceVersion": event.resource_version, "level": event.level,
        "summary": write.summary,
    }
    if event.is_binding:
        out["requestObject"] = event.request_object
        out["responseObject"] = event.response_object
    return out


def _frame_json(link: FrameWrite) -> dict[str, Any]:
    frame = link.frame
    return {"resourceVersion": frame.resource_version, "at": rfc3339(frame.at), "change": frame.change,
            "nodeName": frame.node_name, "phase": frame.phase, "status": frame.status, "link": link.how,
            "write": link.write.event.audit_id if link.write is not None else None,
            "label": link.label}


def pod_writes_json(writes: PodWrites) -> dict[str, Any]:
    """``{"pod": "sched-lab/manual", "writes": [WRITE], "frames": [FRAME]}``. WRITE is ``{"auditID", "time"
    (MicroTime, request received), "user", "groups", "userAgent", "writer" (``kubectl``, ``kubelet pair-worker``),
    "verb", "method", "target" (``pods/manual/binding``), "requestURI", "code", "reason", "message", "resourceVersion"
    (of an answer that is the pod, else ""), "level", "summary"}`` and, for a Binding, ``"requestObject"`` and
    ``"responseObject"`` (null below ``RequestResponse``). FRAME is ``{"resourceVersion", "at", "change", "nodeName",
    "phase", "status", "link": "exact" | "order" | "none", "write": auditID | null, "label"}``."""
    return {"pod": writes.pod, "writes": [_write_json(w) for w in writes.writes],
            "frames": [_frame_json(f) for f in writes.frames]}


# -- Markdown -----------------------------------------------------------------------------------------------------

def _body(title: str, value: Any) -> list[str]:
    if value is None:
        return [f"{title}: not in the audit event (logged below `RequestResponse`).", ""]
    return [f"{title}:", "", _fenced(json.dumps(value, indent=2, ensure_ascii=False), "json"), ""]


def _binding(n: int, write: Write) -> list[str]:
    event = credential_free(write.event)
    lines = [f"### Write {n}: {write.summary}", "",
             f"{_code(f'{write.method} {event.request_uri}')} by {_code(event.user or '-')} "
             f"({_code(event.user_agent) if event.user_agent else 'no user agent'})", ""]
    lines += _body("Request body", event.request_object) + _body("Response body", event.response_object)
    message = write_message(event)
    if message:
        lines += ["Message:", "", _fenced(message, "text"), ""]
    return lines


def pod_writes_markdown(writes: PodWrites) -> list[str]:
    """The lines of one pod's section: ``## Writes to <pod>``, a table of its writes (time, user, writer, verb,
    target, code, reason, message), each Binding's request and response bodies and message, then the timeline's
    frames (resourceVersion, time, change, spec.nodeName, phase, the write that made it, and how it was found)."""
    lines = [f"## Writes to {_code(writes.pod)}", ""]
    if not writes.writes:
        lines += ["The audit log showed no write to this pod.", ""]
    else:
        rows = []
        for n, write in enumerate(writes.writes, start=1):
            event = write.event
            rows.append([str(n), _time(write.at) or "-", event.user, event.writer, write.method, event.target,
                         str(event.code) if event.code else "…", _reason(event), write_message(event)])
        lines += [*_table(["#", "time", "user", "writer", "verb", "target", "code", "reason", "message"], rows), ""]
        for n, write in enumerate(writes.writes, start=1):
            if write.event.is_binding:
                lines += _binding(n, write)
    lines += [f"### Timeline of {_code(writes.pod)}: who wrote each frame", ""]
    if not writes.frames:
        return [*lines, "No frame seen.", ""]
    rows = [[link.frame.resource_version, rfc3339(link.frame.at), link.frame.change,
             _code(link.frame.node_name) if link.frame.node_name else "`<empty>`", link.frame.phase,
             link.write.summary if link.write is not None else "-", LINK_WORDS.get(link.how, link.how)]
            for link in writes.frames]
    return [*lines, *_table(["RV", "time", "change", "spec.nodeName", "phase", "write", "link"], rows), ""]
