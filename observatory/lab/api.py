"""aiohttp routes of the lab: discovery, OpenAPI, CRUD, list/watch, status and binding under ``/api/v1``.

URL layout, verbs and error bodies follow kube-apiserver (reference §1-§3, §6). Every failure is a ``metav1.Status``
JSON body; an exception that is not a :class:`~observatory.lab.errors.StatusError` becomes 500 InternalError, never
a traceback on the wire. What the routes read from a request (body, negotiation, query parameters) lives in
:mod:`observatory.lab.request_body`; watch streams in :mod:`observatory.lab.watch`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

from aiohttp import web

from observatory.lab import (
    decoding,
    deleteoptions,
    errors,
    events_v1_api,
    faults,
    gohttp,
    openapi,
    printing,
    rbac,
    resources,
    security,
    subresources,
)
from observatory.lab.audit import http as audit_http
from observatory.lab.audit.auditor import LabAuditor
from observatory.lab.encoding import go_json, with_kind
from observatory.lab.listing import ListQuery, parse_query
from observatory.lab.registry import Registry
from observatory.lab.request_body import (
    JSON,
    _dry_run,
    _field_validation,
    _include_object,
    _int_param,
    _read_body,
    _read_raw,
    _sanitized_patch,
    _wants_table,
)
from observatory.lab.resources import CORE_V1, ResourceType
from observatory.lab.store import Store
from observatory.lab.validation import kinds
from observatory.lab.watch import serve_watch
from observatory.settings import LabSettings

log = logging.getLogger(__name__)


@dataclass
class LabContext:
    """What the routes need: the store and registry, settings, and the bearer token (None: no authentication)."""

    store: Store
    registry: Registry
    settings: LabSettings
    token: str | None = None
    server_address: str = ""
    rbac: rbac.Policy | None = None
    """The RBAC lab's users and rules (``LabSettings.rbac``); None: any authenticated request may do anything."""
    control_plane_token: str | None = None
    """The bearer token of the lab's own control-plane clients (its default-scheduler), which may do anything, as
    ``system:kube-scheduler`` may do what the scheduler needs on a real cluster. Every started lab has one, also a
    plain loopback lab that demands no token of anyone else (``token`` None); None only for a context built
    without one."""
    auditor: LabAuditor | None = None
    """The lab's audit pipeline (:mod:`observatory.lab.audit`); None: requests are not audited."""


CONTEXT_KEY = web.AppKey("lab", LabContext)


def json_response(obj: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.Response(body=go_json(obj), status=status, content_type=JSON, headers=headers)


def status_response(exc: errors.StatusError) -> web.Response:
    return json_response(exc.status, exc.code, exc.headers)


ANONYMOUS_PATHS = frozenset({"/healthz", "/livez", "/readyz"})
"""Paths a token lab serves without credentials: kube-apiserver with anonymous authentication limited to the health
checks (``AuthenticationConfiguration`` ``anonymous: {enabled: true, conditions: [{path: /livez}, {path: /readyz},
{path: /healthz}]}``, KEP-4633, stable in v1.34), the configuration the Kubernetes docs recommend."""


def bearer_token(request: web.Request) -> str | None:
    """The bearer token of ``Authorization``, or None when the request carries none, read as client-go's
    ``bearertoken`` authenticator does: ``Bearer`` in any case, then one space and the token; another scheme, or an
    empty token (``Bearer`` followed by two spaces), counts as no credentials. Bytes that are not UTF-8 stay in the
    token as surrogate escapes (aiohttp decodes headers with ``surrogateescape``); see :func:`security.token_bytes`."""
    parts = request.headers.get("Authorization", "").strip().split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


def authenticated(lab: LabContext, request: web.Request) -> bool:
    """Whether a request may go on when the lab demands ``lab.token``. As kube-apiserver's authentication chain
    (a union that fails on error, then anonymous): a wrong bearer token is rejected everywhere, and a request with
    no credentials only reaches :data:`ANONYMOUS_PATHS`. The control plane's own token is accepted in any lab that
    demands one (and is then authorized for everything: no user is attached to the request). A token that is not
    valid UTF-8 is a wrong token (no lab token has such bytes): 401 like any other, as Go compares raw bytes."""
    token = bearer_token(request)
    if lab.control_plane_token is not None and token is not None and security.tokens_equal(
            token, lab.control_plane_token):
        return True
    if lab.rbac is not None:  # the tokens of an RBAC lab's users (lab/rbac.py)
        if token is not None and not security.is_utf8(token):
            return False
        return rbac.authenticate(lab.rbac, request, token, ANONYMOUS_PATHS)
    if lab.token is None:
        return True
    if token is None:
        return request.path in ANONYMOUS_PATHS
    return security.tokens_equal(token, lab.token)


REQUEST_TIMEOUT = 60.0
"""kube-apiserver's ``--request-timeout`` default (1m0s) in seconds: how long a request that is not long-running
(a watch is) may take before ``WithTimeoutForNonLongRunningRequests`` answers 504."""


def request_timed_out() -> errors.StatusError:
    """504 as apiserver ``pkg/server/filters/timeout.go`` writes it: ``apierrors.NewTimeoutError("request did not
    complete within the allotted timeout", 0)``, so message ``Timeout: request did not complete within the allotted
    timeout``, reason Timeout, empty details."""
    return errors.StatusError(errors.status_failure(
        504, "Timeout", "Timeout: request did not complete within the allotted timeout", {}))


def _long_running(request: web.Request) -> bool:
    """Whether a request is long-running for the timeout filter: in the lab, a watch (``watch=1``/``true``)."""
    return request.method == "GET" and request.query.get("watch", "") in ("1", "true", "True")


def _aiohttp_refusal(exc: web.HTTPException) -> errors.StatusError:
    """The Status for an answer aiohttp's router or body reader raised: 404 and 405 as go-restful's
    ``serviceErrorHandler`` answers them, 413 as the apiserver's body limit, anything else with its code and text."""
    if exc.status == 404:
        return errors.path_not_found()
    if exc.status == 405:
        return errors.method_not_allowed()
    if exc.status == 413:
        return decoding.request_too_large()
    return errors.unknown(exc.reason or str(exc.status), exc.status)


@web.middleware
async def error_middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    """Go's connection-level checks, then authenticate, authorize and serve; every failure a Status.

    A request Go's ``net/http`` would refuse before any handler (:func:`gohttp.go_request_error`) gets Go's plain
    text. A request that fails authentication gets 401 with kube-apiserver's body (``apierrors.NewUnauthorized
    ("Unauthorized")`` written by the authentication filter; the body is upstream's, the API reference does not
    quote it): ``{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized",
    "reason":"Unauthorized","code":401}``. A request that is not a watch has :data:`REQUEST_TIMEOUT` seconds before it
    is answered 504 (:func:`request_timed_out`), a body that never arrives included. A StatusError becomes its
    Status; aiohttp's own 404/405/413 become the apiserver's Status for them; anything unexpected, the last resort,
    becomes 500 ``Internal error occurred: <err>`` (``apierrors.NewInternalError``) and is logged."""
    refusal = gohttp.go_request_error(request)
    if refusal is not None:
        return gohttp.write_refusal(request.protocol, refusal)
    lab = request.app[CONTEXT_KEY]
    # audited as kube-apiserver's chain: WithAuditInit, authentication, WithAudit, authorization (lab/audit/http.py)
    return await audit_http.audited(lab, request, partial(_served, lab, request, handler),
                                    authenticated=authenticated(lab, request), long_running=_long_running(request))


async def _served(lab: LabContext, request: web.Request, handler: Any) -> web.StreamResponse:
    """:func:`error_middleware` after Go's connection-level checks: authenticate, authorize and serve."""
    try:
        if not authenticated(lab, request):
            return status_response(errors.unauthorized())
        if lab.rbac is not None:
            rbac.authorize(lab.rbac, request)  # 403 Forbidden for what the user may not do (lab/rbac.py)
        if _long_running(request):
            return await handler(request)
        try:
            async with asyncio.timeout(REQUEST_TIMEOUT):
                return await handler(request)
        except TimeoutError:
            if request.writer.output_size:
                raise  # the answer has started: the connection is dropped, as Go aborts the handler
            return status_response(request_timed_out())
    except errors.StatusError as exc:
        return status_response(exc)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return status_response(_aiohttp_refusal(exc))
    except (ConnectionResetError, asyncio.CancelledError):
        raise
    except Exception as exc:
        log.exception("internal error serving %s %s", request.method, request.path)
        return status_response(errors.internal_error(str(exc) or type(exc).__name__))


# -- discovery and openapi -----------------------------------------------------------------------------------------


async def get_health(request: web.Request) -> web.Response:
    """``/healthz``, ``/livez``, ``/readyz``: plain ``ok`` as kube-apiserver's health checks answer."""
    return web.Response(text="ok", content_type="text/plain", charset="utf-8")


async def get_version(request: web.Request) -> web.Response:
    return json_response(resources.version_info())


async def get_api(request: web.Request) -> web.Response:
    return json_response(resources.api_versions(request.app[CONTEXT_KEY].server_address or request.host))


async def get_apis(request: web.Request) -> web.Response:
    return json_response(resources.api_group_list())


async def get_core_v1_discovery(request: web.Request) -> web.Response:
    return json_response(resources.api_resource_list())


async def get_openapi_v3(request: web.Request) -> web.Response:
    return json_response(openapi.openapi_v3_root(openapi.openapi_v3_hash()))


async def get_openapi_v3_core(request: web.Request) -> web.Response:
    return web.Response(body=openapi.openapi_v3_core_v1(), content_type=JSON)


async def get_openapi_v2(request: web.Request) -> web.Response:
    """kubectl falls back to v2 (protobuf) to validate kinds that have no PATCH operation, such as Binding."""
    return web.Response(body=openapi.openapi_v2_protobuf(),
                        headers={"Content-Type": openapi.OPENAPI_V2_CONTENT_TYPE})


# -- object responses ----------------------------------------------------------------------------------------------


def _object_response(rt: ResourceType, obj: dict[str, Any], status: int = 200, *, table: bool = False,
                     include_object: str = "Metadata", headers: Mapping[str, str] | None = None) -> web.Response:
    if table:
        return json_response(
            printing.table(rt.name, [obj], datetime.now(UTC),
                           resource_version=obj["metadata"].get("resourceVersion", ""),
                           include_object=include_object, kind=rt.kind, api_version=rt.api_version),
            status,
        )
    return json_response(with_kind(obj, rt.kind, rt.api_version), status, headers)


# -- resource routing ----------------------------------------------------------------------------------------------


async def core_v1(request: web.Request) -> web.StreamResponse:
    """``/api/v1/...``: the core group."""
    return await _dispatch(request, CORE_V1, request.match_info["tail"])


async def named_group(request: web.Request) -> web.StreamResponse:
    """``/apis/<group>/<version>[/...]``: discovery of a named group version, or one of its resources."""
    group_version = f"{request.match_info['group']}/{request.match_info['version']}"
    table = resources.GROUP_VERSIONS.get(group_version)
    if table is None:
        raise errors.path_not_found()
    tail = request.match_info.get("tail", "")
    if not tail.strip("/"):
        if request.method != "GET":
            raise errors.method_not_allowed()
        return json_response(resources.group_resource_list(group_version))
    if group_version == events_v1_api.RT.api_version:
        return await events_v1_api.dispatch(request, request.app[CONTEXT_KEY], tail)
    return await _dispatch(request, table, tail)


async def get_group(request: web.Request) -> web.Response:
    """``/apis/<group>``: APIGroup."""
    group = request.match_info["group"]
    for gv in resources.GROUP_VERSIONS:
        if gv.split("/")[0] == group:
            return json_response({"kind": "APIGroup", "apiVersion": "v1", **resources.api_group(gv)})
    raise errors.path_not_found()


async def _dispatch(request: web.Request, table: Mapping[str, ResourceType], tail: str) -> web.StreamResponse:
    """Route a resource path the way go-restful's routes would: collection, object or subresource."""
    parts = [p for p in tail.split("/") if p]
    namespace: str | None = None
    ns_sub = len(parts) == 3 and parts[0] == "namespaces" and parts[2] in table["namespaces"].subresources \
        if "namespaces" in table else False
    if len(parts) >= 3 and parts[0] == "namespaces" and not ns_sub:
        namespace, parts = parts[1], parts[2:]
    if not parts:
        raise errors.path_not_found()
    name = parts[1] if len(parts) > 1 else None
    sub = parts[2] if len(parts) > 2 else ""
    if len(parts) > 3:
        raise errors.path_not_found()
    lab = request.app[CONTEXT_KEY]
    if table is CORE_V1 and namespace is not None and parts[0] == "bindings" and name is None:
        if request.method != "POST":
            raise errors.method_not_allowed()
        body = await _read_body(request, "Binding")
        return json_response(lab.registry.bind(namespace, None, body, dry_run=_dry_run(request)), 201)
    rt = table.get(parts[0])
    if rt is None or (namespace is not None and not rt.namespaced):
        raise errors.path_not_found()
    if name is not None and rt.namespaced and namespace is None:
        raise errors.path_not_found()
    if sub and sub not in rt.subresources:
        raise errors.path_not_found()
    ns = namespace or ""
    if name is None:
        return await _collection(request, lab, rt, namespace)
    if sub == "binding":
        if request.method != "POST":
            raise errors.method_not_allowed()
        body = await _read_body(request, "Binding")
        return json_response(lab.registry.bind(ns, name, body, dry_run=_dry_run(request)), 201)
    if sub and sub != "status":
        handler = subresources.HANDLERS.get((rt.name, sub))
        if handler is None:
            raise errors.path_not_found()
        return await handler(request, lab.registry, rt, ns, name)
    return await _item(request, lab, rt, ns, name, sub)


async def _collection(
    request: web.Request, lab: LabContext, rt: ResourceType, namespace: str | None
) -> web.StreamResponse:
    if request.method == "GET":
        query = parse_query(rt, namespace, dict(request.query))
        if query.watch:  # ListOptions.watch: anything but 0/false (listoptions.go_bool)
            return await serve_watch(request, lab, rt, query)
        page = lab.registry.list(rt, query)
        if _wants_table(request):
            return json_response(printing.table(
                rt.name, page.items, datetime.now(UTC), resource_version=page.resource_version,
                continue_token=page.continue_token, remaining=page.remaining,
                include_object=_include_object(request), kind=rt.kind, api_version=rt.api_version,
            ))
        meta: dict[str, Any] = {"resourceVersion": page.resource_version}
        if page.continue_token:
            meta["continue"] = page.continue_token
        if page.remaining is not None:
            meta["remainingItemCount"] = page.remaining
        return json_response({"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta,
                              "items": page.items})
    if request.method == "POST":
        if "create" not in rt.verbs:
            raise errors.method_not_supported(rt.group_resource, "create")
        body = await _read_body(request, rt.kind)
        headers = _field_validation(request, rt.kind, body)
        obj = lab.registry.create(rt, namespace or "", body, dry_run=_dry_run(request))
        return _object_response(rt, obj, 201, headers=headers)
    if request.method == "DELETE" and "deletecollection" in rt.verbs:
        query = parse_query(rt, namespace, dict(request.query))
        page = lab.registry.list(rt, ListQuery(query.namespace, query.field_selector, query.label_selector))
        dry = _dry_run(request)
        deleted = [lab.registry.delete(rt, o["metadata"].get("namespace", ""), o["metadata"]["name"], dry_run=dry)
                   for o in page.items]
        return json_response({"kind": rt.list_kind, "apiVersion": rt.api_version,
                              "metadata": {"resourceVersion": str(lab.store.resource_version)}, "items": deleted})
    raise errors.method_not_allowed()


async def _item(
    request: web.Request, lab: LabContext, rt: ResourceType, ns: str, name: str, sub: str
) -> web.StreamResponse:
    registry = lab.registry
    method = request.method
    if method == "GET":
        fsel = request.query.get("fieldSelector", "")
        if fsel:
            query = parse_query(rt, ns or None, {"fieldSelector": fsel})
            wanted = query.field_selector.value_for("metadata.name") if query.field_selector else None
            if wanted is not None and wanted != name:
                raise errors.bad_request("fieldSelector metadata.name doesn't match requested name")
        return _object_response(rt, registry.get(rt, ns, name), table=_wants_table(request) and not sub,
                                include_object=_include_object(request))
    if method == "PUT":
        body = await _read_body(request, rt.kind)
        kinds.check_name(body, name, ns)  # the update handler's checkName: a body without a name is a 400
        headers = _field_validation(request, rt.kind, body)
        update = registry.update_status if sub == "status" else registry.update
        return _object_response(rt, update(rt, ns, name, body, dry_run=_dry_run(request)), headers=headers)
    if method == "PATCH":
        raw = _sanitized_patch(await _read_raw(request))
        obj = registry.patch(rt, ns, name, request.content_type, raw, subresource=sub, dry_run=_dry_run(request))
        return _object_response(rt, obj)
    if method == "DELETE" and not sub:
        options = deleteoptions.decode(request.content_type, await _read_raw(request))
        grace = options.get("gracePeriodSeconds", _int_param(request, "gracePeriodSeconds"))
        if grace is not None and not isinstance(grace, int):
            raise errors.bad_request("DeleteOptions: gracePeriodSeconds must be an integer")
        preconditions = options.get("preconditions") or {}
        if not isinstance(preconditions, dict):
            raise errors.bad_request("DeleteOptions: preconditions must be an object")
        propagation = options.get("propagationPolicy") or request.query.get("propagationPolicy") or None
        obj = registry.delete(rt, ns, name, dry_run=_dry_run(request, options), preconditions=preconditions,
                              grace_period=grace, propagation_policy=propagation)
        return _object_response(rt, obj)
    raise errors.method_not_allowed()


async def self_subject_access_review(request: web.Request) -> web.Response:
    """``POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews`` (see :mod:`observatory.lab.rbac`)."""
    return await rbac.self_subject_access_review(request, request.app[CONTEXT_KEY].rbac, _read_body)


async def not_found(request: web.Request) -> web.Response:
    raise errors.path_not_found()


def build_app(lab: LabContext) -> web.Application:
    """The aiohttp application serving the lab's API for ``lab``."""
    app = web.Application(middlewares=[error_middleware], client_max_size=decoding.MAX_BODY_BYTES + 1)
    app[CONTEXT_KEY] = lab
    routes: list[tuple[str, str, Callable[[web.Request], Awaitable[web.StreamResponse]]]] = [
        (health, "GET", get_health) for health in ("/healthz", "/livez", "/readyz")]
    routes += [
        ("/version", "GET", get_version), ("/version/", "GET", get_version),
        ("/api", "GET", get_api), ("/api/", "GET", get_api), ("/apis", "GET", get_apis), ("/apis/", "GET", get_apis),
        ("/api/v1", "GET", get_core_v1_discovery), ("/api/v1/", "GET", get_core_v1_discovery),
        ("/openapi/v3", "GET", get_openapi_v3), ("/openapi/v3/api/v1", "GET", get_openapi_v3_core),
        ("/openapi/v2", "GET", get_openapi_v2),
        ("/api/v1/{tail:.+}", "*", core_v1), (rbac.SSAR_PATH, "*", self_subject_access_review),
        ("/apis/{group}", "GET", get_group), ("/apis/{group}/", "GET", get_group),
        ("/apis/{group}/{version}", "*", named_group), ("/apis/{group}/{version}/{tail:.*}", "*", named_group),
    ]
    for path, method, handler in routes:  # Expect handled as Go's net/http does (lab/gohttp.py); GET serves HEAD
        add = app.router.add_get if method == "GET" else partial(app.router.add_route, method)
        add(path, handler, expect_handler=gohttp.expect_handler)
    faults.install(app, lab.store)  # /lab/faults and its middleware (lab/faults.py), before the catch-all
    audit_http.install(app)  # the Audit-Id header and a watch's ResponseStarted (lab/audit/http.py)
    app.router.add_route("*", "/{tail:.*}", not_found, expect_handler=gohttp.expect_handler)
    return app
