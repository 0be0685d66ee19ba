"""One-shot reads for commands that do not watch: GET one object, list every page of a collection.

Both read raw JSON the way the reflector and the binding do (kubernetes-asyncio's ``ApiClient.call_api`` with
``_preload_content=False`` and ``json.loads``; no generated models) and drop ``metadata.managedFields``.

* :func:`get_json` ``GET PATH`` -> the object as a dict.
* :func:`list_all` ``GET PATH?limit=N[&continue=T][&fieldSelector=S]`` page by page -> ``(items, list RV)``. A
  ``410 Expired`` on a continue token (the snapshot was compacted mid-list) restarts the list once, then takes it
  in one unpaged request, as client-go's pager does.

Errors: an HTTP answer that is not 2xx raises :class:`ApiError` carrying the Status ``reason`` and ``message``
verbatim (what kubectl prints as ``Error from server (NotFound): pods "x" not found``); no answer at all (refused,
DNS, TLS, timeout, dropped connection, a failing credential plugin) raises :class:`Unreachable` with one readable
sentence from :func:`~observatory.kube.transport.describe_transport_error`.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Sequence
from typing import Any

import aiohttp
from kubernetes_asyncio import client

from observatory.kube.reflector import _trim
from observatory.kube.transport import describe_transport_error

__all__ = ["ApiError", "Unreachable", "get_json", "list_all", "send_json"]

DEFAULT_TIMEOUT = 30.0
"""Seconds one request (connect, send, the whole body) may take."""


class ApiError(Exception):
    """A non-2xx answer. ``status`` is the HTTP code, ``reason`` the Status ``reason`` (``NotFound``,
    ``Forbidden``; "" when the body is not a Status), ``message`` the Status ``message`` verbatim (else the status
    line). ``str()`` is the message."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.message = message

    def kubectl(self) -> str:
        """The line kubectl prints for this error (``cmdutil.StandardErrorMessage``):
        ``Error from server (REASON): MESSAGE``, or ``Error from server: MESSAGE`` when the reason is empty."""
        return f"Error from server ({self.reason}): {self.message}" if self.reason else \
            f"Error from server: {self.message}"


class Unreachable(Exception):
    """No HTTP answer. ``str()`` is one readable sentence; ``reason`` a short code (``refused``, ``dns``, ``tls``,
    ``timeout``, ``unreachable``), as :class:`~observatory.kube.connect.ConnectError` uses."""

    def __init__(self, sentence: str, reason: str) -> None:
        super().__init__(sentence)
        self.reason = reason


async def _call(api: client.ApiClient, method: str, path: str, *, params: Sequence[tuple[str, str]] = (),
                body: Any = None, content_type: str | None = None, timeout: float) -> bytes:
    """The body of a 2xx answer to ``METHOD path``; raises ApiError (non-2xx) or Unreachable (no answer)."""
    headers = {"Accept": "application/json"}
    if content_type:
        headers["Content-Type"] = content_type
    try:
        async with asyncio.timeout(timeout):
            resp = await api.call_api(path, method, query_params=list(params), body=body, header_params=headers,
                                      auth_settings=["BearerToken"], _preload_content=False,
                                      _request_timeout=timeout)
            try:
                data = await resp.read()
            finally:
                resp.release()
    except asyncio.CancelledError:
        raise
    except (TimeoutError, aiohttp.ClientError, OSError, ssl.SSLError) as exc:
        reason, sentence = describe_transport_error(exc, api.configuration.host, timeout)
        raise Unreachable(sentence, reason) from None
    except Exception as exc:
        raise Unreachable(f"The request {method} {path} could not be sent ({type(exc).__name__}).",
                          "unreachable") from None
    if not 200 <= resp.status < 300:
        raise _api_error(resp.status, resp.reason or "", data)
    return data


async def _get(api: client.ApiClient, path: str, params: Sequence[tuple[str, str]], timeout: float) -> bytes:
    """The body of a 2xx answer to ``GET path``; raises ApiError or Unreachable."""
    return await _call(api, "GET", path, params=params, timeout=timeout)


def _api_error(status: int, phrase: str, data: bytes) -> ApiError:
    try:
        doc = json.loads(data)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        message = str(doc.get("message") or "") or f"{status} {phrase}".strip()
        return ApiError(status, str(doc.get("reason") or ""), message)
    text = data.decode("utf-8", "replace").strip()
    return ApiError(status, "", text or f"{status} {phrase}".strip())


def _document(data: bytes, path: str) -> dict[str, Any]:
    try:
        doc = json.loads(data)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        raise ApiError(200, "", f"the answer to GET {path} is not a JSON object")
    return doc


async def get_json(api: client.ApiClient, path: str, *, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """``GET path`` (e.g. ``/api/v1/namespaces/sched-lab/pods/web``) -> the object, without managedFields.
    Raises :class:`ApiError` (any non-2xx, or a 2xx that is not a JSON object) or :class:`Unreachable`."""
    return _trim(_document(await _get(api, path, (), timeout), path))


async def send_json(api: client.ApiClient, method: str, path: str, body: Any, *,
                    content_type: str = "application/json", timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """``METHOD path`` (POST, PUT, PATCH) with ``body`` as JSON, sent as ``content_type`` (e.g.
    ``application/strategic-merge-patch+json`` for a PATCH) -> the answer's object, without managedFields. Raises
    :class:`ApiError` (any non-2xx: ``status`` 409 for a conflict, 404 for a missing object) or
    :class:`Unreachable`, as :func:`get_json` does."""
    data = await _call(api, method, path, body=body, content_type=content_type, timeout=timeout)
    return _trim(_document(data, path)) if data.strip() else {}


async def list_all(api: client.ApiClient, path: str, *, field_selector: str = "", page_size: int = 500,
                   timeout: float = DEFAULT_TIMEOUT) -> tuple[list[dict[str, Any]], str]:
    """Every item of the collection at ``path`` (e.g. ``/api/v1/pods``), ``page_size`` per request (0: one
    request), filtered by ``field_selector`` (e.g. ``spec.nodeName!=``), and the list's resourceVersion. Items
    are dicts without managedFields (and, as served in lists, without ``kind``/``apiVersion``). ``timeout`` is
    per page. Raises :class:`ApiError` or :class:`Unreachable`; a 2xx whose ``items`` is not a list, or that repeats
    a continue token already followed (a server that would page forever), is an ApiError with status 200."""
    items: list[dict[str, Any]] = []
    token = ""
    limit = page_size
    restarted = False
    seen: set[str] = set()
    while True:
        params = [("fieldSelector", field_selector)] if field_selector else []
        if limit:
            params.append(("limit", str(limit)))
        if token:
            params.append(("continue", token))
        try:
            data = await _get(api, path, params, timeout)
        except ApiError as exc:
            if exc.status != 410 or not token:
                raise
            items, token = [], ""
            seen.clear()
            if restarted:
                limit = 0  # the snapshot keeps expiring under us: take it in one page
            restarted = True
            continue
        doc = _document(data, path)
        meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        page = doc.get("items")
        if page is not None and not isinstance(page, list):
            raise ApiError(200, "", f"the answer to GET {path} has items that are not a list")
        items.extend(_trim(obj) for obj in page or [] if isinstance(obj, dict))
        previous, token = token, str(meta.get("continue") or "")
        if token and token in seen:
            # A server that hands back a token it already gave would page forever.
            raise ApiError(200, "", f"the answer to GET {path} repeats the continue token {previous[:40]!r}")
        seen.add(token)
        if not token:
            return items, str(meta.get("resourceVersion") or "")
