"""apimachinery ``pkg/util/diff`` ``Diff``, as validation.go appends it to an immutable-spec error.

``Diff(a, b)`` marshals both values with ``json.MarshalIndent(v, "", " ")`` and returns go-difflib's unified diff
of the two texts with 3 lines of context and no file header (``@@ -1,6 +1,6 @@`` hunks, lines prefixed ``" "``,
``-`` or ``+``). The values are *internal* Go structs, which carry no JSON tags: keys are the Go field names in
declaration order, nil pointers, slices and maps are ``null``. :func:`internal_claim_spec` builds that shape for a
``PersistentVolumeClaimSpec`` (``pkg/apis/core/types.go``) from its v1 JSON.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from observatory.lab.volumes.quantity import canonical

__all__ = ["diff", "internal_claim_spec", "internal_volume_source"]


def _go_json(value: Any) -> str:
    """``json.MarshalIndent(v, "", " ")``: one-space indent, ``<``, ``>`` and ``&`` escaped as Go does."""
    text = json.dumps(value, indent=1, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def diff(old: Any, new: Any) -> str:
    """The unified diff of ``old`` and ``new`` as ``diff.Diff`` prints it (empty when they are equal)."""
    a = (_go_json(old) + "\n").splitlines(keepends=True)
    b = (_go_json(new) + "\n").splitlines(keepends=True)
    lines = list(difflib.unified_diff(a, b, n=3, lineterm="\n"))
    return "".join(lines[2:])  # go-difflib writes no ---/+++ header when both file names are empty


def _quantities(resources: Any) -> dict[str, str] | None:
    if not isinstance(resources, dict):
        return None
    return {k: canonical(v) for k, v in sorted(resources.items())}


def _typed_ref(ref: Any, with_namespace: bool) -> dict[str, Any] | None:
    if not isinstance(ref, dict):
        return None
    out = {"APIGroup": ref.get("apiGroup"), "Kind": ref.get("kind", ""), "Name": ref.get("name", "")}
    if with_namespace:
        out["Namespace"] = ref.get("namespace")
    return out


def internal_claim_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """``core.PersistentVolumeClaimSpec`` as ``encoding/json`` writes it (Go field names, declaration order)."""
    raw = spec.get("resources")
    resources: dict[str, Any] = raw if isinstance(raw, dict) else {}
    selector = spec.get("selector")
    return {
        "AccessModes": spec.get("accessModes"),
        "Selector": selector if isinstance(selector, dict) else None,
        "Resources": {"Limits": _quantities(resources.get("limits")),
                      "Requests": _quantities(resources.get("requests"))},
        "VolumeName": spec.get("volumeName", ""),
        "StorageClassName": spec.get("storageClassName"),
        "VolumeMode": spec.get("volumeMode"),
        "DataSource": _typed_ref(spec.get("dataSource"), False),
        "DataSourceRef": _typed_ref(spec.get("dataSourceRef"), True),
        "VolumeAttributesClassName": spec.get("volumeAttributesClassName"),
    }


_SOURCES = (
    ("gcePersistentDisk", "GCEPersistentDisk"), ("awsElasticBlockStore", "AWSElasticBlockStore"),
    ("hostPath", "HostPath"), ("glusterfs", "Glusterfs"), ("nfs", "NFS"), ("rbd", "RBD"), ("quobyte", "Quobyte"),
    ("iscsi", "ISCSI"), ("flexVolume", "FlexVolume"), ("cinder", "Cinder"), ("cephfs", "CephFS"), ("fc", "FC"),
    ("flocker", "Flocker"), ("azureFile", "AzureFile"), ("vsphereVolume", "VsphereVolume"),
    ("azureDisk", "AzureDisk"), ("photonPersistentDisk", "PhotonPersistentDisk"),
    ("portworxVolume", "PortworxVolume"), ("scaleIO", "ScaleIO"), ("local", "Local"), ("storageos", "StorageOS"),
    ("csi", "CSI"),
)
"""``core.PersistentVolumeSource`` fields: v1 JSON name -> Go field name, in declaration order."""


def _go_names(value: Any) -> Any:
    """Nested source structs with their JSON keys capitalised, the Go field name of most of them."""
    if isinstance(value, dict):
        return {k[:1].upper() + k[1:]: _go_names(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_names(v) for v in value]
    return value


def internal_volume_source(spec: dict[str, Any]) -> dict[str, Any]:
    """``core.PersistentVolumeSource`` of a PV spec, one pointer per volume type (null when unset)."""
    return {go: _go_names(spec[key]) if isinstance(spec.get(key), dict) else None for key, go in _SOURCES}


SOURCE_KEYS = tuple(key for key, _ in _SOURCES)
"""The v1 JSON names of the PersistentVolume volume types (``must specify a volume type`` counts these)."""
