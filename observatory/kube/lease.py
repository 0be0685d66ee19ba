"""Read one ``coordination.k8s.io/v1`` Lease, such as kube-scheduler's leader-election Lease, as a LeaseView.

``GET /apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}``, raw JSON as the reflector and the
binding read it (:func:`observatory.kube.fetch.get_json`). The lab's simulated default-scheduler holds
``kube-system/kube-scheduler`` (leaseDurationSeconds 15, renewed every 2 s), as kube-scheduler's leader election does.
"""

from __future__ import annotations

from urllib.parse import quote

from kubernetes_asyncio import client

from observatory.kube.fetch import ApiError, Unreachable, get_json
from observatory.model.records import LeaseView

__all__ = ["lease_path", "read_lease"]

_SHORT = {"refused": "connection refused", "dns": "DNS lookup failed", "tls": "TLS verification failed",
          "timeout": "no answer in time"}


def lease_path(namespace: str, name: str) -> str:
    """``/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}``, each part percent-encoded."""
    return f"/apis/coordination.k8s.io/v1/namespaces/{quote(namespace, safe='')}/leases/{quote(name, safe='')}"


async def read_lease(api: client.ApiClient, namespace: str, name: str, *, timeout: float = 10.0) -> LeaseView:
    """The Lease ``namespace/name`` (``LeaseView.from_api``). Never raises for API or network trouble: it returns
    ``LeaseView.unreadable(namespace, name, problem)`` with ``problem`` one of ``not found`` (404),
    ``forbidden: <the Status message>`` (403), ``HTTP <code>: <message>`` (any other non-2xx) or
    ``unreachable: <short reason>`` (no answer within ``timeout`` seconds, refused, DNS, TLS, dropped)."""
    try:
        obj = await get_json(api, lease_path(namespace, name), timeout=timeout)
    except ApiError as exc:
        if exc.status == 404:
            problem = "not found"
        elif exc.status == 403:
            problem = f"forbidden: {exc.message}"
        else:
            problem = f"HTTP {exc.status}: {exc.message}"
        return LeaseView.unreadable(namespace, name, problem)
    except Unreachable as exc:
        short = _SHORT.get(exc.reason) or str(exc).rstrip(".")
        return LeaseView.unreadable(namespace, name, f"unreachable: {short}")
    return LeaseView.from_api(obj)
