"""The writes pane's lines: each write to the shown pods, whoever sent it, and observatory's own Bindings with their
raw exchange; and how one audited write reads in full (request, then response, as the HTTP exchange shows a
Binding).

An :class:`Entry` is one line. observatory's own Binding is joined to its audit event by the ``Audit-Id`` response
header (kube-apiserver sends the request's ``auditID`` in it), so it is one line, shown with its raw exchange; one
whose event has not arrived (or was never logged) is a line of its own, placed by the time it was sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text

from observatory.model.audit import short_agent
from observatory.model.commands import EquivalentCommands
from observatory.model.exchange import BindingExchange
from observatory.model.writes import Write, audit_id_of
from observatory.ui.text import cell, clock_time

__all__ = ["COLUMNS", "Entry", "OwnExchange", "entries", "entry_cells", "render_write_request",
           "render_write_response", "status_text"]

COLUMNS = (("time", "TIME"), ("who", "WHO"), ("write", "WRITE"), ("code", "CODE"), ("message", "MESSAGE"))


@dataclass(frozen=True, slots=True)
class OwnExchange:
    """One of observatory's own Bindings as the pane got it: the exchange, its equivalent commands, and its row key
    (``x0``, ``x1``, … in the order sent)."""

    key: str
    exchange: BindingExchange
    commands: EquivalentCommands | None


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of the writes pane: an audited write, observatory's own exchange, or both (joined by auditID)."""

    key: str
    write: Write | None
    own: OwnExchange | None


def _in_view(pod: str, shown_pod: str | None, namespace: str | None) -> bool:
    if shown_pod is not None:
        return pod == shown_pod
    return namespace is None or pod.partition("/")[0] == namespace


def entries(writes: Sequence[Write], own: Iterable[OwnExchange], shown_pod: str | None,
            namespace: str | None) -> list[Entry]:
    """The lines for ``writes`` (already those of the shown pods, in order) and observatory's ``own`` exchanges of
    the shown pods (``shown_pod``, else every pod of ``namespace``, None: all): each exchange on its write's line,
    else a line of its own before the first write received after it was sent."""
    by_id = {w.event.audit_id: w for w in writes}
    joined: dict[str, OwnExchange] = {}
    alone: list[OwnExchange] = []
    for mine in own:
        if not _in_view(mine.exchange.pod, shown_pod, namespace):
            continue
        audit_id = audit_id_of(mine.exchange)
        if audit_id in by_id and audit_id not in joined:
            joined[audit_id] = mine
        else:
            alone.append(mine)
    out: list[Entry] = []
    pending = sorted(alone, key=lambda m: m.exchange.sent_at)
    for w in writes:
        while pending and w.at is not None and pending[0].exchange.sent_at < w.at:
            out.append(Entry(pending[0].key, None, pending.pop(0)))
        found = joined.get(w.event.audit_id)
        out.append(Entry(found.key if found is not None else w.event.audit_id, w, found))
    out.extend(Entry(m.key, None, m) for m in pending)
    return out


def status_text(code: int, reason: str = "") -> str:
    """``201 Created``, ``409 Conflict``: the code and the Status's reason, else the standard phrase; ``…`` for
    no answer yet."""
    if not code:
        return "…"
    if not reason:
        try:
            reason = HTTPStatus(code).phrase
        except ValueError:
            reason = ""
    return f"{code} {reason}".strip()


def _code_cell(code: int, reason: str) -> Text:
    return Text(status_text(code, reason), style="green" if 200 <= code < 300 else ("red" if code else "dim"))


def entry_cells(entry: Entry, one_pod: bool) -> tuple[Any, ...]:
    """The cells of one line: time, who, method and target (``POST binding`` for the one pod shown, else
    ``POST pods/manual/binding``), code and reason, message."""
    if entry.write is not None:
        event = entry.write.event
        target = (event.subresource or "pod") if one_pod and event.resource == "pods" else event.target
        return (clock_time(entry.write.at), cell(event.writer), cell(f"{entry.write.method} {target}"),
                _code_cell(event.code, event.reason), cell(event.message))
    assert entry.own is not None
    exchange = entry.own.exchange
    agent = dict((name.lower(), value) for name, value in exchange.request_headers).get("user-agent", "")
    name = exchange.pod.partition("/")[2]
    target = "binding" if one_pod else f"pods/{name}/binding"
    message = exchange.status_message or exchange.error or ""
    return (clock_time(exchange.sent_at), cell(short_agent(agent) or "observatory"),
            cell(f"{exchange.method} {target}"), _code_cell(exchange.status, exchange.reason), cell(message))


def _json(value: Any) -> Syntax:
    return Syntax(json.dumps(value, indent=2, ensure_ascii=False), "json", theme="ansi_dark",
                  background_color="default", word_wrap=True)


def render_write_request(write: Write) -> Group:
    """The request as the audit event tells it: method and URI, the user and source IPs, the user agent, which
    audit event this is (level, stage, auditID), the request body (``requestObject``, logged at ``Request`` level
    and above)."""
    event = write.event
    line = Text()
    line.append("→ ", style="bold cyan")
    line.append(f"{write.method} {event.request_uri}", style="bold")
    parts: list[RenderableType] = [line]
    source = f" from {', '.join(event.source_ips)}" if event.source_ips else ""
    parts.append(Text(f"user: {event.user}{source}", style="dim"))
    parts.append(Text(f"User-Agent: {event.user_agent}", style="dim"))
    parts.append(Text(f"audit: {event.level} · {event.stage} · auditID {event.audit_id}", style="dim"))
    if event.request_object is not None:
        parts.append(_json(event.request_object))
    else:
        parts.append(Text(f"(request body not logged at level {event.level or 'Metadata'})", style="dim"))
    return Group(*parts)


def render_write_response(write: Write) -> Group:
    """The answer: code and reason, the Status message highlighted as the HTTP exchange shows it, the response
    body (``responseObject``, at ``RequestResponse`` level)."""
    event = write.event
    parts: list[RenderableType] = []
    status = Text()
    status.append("← ", style="bold cyan")
    status.append(status_text(event.code, event.reason) if event.code else "no answer logged yet (RequestReceived)",
                  style="bold green" if write.ok else "bold red")
    parts.append(status)
    if event.message:
        message = Text("Status message ▸ ", style="bold")
        message.append(event.message, style="bold green" if write.ok else "bold black on yellow")
        parts.append(message)
    if event.response_object is not None:
        parts.append(_json(event.response_object))
    return Group(*parts)
