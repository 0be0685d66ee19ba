"""May I? One SelfSubjectAccessReview, as ``kubectl auth can-i`` asks it.

``POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews`` with
``{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {"resourceAttributes":
{"namespace", "verb", "group", "resource", "subresource", "name"}}}`` (empty fields left out); the API server answers
201 with the review and its ``status`` {``allowed``, ``denied``, ``reason``, ``evaluationError``}. Raw JSON through
:func:`observatory.kube.fetch.send_json` (no generated models).

:func:`review_access` never raises for API or network trouble: no answer, an error answer (the endpoint missing on
an old or unusual server: 404; the review itself refused: 403) or a body that is not a review gives an
:class:`~observatory.model.access.AccessReview` with ``allowed=None`` and ``problem`` saying why. Callers treat that
as "access unknown" and block nothing.
"""

from __future__ import annotations

from typing import Any

from kubernetes_asyncio import client

from observatory.kube.fetch import ApiError, Unreachable, send_json
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
        doc = await send_json(api, "POST", SSAR_PATH, body, timeout=timeout)
    except Unreachable as exc:
        return _unknown(unknown, f"SelfSubjectAccessReview not answered: {str(exc).rstrip('.')}")
    except ApiError as exc:
        if exc.status == 404:
            return _unknown(unknown, "the API server does not serve SelfSubjectAccessReview (404)")
        if 200 <= exc.status < 300:  # a 2xx that is not a JSON object
            return _unknown(unknown, "the SelfSubjectAccessReview answer has no status")
        return _unknown(unknown, f"SelfSubjectAccessReview answered {exc.status}: {exc.message}")
    status = doc.get("status") if isinstance(doc, dict) else None
    if not isinstance(status, dict) or not isinstance(status.get("allowed", False), bool):
        return _unknown(unknown, "the SelfSubjectAccessReview answer has no status")
    return AccessReview(verb, resource, subresource, namespace, allowed=bool(status.get("allowed")),
                        reason=str(status.get("reason") or status.get("evaluationError") or ""),
                        denied=status.get("denied") is True)


def _unknown(base: AccessReview, problem: str) -> AccessReview:
    return AccessReview(base.verb, base.resource, base.subresource, base.namespace, allowed=None, problem=problem)
