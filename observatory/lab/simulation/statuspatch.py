"""The strategic merge patches the lab's components send, built as apimachinery's ``CreateTwoWayMergePatch`` builds
them (``staging/src/k8s.io/apimachinery/pkg/util/strategicpatch/patch.go`` ``diffMaps``, with
``DiffOptions{SetElementOrder: true}``):

* a key only in the new object is added whole; a key only in the old one becomes ``null``; values of different JSON
  types, scalars that differ and lists without a merge strategy are replaced whole;
* two maps are diffed recursively and kept when the diff is not empty;
* a list with ``patchStrategy: merge`` and a ``patchMergeKey`` (``status.conditions`` by ``type``, ``hostIPs`` by
  ``ip``) is diffed element by element (``diffListsOfMaps``): a changed element is its diff plus its merge key, a
  new one whole, a removed one ``{"$patch": "delete", <key>: ...}``; ``$setElementOrder/<list>`` lists every new
  element's merge key in order, written when something changed or the order did (``diffLists``); a merge list of
  scalars (``finalizers``) gives the added values, ``$deleteFromPrimitiveList/<list>`` and the order likewise.

The patch metadata is the lab's own (:data:`observatory.lab.strategicpatch.SCHEMAS`). Go's ``json.Marshal``
writes the patch's map keys sorted (:func:`wire`); the patch applied to the store keeps the new object's key order,
so the stored result is the object the component computed, key for key.

* :func:`pod_status_patch`: ``pkg/util/pod`` ``PatchPodStatus``/``preparePatchBytesForPodStatus`` (used by the
  kubelet's status manager ``syncPod`` and by PodGC): ``v1.Pod{Status: old}`` against
  ``v1.Pod{ObjectMeta: {UID: uid}, Status: new}``, so the patch always carries ``metadata.uid`` ("only put the uid
  in the new object to ensure it appears in the patch as a precondition"); None when that is all it carries
  (``unchanged``: nothing is sent).
* :func:`node_status_patch`: ``pkg/util/node`` ``PatchNodeStatus``/``preparePatchBytesforNodeStatus``: the whole
  old Node against the new one with the old spec. (Its special case for a changed ``status.addresses``, which the
  lab's kubelets never change, is not reproduced.)
* :func:`node_taints_patch`: ``pkg/controller`` ``PatchNodeTaints``: the old Node without its resourceVersion
  against the old Node with the new taints, so the patch carries ``metadata.resourceVersion`` as a precondition.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from observatory.lab.strategicpatch import SCHEMAS

__all__ = ["node_status_patch", "node_taints_patch", "pod_status_patch", "two_way_merge_patch", "wire"]

_MISSING = object()


def two_way_merge_patch(original: dict[str, Any], modified: dict[str, Any], kind: str) -> dict[str, Any]:
    """The strategic merge patch that turns ``original`` into ``modified`` (objects of ``kind``)."""
    schema = SCHEMAS.get(kind, {"metadata": SCHEMAS["Pod"]["metadata"]})
    return _diff_maps(original, modified, schema)


def _diff_maps(original: dict[str, Any], modified: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    patch: dict[str, Any] = {}
    for key, new in modified.items():
        old = original.get(key, _MISSING)
        if old is _MISSING:
            patch[key] = copy.deepcopy(new)
        elif type(old) is not type(new) or not isinstance(new, (dict, list)):
            if old != new or type(old) is not type(new):
                patch[key] = copy.deepcopy(new)
        elif isinstance(new, dict):
            sub = _diff_maps(old, new, _sub(schema, key))
            if sub:
                patch[key] = sub
        else:
            _diff_list_field(key, old, new, schema.get(key), patch)
    for key in original:
        if key not in modified:
            patch[key] = None
    return patch


def _sub(schema: dict[str, Any], key: str) -> dict[str, Any]:
    field = schema.get(key)
    return field.sub if field is not None else {}


def _diff_list_field(key: str, old: list[Any], new: list[Any], field: Any, patch: dict[str, Any]) -> None:
    if field is None or field.strategy != "merge":
        if old != new:
            patch[key] = copy.deepcopy(new)
        return
    if field.key and all(isinstance(v, dict) for v in old + new):
        changes, order = _diff_lists_of_maps(old, new, field)
        if changes:
            patch[key] = changes
        if order is not None:
            patch[f"$setElementOrder/{key}"] = order
        return
    added = [copy.deepcopy(v) for v in new if v not in old]
    deleted = [copy.deepcopy(v) for v in old if v not in new]
    if added:
        patch[key] = added
    if deleted:
        patch[f"$deleteFromPrimitiveList/{key}"] = deleted
    if added or deleted or _order([v for v in old if v in new]) != _order([v for v in new if v in old]):
        patch[f"$setElementOrder/{key}"] = copy.deepcopy(new)


def _order(values: list[Any]) -> list[str]:
    return [json.dumps(v, sort_keys=True) for v in values]


def _diff_lists_of_maps(old: list[dict[str, Any]], new: list[dict[str, Any]],
                        field: Any) -> tuple[list[Any], list[dict[str, Any]] | None]:
    """``diffListsOfMaps`` then ``normalizeSliceOrder`` (changes in the new list's order, deletions last) and the
    ``$setElementOrder`` list (None when neither the content nor the order changed)."""
    key = field.key
    by_key = {json.dumps(v.get(key), sort_keys=True): v for v in old}
    changes: list[Any] = []
    for element in new:
        previous = by_key.get(json.dumps(element.get(key), sort_keys=True))
        if previous is None:
            changes.append(copy.deepcopy(element))
            continue
        diff = _diff_maps(previous, element, field.sub)
        if diff:
            changes.append({**diff, key: element.get(key)})
    new_keys = {json.dumps(v.get(key), sort_keys=True) for v in new}
    deleted = [{"$patch": "delete", key: v.get(key)} for v in old
               if json.dumps(v.get(key), sort_keys=True) not in new_keys]
    changes += deleted
    same_order = ([v.get(key) for v in old if json.dumps(v.get(key), sort_keys=True) in new_keys]
                  == [v.get(key) for v in new if json.dumps(v.get(key), sort_keys=True) in by_key])
    order = [{key: v.get(key)} for v in new] if changes or not same_order else None
    return changes, order


def wire(patch: Any) -> Any:
    """``patch`` with every map's keys sorted, as Go's ``json.Marshal`` of a ``map[string]interface{}`` writes it:
    the request body a Go client sends."""
    if isinstance(patch, dict):
        return {k: wire(patch[k]) for k in sorted(patch)}
    if isinstance(patch, list):
        return [wire(v) for v in patch]
    return patch


def pod_status_patch(pod: dict[str, Any], status: dict[str, Any]) -> dict[str, Any] | None:
    """``PatchPodStatus``'s patch from ``pod``'s stored status to ``status``; None when nothing changes."""
    uid = (pod.get("metadata") or {}).get("uid", "")
    patch = two_way_merge_patch({"metadata": {}, "status": pod.get("status") or {}},
                                {"metadata": {"uid": uid} if uid else {}, "status": status}, "Pod")
    return None if set(patch) <= {"metadata"} else patch


def node_status_patch(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``PatchNodeStatus``'s patch from the Node ``old`` to ``new`` (``new``'s spec is taken as ``old``'s)."""
    diff_node = {**new}
    if "spec" in old:
        diff_node["spec"] = old["spec"]
    else:
        diff_node.pop("spec", None)
    return two_way_merge_patch(old, diff_node, "Node")


def node_taints_patch(old: dict[str, Any], taints: list[dict[str, Any]] | None) -> dict[str, Any]:
    """``PatchNodeTaints``'s patch setting the Node ``old``'s ``spec.taints`` (None or [] removes them), with
    ``metadata.resourceVersion`` as the precondition."""
    meta = old.get("metadata") or {}
    without_rv = {**old, "metadata": {k: v for k, v in meta.items() if k != "resourceVersion"}}
    spec = {k: v for k, v in (old.get("spec") or {}).items() if k != "taints"}
    if taints:
        spec["taints"] = taints
    return two_way_merge_patch(without_rv, {**old, "spec": spec}, "Node")
