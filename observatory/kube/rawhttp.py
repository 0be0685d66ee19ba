"""One raw HTTP request to the API server, and what its answer or its failure becomes.

Every request observatory makes outside a watch stream (the Binding, one-shot reads and writes, list pages,
``GET /version``) goes through :func:`request`, and a watch opens through :func:`open_response`. Both call
kubernetes-asyncio's ``ApiClient.call_api(..., _preload_content=False)``, which returns the raw aiohttp response
for every status (its ``rest.py`` raises ``ApiException`` only when it preloads), with the client's credentials
(``auth_settings=["BearerToken"]``, refreshed by an exec plugin's hook) and proxy. A body is sent as
kubernetes-asyncio sends any: ``json.dumps`` (default separators, ASCII) of ``ApiClient.sanitize_for_serialization``,
encoded as UTF-8 by aiohttp; :func:`request_body_bytes` computes exactly those bytes.

What is decided here, once:

* **Timeouts.** ``timeout`` bounds the whole exchange (connect, send, the last body byte); ``read_timeout`` bounds
  the connection and each read, for a long list whose pages take time but never fall silent.
* **Release.** :func:`request` reads the body and hands the connection back to the pool, also when the read fails.
* **No answer** (refused, DNS, TLS, timeout, dropped connection, a failing credential plugin, a request that could
  not even be built) raises :class:`Unreachable` with one sentence from
  :func:`~observatory.kube.transport.describe_transport_error`.
* **Credentials** never leave: the recorded request and response headers drop ``Authorization``, ``Cookie``,
  ``Proxy-Authorization`` and ``Set-Cookie`` and any header whose value carries the client's token or password,
  and an error text has them replaced by ``<redacted>``.

An answer of any status is an :class:`Answer` (data, never an exception); :meth:`Answer.error` turns a non-2xx one
into the :class:`ApiError` the commands raise.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
from kubernetes_asyncio import client

from observatory.kube.transport import describe_transport_error

__all__ = [
    "DEFAULT_TIMEOUT",
    "Answer",
    "ApiError",
    "Unreachable",
    "api_error",
    "client_secrets",
    "default_request_headers",
    "drop_managed_fields",
    "open_response",
    "request",
    "request_body_bytes",
    "scrub",
    "unreachable",
]

DEFAULT_TIMEOUT = 30.0
"""Seconds one request (connect, send, the whole body) may take unless the caller says otherwise."""

_DROP_REQUEST = frozenset({"authorization", "cookie", "proxy-authorization"})
_DROP_RESPONSE = frozenset({"set-cookie"})
_TRANSPORT = (TimeoutError, aiohttp.ClientError, OSError, ssl.SSLError)
"""What a request that got no answer raises (a failing exec plugin's CredentialError is an OSError)."""


class ApiError(Exception):
    """A non-2xx answer. ``status`` is the HTTP code, ``reason`` the Status ``reason`` (``NotFound``,
    ``Forbidden``; "" when the body is not a Status), ``message`` the Status ``message`` verbatim (else the body's
    text, else the status line), ``phrase`` the HTTP reason phrase and ``headers`` the answer's header pairs (read
    with :meth:`header`, e.g. ``Retry-After``). A 2xx whose body cannot be used is an ApiError with that 2xx
    status. ``str()`` is the message."""

    def __init__(self, status: int, reason: str, message: str, *, phrase: str = "",
                 headers: Iterable[tuple[str, str]] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.message = message
        self.phrase = phrase
        self.headers = tuple(headers)

    def header(self, name: str) -> str | None:
        """The first header of the answer called ``name`` (any case), or None."""
        return _header(self.headers, name)

    def kubectl(self) -> str:
        """The line kubectl prints for this error (``cmdutil.StandardErrorMessage``):
        ``Error from server (REASON): MESSAGE``, or ``Error from server: MESSAGE`` when the reason is empty."""
        return f"Error from server ({self.reason}): {self.message}" if self.reason else \
            f"Error from server: {self.message}"


def api_error(status: int, phrase: str, body: bytes, headers: Iterable[tuple[str, str]] = ()) -> ApiError:
    """The :class:`ApiError` for an answer ``status phrase`` with ``body``: the Status ``reason`` and ``message``
    when the body is a Status (what an API server sends with an error), else the body's text, else the status
    line."""
    line = f"{status} {phrase}".strip()
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        return ApiError(status, str(doc.get("reason") or ""), str(doc.get("message") or "") or line, phrase=phrase,
                        headers=headers)
    text = body.decode("utf-8", "replace").strip()
    return ApiError(status, "", text or line, phrase=phrase, headers=headers)


class Unreachable(Exception):
    """No HTTP answer. ``str()`` is one readable sentence; ``reason`` a short code (``refused``, ``dns``, ``tls``,
    ``timeout``, ``proxy``, ``credentials``, ``unreachable``), as :class:`~observatory.kube.connect.ConnectError`
    uses."""

    def __init__(self, sentence: str, reason: str) -> None:
        super().__init__(sentence)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Answer:
    """One HTTP exchange that got an answer, of any status. ``method`` and ``path`` (with its query, as sent) and
    ``request_headers`` are what aiohttp sent; ``http_version`` (``HTTP/1.1``), ``status``, ``reason`` (the
    phrase), ``headers`` (in order, as received) and ``body`` (every byte) what came back; ``elapsed_ms`` runs from
    just before the request to the last body byte. Both header lists are without credentials."""

    method: str
    path: str
    request_headers: tuple[tuple[str, str], ...]
    http_version: str
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    elapsed_ms: float

    @property
    def ok(self) -> bool:
        """A 2xx answer."""
        return 200 <= self.status < 300

    def header(self, name: str) -> str | None:
        """The first response header called ``name`` (any case), or None."""
        return _header(self.headers, name)

    def error(self) -> ApiError:
        """The :class:`ApiError` for this answer (see :func:`api_error`)."""
        return api_error(self.status, self.reason, self.body, self.headers)


def request_body_bytes(api: client.ApiClient, body: Any) -> bytes:
    """The bytes kubernetes-asyncio puts on the wire for ``body``: ``rest.py`` does ``json.dumps`` (default
    separators, ASCII) of ``ApiClient.sanitize_for_serialization(body)`` and aiohttp encodes the string as UTF-8."""
    return json.dumps(api.sanitize_for_serialization(body)).encode("utf-8")


async def open_response(api: client.ApiClient, method: str, path: str, *, params: Sequence[tuple[str, str]] = (),
                        body: Any = None, content_type: str | None = None, timeout: float | None = None,
                        connect_timeout: float | None = None,
                        read_timeout: float | None = None) -> aiohttp.ClientResponse:
    """Send ``METHOD path?params`` and return aiohttp's response with its body unread, for any status; the caller
    reads it and must ``release()`` (or ``close()``) it. ``timeout`` bounds the whole exchange including the body,
    ``connect_timeout`` the connection (default ``read_timeout``) and ``read_timeout`` each read; None leaves that
    one unbounded (a watch judges its own silence). Raises :class:`Unreachable`."""
    headers = {"Accept": "application/json"}
    if content_type:
        headers["Content-Type"] = content_type
    limit: float | aiohttp.ClientTimeout | None = timeout
    if connect_timeout is not None or read_timeout is not None:
        limit = aiohttp.ClientTimeout(total=timeout, sock_connect=connect_timeout or read_timeout,
                                      sock_read=read_timeout)
    try:
        response: aiohttp.ClientResponse = await api.call_api(
            path, method, query_params=list(params), header_params=headers, body=body,
            auth_settings=["BearerToken"], _preload_content=False, _request_timeout=limit)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        raise unreachable(api, exc, timeout or read_timeout or connect_timeout, method, path) from None
    return response


async def request(api: client.ApiClient, method: str, path: str, *, params: Sequence[tuple[str, str]] = (),
                  body: Any = None, content_type: str | None = None, timeout: float | None = DEFAULT_TIMEOUT,
                  read_timeout: float | None = None) -> Answer:
    """``METHOD path?params`` (``body`` sent as JSON with ``content_type``), read to the last byte and released:
    the :class:`Answer` for any status. Raises :class:`Unreachable` when no answer came within ``timeout`` seconds
    (or a read stalled for ``read_timeout``), the connection failed or the request could not be sent."""
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            response = await open_response(api, method, path, params=params, body=body, content_type=content_type,
                                           timeout=timeout, read_timeout=read_timeout)
            try:
                data = await response.read()
            finally:
                response.release()
    except asyncio.CancelledError:
        raise
    except Unreachable:
        raise
    except Exception as exc:
        raise unreachable(api, exc, timeout or read_timeout, method, path) from None
    elapsed = (time.perf_counter() - started) * 1000.0
    secrets = client_secrets(api)
    info = response.request_info
    query = info.url.raw_query_string
    version = response.version
    return Answer(
        method=info.method, path=info.url.raw_path + (f"?{query}" if query else ""),
        request_headers=_clean(info.headers.items(), _DROP_REQUEST, secrets),
        http_version=f"HTTP/{version.major}.{version.minor}" if version else "HTTP/1.1",
        status=response.status, reason=response.reason or "",
        headers=_clean(((k.decode("latin-1"), v.decode("latin-1")) for k, v in response.raw_headers),
                       _DROP_RESPONSE, secrets),
        body=data, elapsed_ms=elapsed)


def unreachable(api: client.ApiClient, exc: BaseException, timeout: float | None, method: str = "",
                path: str = "") -> Unreachable:
    """The :class:`Unreachable` for ``exc``, raised by a request to ``api``'s server (``timeout``: the seconds it
    was given, for the sentence): a transport failure in
    :func:`~observatory.kube.transport.describe_transport_error`'s words; anything else (a request that could not
    be built) as ``The request METHOD PATH could not be sent (...)``, without credentials."""
    if isinstance(exc, _TRANSPORT):
        reason, sentence = describe_transport_error(exc, (api.configuration.host or "").rstrip("/"), timeout)
        return Unreachable(sentence, reason)
    detail = scrub(str(exc), client_secrets(api))
    what = " ".join(part for part in (method, path) if part)
    what = f"The request {what}" if what else "The request"
    name = type(exc).__name__
    return Unreachable(f"{what} could not be sent ({f'{name}: {detail}' if detail else name}).", "unreachable")


def default_request_headers(api: client.ApiClient, content_type: str | None = None) -> tuple[tuple[str, str], ...]:
    """The headers kubernetes-asyncio sends before aiohttp adds its own (``Host``, ``User-Agent``, ...), without
    credentials: for the record of a request that never got sent."""
    headers = {"Accept": "application/json", "Content-Type": content_type or "application/json",
               **api.default_headers}
    return _clean(headers.items(), _DROP_REQUEST, client_secrets(api))


def client_secrets(api: client.ApiClient) -> set[str]:
    """The credential strings the client may send (bearer token, basic-auth password), to keep them out of
    records: each value and, for ``Bearer <token>``, the token alone. Values under 4 characters are left out."""
    cfg = api.configuration
    values: set[str] = set()
    for value in [*(cfg.api_key or {}).values(), cfg.password]:
        if isinstance(value, str) and value:
            values.add(value)
            values.add(value.split(" ", 1)[-1])  # "Bearer <token>" -> "<token>"
    return {v for v in values if len(v) >= 4}


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` on one line, with every secret (longest first) replaced by ``<redacted>``."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "<redacted>")
    return " ".join(text.split())


def drop_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with ``metadata.managedFields`` removed (in place; the dict is the caller's, fresh from
    ``json.loads``): no pane shows them, and they are often half of an object's size."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return obj


def _header(pairs: Iterable[tuple[str, str]], name: str) -> str | None:
    lower = name.lower()
    return next((value for key, value in pairs if key.lower() == lower), None)


def _clean(pairs: Iterable[tuple[Any, Any]], drop: frozenset[str], secrets: set[str]) -> tuple[tuple[str, str], ...]:
    """Header pairs without the dropped names and without any header whose value carries a credential."""
    return tuple((str(k), str(v)) for k, v in pairs
                 if str(k).lower() not in drop and not any(s in str(v) for s in secrets))
