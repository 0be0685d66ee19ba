"""The values and protocols the lab's auditing is built on (see the package docstring).

Shapes follow upstream: :class:`UserInfo` is ``authentication/v1`` UserInfo (``username``, ``uid``, ``groups``,
``extra``); :class:`AuditedRequest` carries what apiserver's ``RequestInfo`` and the audit filter know of a request
before it is served (``staging/src/k8s.io/apiserver/pkg/endpoints/filters/audit.go``,
``staging/src/k8s.io/apiserver/pkg/audit/request.go``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

__all__ = ["AuditHandle", "AuditListener", "AuditedRequest", "Auditor", "Requester", "UserInfo"]


@dataclass(frozen=True, slots=True)
class UserInfo:
    """An authenticated user: ``system:kube-scheduler``; ``system:node:pair-worker`` in ``system:nodes``."""

    username: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Requester:
    """Who sent a request: the user, the ``User-Agent`` it sent and its source IPs (apiserver ``SourceIPs`` order:
    ``X-Forwarded-For``, ``X-Real-Ip``, then the remote address)."""

    user: UserInfo
    user_agent: str = ""
    source_ips: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AuditedRequest:
    """One request as the audit filter sees it before serving it.

    ``verb`` is the Kubernetes verb (``create``, ``update``, ``patch``, ``delete``, ``get``, ``list``, ``watch``;
    for a non-resource request the lower-cased HTTP method); ``request_uri`` the path and query as sent;
    ``resource``/``subresource``/``namespace``/``name``/``api_group``/``api_version`` the RequestInfo's ("" where
    none; ``resource`` "" means a non-resource request). ``request_object`` is the decoded request body (a JSON
    value; for a patch, the patch document), None when there is none. ``received`` is when the request arrived
    (aware UTC). ``long_running``: a watch, which has a ``ResponseStarted`` stage."""

    requester: Requester
    verb: str
    request_uri: str
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    api_group: str = ""
    api_version: str = ""
    request_object: Any = None
    received: datetime | None = None
    long_running: bool = False


class AuditHandle(Protocol):
    """One request being audited (its ``RequestReceived`` event is already emitted, unless omitted)."""

    @property
    def audit_id(self) -> str:
        """The request's audit ID, also sent as the ``Audit-Id`` response header."""
        ...

    def started(self, code: int) -> None:
        """A long-running request's response headers went out (the ``ResponseStarted`` stage)."""
        ...

    def finish(self, code: int, response_object: Any = None, *, panic: bool = False) -> None:
        """The request was answered with ``code`` and ``response_object`` (the JSON value sent: the object, a
        Status, a list; None when the body is not JSON): emits ``ResponseComplete`` (``Panic`` when ``panic``)."""
        ...


AuditListener = Callable[[Mapping[str, Any]], None]
"""Called with each audit Event (the JSON object exactly as the log backend writes it) as it is emitted."""


class Auditor(Protocol):
    """The lab's audit pipeline: the policy decides each request's level and stages, the backends write events."""

    def begin(self, request: AuditedRequest) -> AuditHandle:
        """Start auditing ``request``: pick its level by the policy (first matching rule; None logs nothing but the
        handle still has an audit ID) and emit ``RequestReceived`` unless that stage is omitted."""
        ...

    def subscribe(self, listener: AuditListener) -> Callable[[], None]:
        """Call ``listener`` with every event emitted from now on; returns the function that unsubscribes it."""
        ...
