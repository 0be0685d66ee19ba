"""POST a Binding and keep the whole HTTP exchange as data.

``POST /api/v1/namespaces/{namespace}/pods/{name}/binding`` with the body::

    {"apiVersion": "v1", "kind": "Binding",
     "metadata": {"name": NAME, "namespace": NAMESPACE[, "uid": POD_UID]},
     "target": {"apiVersion": "v1", "kind": "Node", "name": NODE}}

is what kube-scheduler's DefaultBinder sends. kube-apiserver answers ``201 Created`` with the Status
``{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}`` (not a Binding, which is why the
generated client raises on a real 201 unless ``_preload_content=False``), and ``409 Conflict`` with
``Operation cannot be fulfilled on pods/binding "NAME": pod NAME is already assigned to node "NODE"`` when the pod
already has a ``spec.nodeName``.

The call goes through kubernetes-asyncio's ``CoreV1Api.create_namespaced_pod_binding(..., _preload_content=False)``,
which returns the raw aiohttp response for every status (its ``rest.py`` only raises ``ApiException`` when it
preloads). kubernetes-asyncio serialises the body as ``json.dumps(api.sanitize_for_serialization(body))`` and aiohttp
sends that string as UTF-8; :func:`request_body_bytes` computes exactly those bytes, so the recorded body is the
one that went on the wire. Request headers are the ones aiohttp sent (``response.request_info.headers``) without
credentials; response headers are the raw ones received, without ``Set-Cookie``.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import aiohttp
from kubernetes_asyncio import client

from observatory.kube.transport import describe_transport_error
from observatory.model.records import BindingExchange

__all__ = ["binding_body", "binding_path", "post_binding", "request_body_bytes"]

_DROP_REQUEST = frozenset({"authorization", "cookie", "proxy-authorization"})
_DROP_RESPONSE = frozenset({"set-cookie"})


def binding_body(namespace: str, name: str, node: str, uid: str | None = None) -> dict[str, Any]:
    """The Binding object for pod ``namespace/name`` and ``node``; ``uid`` (the pod's) becomes a precondition."""
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if uid:
        metadata["uid"] = uid
    return {"apiVersion": "v1", "kind": "Binding", "metadata": metadata,
            "target": {"apiVersion": "v1", "kind": "Node", "name": node}}


def binding_path(namespace: str, name: str) -> str:
    """``/api/v1/namespaces/{namespace}/pods/{name}/binding``, each part percent-encoded as kubernetes-asyncio does
    (``quote(value, safe="")``)."""
    return f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(name, safe='')}/binding"


def request_body_bytes(api: client.ApiClient, body: dict[str, Any]) -> bytes:
    """The bytes kubernetes-asyncio puts on the wire for ``body``: ``rest.py`` does ``json.dumps`` (default
    separators, ASCII) of ``ApiClient.sanitize_for_serialization(body)`` and aiohttp encodes the string as UTF-8."""
    return json.dumps(api.sanitize_for_serialization(body)).encode("utf-8")


async def post_binding(api: client.ApiClient, namespace: str, name: str, node: str, *, uid: str | None = None,
                       timeout: float = 30.0) -> BindingExchange:
    """POST the Binding of pod ``namespace/name`` to ``node`` and return the exchange; never raises for HTTP.

    Every answer (2xx, 4xx, 5xx) is returned as status, reason, headers and exact body bytes. A transport failure
    (refused, DNS, TLS, no answer within ``timeout`` seconds, connection dropped) gives ``status=0``, an empty
    response and ``error`` set to one readable sentence; the request headers are then the ones kubernetes-asyncio
    would have sent. ``elapsed_ms`` runs from just before the request to the last body byte.
    """
    body = binding_body(namespace, name, node, uid)
    wire = request_body_bytes(api, body)
    path = binding_path(namespace, name)
    secrets = _secrets(api)
    sent_at = datetime.now(UTC)
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            resp = await client.CoreV1Api(api).create_namespaced_pod_binding(
                name, namespace, body, _preload_content=False, _request_timeout=timeout)
            try:
                data = await resp.read()
            finally:
                resp.release()
    except asyncio.CancelledError:
        raise
    except (TimeoutError, aiohttp.ClientError, OSError, ssl.SSLError) as exc:
        _, sentence = describe_transport_error(exc, api.configuration.host, timeout)
        return _failed(api, namespace, name, node, path, wire, sent_at, started, sentence, secrets)
    except Exception as exc:
        sentence = _scrub(f"The Binding could not be sent: {exc}", secrets)
        return _failed(api, namespace, name, node, path, wire, sent_at, started, sentence, secrets)
    elapsed = (time.perf_counter() - started) * 1000.0
    info = resp.request_info
    sent_path = info.url.raw_path + (f"?{info.url.raw_query_string}" if info.url.raw_query_string else "")
    return BindingExchange(
        pod=f"{namespace}/{name}", node=node, method=info.method, path=sent_path,
        request_headers=_clean(info.headers.items(), _DROP_REQUEST, secrets),
        request_body=wire,
        http_version=f"HTTP/{resp.version.major}.{resp.version.minor}" if resp.version else "HTTP/1.1",
        status=resp.status, reason=resp.reason or "",
        response_headers=_clean(((k.decode("latin-1"), v.decode("latin-1")) for k, v in resp.raw_headers),
                                _DROP_RESPONSE, secrets),
        response_body=data, sent_at=sent_at, elapsed_ms=elapsed)


def _failed(api: client.ApiClient, namespace: str, name: str, node: str, path: str, wire: bytes,
            sent_at: datetime, started: float, error: str, secrets: set[str]) -> BindingExchange:
    headers = {"Accept": "application/json", "Content-Type": "application/json", **api.default_headers}
    return BindingExchange(
        pod=f"{namespace}/{name}", node=node, method="POST", path=path,
        request_headers=_clean(headers.items(), _DROP_REQUEST, secrets), request_body=wire,
        http_version="HTTP/1.1", status=0, reason="", response_headers=(), response_body=b"",
        sent_at=sent_at, elapsed_ms=(time.perf_counter() - started) * 1000.0, error=error)


def _secrets(api: client.ApiClient) -> set[str]:
    """The credential strings the client may send (bearer token, basic auth), to keep them out of headers."""
    cfg = api.configuration
    values: set[str] = set()
    for value in list((cfg.api_key or {}).values()) + [cfg.password]:
        if isinstance(value, str) and value:
            values.add(value)
            values.add(value.split(" ", 1)[-1])  # "Bearer <token>" -> "<token>"
    return {v for v in values if len(v) >= 4}


def _clean(pairs: Any, drop: frozenset[str], secrets: set[str]) -> tuple[tuple[str, str], ...]:
    """Header pairs without the dropped names and without any header whose value carries a credential."""
    return tuple((str(k), str(v)) for k, v in pairs
                 if str(k).lower() not in drop and not any(s in str(v) for s in secrets))


def _scrub(text: str, secrets: set[str]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "<redacted>")
    return " ".join(text.split())
