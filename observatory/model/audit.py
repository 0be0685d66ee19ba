"""kube-apiserver's audit events (``audit.k8s.io/v1`` Event), read into plain values: who wrote what, and the answer.

The shape is upstream's ``staging/src/k8s.io/apiserver/pkg/apis/audit/v1/types.go``: ``level``, ``auditID``,
``stage`` (``RequestReceived``, ``ResponseStarted``, ``ResponseComplete``, ``Panic``), ``requestURI``, ``verb``,
``user`` (an ``authentication/v1`` UserInfo: ``username``, ``uid``, ``groups``, ``extra``), ``sourceIPs``,
``userAgent``, ``objectRef`` (``resource``, ``namespace``, ``name``, ``uid``, ``apiGroup``, ``apiVersion``,
``resourceVersion``, ``subresource``), ``responseStatus`` (a ``metav1.Status``), ``requestObject`` and
``responseObject`` (JSON, at ``Request`` and ``RequestResponse`` level), ``requestReceivedTimestamp`` and
``stageTimestamp`` (``metav1.MicroTime``), ``annotations``. A log file holds one Event per line; a webhook receives
an ``EventList`` (``items``) per batch.

:func:`parse_event`, :func:`parse_line` and :func:`parse_batch` never trust their input: anything that is not an
audit Event raises :class:`AuditFormatError` with one readable sentence, so a reader can count it and go on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from observatory.model._json import integer, items, mapping, text
from observatory.model.timefmt import timestamp

__all__ = ["AUDIT_API_VERSION", "STAGES", "WRITE_VERBS", "AuditEvent", "AuditFormatError", "parse_batch",
           "parse_event", "parse_line", "short_agent"]

AUDIT_API_VERSION = "audit.k8s.io/v1"
STAGES = ("RequestReceived", "ResponseStarted", "ResponseComplete", "Panic")
"""The audit stages, in the order a request reaches them (``ResponseStarted`` only for long-running requests)."""
LEVELS = ("None", "Metadata", "Request", "RequestResponse")
WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
"""The verbs that change stored objects (apiserver ``RequestInfo.Verb``; a Binding POST is ``create``)."""


class AuditFormatError(ValueError):
    """Input that is not an audit Event (or EventList); the message is one sentence naming what is wrong."""


def short_agent(user_agent: str) -> str:
    """The program of a client-go style user agent: ``kubectl`` of ``kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9``,
    ``kube-scheduler`` of ``kube-scheduler/v1.34.1 (linux/amd64) kubernetes/…/scheduler``; "" for an empty one."""
    head = user_agent.strip().split(" ", 1)[0]
    return head.split("/", 1)[0]


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One audit Event, as :func:`parse_event` read it. Strings are "" and numbers 0 where the event has none.

    ``code`` is ``responseStatus.code`` (0 before the response, at ``RequestReceived``); ``status``, ``reason`` and
    ``message`` are the Status's (``Failure``, ``Conflict``, ``Operation cannot be fulfilled on …``). ``request_object``
    and ``response_object`` are the parsed JSON values (None below their level). ``received`` is
    ``requestReceivedTimestamp`` and ``stage_at`` ``stageTimestamp``, aware UTC datetimes or None.
    """

    audit_id: str
    stage: str
    level: str
    verb: str
    request_uri: str
    user: str
    groups: tuple[str, ...]
    user_agent: str
    source_ips: tuple[str, ...]
    resource: str
    subresource: str
    namespace: str
    name: str
    api_group: str
    api_version: str
    code: int
    status: str
    reason: str
    message: str
    request_object: Any
    response_object: Any
    received: datetime | None
    stage_at: datetime | None
    annotations: tuple[tuple[str, str], ...] = ()

    @property
    def is_write(self) -> bool:
        """Whether the request changes stored objects (its verb is one of :data:`WRITE_VERBS`)."""
        return self.verb in WRITE_VERBS

    @property
    def is_binding(self) -> bool:
        """Whether the request is a Binding POST: a create of ``pods/NAME/binding`` or of a core ``bindings``
        object (``POST /api/v1/namespaces/NS/bindings``)."""
        return self.verb == "create" and (self.subresource == "binding" or self.resource == "bindings")

    @property
    def complete(self) -> bool:
        """Whether this is the event of a finished request (``ResponseComplete`` or ``Panic``): it has the answer."""
        return self.stage in ("ResponseComplete", "Panic")

    @property
    def object_key(self) -> str:
        """``"namespace/name"`` of the object written (``"name"`` for a cluster-scoped one); "" for a collection."""
        if not self.name:
            return ""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def target(self) -> str:
        """What was written, as ``kubectl`` names it: ``pods/manual/binding``, ``pods/manual``, ``events``."""
        parts = [p for p in (self.resource, self.name, self.subresource) if p]
        return "/".join(parts)

    @property
    def resource_version(self) -> str:
        """The resourceVersion the write produced: ``responseObject.metadata.resourceVersion`` when the response is
        the object itself (not a Status, not a List); "" otherwise (a Binding's answer is a Status)."""
        obj = mapping(self.response_object)
        if not obj or text(obj.get("kind")) in ("Status", "") or text(obj.get("kind")).endswith("List"):
            return ""
        return text(mapping(obj.get("metadata")).get("resourceVersion"))

    @property
    def node(self) -> str:
        """The node of a kubelet's identity (``system:node:NODE``), else ""."""
        return self.user[len("system:node:"):] if self.user.startswith("system:node:") else ""

    @property
    def writer(self) -> str:
        """Who, in one short phrase: the user agent's program (``kubectl``, ``kube-scheduler``, ``observatory``),
        ``kubelet pair-worker`` for a node's identity, a controller's service account name after its program
        (``kube-controller-manager node-controller``); the user name when there is no user agent."""
        agent = short_agent(self.user_agent) or self.user
        if self.node:
            return f"{agent} {self.node}"
        prefix = "system:serviceaccount:kube-system:"
        if self.user.startswith(prefix) and agent == "kube-controller-manager":
            return f"{agent} {self.user[len(prefix):]}"
        return agent


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(text(v) for v in items(value))


def parse_event(obj: Any) -> AuditEvent:
    """One ``audit.k8s.io/v1`` Event (a parsed JSON object). Raises AuditFormatError for anything else: not an
    object, another kind or apiVersion, or no ``auditID``/``stage``/``verb``."""
    if not isinstance(obj, Mapping):
        raise AuditFormatError(f"an audit event is a JSON object, not {type(obj).__name__}")
    if obj.get("kind") != "Event" or obj.get("apiVersion") != AUDIT_API_VERSION:
        raise AuditFormatError(f"not an {AUDIT_API_VERSION} Event: kind {text(obj.get('kind'))!r}, apiVersion "
                               f"{text(obj.get('apiVersion'))!r}")
    for field in ("auditID", "stage", "verb"):
        if not isinstance(obj.get(field), str) or not obj.get(field):
            raise AuditFormatError(f"audit event without {field}")
    if obj["stage"] not in STAGES:
        raise AuditFormatError(f"audit event of unknown stage {text(obj['stage'])!r}")
    user = mapping(obj.get("user"))
    ref = mapping(obj.get("objectRef"))
    status = mapping(obj.get("responseStatus"))
    return AuditEvent(
        audit_id=obj["auditID"], stage=obj["stage"], level=text(obj.get("level")), verb=obj["verb"],
        request_uri=text(obj.get("requestURI")), user=text(user.get("username")), groups=_strings(user.get("groups")),
        user_agent=text(obj.get("userAgent")), source_ips=_strings(obj.get("sourceIPs")),
        resource=text(ref.get("resource")), subresource=text(ref.get("subresource")),
        namespace=text(ref.get("namespace")), name=text(ref.get("name")), api_group=text(ref.get("apiGroup")),
        api_version=text(ref.get("apiVersion")), code=integer(status.get("code")), status=text(status.get("status")),
        reason=text(status.get("reason")), message=text(status.get("message")),
        request_object=obj.get("requestObject"), response_object=obj.get("responseObject"),
        received=timestamp(obj.get("requestReceivedTimestamp")), stage_at=timestamp(obj.get("stageTimestamp")),
        annotations=tuple((text(k), text(v)) for k, v in mapping(obj.get("annotations")).items()),
    )


def parse_line(line: str | bytes) -> AuditEvent:
    """One line of an audit log file (``--audit-log-path``, ``--audit-log-format=json``). Raises AuditFormatError."""
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise AuditFormatError(f"not JSON: {exc}") from None
    return parse_event(obj)


def parse_batch(obj: Any) -> list[AuditEvent]:
    """The body of one webhook POST: an ``audit.k8s.io/v1`` EventList (``items``), as the webhook backend sends.
    Raises AuditFormatError when the body is not an EventList; a malformed item fails the whole batch, as the
    batch is one object."""
    if not isinstance(obj, Mapping) or obj.get("kind") != "EventList" or obj.get("apiVersion") != AUDIT_API_VERSION:
        raise AuditFormatError(f"not an {AUDIT_API_VERSION} EventList")
    return [parse_event(item) for item in items(obj.get("items"))]
