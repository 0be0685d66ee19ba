"""The decoder's group/version/kind checks for core/v1 bodies (apimachinery ``runtime/serializer/json/json.go``
``Decode`` with ``gvkWithDefaults``, ``runtime.UseOrCreateObject``, the versioning codec's conversion into the
endpoint's type, and apiserver ``handlers/create.go`` ``transformDecodeError``).

A missing ``kind`` or ``apiVersion`` takes the endpoint's. A kind the core/v1 scheme does not register for that version
fails in ``Scheme.New``; a registered kind of another type fails converting into the endpoint's type. Both are 400
BadRequest, ``<kind> in version "<version>" cannot be handled as a <Kind>: <error>``:

* ``Pod in version "v2" cannot be handled as a Pod: no kind "Pod" is registered for version "v2" in scheme
  "pkg/api/legacyscheme/scheme.go:30"`` (the scheme is named after the line that creates it; real v1.3x captures show
  ``pkg/api/legacyscheme/scheme.go:30``);
* ``Node in version "v1" cannot be handled as a Pod: converting (v1.Node) to (core.Pod): unknown conversion``.

A patched document is decoded the same way, and its error (the raw one, without the ``cannot be handled`` prefix) is a
422 on the field ``patch`` (``handlers/patch.go`` ``applyPatchToCurrentObject``). :func:`check_name` is the update and
patch handlers' ``checkName`` (``handlers/rest.go``), 400 BadRequest: ``the name of the object (x based on URL) was
undeterminable: name must be provided``, ``the name of the object (y) does not match the name on the URL (x)``, ``the
namespace of the object (b) does not match the namespace on the request (a)``.
"""

from __future__ import annotations

import json
from typing import Any

from observatory.lab import errors
from observatory.lab.selectors import go_quote

SCHEME = "pkg/api/legacyscheme/scheme.go:30"

CORE_V1_KINDS = frozenset({
    "Pod", "PodList", "PodStatusResult", "PodTemplate", "PodTemplateList", "ReplicationController",
    "ReplicationControllerList", "Service", "ServiceProxyOptions", "ServiceList", "Endpoints", "EndpointsList",
    "Node", "NodeList", "NodeProxyOptions", "Binding", "Event", "EventList", "LimitRange", "LimitRangeList",
    "ResourceQuota", "ResourceQuotaList", "Namespace", "NamespaceList", "Secret", "SecretList", "ServiceAccount",
    "ServiceAccountList", "PersistentVolume", "PersistentVolumeList", "PersistentVolumeClaim",
    "PersistentVolumeClaimList", "PodAttachOptions", "PodLogOptions", "PodExecOptions", "PodPortForwardOptions",
    "PodProxyOptions", "ComponentStatus", "ComponentStatusList", "SerializedReference", "RangeAllocation",
    "ConfigMap", "ConfigMapList", "EphemeralContainers", "WatchEvent", "ListOptions", "GetOptions", "DeleteOptions",
    "CreateOptions", "UpdateOptions", "PatchOptions",
})
"""Kinds of the core/v1 scheme (``k8s.io/api/core/v1/register.go`` ``addKnownTypes`` and the meta options
``metav1.AddToGroupVersion`` adds to every group version)."""

def raw_error(kind: str, body: dict[str, Any]) -> tuple[str, str] | None:
    """(the body's kind and version, the decoder's error) for a core/v1 ``kind`` body of another
    group/version/kind, or None when it decodes."""
    api_version, body_kind = body.get("apiVersion"), body.get("kind")
    if not isinstance(api_version, str) or not isinstance(body_kind, str):
        return None  # wrong JSON types are the typed decoder's (gotypes) to report
    actual_kind = body_kind or kind
    group, _, version = api_version.rpartition("/") if "/" in api_version else ("", "", api_version)
    version = version or ("v1" if not group else "")
    if (group, version, actual_kind) == ("", "v1", kind):
        return None
    shown = f"{group}/{version}" if group else version
    if group == "" and version == "v1" and actual_kind in CORE_V1_KINDS:
        error = f"converting (v1.{actual_kind}) to (core.{kind}): unknown conversion"
    else:
        error = f'no kind "{actual_kind}" is registered for version "{shown}" in scheme "{SCHEME}"'
    return f'{actual_kind} in version "{version}"', error


def decode_error(kind: str, body: dict[str, Any]) -> str | None:
    """The 400 message for a core/v1 ``kind`` body of another group/version/kind, or None when it decodes."""
    found = raw_error(kind, body)
    return None if found is None else f"{found[0]} cannot be handled as a {kind}: {found[1]}"


def check_decodable(kind: str, body: dict[str, Any]) -> None:
    """400 BadRequest with :func:`decode_error`'s text."""
    message = decode_error(kind, body)
    if message is not None:
        raise errors.bad_request(message)


def check_patched(kind: str, patched: dict[str, Any]) -> None:
    """422 on ``patch`` for a patched core/v1 document that no longer decodes as ``kind``: the document (keys
    sorted, as the patch library re-encodes it) quoted as the bad value, the decoder's error as the detail."""
    found = raw_error(kind, patched)
    if found is None:
        return
    doc = json.dumps(patched, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    detail = f"Invalid value: {go_quote(doc)}: {found[1]}"
    raise errors.StatusError(errors.status_failure(422, "Invalid", f' "" is invalid: patch: {detail}', {
        "causes": [{"reason": "FieldValueInvalid", "message": detail, "field": "patch"}]}))


def check_name(obj: dict[str, Any], name: str, namespace: str) -> None:
    """``checkName``: the object's name must be the URL's, and a namespace it names the request's."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    obj_name = meta.get("name") or "" if isinstance(meta, dict) else ""
    if not obj_name:
        raise errors.bad_request(f"the name of the object ({name} based on URL) was undeterminable: "
                                 "name must be provided")
    if obj_name != name:
        raise errors.bad_request(f"the name of the object ({obj_name}) does not match the name on the URL ({name})")
    obj_namespace = meta.get("namespace") or "" if isinstance(meta, dict) else ""
    if namespace and obj_namespace and obj_namespace != namespace:
        raise errors.bad_request(f"the namespace of the object ({obj_namespace}) does not match the namespace on "
                                 f"the request ({namespace})")


_ETCD_PREFIX = {"nodes": "minions"}
"""Resources whose etcd key prefix is not their name (k/k ``pkg/registry/core/node/storage``: ``/minions``)."""


def check_uid_precondition(resource: str, group_resource: str, namespace: str, name: str, want: Any,
                           have: Any) -> None:
    """An update body's ``metadata.uid`` is a storage precondition (``rest.DefaultUpdatedObjectInfo(obj)``
    ``Preconditions``): another uid is 409 Conflict with the etcd store's ``StorageError`` text, ``Precondition
    failed: UID in precondition: <want>, UID in object meta: <have>`` (``storage.Preconditions.Check``)."""
    if not want or want == have:
        return
    key = f"/registry/{_ETCD_PREFIX.get(resource, resource)}/" + (f"{namespace}/{name}" if namespace else name)
    raise errors.conflict(group_resource, name, f"StorageError: invalid object, Code: 4, Key: {key}, "
                          f"ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: "
                          f"{want}, UID in object meta: {have}")
