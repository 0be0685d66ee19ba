"""Auditing the lab's HTTP requests, placed as kube-apiserver's handler chain places its filters.

``DefaultBuildHandlerChain`` (``staging/src/k8s.io/apiserver/pkg/server/config.go``) runs, outermost first,
``WithAuditInit`` (``endpoints/filters/audit_init.go``: the request's audit ID is the client's ``Audit-ID`` header or
a new UUID, echoed in the response header ``Audit-ID``, which Go's ``Header.Set`` writes in canonical form:
``Audit-Id``), then authentication (a failure is audited by ``WithFailedAuthenticationAudit``,
``authn_audit.go``: one ``ResponseStarted`` event without a user whose ``responseStatus.message`` is
``Authentication failed, attempted: <methods>`` or ``Authentication failed, no credentials provided``), then
``WithAudit`` (``audit.go``: ``RequestReceived``, then ``ResponseStarted`` for long-running requests and
``ResponseComplete``), then ``WithAuthorization`` (``authorization.go``), which annotates the event
``authorization.k8s.io/decision`` (``allow`` or ``forbid``) and ``authorization.k8s.io/reason`` (the authorizer's
reason: RBAC's ``RBAC: allowed by ...``; "" from the lab's AlwaysAllow), so a 403 is audited like any answer.

:func:`audited` is that sequence around the lab's own authentication, authorization and handler (``serve``, from
:func:`observatory.lab.api.error_middleware`). It decodes the request body the handler read (upstream logs only
what its handler decoded) and the JSON answer only when the request's level needs them: at level None a request
costs its RequestInfo, one policy evaluation and an audit ID. :func:`install` adds the response hook that writes
the ``Audit-Id`` header and emits a watch's ``ResponseStarted`` when its headers go out.

Who a request is (:func:`requester_of`): the lab's control-plane token is ``system:kube-scheduler``; the lab's own
token, and any request to a lab that demands no token, is kind's ``kubernetes-admin``; an RBAC lab's token is its
user (in ``system:authenticated``); a request without credentials where those are allowed is ``system:anonymous`` in
``system:unauthenticated``. Its user agent is ``User-Agent`` (cut at 1024 bytes with ``...TRUNCATED``,
``maybeTruncateUserAgent`` in ``pkg/audit/request.go``), its source IPs ``utilnet.SourceIPs``
(``apimachinery/pkg/util/net/http.go``): each valid address of ``X-Forwarded-For``, then ``X-Real-Ip`` unless already
listed, then the peer's address unless it is the last one listed.
"""

from __future__ import annotations

import base64
import functools
import ipaddress
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from aiohttp import web

from observatory.lab import requestinfo, security
from observatory.lab.audit.auditor import LabAuditHandle, LabAuditor, UnauditedHandle
from observatory.lab.audit.identity import AUTHENTICATED, CLUSTER_ADMIN, KUBE_SCHEDULER
from observatory.lab.audit.types import AuditedRequest, Requester, UserInfo
from observatory.lab.request_body import RAW_BODY_KEY

if TYPE_CHECKING:
    from observatory.lab import rbac


class LabContext(Protocol):
    """What auditing needs of :class:`observatory.lab.api.LabContext`."""

    token: str | None
    rbac: rbac.Policy | None
    control_plane_token: str | None
    auditor: LabAuditor | None

__all__ = ["ANONYMOUS", "AUDIT_ID_HEADER", "audited", "install", "requester_of", "source_ips", "user_agent"]

AUDIT_ID_HEADER = "Audit-Id"
"""``auditinternal.HeaderAuditID`` (``Audit-ID``) as Go's ``Header.Set`` canonicalises it on the wire."""
ANONYMOUS = UserInfo("system:anonymous", ("system:unauthenticated",))
"""``user.Anonymous`` in ``user.AllUnauthenticated`` (``authentication/request/anonymous``)."""
MAX_USER_AGENT = 1024
TRUNCATED = "...TRUNCATED"
_NOBODY = UserInfo("")

HANDLE_KEY: web.RequestKey[LabAuditHandle | UnauditedHandle] = web.RequestKey(
    "observatory.lab.audit", object)  # type: ignore[arg-type]
AUDIT_ID_KEY: web.RequestKey[str] = web.RequestKey("observatory.lab.audit_id", str)


def user_agent(request: web.BaseRequest) -> str:
    """``maybeTruncateUserAgent``: the ``User-Agent``, cut to 1024 bytes plus ``...TRUNCATED`` when longer."""
    agent = request.headers.get("User-Agent", "")
    raw = agent.encode("utf-8", "surrogateescape")
    if len(raw) > MAX_USER_AGENT:
        return raw[:MAX_USER_AGENT].decode("utf-8", "replace") + TRUNCATED
    return agent


@functools.lru_cache(maxsize=1024)
def _ip(text: str) -> str | None:
    """``netutils.ParseIPSloppy`` then ``IP.String()``: an address in canonical form (an IPv4-mapped IPv6 address
    as IPv4; leading zeros of IPv4 parts accepted as decimal), None when it is not one."""
    text = text.strip()
    parts = text.split(".")
    if len(parts) == 4 and all(p.isdigit() and len(p) <= 3 for p in parts):
        text = ".".join(str(int(p)) for p in parts)
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


def source_ips(request: web.BaseRequest) -> tuple[str, ...]:
    """``utilnet.SourceIPs`` (module docstring), as strings."""
    found: list[str] = []
    forwarded = request.headers.get("X-Forwarded-For", "")
    if forwarded:
        found += [ip for ip in (_ip(part) for part in forwarded.split(",")) if ip]
    real = request.headers.get("X-Real-Ip", "")
    if real:
        ip = _ip(real)
        if ip and ip not in found:
            found.append(ip)
    remote = _ip(request.remote or "")
    if remote and (not found or found[-1] != remote):
        found.append(remote)
    return tuple(found)


def bearer_token(request: web.BaseRequest) -> str | None:
    """The bearer token of ``Authorization`` as :func:`observatory.lab.api.bearer_token` reads it (client-go's
    ``bearertoken`` authenticator: ``Bearer`` in any case, one space, a non-empty token), None without one."""
    parts = request.headers.get("Authorization", "").strip().split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


def requester_of(lab: LabContext, request: web.BaseRequest, authenticated: bool = True) -> Requester:
    """Who sent ``request`` (module docstring); the user is ``""`` when the request does not authenticate
    (``authenticated``: the lab's authentication let it through, as anonymous when it has no credentials)."""
    token = bearer_token(request)
    user = _NOBODY
    if not authenticated:
        pass
    elif lab.control_plane_token is not None and token is not None and security.tokens_equal(
            token, lab.control_plane_token):
        user = KUBE_SCHEDULER
    elif token is None and (lab.rbac is not None or lab.token is not None):
        user = ANONYMOUS
    elif lab.rbac is not None:
        assert token is not None
        found = lab.rbac.authenticate(token) if security.is_utf8(token) else None
        user = UserInfo(found.name, (AUTHENTICATED,)) if found is not None else _NOBODY
    elif lab.token is None or (token is not None and security.tokens_equal(token, lab.token)):
        user = CLUSTER_ADMIN
    return Requester(user, user_agent(request), source_ips(request))


def auth_methods(request: web.BaseRequest) -> str:
    """``getAuthMethods``: ``Authentication failed, attempted: basic, bearer, access_token`` (those tried), or
    ``Authentication failed, no credentials provided``."""
    methods = []
    header = request.headers.get("Authorization", "").strip()
    scheme, _, rest = header.partition(" ")
    if scheme.lower() == "basic":
        try:
            if b":" in base64.b64decode(rest.strip(), validate=True):
                methods.append("basic")
        except ValueError:
            pass
    parts = header.split(" ")
    if len(parts) > 1 and parts[0].lower() == "bearer":
        methods.append("bearer")
    if request.query.get("access_token", "").strip():
        methods.append("access_token")
    if methods:
        return "Authentication failed, attempted: " + ", ".join(methods)
    return "Authentication failed, no credentials provided"


@functools.lru_cache(maxsize=4096)
def _request_info(method: str, path: str, watch: str | None, field_selector: str) -> requestinfo.Attributes:
    """:func:`requestinfo.attributes` of the parts of a request it reads, cached: the lab's clients send the same
    few paths over and over (a pod's status, a node's lease, a list), and parsing one costs more than the rest of
    a request's audit at level None."""
    query = {"fieldSelector": field_selector} if watch is None else {"watch": watch, "fieldSelector": field_selector}
    return requestinfo.attributes(method, path, query)


def _audited_request(request: web.BaseRequest, requester: Requester, attrs: requestinfo.Attributes,
                     received: datetime, long_running: bool) -> AuditedRequest:
    return AuditedRequest(requester, attrs.verb, request.raw_path, resource=attrs.resource,
                          subresource=attrs.subresource, namespace=attrs.namespace, name=attrs.name,
                          api_group=attrs.group, api_version=attrs.version if attrs.resource_request else "",
                          received=received, long_running=long_running)


def _authorization(lab: LabContext, request: web.BaseRequest, requester: Requester,
                   attrs: requestinfo.Attributes) -> tuple[str, str]:
    """What ``WithAuthorization`` will decide, as its annotations: (decision, reason)."""
    if lab.rbac is None or requester.user in (KUBE_SCHEDULER, ANONYMOUS):
        return "allow", ""
    token = bearer_token(request)
    user = lab.rbac.authenticate(token) if token is not None else None
    grant = lab.rbac.grant(user, attrs) if user is not None else None
    return ("allow", grant.reason()) if grant is not None else ("forbid", "")


def _request_object(request: web.BaseRequest) -> Any:
    """The body the handler read, as JSON; None when it read none or it is not JSON (protobuf, YAML)."""
    raw = request.get(RAW_BODY_KEY)
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # nested too deep: the handler answered 400 and decoded nothing
        return None


def _response_object(response: web.StreamResponse, level: str) -> Any:
    """The JSON the handler answered, when the level records it (or it is a Status, whose fields every level
    records); None for a streamed or non-JSON answer."""
    if not isinstance(response, web.Response) or response.content_type != "application/json":
        return None
    body = response.body
    if not isinstance(body, bytes | bytearray):
        return None
    if level != "RequestResponse" and not body.startswith(b'{"kind":"Status"'):
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


async def audited(lab: LabContext, request: web.Request, serve: Callable[[], Awaitable[web.StreamResponse]], *,
                  authenticated: bool, long_running: bool) -> web.StreamResponse:
    """Serve ``request`` with ``serve`` (authentication, authorization, handler), audited (module docstring).
    ``authenticated``: whether the lab's authentication accepts the request; ``long_running``: a watch."""
    auditor = lab.auditor
    if auditor is None:
        return await serve()
    received = datetime.now(UTC)
    client_id = request.headers.get("Audit-ID", "")
    requester = requester_of(lab, request, authenticated)
    query = request.query
    attrs = _request_info(request.method, request.path, query.get("watch"), query.get("fieldSelector", ""))
    audited_request = _audited_request(request, requester, attrs, received, long_running)
    if not authenticated:
        audit_id = client_id or _new_id()
        request[AUDIT_ID_KEY] = audit_id
        auditor.failed_authentication(audited_request, 401, auth_methods(request), audit_id)
        return await serve()
    handle = auditor.begin(audited_request, client_id, attrs)
    request[AUDIT_ID_KEY] = handle.audit_id
    request[HANDLE_KEY] = handle
    if handle.level == "None":
        return await serve()
    decision, reason = _authorization(lab, request, requester, attrs)
    handle.annotate("authorization.k8s.io/decision", decision)
    handle.annotate("authorization.k8s.io/reason", reason)
    try:
        response = await serve()
    except BaseException:
        handle.finish(0)
        raise
    if decision == "allow" and request.method in ("POST", "PUT", "PATCH", "DELETE") and (
            handle.level != "Metadata" or attrs.verb in ("create", "update")):
        handle.log_request_object(_request_object(request), patch=request.method == "PATCH")
    handle.finish(response.status, _response_object(response, handle.level))
    return response


def _new_id() -> str:
    import uuid

    return str(uuid.uuid4())


async def _on_prepare(request: web.Request, response: web.StreamResponse) -> None:
    """As the response's headers go out: the ``Audit-Id`` header (unless the handler set one), and a long-running
    request's ``ResponseStarted``."""
    audit_id = request.get(AUDIT_ID_KEY)
    if audit_id is None:
        return
    if AUDIT_ID_HEADER not in response.headers:
        response.headers[AUDIT_ID_HEADER] = audit_id
    handle = request.get(HANDLE_KEY)
    if handle is not None and not isinstance(response, web.Response):
        handle.started(response.status)


def install(app: web.Application) -> None:
    """Add the response hook of :func:`audited` to ``app``."""
    app.on_response_prepare.append(_on_prepare)
