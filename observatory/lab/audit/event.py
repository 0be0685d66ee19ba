"""``audit.k8s.io/v1`` Event objects, field for field as kube-apiserver writes them.

The fields and their JSON order are ``staging/src/k8s.io/apiserver/pkg/apis/audit/v1/types.go``'s ``Event``:
``kind``, ``apiVersion``, ``level``, ``auditID``, ``stage``, ``requestURI``, ``verb``, ``user`` (always, ``{}`` for a
request nobody authenticated), then, each left out when empty (``omitempty``), ``impersonatedUser``, ``sourceIPs``,
``userAgent``, ``objectRef``, ``responseStatus``, ``requestObject``, ``responseObject``; then
``requestReceivedTimestamp`` and ``stageTimestamp`` (``metav1.MicroTime``: RFC 3339 with microseconds in UTC,
``2026-12-02T03:54:36.123456Z``), and ``annotations`` when there are any (a Go map: keys sorted).

What each part holds follows ``staging/src/k8s.io/apiserver/pkg/audit/request.go`` and ``context.go``:

- ``user`` is the authenticated UserInfo (``username``, ``uid``, ``groups``, ``extra``, each ``omitempty``);
- ``objectRef`` at ``RequestReceived`` holds what RequestInfo knows (``resource``, ``namespace``, ``name``,
  ``apiGroup``, ``apiVersion``, ``subresource``; JSON order resource, namespace, name, uid, apiGroup, apiVersion,
  resourceVersion, subresource). ``LogRequestObject`` (create and update: the handler decoded an object, at
  ``Metadata`` and above) then fills the empty ``namespace``, ``name``, ``uid`` and ``resourceVersion`` from the
  request object's metadata; a patch (``LogRequestPatch``) and a delete's DeleteOptions fill nothing;
- ``requestObject`` (``Request`` and ``RequestResponse``): the decoded request body, the patch document for a patch;
- ``responseStatus``: when the answer is a ``metav1.Status`` (every failure; a Binding's success), its ``status``,
  ``message``, ``reason``, ``details`` and ``code`` (``LogResponseObject`` "selectively copy the bounded fields");
  otherwise only the code, ``{"metadata":{},"code":201}``. ``metadata`` (a ListMeta, never omitted) is always
  there;
- ``responseObject`` (``RequestResponse`` only): the JSON answer, the Status of a failure included;
- ``omitManagedFields`` drops ``metadata.managedFields`` from both objects (and from a list's items);
- a ``Panic`` has ``{"code":500,"status":"Failure","reason":"InternalError","message":"APIServer panic'd: <v>"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from observatory.lab.audit.policy import LEVELS, RequestAuditConfig
from observatory.lab.audit.types import AuditedRequest, UserInfo

__all__ = ["API_VERSION", "EventRecord", "micro_time", "panic_status", "user_info"]

API_VERSION = "audit.k8s.io/v1"
_RANK = {level: i for i, level in enumerate(LEVELS)}
_STATUS_FIELDS = ("status", "message", "reason", "details", "code")


def micro_time(at: datetime) -> str:
    """``metav1.MicroTime`` as JSON: ``RFC3339Micro`` (``2006-01-02T15:04:05.000000Z07:00``) of the UTC time."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def user_info(user: UserInfo | None) -> dict[str, Any]:
    """``authentication/v1`` UserInfo as JSON, each field ``omitempty``; ``{}`` for no user (username "")."""
    if user is None or not user.username:
        return {}
    out: dict[str, Any] = {"username": user.username}
    if user.uid:
        out["uid"] = user.uid
    if user.groups:
        out["groups"] = list(user.groups)
    if user.extra:
        out["extra"] = {k: list(v) for k, v in sorted(user.extra.items())}
    return out


def panic_status(reason: str) -> dict[str, Any]:
    """The ``responseStatus`` of a ``Panic`` event (``WithAudit``'s recover: ``APIServer panic'd: %v``)."""
    return {"metadata": {}, "status": "Failure", "message": f"APIServer panic'd: {reason}",
            "reason": "InternalError", "code": 500}


def _without_managed_fields(obj: Any) -> Any:
    """``copyWithoutManagedFields``: a copy without ``metadata.managedFields`` (an object, or each list item)."""
    if not isinstance(obj, dict):
        return obj
    out = obj
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        out = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    items = obj.get("items")
    if isinstance(items, list):
        out = {**out, "items": [_without_managed_fields(i) for i in items]}
    return out


def _is_status(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("kind") == "Status"


class EventRecord:
    """The audit event of one request as it goes through its stages; :meth:`event` renders it for one stage.

    ``level`` is the policy's level for the request (never ``None``: such requests have no record)."""

    __slots__ = ("annotations", "audit_id", "config", "object_ref", "received", "request", "request_object",
                 "response_object", "response_status")

    def __init__(self, audit_id: str, request: AuditedRequest, config: RequestAuditConfig, received: datetime) -> None:
        self.audit_id = audit_id
        self.request = request
        self.config = config
        self.received = received
        self.object_ref: dict[str, Any] | None = self._request_info_ref()
        self.response_status: dict[str, Any] | None = None
        self.request_object: Any = None
        self.response_object: Any = None
        self.annotations: dict[str, str] = {}

    @property
    def level(self) -> str:
        return self.config.level

    def at_least(self, level: str) -> bool:
        return _RANK[self.config.level] >= _RANK[level]

    def _request_info_ref(self) -> dict[str, Any] | None:
        r = self.request
        if not r.resource:
            return None
        ref: dict[str, Any] = {"resource": r.resource}
        for key, value in (("namespace", r.namespace), ("name", r.name), ("apiGroup", r.api_group),
                           ("apiVersion", r.api_version), ("subresource", r.subresource)):
            if value:
                ref[key] = value
        return ref

    def log_request_object(self, obj: Any, *, patch: bool = False) -> None:
        """``LogRequestObject`` (``patch``: ``LogRequestPatch``): keep the body at ``Request`` and above; a decoded
        object (not a patch) of a create or update also fills the objectRef's empty name fields."""
        if obj is None:
            return
        if not patch and self.request.verb in ("create", "update") and isinstance(obj, dict) and \
                self.object_ref is not None:
            meta = obj.get("metadata")
            if isinstance(meta, dict):
                self._fill_ref(meta)
        if self.at_least("Request"):
            self.request_object = _without_managed_fields(obj) if self.config.omit_managed_fields else obj

    def _fill_ref(self, meta: Mapping[str, Any]) -> None:
        ref = self.object_ref
        assert ref is not None
        merged = dict(ref)
        for key in ("namespace", "name", "uid", "resourceVersion"):
            value = meta.get(key)
            if not merged.get(key) and isinstance(value, str) and value:
                merged[key] = value
        order = ("resource", "namespace", "name", "uid", "apiGroup", "apiVersion", "resourceVersion", "subresource")
        self.object_ref = {k: merged[k] for k in order if k in merged}

    def log_response(self, code: int, obj: Any) -> None:
        """``LogResponseObject`` then the response writer's code: a Status's bounded fields, else just the code;
        the object itself at ``RequestResponse``."""
        if _is_status(obj):
            status: dict[str, Any] = {"metadata": {}}
            for key in _STATUS_FIELDS:
                value = obj.get(key)
                if value is not None and (value != "" or key == "details"):  # details is a pointer in Go
                    status[key] = value
            self.response_status = status
        self.set_code(code)
        if obj is not None and self.at_least("RequestResponse"):
            self.response_object = _without_managed_fields(obj) if self.config.omit_managed_fields else obj

    def set_code(self, code: int) -> None:
        """``processCode``: the first status code written (a Status's fields stay, its code is the written one)."""
        if self.response_status is None:
            self.response_status = {"metadata": {}}
        status = {k: v for k, v in self.response_status.items() if k != "code"}
        status["code"] = code
        self.response_status = status

    def event(self, stage: str, at: datetime) -> dict[str, Any]:
        """The Event as the backends write it at ``stage``, ``at`` being the stage's time (``RequestReceived`` uses
        the request's receipt time, as ``processAuditEvent`` does)."""
        r = self.request
        requester = r.requester
        ev: dict[str, Any] = {"kind": "Event", "apiVersion": API_VERSION, "level": self.config.level,
                              "auditID": self.audit_id, "stage": stage, "requestURI": r.request_uri, "verb": r.verb,
                              "user": user_info(requester.user)}
        if requester.source_ips:
            ev["sourceIPs"] = list(requester.source_ips)
        if requester.user_agent:
            ev["userAgent"] = requester.user_agent
        if self.object_ref is not None:
            ev["objectRef"] = self.object_ref
        if self.response_status is not None and stage != "RequestReceived":
            ev["responseStatus"] = self.response_status
        if self.request_object is not None and stage != "RequestReceived":
            ev["requestObject"] = self.request_object
        if self.response_object is not None and stage != "RequestReceived":
            ev["responseObject"] = self.response_object
        ev["requestReceivedTimestamp"] = micro_time(self.received)
        ev["stageTimestamp"] = micro_time(self.received if stage == "RequestReceived" else at)
        if self.annotations and stage != "RequestReceived":
            ev["annotations"] = dict(sorted(self.annotations.items()))
        return ev
