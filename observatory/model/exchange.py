"""One HTTP exchange of a Binding POST, kept as data: request line, headers and bytes, status line and body.

2xx, 4xx and 5xx are all answers to show; ``status == 0`` with ``error`` set means the request never got one.
Credentials never reach this value: whatever the producer passes, the headers named in
:data:`SENSITIVE_HEADERS` are dropped when the record is built.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from http import HTTPStatus
from typing import Any

__all__ = ["SENSITIVE_HEADERS", "BindingExchange", "safe_headers"]

SENSITIVE_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
"""Header names (lower case) that carry credentials and are never kept."""

Headers = tuple[tuple[str, str], ...]


def safe_headers(headers: Iterable[tuple[str, str]] | Mapping[str, str] | None) -> Headers:
    """``headers`` (pairs or a mapping) as a tuple of ``(name, value)`` strings without credentials, order kept."""
    if headers is None:
        return ()
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    return tuple((str(name), str(value)) for name, value in pairs
                 if str(name).strip().lower() not in SENSITIVE_HEADERS)


def _decode(body: bytes) -> str:
    return body.decode("utf-8", errors="replace")


def _pretty(body: bytes) -> str:
    """Indented JSON (2 spaces, key order kept, non-ASCII as is) when ``body`` is JSON, else the text."""
    if not body:
        return ""
    try:
        parsed = json.loads(body)
    except ValueError:
        return _decode(body)
    return json.dumps(parsed, indent=2, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class BindingExchange:
    """A Binding POST and its raw answer.

    ``pod`` is ``"namespace/name"``, ``node`` the target; ``path`` the request path
    (``/api/v1/namespaces/sched-lab/pods/manual/binding``); bodies are the exact bytes; ``http_version`` like
    ``"HTTP/1.1"``; ``status`` the code (0 when no answer came) and ``reason`` the reason phrase (``"Created"``,
    ``"Conflict"``); ``sent_at`` an aware datetime and ``elapsed_ms`` the round trip in milliseconds; ``error`` a
    transport failure as one readable sentence. Header values are strings; credentials are removed on
    construction.
    """

    pod: str
    node: str
    method: str
    path: str
    request_headers: Headers
    request_body: bytes
    http_version: str
    status: int
    reason: str
    response_headers: Headers
    response_body: bytes
    sent_at: datetime
    elapsed_ms: float
    error: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "request_headers", safe_headers(self.request_headers))
        object.__setattr__(self, "response_headers", safe_headers(self.response_headers))
        for name in ("request_body", "response_body"):
            body = getattr(self, name)
            if isinstance(body, str):
                object.__setattr__(self, name, body.encode("utf-8"))
            elif body is None:
                object.__setattr__(self, name, b"")
            elif not isinstance(body, bytes):
                object.__setattr__(self, name, bytes(body))

    @property
    def ok(self) -> bool:
        """A 2xx answer."""
        return 200 <= self.status < 300

    @property
    def request_line(self) -> str:
        """``"POST /api/v1/namespaces/sched-lab/pods/manual/binding HTTP/1.1"``."""
        return f"{self.method} {self.path} {self.http_version}".strip()

    @property
    def status_line(self) -> str:
        """``"HTTP/1.1 409 Conflict"``; the standard phrase stands in for a missing reason (HTTP/2 sends none);
        "" when no answer came (``status == 0``)."""
        if not self.status:
            return ""
        reason = self.reason
        if not reason:
            try:
                reason = HTTPStatus(self.status).phrase
            except ValueError:
                reason = ""
        return f"{self.http_version} {self.status} {reason}".strip()

    @property
    def status_message(self) -> str | None:
        """The ``message`` of a JSON ``Status`` body (``kind: Status``), None for any other body or no message.
        A 201's ``{"kind":"Status",...,"status":"Success","code":201}`` has none."""
        try:
            parsed: Any = json.loads(self.response_body)
        except ValueError:
            return None
        if not isinstance(parsed, dict) or parsed.get("kind") != "Status":
            return None
        message = parsed.get("message")
        return message if isinstance(message, str) and message else None

    @property
    def pretty_request(self) -> str:
        """The request body, indented if JSON, else decoded as UTF-8 (bad bytes replaced)."""
        return _pretty(self.request_body)

    @property
    def pretty_response(self) -> str:
        """The response body, indented if JSON, else decoded as UTF-8 (bad bytes replaced)."""
        return _pretty(self.response_body)
