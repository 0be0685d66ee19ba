"""Audit events leaving the process (recordings, transcripts): written back as ``audit.k8s.io/v1`` Event JSON, and
never with a credential in a body.

:func:`event_to_json` is the inverse of :func:`observatory.model.audit.parse_event`: ``parse_event(event_to_json(e))
== e`` for every :class:`~observatory.model.audit.AuditEvent`. The object has upstream's shape
(``staging/src/k8s.io/apiserver/pkg/apis/audit/v1/types.go``): empty strings, lists and objects are left out as
upstream's ``omitempty`` does, ``responseStatus`` is a ``metav1.Status`` with ``"metadata":{}``, and the timestamps
are ``metav1.MicroTime`` (``2006-01-02T15:04:05.000000Z07:00`` in UTC, apimachinery ``pkg/apis/meta/v1/
micro_time.go``: ``RFC3339Micro``). It holds only what :class:`AuditEvent` keeps: the user's ``uid`` and ``extra``
and the ``impersonatedUser`` are not in it.

:func:`credential_free` drops the request and response bodies of the writes whose bodies are credentials: Secrets
(``data`` and ``stringData``), TokenReviews (``spec.token``, the bearer token being reviewed) and TokenRequests
(``status.token``, the token issued by ``serviceaccounts/token``). An audit policy may log them at
``RequestResponse``, as nothing stops a cluster's administrator writing one; the lab's default policy never does.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from ._json import mapping, text
from .audit import AUDIT_API_VERSION, AuditEvent

__all__ = ["CREDENTIAL_KINDS", "carries_credentials", "credential_free", "event_to_json", "micro_time"]

CREDENTIAL_KINDS = frozenset({"Secret", "SecretList", "TokenReview", "TokenRequest"})
"""Kinds of object whose bodies are credentials (``core/v1`` Secret, ``authentication.k8s.io/v1`` TokenReview and
TokenRequest)."""
_CREDENTIAL_RESOURCES = frozenset({("", "secrets", ""), ("authentication.k8s.io", "tokenreviews", ""),
                                   ("", "serviceaccounts", "token")})
"""(apiGroup, resource, subresource) of the writes whose bodies are credentials (``objectRef``'s terms)."""


def micro_time(when: datetime) -> str:
    """apimachinery's ``MicroTime`` JSON: UTC, six fractional digits, ``Z`` (``2026-12-02T04:00:00.123456Z``). A naive
    time is taken as UTC."""
    aware = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _kind(body: Any) -> str:
    return text(mapping(body).get("kind"))


def carries_credentials(event: AuditEvent) -> bool:
    """Whether ``event``'s bodies would carry a credential: a write to ``secrets``, ``tokenreviews`` or
    ``serviceaccounts/token``, or a body of one of :data:`CREDENTIAL_KINDS` whatever the resource."""
    if (event.api_group, event.resource, event.subresource) in _CREDENTIAL_RESOURCES:
        return True
    return _kind(event.request_object) in CREDENTIAL_KINDS or _kind(event.response_object) in CREDENTIAL_KINDS


def credential_free(event: AuditEvent) -> AuditEvent:
    """``event`` as it may be written to a file or shown: when :func:`carries_credentials`, without its
    ``requestObject`` and ``responseObject`` and at level ``Metadata`` (what is left is exactly what a ``Metadata``
    event holds: who, what, the answer's Status); otherwise ``event`` itself."""
    if not carries_credentials(event):
        return event
    level = "Metadata" if event.level in ("Request", "RequestResponse") else event.level
    return replace(event, request_object=None, response_object=None, level=level)


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if value not in ("", (), None, {}):
        out[key] = list(value) if isinstance(value, tuple) else value


def event_to_json(event: AuditEvent) -> dict[str, Any]:
    """``event`` as the ``audit.k8s.io/v1`` Event object it was read from (as far as :class:`AuditEvent` keeps it):
    ``{"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level", "auditID", "stage", "requestURI", "verb",
    "user": {"username", "groups"}, "sourceIPs", "userAgent", "objectRef": {...}, "responseStatus": {...},
    "requestObject", "responseObject", "requestReceivedTimestamp", "stageTimestamp", "annotations"}``. It is not made
    credential-free: call :func:`credential_free` first."""
    out: dict[str, Any] = {"kind": "Event", "apiVersion": AUDIT_API_VERSION}
    _put(out, "level", event.level)
    out["auditID"], out["stage"] = event.audit_id, event.stage
    _put(out, "requestURI", event.request_uri)
    out["verb"] = event.verb
    user: dict[str, Any] = {}
    _put(user, "username", event.user)
    _put(user, "groups", event.groups)
    out["user"] = user
    _put(out, "sourceIPs", event.source_ips)
    _put(out, "userAgent", event.user_agent)
    ref: dict[str, Any] = {}
    for key, value in (("resource", event.resource), ("namespace", event.namespace), ("name", event.name),
                       ("apiGroup", event.api_group), ("apiVersion", event.api_version),
                       ("subresource", event.subresource)):
        _put(ref, key, value)
    _put(out, "objectRef", ref)
    if event.code or event.status or event.reason or event.message:
        status: dict[str, Any] = {"metadata": {}}
        _put(status, "status", event.status)
        _put(status, "message", event.message)
        _put(status, "reason", event.reason)
        if event.code:
            status["code"] = event.code
        out["responseStatus"] = status
    if event.request_object is not None:
        out["requestObject"] = event.request_object
    if event.response_object is not None:
        out["responseObject"] = event.response_object
    if event.received is not None:
        out["requestReceivedTimestamp"] = micro_time(event.received)
    if event.stage_at is not None:
        out["stageTimestamp"] = micro_time(event.stage_at)
    _put(out, "annotations", dict(event.annotations))
    return out
