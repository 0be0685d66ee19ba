"""Routes of ``/apis/events.k8s.io/v1``: the core/v1 events storage served through the events.k8s.io/v1 schema.

``/apis/events.k8s.io/v1/events`` (list, watch) and ``/apis/events.k8s.io/v1/namespaces/{ns}/events[/{name}]``
(create, list, watch, deletecollection; get, update, patch, delete), as kube-apiserver serves the group: the same
objects, resourceVersions and watch fan-out as ``/api/v1/.../events`` (a write through either group reaches the
watchers of both), bodies converted by :mod:`observatory.lab.events_v1`, create and update validated as
``ValidateEventCreate``/``ValidateEventUpdate`` do for this group, field selectors through the group's label
conversion, errors on the group resource ``events.events.k8s.io``. Tables are core events' (``printEvent`` prints
the internal type both groups share). Called from :func:`observatory.lab.api.named_group`.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aiohttp import web
from multidict import CIMultiDict

from observatory.lab import (
    deleteoptions,
    errors,
    events_v1,
    patch,
    printing,
    schema,
    selectors,
    strategicpatch,
    strategy,
)
from observatory.lab.encoding import go_json
from observatory.lab.listing import ListQuery, parse_query
from observatory.lab.registry import Registry
from observatory.lab.request_body import (
    JSON,
    _dry_run,
    _include_object,
    _int_param,
    _read_body,
    _read_raw,
    _sanitized_patch,
    _wants_table,
)
from observatory.lab.resources import CORE_V1, EVENTS_V1
from observatory.lab.watch import serve_watch

if TYPE_CHECKING:
    from observatory.lab.api import LabContext

RT = EVENTS_V1["events"]
"""events.k8s.io/v1 events: store key ``events`` (shared with core/v1), group resource ``events.events.k8s.io``."""

_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json",
                "application/strategic-merge-patch+json")


def _json(obj: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.Response(body=go_json(obj), status=status, content_type=JSON, headers=headers)


async def dispatch(request: web.Request, lab: LabContext, tail: str) -> web.StreamResponse:
    """Route ``/apis/events.k8s.io/v1/<tail>``: ``events``, ``namespaces/{ns}/events`` or ``.../events/{name}``;
    anything else is 404 (the group has no other resource and events no subresource)."""
    parts = [p for p in tail.split("/") if p]
    namespace: str | None = None
    if len(parts) >= 3 and parts[0] == "namespaces":
        namespace, parts = parts[1], parts[2:]
    if not parts or parts[0] != RT.name or len(parts) > 2:
        raise errors.path_not_found()
    if len(parts) == 2:
        if namespace is None:
            raise errors.path_not_found()
        return await _item(request, lab, namespace, parts[1])
    return await _collection(request, lab, namespace)


def list_query(namespace: str | None, params: Mapping[str, str]) -> ListQuery:
    """``ListOptions`` for the group: the core parsing, with the field selector through :data:`events_v1.FIELD_LABELS`
    (400 ``field label not supported: <label>`` for any other label)."""
    base = parse_query(CORE_V1["events"], namespace, {**params, "fieldSelector": ""})
    try:
        fsel = events_v1.convert_field_selector(selectors.parse_field_selector(params.get("fieldSelector", "")))
    except selectors.SelectorError as exc:
        raise errors.bad_request(str(exc)) from None
    return dataclasses.replace(base, field_selector=fsel)


def _table(objs: list[dict[str, Any]], request: web.Request, **meta: Any) -> dict[str, Any]:
    return printing.table(RT.name, objs, datetime.now(UTC), include_object=_include_object(request), kind=RT.kind,
                          api_version=RT.api_version, to_object=events_v1.wire, **meta)


def _object(obj: dict[str, Any], request: web.Request, status: int = 200,
            headers: Mapping[str, str] | None = None) -> web.Response:
    if _wants_table(request):
        return _json(_table([obj], request, resource_version=obj["metadata"].get("resourceVersion", "")), status)
    return _json(events_v1.wire(obj), status, headers)


def _list(items: list[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    return {"kind": RT.list_kind, "apiVersion": RT.api_version, "metadata": meta,
            "items": [events_v1.from_core(o) for o in items]}


async def _collection(request: web.Request, lab: LabContext, namespace: str | None) -> web.StreamResponse:
    registry = lab.registry
    if request.method == "GET":
        query = list_query(namespace, request.query)
        if query.watch:  # ListOptions.watch: anything but 0/false (listoptions.go_bool)
            return await serve_watch(request, lab, RT, query, wire=events_v1.wire)
        page = registry.list(RT, query)
        if _wants_table(request):
            return _json(_table(page.items, request, resource_version=page.resource_version,
                                continue_token=page.continue_token, remaining=page.remaining))
        meta: dict[str, Any] = {"resourceVersion": page.resource_version}
        if page.continue_token:
            meta["continue"] = page.continue_token
        if page.remaining is not None:
            meta["remainingItemCount"] = page.remaining
        return _json(_list(page.items, meta))
    if namespace is None:
        raise errors.method_not_allowed()  # the all-namespaces path only lists and watches
    if request.method == "POST":
        body, headers = await _decode(request)
        obj = create(registry, namespace, body, dry_run=_dry_run(request))
        return _object(obj, request, 201, headers)
    if request.method == "DELETE":
        query = list_query(namespace, request.query)
        page = registry.list(RT, ListQuery(query.namespace, query.field_selector, query.label_selector))
        dry = _dry_run(request)
        deleted = [registry.delete(RT, namespace, o["metadata"]["name"], dry_run=dry) for o in page.items]
        return _json(_list(deleted, {"resourceVersion": str(lab.store.resource_version)}))
    raise errors.method_not_allowed()


async def _decode(request: web.Request) -> tuple[dict[str, Any], CIMultiDict[str]]:
    """The request body as create and update read it: the decoder's checks (apiVersion, types), then
    ``fieldValidation`` against the events.k8s.io/v1 schema. Returns the body and any ``Warning`` headers."""
    body = await _read_body(request, RT.kind)
    check_decodable(body)
    return body, _field_validation(request, body)


def check_decodable(body: dict[str, Any]) -> None:
    """400 BadRequest as the create/update handlers answer: a body of another group version (``the API version in
    the data (v1) does not match the expected API version (events.k8s.io/v1)``), or JSON types that do not
    decode (:func:`events_v1.type_error`)."""
    api_version = body.get("apiVersion")
    if isinstance(api_version, str) and api_version and api_version != RT.api_version:
        raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected API "
                                 f"version ({RT.api_version})")
    message = events_v1.type_error(body)
    if message is not None:
        raise errors.bad_request(message)


def _field_validation(request: web.Request, body: dict[str, Any]) -> CIMultiDict[str]:
    """``fieldValidation`` with the events.k8s.io/v1 schema: Strict 400, Warn ``Warning`` headers, else nothing."""
    mode = request.query.get("fieldValidation", "")
    if mode not in ("", "Ignore", "Warn", "Strict"):
        raise errors.bad_request(f"fieldValidation parameter unsupported: {mode}")
    headers: CIMultiDict[str] = CIMultiDict()
    if mode not in ("Warn", "Strict"):
        return headers
    unknown = events_v1.unknown_fields(body)
    if unknown and mode == "Strict":
        raise errors.bad_request(schema.strict_decoding_message(RT.kind, unknown))
    for text in schema.warning_texts(unknown):
        escaped = text.replace("\\", "\\\\").replace('"', '\\"')
        headers.add("Warning", f'299 - "{escaped}"')
    return headers


def invalid(name: str, causes: list[events_v1.Cause]) -> errors.StatusError:
    """422 on ``Event.events.k8s.io`` as ``NewInvalid`` builds it (:func:`observatory.lab.errors.invalid`)."""
    return errors.invalid(RT.kind, name, causes, RT.group)


def create(registry: Registry, namespace: str, body: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
    """Create an Event from an events.k8s.io/v1 body (already decoded and checked); returns the stored core form.

    Order as the generic store: namespace match (400), generateName, ``ValidateEventCreate`` (422 on
    ``Event.events.k8s.io``), the namespace must exist (404), name taken (409 ``events.events.k8s.io "x" already
    exists``).
    """
    core = events_v1.to_core(copy.deepcopy(body))
    Registry._ensure_namespace(RT, core, namespace)
    meta = core["metadata"]
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = strategy.generate_name(meta["generateName"])
    causes = events_v1.validate_create(core)
    if causes:
        raise invalid(meta.get("name", ""), causes)
    try:
        return registry.create(RT, namespace, core, dry_run=dry_run)
    except errors.StatusError as exc:
        if exc.reason == "AlreadyExists":
            raise errors.already_exists(RT.group_resource, meta["name"]) from None
        raise


def update(registry: Registry, namespace: str, name: str, body: dict[str, Any], *,
           dry_run: bool = False) -> tuple[dict[str, Any], int]:
    """PUT an events.k8s.io/v1 body: ``ValidateEventUpdate`` against the stored event (422), then the core update
    (optimistic on ``metadata.resourceVersion`` when given). A missing event is created (events'
    ``AllowCreateOnUpdate``). Returns the stored core form and the status code (200, or 201 when created)."""
    if registry.store.get(RT.name, namespace, name) is None:
        body = copy.deepcopy(body)
        meta = body.setdefault("metadata", {})
        if meta.get("name") and meta["name"] != name:
            raise errors.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL "
                                     f"({name})")
        meta["name"] = name
        return create(registry, namespace, body, dry_run=dry_run), 201
    old = registry.get(RT, namespace, name)
    core = events_v1.to_core(copy.deepcopy(body))
    Registry._ensure_namespace(RT, core, namespace)
    core["metadata"].setdefault("name", name)
    causes = events_v1.validate_update(core, old)
    if causes:
        raise invalid(name, causes)
    return registry.update(RT, namespace, name, core, dry_run=dry_run), 200


def patched_body(old: dict[str, Any], content_type: str, raw: bytes) -> dict[str, Any]:
    """The events.k8s.io/v1 view of ``old`` with a JSON, merge or strategic merge patch applied (no patch
    strategies in this schema beyond ObjectMeta's); 415 for another patch type, the patch's own 400/422 errors."""
    current = events_v1.wire(old)
    try:
        if content_type == "application/json-patch+json":
            result = patch.json_patch(current, raw)
        elif content_type == "application/merge-patch+json":
            result = patch.json_merge_patch(current, raw)
        elif content_type == "application/strategic-merge-patch+json":
            result = strategicpatch.strategic_merge_patch(current, raw, "events.k8s.io/Event")
        else:
            raise errors.unsupported_media_type(", ".join(_PATCH_TYPES))
    except patch.PatchError as exc:
        raise exc.status_error() from None
    if not isinstance(result, dict):
        raise errors.bad_request("patched object is not a JSON object")
    if not isinstance(result.get("metadata"), dict):
        result["metadata"] = {}
    return result


async def _item(request: web.Request, lab: LabContext, namespace: str, name: str) -> web.StreamResponse:
    registry, method = lab.registry, request.method
    if method == "GET":
        fsel = request.query.get("fieldSelector", "")
        if fsel:
            query = list_query(namespace, {"fieldSelector": fsel})
            wanted = query.field_selector.value_for("metadata.name") if query.field_selector else None
            if wanted is not None and wanted != name:
                raise errors.bad_request("fieldSelector metadata.name doesn't match requested name")
        return _object(registry.get(RT, namespace, name), request)
    if method == "PUT":
        body, headers = await _decode(request)
        obj, status = update(registry, namespace, name, body, dry_run=_dry_run(request))
        return _object(obj, request, status, headers)
    if method == "PATCH":
        raw = _sanitized_patch(await _read_raw(request))
        old = registry.get(RT, namespace, name)
        body = patched_body(old, request.content_type, raw)
        check_decodable(body)
        meta = body["metadata"]
        meta["name"], meta["namespace"] = name, namespace
        if meta.get("uid") and meta["uid"] != old["metadata"].get("uid"):
            raise errors.conflict(RT.group_resource, name, f"Precondition failed: UID in precondition: "
                                  f"{meta['uid']}, UID in object meta: {old['metadata'].get('uid')}")
        obj, _ = update(registry, namespace, name, body, dry_run=_dry_run(request))
        return _object(obj, request)
    if method == "DELETE":
        options = deleteoptions.decode(request.content_type, await _read_raw(request))
        preconditions = options.get("preconditions") or {}
        if not isinstance(preconditions, dict):
            raise errors.bad_request("DeleteOptions: preconditions must be an object")
        grace = options.get("gracePeriodSeconds", _int_param(request, "gracePeriodSeconds"))
        obj = registry.delete(RT, namespace, name, dry_run=_dry_run(request, options), preconditions=preconditions,
                              grace_period=grace if isinstance(grace, int) else None)
        return _object(obj, request)
    raise errors.method_not_allowed()


__all__ = ["RT", "check_decodable", "create", "dispatch", "list_query", "patched_body", "update"]
