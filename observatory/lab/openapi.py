"""OpenAPI v3 for the lab's core/v1 subset, enough for kubectl v1.32 server-side field validation and apply.

What kubectl reads (client-go ``openapi/client.go``, ``openapi/groupversion.go``, ``openapi3/root.go``;
cli-runtime ``pkg/resource/query_param_verifier_v3.go``; kubectl ``pkg/cmd/apply/patcher.go``):

1. ``GET /openapi/v3`` -> :func:`openapi_v3_root`: ``{"paths": {"api/v1": {"serverRelativeURL": ...}}}``.
   Only ``api/<v>`` and ``apis/<g>/<v>`` keys are used; a URL starting ``/openapi/v3`` is re-requested with
   its query (``?hash=``) as params.
2. ``GET /openapi/v3/api/v1?hash=<HASH>`` with ``Accept: application/json`` -> :func:`openapi_v3_core_v1`.
3. Field validation (``kubectl create/apply -f``, default ``--validate=strict``): for the body's GVK kubectl
   looks for a ``patch`` operation whose *operation-level* ``x-kubernetes-group-version-kind`` (an object) is
   that GVK and checks that its *operation* ``parameters`` contain ``fieldValidation``. Found -> no client-side
   validation, the request carries ``?fieldValidation=Strict``. A GVK with no PATCH operation (Binding) is
   "unsupported" -> kubectl falls back to client-side validation against ``/openapi/v2``.
4. ``kubectl apply`` on an existing object: the PATCH operation's ``requestBody.content`` must have
   ``application/strategic-merge-patch+json``; then the component schema whose
   ``x-kubernetes-group-version-kind`` (a *list*) contains the GVK drives the three-way strategic merge patch
   (``strategicpatch.PatchMetaFromOpenAPIV3``: properties, ``allOf[0].$ref``, ``items``,
   ``x-kubernetes-patch-strategy``/``-merge-key``). A field missing from the schema prints
   ``warning: error calculating patch from openapi v3 spec: unable to find api field "..."``.

Component schemas are generated from kubernetes_asyncio's models (as :mod:`observatory.lab.schema` reads them from
its data file) with the upstream definition names. The document is built once and cached as bytes;
:func:`openapi_v3_hash` is the upper-case hex SHA-512 of those bytes, as the real server uses for ``?hash=`` and
(quoted) for ``ETag``.

``/openapi/v2`` is only needed for kinds without a PATCH operation (``kubectl create -f`` of a Binding):
kubectl then validates client-side and ``GET /openapi/v2`` with ``Accept:
application/com.github.proto-openapi.spec.v2@v1.0+protobuf``; a 404 fails the command with ``error validating
data: failed to download openapi: ...``. :func:`openapi_v2_protobuf` is a minimal valid gnostic Document with no
definitions, so kubectl finds no schema for the GVK and skips client-side validation (the server's own
``fieldValidation=Strict`` check still applies).
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from observatory.lab import schema

__all__ = ["OPENAPI_V2_CONTENT_TYPE", "openapi_v2_protobuf", "openapi_v3_core_v1", "openapi_v3_core_v1_dict",
           "openapi_v3_hash", "openapi_v3_root"]

K8S_VERSION = "v1.34.1"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_REF = "#/components/schemas/"

_ROOTS = ("V1Pod", "V1PodList", "V1Node", "V1NodeList", "V1Namespace", "V1NamespaceList", "CoreV1Event",
          "CoreV1EventList", "V1Binding", "V1DeleteOptions", "V1Status", "V1WatchEvent",
          "V1PersistentVolumeClaim", "V1PersistentVolumeClaimList", "V1PersistentVolume", "V1PersistentVolumeList")
_KINDS = {"V1Pod": "Pod", "V1PodList": "PodList", "V1Node": "Node", "V1NodeList": "NodeList",
          "V1Namespace": "Namespace", "V1NamespaceList": "NamespaceList", "CoreV1Event": "Event",
          "CoreV1EventList": "EventList", "V1Binding": "Binding", "V1DeleteOptions": "DeleteOptions",
          "V1Status": "Status", "V1WatchEvent": "WatchEvent",
          "V1PersistentVolumeClaim": "PersistentVolumeClaim",
          "V1PersistentVolumeClaimList": "PersistentVolumeClaimList",
          "V1PersistentVolume": "PersistentVolume", "V1PersistentVolumeList": "PersistentVolumeList"}

# Type descriptions (k8s.io/api core/v1 swagger docs); the generated models carry only field descriptions.
_KIND_DOCS = {
    "V1Pod": "Pod is a collection of containers that can run on a host. This resource is created by clients and "
             "scheduled onto hosts.",
    "V1Node": "Node is a worker node in Kubernetes. Each node will have a unique identifier in the cache (i.e. in "
              "etcd).",
    "V1Namespace": "Namespace provides a scope for Names. Use of multiple namespaces is optional.",
    "CoreV1Event": "Event is a report of an event somewhere in the cluster.  Events have a limited retention time "
                   "and triggers and messages may evolve with time.  Event consumers should not rely on the timing "
                   "of an event with a given Reason reflecting a consistent underlying trigger, or the continued "
                   "existence of events with that Reason.  Events should be treated as informative, best-effort, "
                   "supplemental data.",
    "V1Binding": "Binding ties one object to another; for example, a pod is bound to a node by a scheduler.",
    "V1PersistentVolumeClaim": "PersistentVolumeClaim is a user's request for and claim to a persistent volume",
    "V1PersistentVolume": "PersistentVolume (PV) is a storage resource provisioned by an administrator. It is "
                          "analogous to a node. More info: "
                          "https://kubernetes.io/docs/concepts/storage/persistent-volumes",
}

# Fields whose generated type ('str', 'dict(str, str)', 'datetime', 'object') stands for a named upstream type.
_QUANTITY_MAPS = {("V1ResourceRequirements", "limits"), ("V1ResourceRequirements", "requests"),
                  ("V1VolumeResourceRequirements", "limits"), ("V1VolumeResourceRequirements", "requests"),
                  ("V1NodeStatus", "allocatable"), ("V1NodeStatus", "capacity"), ("V1PodSpec", "overhead"),
                  ("V1PodStatus", "allocatedResources"), ("V1ContainerStatus", "allocatedResources"),
                  ("V1NodeAllocatableResourceClaimStatus", "resources"), ("V1PersistentVolumeSpec", "capacity"),
                  ("V1PersistentVolumeClaimStatus", "capacity"),
                  ("V1PersistentVolumeClaimStatus", "allocatedResources")}
_QUANTITIES = {("V1EmptyDirVolumeSource", "sizeLimit"), ("V1ResourceFieldSelector", "divisor")}
_MICRO_TIMES = {("CoreV1Event", "eventTime"), ("CoreV1EventSeries", "lastObservedTime")}
_OBJECT_REFS = {("V1HTTPGetAction", "port"): "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
                ("V1TCPSocketAction", "port"): "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
                ("V1ManagedFieldsEntry", "fieldsV1"): _META + "FieldsV1",
                ("V1WatchEvent", "object"): "io.k8s.apimachinery.pkg.runtime.RawExtension"}

# Strategic-merge metadata from the k8s.io/api struct tags: (model, field) -> (strategy, merge key, map keys).
_PATCH: dict[tuple[str, str], tuple[str, str, tuple[str, ...]]] = {
    ("V1ObjectMeta", "ownerReferences"): ("merge", "uid", ("uid",)),
    ("V1ObjectMeta", "finalizers"): ("merge", "", ()),
    ("V1PodSpec", "volumes"): ("merge,retainKeys", "name", ("name",)),
    ("V1PodSpec", "initContainers"): ("merge", "name", ("name",)),
    ("V1PodSpec", "containers"): ("merge", "name", ("name",)),
    ("V1PodSpec", "ephemeralContainers"): ("merge", "name", ("name",)),
    ("V1PodSpec", "imagePullSecrets"): ("merge", "name", ("name",)),
    ("V1PodSpec", "hostAliases"): ("merge", "ip", ("ip",)),
    ("V1PodSpec", "topologySpreadConstraints"): ("merge", "topologyKey", ("topologyKey", "whenUnsatisfiable")),
    ("V1PodSpec", "schedulingGates"): ("merge", "name", ("name",)),
    ("V1PodSpec", "resourceClaims"): ("merge,retainKeys", "name", ("name",)),
    ("V1PodStatus", "conditions"): ("merge", "type", ("type",)),
    ("V1PodStatus", "podIPs"): ("merge", "ip", ("ip",)),
    ("V1PodStatus", "hostIPs"): ("merge", "ip", ()),
    ("V1PodStatus", "resourceClaimStatuses"): ("merge,retainKeys", "name", ("name",)),
    ("V1NodeSpec", "podCIDRs"): ("merge", "", ()),
    ("V1NodeStatus", "conditions"): ("merge", "type", ("type",)),
    ("V1NodeStatus", "addresses"): ("merge", "type", ("type",)),
    ("V1NamespaceStatus", "conditions"): ("merge", "type", ("type",)),
    ("V1PersistentVolumeClaimStatus", "conditions"): ("merge", "type", ("type",)),
}
for _c in ("V1Container", "V1EphemeralContainer"):
    _PATCH[(_c, "ports")] = ("merge", "containerPort", ("containerPort", "protocol"))
    _PATCH[(_c, "env")] = ("merge", "name", ("name",))
    _PATCH[(_c, "volumeMounts")] = ("merge", "mountPath", ("mountPath",))
    _PATCH[(_c, "volumeDevices")] = ("merge", "devicePath", ("devicePath",))

_SCALARS = {"str": {"type": "string"}, "int": {"type": "integer"}, "bool": {"type": "boolean"},
            "float": {"type": "number"}}

_FIXED: dict[str, dict[str, Any]] = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {
        "description": "Quantity is a fixed-point representation of a number. It provides convenient "
                       "marshaling/unmarshaling in JSON and YAML, in addition to String() and AsInt64() accessors.",
        "oneOf": [{"type": "string"}, {"type": "number"}]},
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
        "description": "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML "
                       "marshalling and unmarshalling, it produces or consumes the inner type.",
        "format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]},
    _META + "Time": {"description": "Time is a wrapper around time.Time which supports correct marshaling to "
                                    "YAML and JSON.", "format": "date-time", "type": "string"},
    _META + "MicroTime": {"description": "MicroTime is version of Time with microsecond level precision.",
                          "format": "date-time", "type": "string"},
    _META + "FieldsV1": {"description": "FieldsV1 stores a set of fields in a data structure like a Trie, in "
                                        "JSON format.", "type": "object"},
    _META + "Patch": {"description": "Patch is provided to give a concrete name and type to the Kubernetes "
                                     "PATCH request body.", "type": "object"},
    "io.k8s.apimachinery.pkg.runtime.RawExtension": {
        "description": "RawExtension is used to hold extensions in external versions.", "type": "object"},
}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": _REF + name}


def _prop(owner: str, field: str, t: str) -> dict[str, Any]:
    if (owner, field) in _QUANTITY_MAPS:
        return {"type": "object", "additionalProperties": _ref("io.k8s.apimachinery.pkg.api.resource.Quantity")}
    if (owner, field) in _QUANTITIES:
        return {"allOf": [_ref("io.k8s.apimachinery.pkg.api.resource.Quantity")]}
    if t == "datetime":
        return {"allOf": [_ref(_META + ("MicroTime" if (owner, field) in _MICRO_TIMES else "Time"))]}
    if t == "object":
        target = _OBJECT_REFS.get((owner, field))
        return {"allOf": [_ref(target)]} if target else {"type": "object"}
    return _type(t)


def _type(t: str) -> dict[str, Any]:
    if t.startswith("list[") and t.endswith("]"):
        inner = _type(t[5:-1])
        return {"type": "array", "items": inner}
    if t.startswith("dict("):
        value = t[len("dict("):-1].split(",", 1)[1].strip()
        return {"type": "object", "additionalProperties": _type(value)}
    if t in _SCALARS:
        return dict(_SCALARS[t])
    if t == "datetime":
        return {"allOf": [_ref(_META + "Time")]}
    if t == "object":
        return {"type": "object"}
    return {"allOf": [_ref(schema.definition_name(t))]}


def _component(class_name: str) -> dict[str, Any]:
    descriptions, required = schema.model_descriptions(class_name), schema.model_required(class_name)
    props: dict[str, Any] = {}
    for field, (t, attr) in schema.model_fields(class_name).items():
        p = _prop(class_name, field, t)
        if descriptions.get(attr):
            p["description"] = descriptions[attr]
        patch = _PATCH.get((class_name, field))
        if patch:
            strategy, key, map_keys = patch
            if map_keys:
                p["x-kubernetes-list-map-keys"] = list(map_keys)
                p["x-kubernetes-list-type"] = "map"
            if key:
                p["x-kubernetes-patch-merge-key"] = key
            p["x-kubernetes-patch-strategy"] = strategy
        props[field] = p
    out: dict[str, Any] = {"properties": dict(sorted(props.items())), "type": "object"}
    if class_name in _KIND_DOCS:
        out = {"description": _KIND_DOCS[class_name], **out}
    req = [f for f, (_t, attr) in schema.model_fields(class_name).items() if attr in required]
    if req:
        out["required"] = req
    if class_name in _KINDS:
        out["x-kubernetes-group-version-kind"] = [{"group": "", "kind": _KINDS[class_name], "version": "v1"}]
    return out


def _components() -> dict[str, Any]:
    comps = {schema.definition_name(c): _component(c) for c in schema.closure(_ROOTS)}
    comps.update(_FIXED)
    return dict(sorted(comps.items()))


# --- paths ----------------------------------------------------------------------------------------------------
_FIELD_VALIDATION_DOC = (
    "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing "
    "unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are "
    "silently dropped from the object, and will ignore all but the last duplicate field that the decoder "
    "encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard "
    "warning response header for each unknown field that is dropped from the object, and for each duplicate field "
    "that is encountered. The request will still succeed if there are no other errors, and will only persist the "
    "last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a "
    "BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are "
    "present. The error returned from the server will contain all unknown and duplicate fields encountered.")


def _q(name: str, typ: str, description: str) -> dict[str, Any]:
    return {"description": description, "in": "query", "name": name,
            "schema": {"type": typ, "uniqueItems": True}}


_DRY_RUN = _q("dryRun", "string", "When present, indicates that modifications should not be persisted. An invalid "
              "or unrecognized dryRun directive will result in an error response and no further processing of the "
              "request. Valid values are: - All: all dry run stages will be processed")
_FIELD_MANAGER = _q("fieldManager", "string", "fieldManager is a name associated with the actor or entity that "
                    "is making these changes.")
_WRITE_PARAMS = [_DRY_RUN, _FIELD_MANAGER, _q("fieldValidation", "string", _FIELD_VALIDATION_DOC)]
_PATCH_PARAMS = [*_WRITE_PARAMS, _q("force", "boolean", 'Force is going to "force" Apply requests.')]
_LIST_PARAMS = [_q(n, t, n) for n, t in (
    ("allowWatchBookmarks", "boolean"), ("continue", "string"), ("fieldSelector", "string"),
    ("labelSelector", "string"), ("limit", "integer"), ("resourceVersion", "string"),
    ("resourceVersionMatch", "string"), ("sendInitialEvents", "boolean"), ("timeoutSeconds", "integer"),
    ("watch", "boolean"))]
_PATCH_TYPES = ("application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json",
                "application/strategic-merge-patch+json")


def _path_params(namespaced: bool, named: str | None) -> list[dict[str, Any]]:
    params = []
    if named:
        params.append({"description": f"name of the {named}", "in": "path", "name": "name", "required": True,
                       "schema": {"type": "string", "uniqueItems": True}})
    if namespaced:
        params.append({"description": "object name and auth scope, such as for teams and projects", "in": "path",
                       "name": "namespace", "required": True, "schema": {"type": "string", "uniqueItems": True}})
    params.append(_q("pretty", "string", "If 'true', then the output is pretty printed."))
    return params


def _responses(ref: str, codes: dict[str, str]) -> dict[str, Any]:
    content = {ct: {"schema": _ref(ref)} for ct in
               ("application/json", "application/vnd.kubernetes.protobuf", "application/yaml")}
    out = {code: {"content": content, "description": desc} for code, desc in codes.items()}
    out["401"] = {"description": "Unauthorized"}
    return out


def _op(action: str, op_id: str, description: str, kind: str, body: str | None, result: str,
        codes: dict[str, str], params: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {"description": description, "operationId": op_id}
    if params:
        op["parameters"] = params
    if body == "patch":
        op["requestBody"] = {"content": {ct: {"schema": _ref(_META + "Patch")} for ct in _PATCH_TYPES},
                             "required": True}
    elif body:
        op["requestBody"] = {"content": {"*/*": {"schema": _ref(body)}}, "required": action != "delete"}
    op["responses"] = _responses(result, codes)
    op["tags"] = ["core_v1"]
    op["x-kubernetes-action"] = action
    op["x-kubernetes-group-version-kind"] = {"group": "", "kind": kind, "version": "v1"}
    return op


_OK, _CREATED, _ACCEPTED = {"200": "OK"}, {"200": "OK", "201": "Created", "202": "Accepted"}, {"200": "OK",
                                                                                               "202": "Accepted"}


def _resource_paths(plural: str, kind: str, namespaced: bool, collection_delete: bool = True) -> dict[str, Any]:
    core = "io.k8s.api.core.v1."
    ns = "Namespaced" if namespaced else ""
    base = f"/api/v1/namespaces/{{namespace}}/{plural}" if namespaced else f"/api/v1/{plural}"
    obj, lst, status = core + kind, core + kind + "List", _META + "Status"
    collection = {
        "get": _op("list", f"listCoreV1{ns}{kind}", f"list or watch objects of kind {kind}", kind, None, lst, _OK,
                   _LIST_PARAMS),
        "parameters": _path_params(namespaced, None),
        "post": _op("post", f"createCoreV1{ns}{kind}", f"create a {kind}", kind, obj, obj, _CREATED,
                    _WRITE_PARAMS),
    }
    if collection_delete:
        collection["delete"] = _op("deletecollection", f"deleteCoreV1Collection{ns}{kind}",
                                   f"delete collection of {kind}", kind, _META + "DeleteOptions", status, _OK,
                                   [_DRY_RUN, *_LIST_PARAMS])
    item = {
        "delete": _op("delete", f"deleteCoreV1{ns}{kind}", f"delete a {kind}", kind, _META + "DeleteOptions", obj,
                      _ACCEPTED, [_DRY_RUN]),
        "get": _op("get", f"readCoreV1{ns}{kind}", f"read the specified {kind}", kind, None, obj, _OK),
        "parameters": _path_params(namespaced, kind),
        "patch": _op("patch", f"patchCoreV1{ns}{kind}", f"partially update the specified {kind}", kind, "patch",
                     obj, {"200": "OK", "201": "Created"}, _PATCH_PARAMS),
        "put": _op("put", f"replaceCoreV1{ns}{kind}", f"replace the specified {kind}", kind, obj, obj,
                   {"200": "OK", "201": "Created"}, _WRITE_PARAMS),
    }
    paths = {base: dict(sorted(collection.items())), base + "/{name}": item}
    if kind != "Event":
        paths[base + "/{name}/status"] = {
            "get": _op("get", f"readCoreV1{ns}{kind}Status", f"read status of the specified {kind}", kind, None,
                       obj, _OK),
            "parameters": _path_params(namespaced, kind),
            "patch": _op("patch", f"patchCoreV1{ns}{kind}Status", f"partially update status of the specified "
                         f"{kind}", kind, "patch", obj, {"200": "OK", "201": "Created"}, _PATCH_PARAMS),
            "put": _op("put", f"replaceCoreV1{ns}{kind}Status", f"replace status of the specified {kind}", kind,
                       obj, obj, {"200": "OK", "201": "Created"}, _WRITE_PARAMS),
        }
    if namespaced:
        paths[f"/api/v1/{plural}"] = {
            "get": _op("list", f"listCoreV1{kind}ForAllNamespaces", f"list or watch objects of kind {kind}", kind,
                       None, lst, _OK),
            "parameters": [*_LIST_PARAMS, _q("pretty", "string", "If 'true', then the output is pretty printed.")],
        }
    return paths


def _paths() -> dict[str, Any]:
    paths: dict[str, Any] = {}
    paths.update(_resource_paths("pods", "Pod", True))
    paths.update(_resource_paths("events", "Event", True))
    paths.update(_resource_paths("nodes", "Node", False))
    paths.update(_resource_paths("namespaces", "Namespace", False, collection_delete=False))
    paths.update(_resource_paths("persistentvolumeclaims", "PersistentVolumeClaim", True))
    paths.update(_resource_paths("persistentvolumes", "PersistentVolume", False))
    binding = "io.k8s.api.core.v1.Binding"
    paths["/api/v1/namespaces/{namespace}/bindings"] = {
        "parameters": _path_params(True, None),
        "post": _op("post", "createCoreV1NamespacedBinding", "create a Binding", "Binding", binding, binding,
                    _CREATED, _WRITE_PARAMS)}
    paths["/api/v1/namespaces/{namespace}/pods/{name}/binding"] = {
        "parameters": _path_params(True, "Binding"),
        "post": _op("post", "createCoreV1NamespacedPodBinding", "create binding of a Pod", "Binding", binding,
                    binding, _CREATED, _WRITE_PARAMS)}
    return dict(sorted(paths.items()))


@functools.lru_cache(maxsize=1)
def openapi_v3_core_v1_dict() -> dict[str, Any]:
    """The ``/openapi/v3/api/v1`` document as a dict (shared, do not mutate)."""
    return {"components": {"schemas": _components()},
            "info": {"title": "Kubernetes", "version": K8S_VERSION},
            "openapi": "3.0.0",
            "paths": _paths()}


@functools.lru_cache(maxsize=1)
def openapi_v3_core_v1() -> bytes:
    """The cached JSON bytes served at ``GET /openapi/v3/api/v1`` (``Content-Type: application/json``)."""
    return json.dumps(openapi_v3_core_v1_dict(), separators=(",", ":"), ensure_ascii=False).encode()


@functools.lru_cache(maxsize=1)
def openapi_v3_hash() -> str:
    """Upper-case hex SHA-512 of :func:`openapi_v3_core_v1` (the real server's ``hash`` query/ETag value)."""
    return hashlib.sha512(openapi_v3_core_v1()).hexdigest().upper()


OPENAPI_V2_CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


def openapi_v2_protobuf() -> bytes:
    """``GET /openapi/v2`` body: protobuf ``openapi_v2.Document{swagger: "2.0"}`` (serve with
    :data:`OPENAPI_V2_CONTENT_TYPE`; the ``@v1.0`` spelling kubectl sends in Accept is not a valid Go MIME type
    and makes client-go fail with ``mime: unexpected content after media subtype``)."""
    return b"\n\x032.0"  # field 1 (swagger), length-delimited, "2.0"


def openapi_v3_root(hash: str | None = None) -> dict[str, Any]:
    """The ``GET /openapi/v3`` discovery document (kube-openapi ``handler3.OpenAPIV3Discovery``).

    Only ``api/v1`` is listed: kubectl maps a GroupVersion to ``api/<v>``/``apis/<g>/<v>`` and ignores other
    keys (the real server's ``api``/``apis`` entries are not needed). ``hash`` defaults to
    :func:`openapi_v3_hash`.
    """
    h = hash or openapi_v3_hash()
    return {"paths": {"api/v1": {"serverRelativeURL": f"/openapi/v3/api/v1?hash={h}"}}}
