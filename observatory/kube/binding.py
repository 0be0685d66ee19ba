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

The call is :func:`observatory.kube.rawhttp.request`: the same ``ApiClient.call_api(..., _preload_content=False)``
that kubernetes-asyncio's ``CoreV1Api.create_namespaced_pod_binding`` makes (same path encoding, ``Accept`` and
``Content-Type: application/json``), which returns the raw aiohttp response for every status. kubernetes-asyncio
serialises the body as ``json.dumps(api.sanitize_for_serialization(body))`` and aiohttp sends that string as UTF-8;
:func:`~observatory.kube.rawhttp.request_body_bytes` computes exactly those bytes, so the recorded body is the one
that went on the wire. Request headers are the ones aiohttp sent (``response.request_info.headers``) without
credentials; response headers are the raw ones received, without ``Set-Cookie``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from kubernetes_asyncio import client

from observatory.kube.rawhttp import Unreachable, default_request_headers, request, request_body_bytes
from observatory.model.records import BindingExchange

__all__ = ["binding_body", "binding_path", "post_binding", "request_body_bytes"]


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
    pod = f"{namespace}/{name}"
    sent_at = datetime.now(UTC)
    started = time.perf_counter()
    try:
        answer = await request(api, "POST", path, body=body, content_type="application/json", timeout=timeout)
    except Unreachable as exc:
        elapsed = (time.perf_counter() - started) * 1000.0
        return BindingExchange(
            pod=pod, node=node, method="POST", path=path, request_headers=default_request_headers(api),
            request_body=wire, http_version="HTTP/1.1", status=0, reason="", response_headers=(),
            response_body=b"", sent_at=sent_at, elapsed_ms=elapsed, error=str(exc))
    return BindingExchange(
        pod=pod, node=node, method=answer.method, path=answer.path, request_headers=answer.request_headers,
        request_body=wire, http_version=answer.http_version, status=answer.status, reason=answer.reason,
        response_headers=answer.headers, response_body=answer.body, sent_at=sent_at, elapsed_ms=answer.elapsed_ms)
