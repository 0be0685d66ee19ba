"""Strategic merge patch applied to core/v1 objects (plain JSON dicts) as kube-apiserver applies it.

Ports the apply half of ``k8s.io/apimachinery pkg/util/strategicpatch/patch.go`` with the
``patchStrategy``/``patchMergeKey`` tags of ``k8s.io/api core/v1 types.go`` (:data:`SCHEMAS`). Errors are
:class:`~observatory.lab.patch.PatchError`, as for the other patch types: 400 BadRequest for undecodable bodies and bad
directive formats, 422 Invalid for patches that cannot apply, 500 with an empty reason for strategicpatch errors
upstream passes through unwrapped (``map: map[image:nginx] does not contain declared merge key: name``). Bodies may
be given parsed, or raw as ``bytes``/``str`` (then Go's JSON error texts apply). Inputs are never mutated; results
hold no ``$patch``, ``$retainKeys``, ``$setElementOrder/`` or ``$deleteFromPrimitiveList/`` keys.
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any, NamedTuple

from observatory.lab.patch import PatchError, _bad, _decode, _internal, _json_kind, _unprocessable

_MISSING = object()


# --- Go renderings -------------------------------------------------------------------------------------------

def _gofmt(v: Any) -> str:
    """Go's ``%v`` of a decoded JSON value (maps print sorted, as ``map[k:v]``)."""
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):  # strconv 'g', shortest: %e when the exponent is < -4 or >= 6
        d = Decimal(repr(v)).normalize()
        e10 = d.adjusted()
        return format(d, "f") if -4 <= e10 < 6 else f"{d:e}".replace("e+", "e+0" if 0 <= e10 < 10 else "e+") \
            .replace("e-", "e-0" if -10 < e10 < 0 else "e-")
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{_gofmt(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(_gofmt(x) for x in v) + "]"
    return str(v)


def _gotype(v: Any) -> str:
    """``reflect.TypeOf`` of a decoded JSON value (ints stay int64: the body is decoded with PreserveInts)."""
    if v is None:
        return "%!s(<nil>)"
    return {dict: "map[string]interface {}", list: "[]interface {}", str: "string", bool: "bool",
            int: "int64", float: "float64"}.get(type(v), type(v).__name__)


def _same(a: Any, b: Any) -> bool:
    """Go ``==`` on two ``interface{}`` values: same dynamic type and value."""
    return type(a) is type(b) and a == b


# --- strategic merge patch ---------------------------------------------------------------------------------------

class _F(NamedTuple):
    """Patch metadata of one field: ``strategy`` ("merge" or ""), ``key`` (patchMergeKey), ``sub`` (its fields)."""

    strategy: str = ""
    key: str = ""
    sub: dict[str, _F] = {}


def _merge(key: str = "", sub: dict[str, _F] | None = None) -> _F:
    return _F("merge", key, sub or {})


_NONE = _F()
_META = {"finalizers": _merge(), "ownerReferences": _merge("uid")}
_CONTAINER = {"ports": _merge("containerPort"), "env": _merge("name"), "volumeMounts": _merge("mountPath"),
              "volumeDevices": _merge("devicePath")}
_POD_SPEC = {
    "volumes": _merge("name"), "initContainers": _merge("name", _CONTAINER), "containers": _merge("name", _CONTAINER),
    "ephemeralContainers": _merge("name", _CONTAINER), "imagePullSecrets": _merge("name"),
    "hostAliases": _merge("ip"), "topologySpreadConstraints": _merge("topologyKey"),
    "schedulingGates": _merge("name"), "resourceClaims": _merge("name"),
}
_POD_STATUS = {"conditions": _merge("type"), "podIPs": _merge("ip"), "hostIPs": _merge("ip"),
               "resourceClaimStatuses": _merge("name")}
SCHEMAS: dict[str, dict[str, _F]] = {
    "Pod": {"metadata": _F(sub=_META), "spec": _F(sub=_POD_SPEC), "status": _F(sub=_POD_STATUS)},
    "Node": {"metadata": _F(sub=_META), "spec": _F(sub={"podCIDRs": _merge()}),
             "status": _F(sub={"conditions": _merge("type"), "addresses": _merge("type")})},
    "Namespace": {"metadata": _F(sub=_META), "status": _F(sub={"conditions": _merge("type")})},
    "Event": {"metadata": _F(sub=_META)},
}
"""kind -> field -> patch metadata, from the ``patchStrategy``/``patchMergeKey`` tags of core/v1 ``types.go``
(``volumes`` and ``resourceClaims`` are also ``retainKeys``, which only matters when building patches). Fields not
listed have no strategy: maps merge, lists are replaced (``spec.taints``, ``spec.tolerations``)."""

_DIRECTIVE_PREFIXES = ("$patch", "$retainKeys", "$setElementOrder/", "$deleteFromPrimitiveList/")


def _bad_arg_type(expected: str, actual: Any) -> PatchError:
    return _internal(f"expected a {expected}, but received a {_gotype(actual)}")


def _need_key(item: Any, key: str) -> dict[str, Any]:
    """Upstream's map and merge-key assertions (``ErrBadArgType``, ``ErrNoMergeKey``)."""
    if not isinstance(item, dict):
        raise _bad_arg_type("map[string]interface {}", item)
    if key and key not in item:
        raise _internal(f"map: {_gofmt(item)} does not contain declared merge key: {key}")
    return item


def _clean(v: Any) -> tuple[bool, Any]:
    """``discardNullValuesFromPatch`` + ``removeDirectives`` for a patch value taken as is: maps carrying ``$patch``
    are dropped (``keep`` False) and directive keys removed."""
    if isinstance(v, dict):
        if "$patch" in v:
            return False, None
        out = {}
        for k, x in v.items():
            if x is None or k.startswith(_DIRECTIVE_PREFIXES):
                continue
            keep, x = _clean(x)
            if keep:
                out[k] = x
        return True, out
    if isinstance(v, list):
        return True, [x for keep, x in map(_clean, v) if keep]
    return True, v


def _extract_key(key: str, prefix: str) -> str:
    head, sep, rest = key.partition("/")
    if not sep or head != prefix:
        raise _bad("invalid patch format of primitive list" if prefix == "$deleteFromPrimitiveList"
                   else "invalid patch format of setElementOrder list")
    return rest


def _element_kind(*lists: list[Any]) -> str:
    """``sliceElementType``: all elements share one type, which is not a list."""
    kind = None
    for item in (x for lst in lists for x in lst):
        if kind is None:
            kind = _gotype(item)
            if isinstance(item, list):
                raise _unprocessable()  # ErrNoListOfLists
        elif kind != _gotype(item):
            raise _internal(f"list element types are not identical: {_gofmt(list(lists))}")
    if kind is None:
        raise _internal("no elements in any of the given slices")
    return kind


def _value(item: Any, key: str) -> Any:
    return (item.get(key) if isinstance(item, dict) else None) if key else item


def _index(items: list[Any], item: Any, key: str) -> int:
    return next((i for i, v in enumerate(items) if _same(_value(item, key), _value(v, key))), -1)


def _sort_like(items: list[Any], order: list[Any], key: str) -> list[Any]:
    """``normalizeSliceOrder``: ``$patch: delete`` items last, the rest stably sorted by position in ``order`` (every
    caller's items are all in ``order``, where upstream's comparator is a plain stable sort)."""
    deletes: list[Any] = []
    if key:
        for item in items + order:
            _need_key(item, key)
        deletes = [x for x in items if x.get("$patch") == "delete"]
        items = [x for x in items if x.get("$patch") != "delete"]
    return sorted(items, key=lambda x: _index(order, x, key)) + deletes


def _normalize_order(patch_items: list[Any], server_only: list[Any], patch_order: list[Any],
                     server_order: list[Any], key: str) -> list[Any]:
    """``normalizeElementOrder`` + ``mergeSortedSlice``: server-only items are slotted into the patch order, each
    before the first patch item it precedes in the live list."""
    right, left = _sort_like(patch_items, patch_order, key), _sort_like(server_only, server_order, key)
    out, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        li, ri = _index(server_order, left[i], key), _index(server_order, right[j], key)
        if li >= 0 and ri >= 0 and li < ri:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def _partition(merged: list[Any], by: list[Any], key: str) -> tuple[list[Any], list[Any]]:
    inside: list[Any] = []
    outside: list[Any] = []
    for v in merged:
        (inside if _index(by, _need_key(v, key) if key else v, key) >= 0 else outside).append(v)
    return inside, outside


def _dedup(s: list[Any]) -> list[Any]:
    """``deduplicateScalars`` (its reordering does not matter: the result is re-sorted by patch and live order)."""
    return [v for i, v in enumerate(s) if not any(_same(v, w) for w in s[:i])]


def _merge_slice(original: list[Any], patch: list[Any], field: _F, is_delete: bool) -> list[Any]:
    if not original and not patch:
        return original
    kind, key = _element_kind(original, patch), field.key
    if kind != "map[string]interface {}":
        if is_delete:
            return [v for v in original if not any(_same(v, d) for d in patch)]
        merged = _dedup(original + patch)
    else:
        if not key:
            raise _internal("cannot merge lists without merge key for type map")
        kept, replace = [], False
        for v in patch:
            directive = v.get("$patch", _MISSING)
            if directive is _MISSING:
                kept.append(v)
            elif directive == "delete":
                original = [o for o in original if not _same(o.get(key, _MISSING), _need_key(v, key)[key])]
            elif directive == "replace":
                replace = True
            elif directive == "merge":
                raise _internal("merging lists cannot yet be specified in the patch")
            else:
                raise _internal(f"unknown patch type: {_gofmt(directive)} in map: {_gofmt(v)}")
        original, patch = (kept, []) if replace else (original, kept)
        merged = list(original)
        for v in patch:
            idx = _index(merged, _need_key(v, key), key)
            if idx >= 0:
                merged[idx] = _merge_map(merged[idx], v, field.sub)
            else:
                merged.append(_clean(v)[1])
    inside, outside = _partition(merged, patch, key)
    return _normalize_order(inside, outside, patch, original, key)


def _merge_list_field(original: Any, patch: Any, field: _F, is_delete: bool) -> list[Any]:
    if field.strategy == "merge" or is_delete:
        return _merge_slice(original, patch, field, is_delete)
    return _clean(patch)[1]


def _retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    """``applyRetainKeysDirective``: keep only the listed keys; every non-null patch key must be listed."""
    if "$retainKeys" not in patch:
        return
    keys = patch.pop("$retainKeys")
    if not isinstance(keys, list):
        raise _bad("invalid patch format of retainKeys")
    for k, v in patch.items():
        if v is not None and not k.startswith(("$deleteFromPrimitiveList", "$setElementOrder")) and k not in keys:
            raise _bad("invalid patch format of retainKeys")
    for k in [k for k in original if k not in keys]:
        del original[k]


def _check_order(patch_list: list[Any], order: list[Any], key: str) -> None:
    """``validatePatchWithSetOrderList``: patch items must appear in the ``$setElementOrder`` list, in its order."""
    if not order or not patch_list:
        return
    items = [v for v in patch_list if _need_key(v, "").get("$patch") != "delete"] if key else patch_list
    pi = si = 0
    while pi < len(items) and si < len(order):
        if isinstance(items[pi], dict) and "$patch" in items[pi]:
            pi += 1
            continue
        a, b = (_need_key(items[pi], key), _need_key(order[si], key)) if key else (items[pi], order[si])
        if _same(_value(a, key), _value(b, key)):
            pi += 1
        si += 1
    if pi < len(items) and si >= len(order):
        raise _internal(f"the order in patch list:\n{_gofmt(patch_list)}\n doesn't match $setElementOrder list:\n"
                        f"{_gofmt(order)}")


def _set_element_order(original: dict[str, Any], patch: dict[str, Any], schema: dict[str, _F]) -> None:
    """``mergePatchIntoOriginal``: merge each list that has a ``$setElementOrder/<field>`` and order it by that list
    (then patch order, then live order)."""
    for directive in [k for k in patch if k.startswith("$setElementOrder")]:
        order = patch.pop(directive)
        if not isinstance(order, list):
            raise _bad_arg_type("[]interface {}", order)
        field_name = _extract_key(directive, "$setElementOrder")
        live, new = original.get(field_name, _MISSING), patch.get(field_name, _MISSING)
        for value in (live, new):
            if value is not _MISSING and not isinstance(value, list):
                raise _bad_arg_type("[]interface {}", value)
        field = schema.get(field_name, _NONE)
        _check_order([] if new is _MISSING else new, order, field.key)
        if live is _MISSING and new is _MISSING:
            continue
        if new is _MISSING:
            merged = live
        elif live is _MISSING:
            merged = _clean(new)[1]
        else:
            merged = _merge_list_field(live, new, field, False)
        live_list = [] if live is _MISSING else live
        _element_kind(live_list, [] if new is _MISSING else new)
        inside, outside = _partition(merged, order, field.key)
        original[field_name] = _normalize_order(inside, outside, order, live_list, field.key)
        patch.pop(field_name, None)


def _merge_map(original: dict[str, Any] | None, patch: dict[str, Any], schema: dict[str, _F]) -> dict[str, Any]:
    """``mergeMap`` with ``MergeParallelList`` and ``IgnoreUnmatchedNulls`` (the server-side options)."""
    if "$patch" in patch:
        directive = patch["$patch"]
        if directive == "replace":
            return _clean({k: v for k, v in patch.items() if k != "$patch"})[1]
        if directive == "delete":
            return {}
        raise _internal(f"unknown patch type: {_gofmt(directive)} in map: {_gofmt(patch)}")
    original = {} if original is None else original
    _retain_keys(original, patch)
    _set_element_order(original, patch, schema)
    for k, v in patch.items():
        is_delete = k.startswith("$deleteFromPrimitiveList")
        if is_delete:
            k = _extract_key(k, "$deleteFromPrimitiveList")
        if v is None:
            original.pop(k, None)
            continue
        current = original.get(k, _MISSING)
        if current is _MISSING or _gotype(current) != _gotype(v) or not isinstance(v, (dict, list)):
            if not is_delete:
                keep, value = _clean(v)
                if keep:
                    original[k] = value
                else:
                    original.pop(k, None)
            continue
        field = schema.get(k, _NONE)
        if isinstance(v, dict):
            original[k] = _merge_map(current, v, field.sub)
        else:
            original[k] = _merge_list_field(current, v, field, is_delete)
    return original


def strategic_merge_patch(target: dict[str, Any], patch: Any, kind: str) -> dict[str, Any]:
    """Apply a strategic merge patch to an object of ``kind`` (Pod, Node, Namespace, Event; other kinds get the
    ObjectMeta rules only); returns a new object. A body that is not a JSON object is 400 (``json: cannot
    unmarshal array into Go value of type map[string]interface {}``); null changes nothing."""
    if isinstance(patch, (bytes, str)):
        patch = _decode(patch)
    if patch is None:
        return copy.deepcopy(target)
    if not isinstance(patch, dict):
        raise _bad(f"json: cannot unmarshal {_json_kind(patch)} into Go value of type map[string]interface {{}}")
    schema = SCHEMAS.get(kind, {"metadata": _F(sub=_META)})
    return _strip(_merge_map(copy.deepcopy(target), copy.deepcopy(patch), schema))


def _strip(v: Any) -> Any:
    """Drop any directive key left anywhere (a safety net; merging already consumes them)."""
    if isinstance(v, dict):
        return {k: _strip(x) for k, x in v.items() if not k.startswith(_DIRECTIVE_PREFIXES)}
    return [_strip(x) for x in v] if isinstance(v, list) else v
