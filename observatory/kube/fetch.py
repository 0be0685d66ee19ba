"""One-shot reads for commands that do not watch: GET one object, list every page of a collection.

Both read raw JSON through :func:`observatory.kube.rawhttp.request` (``json.loads``; no generated models) and drop
``metadata.managedFields``.

* :func:`get_json` ``GET PATH`` -> the object as a dict.
* :func:`list_all` ``GET PATH?[fieldSelector=S&]limit=N[&continue=T]`` page by page -> ``(items, list RV)``: the
  pager the reflector lists through too. A ``410 Expired`` on a continue token (the snapshot was compacted
  mid-list) restarts the list once, then takes it in one unpaged request, as client-go's pager does with
  ``FullListIfExpired``; a continue token the server already gave stops the list with an error.

Errors: an HTTP answer that is not 2xx raises :class:`ApiError` carrying the Status ``reason`` and ``message``
verbatim (what kubectl prints as ``Error from server (NotFound): pods "x" not found``); no answer at all (refused,
DNS, TLS, timeout, dropped connection, a failing credential plugin) raises :class:`Unreachable` with one readable
sentence from :func:`~observatory.kube.transport.describe_transport_error`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from kubernetes_asyncio import client

from observatory.kube.rawhttp import DEFAULT_TIMEOUT, ApiError, Unreachable, drop_managed_fields, request

__all__ = ["DEFAULT_TIMEOUT", "ApiError", "Unreachable", "get_json", "list_all", "send_json"]


async def _call(api: client.ApiClient, method: str, path: str, *, params: Sequence[tuple[str, str]] = (),
                body: Any = None, content_type: str | None = None, timeout: float | None,
                read_timeout: float | None = None) -> bytes:
    """The body of a 2xx answer to ``METHOD path``; raises ApiError (non-2xx) or Unreachable (no answer)."""
    answer = await request(api, method, path, params=params, body=body, content_type=content_type, timeout=timeout,
                           read_timeout=read_timeout)
    if not answer.ok:
        raise answer.error()
    return answer.body


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
    return drop_managed_fields(_document(await _call(api, "GET", path, timeout=timeout), path))


async def send_json(api: client.ApiClient, method: str, path: str, body: Any, *,
                    content_type: str = "application/json", timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """``METHOD path`` (POST, PUT, PATCH) with ``body`` as JSON, sent as ``content_type`` (e.g.
    ``application/strategic-merge-patch+json`` for a PATCH) -> the answer's object, without managedFields. Raises
    :class:`ApiError` (any non-2xx: ``status`` 409 for a conflict, 404 for a missing object) or
    :class:`Unreachable`, as :func:`get_json` does."""
    data = await _call(api, method, path, body=body, content_type=content_type, timeout=timeout)
    return drop_managed_fields(_document(data, path)) if data.strip() else {}


async def list_all(api: client.ApiClient, path: str, *, field_selector: str = "", page_size: int = 500,
                   timeout: float | None = DEFAULT_TIMEOUT,
                   read_timeout: float | None = None) -> tuple[list[dict[str, Any]], str]:
    """Every item of the collection at ``path`` (e.g. ``/api/v1/pods``), ``page_size`` per request (0: one
    request), filtered by ``field_selector`` (e.g. ``spec.nodeName!=``), and the list's resourceVersion: the one
    pager, used by the commands and by the reflector. Items are dicts without managedFields (and, as served in
    lists, without ``kind``/``apiVersion``). ``timeout`` bounds each page, ``read_timeout`` each read of a page
    (None: unbounded). Raises :class:`ApiError` or :class:`Unreachable`; a 2xx that is not a JSON object, whose
    ``items`` is not a list, or that repeats a continue token already followed (a server that would page forever),
    is an ApiError with that 2xx status."""
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
            data = await _call(api, "GET", path, params=params, timeout=timeout, read_timeout=read_timeout)
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
        meta = doc.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        page = doc.get("items")
        if page is not None and not isinstance(page, list):
            raise ApiError(200, "", f"the answer to GET {path} has items that are not a list")
        items.extend(drop_managed_fields(obj) for obj in page or [] if isinstance(obj, dict))
        token = str(meta.get("continue") or "")
        if token and token in seen:
            # A server that hands back a token it already gave would page forever.
            raise ApiError(200, "", f"the answer to GET {path} repeats the continue token {token[:40]!r}")
        seen.add(token)
        if not token:
            return items, str(meta.get("resourceVersion") or "")
