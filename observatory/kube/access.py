"""May I? One SelfSubjectAccessReview, as ``kubectl auth can-i`` asks it.

``POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews`` with
``{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {"resourceAttributes":
{"namespace", "verb", "group", "resource", "subresource", "name"}}}`` (empty fields left out); the API server answers
201 with the review and its ``status`` {``allowed``, ``denied``, ``reason``, ``evaluationError``}. Raw JSON, read as
the reflector and the binding read theirs (``_preload_content=False``, ``json.loads``; no generated models).

:func:`review_access` never raises for API or network trouble: no answer, an error answer (the endpoint missing on
an old or unusual server: 404; the review itself refused: 403) or a body that is not a review gives an
:class:`~observatory.model.access.AccessReview` with ``allowed=None`` and ``problem`` saying why. Callers treat that
as "access unknown" and block nothing.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from typing import Any

import aiohttp
from kubernetes_asyncio import client

from observatory.kube.fetch import _api_error
from observatory.kube.transport import describe_transport_error
from observatory.model.access import AccessReview

__all__ = ["SSAR_PATH", "access_review_body", "review_access"]

SSAR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


def access_review_body(verb: str, resource: str, subresource: str = "", namespace: str = "", group: str = "",
                       name: str = "") -> dict[str, Any]:
    """The SelfSubjectAccessReview ``kubectl auth can-i VERB RESOURCE[/SUB] [NAME] -n NAMESPACE`` sends; empty
    attributes are left out (they are ``omitempty`` upstream)."""
    attributes = {"namespace": namespace, "verb": verb, "group": group, "resource": resource,
                  "subresource": subresource, "name": name}
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {k: v for k, v in attributes.items() if v}}}


async def review_access(api: client.ApiClient, verb: str, resource: str, *, subresource: str = "",
                        namespace: str = "", group: str = "", name: str = "", timeout: float = 10.0) -> AccessReview:
    """Whether the connection's user may ``verb`` ``resource``[/``subresource``] in ``namespace`` (``""``: every
    namespace, or a cluster-scoped resource), as the API server's authorizers answer a SelfSubjectAccessReview.
    ``timeout`` is in seconds. Never raises for HTTP or transport trouble (see the module docstring)."""
    unknown = AccessReview(verb, resource, subresource, namespace)
    body = access_review_body(verb, resource, subresource, namespace, group, name)
    try:
        async with asyncio.timeout(timeout):
            resp = await api.call_api(SSAR_PATH, "POST", body=body,
                                      header_params={"Accept": "application/json",
                                                     "Content-Type": "application/json"},
                                      auth_settings=["BearerToken"], _preload_content=False,
                                      _request_timeout=timeout)
            try:
                data = await resp.read()
            finally:
                resp.release()
    except asyncio.CancelledError:
        raise
    except (aiohttp.ClientError, OSError, asyncio.TimeoutError, ssl.SSLError) as exc:
        _, sentence = describe_transport_error(exc, api.configuration.host, timeout)
        return _unknown(unknown, f"SelfSubjectAccessReview not answered: {sentence.rstrip('.')}")
    except Exception as exc:  # noqa: BLE001 - e.g. a failing exec credential plugin: unknown, not a crash
        return _unknown(unknown, f"SelfSubjectAccessReview could not be sent ({type(exc).__name__})")
    if not 200 <= resp.status < 300:
        error = _api_error(resp.status, resp.reason or "", data)
        if resp.status == 404:
            return _unknown(unknown, "the API server does not serve SelfSubjectAccessReview (404)")
        return _unknown(unknown, f"SelfSubjectAccessReview answered {resp.status}: {error.message}")
    try:
        doc = json.loads(data)
    except ValueError:
        doc = None
    status = doc.get("status") if isinstance(doc, dict) else None
    if not isinstance(status, dict) or not isinstance(status.get("allowed", False), bool):
        return _unknown(unknown, "the SelfSubjectAccessReview answer has no status")
    return AccessReview(verb, resource, subresource, namespace, allowed=bool(status.get("allowed")),
                        reason=str(status.get("reason") or status.get("evaluationError") or ""),
                        denied=status.get("denied") is True)


def _unknown(base: AccessReview, problem: str) -> AccessReview:
    return AccessReview(base.verb, base.resource, base.subresource, base.namespace, allowed=None, problem=problem)
