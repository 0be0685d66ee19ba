"""ObjectMeta validation of ``k8s.io/apimachinery/pkg/api/validation/objectmeta.go`` (``ValidateObjectMetaAccessor``,
``ValidateObjectMetaAccessorUpdate``) and ``pkg/apis/meta/v1/validation`` (``ValidateLabels``), on plain JSON dicts.

Create: ``metadata.generateName`` (the kind's name rule as a prefix), ``metadata.name`` (``Required value: name or
generateName is required``, else the kind's name rule), ``metadata.namespace`` (``Required value`` / the namespace
rule / ``Forbidden: not allowed on this type``), ``metadata.generation`` (``must be greater than or equal to 0``),
labels (each key a qualified name, each value a label value, both reported at ``metadata.labels``), annotations (keys
qualified names, case-insensitively; ``metadata.annotations: Too long: may not be more than 262144 bytes`` over 256 KiB
of keys plus values), ownerReferences (``version must not be empty``, ``must not be empty``), finalizers (qualified
names; ``finalizer orphan and foregroundDeletion cannot be both set``).

Update: ``no new finalizers can be added if the object is being deleted, found new finalizers []string{"x"}``,
``metadata.resourceVersion: Invalid value: "": must be specified for an update``, ``must not be decremented`` for the
generation, ``Invalid value: ...: field is immutable`` (``FieldImmutableErrorMsg``) for name, namespace, uid,
creationTimestamp, deletionTimestamp and deletionGracePeriodSeconds, then labels, annotations, ownerReferences and
finalizers again. Go iterates maps in random order; here keys are taken sorted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from observatory.lab.validation import field, names
from observatory.lab.validation.field import Cause

NameFn = Callable[[str, bool], list[str]]

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * (1 << 10)
"""``TotalAnnotationSizeLimitB``: 262144 bytes of annotation keys and values."""
FIELD_IMMUTABLE = "field is immutable"
NEGATIVE = "must be greater than or equal to 0"
"""``IsNegativeErrorMsg``."""


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def go_string_slice(values: list[str]) -> str:
    """``%#v`` of a ``[]string``: ``[]string{"a", "b"}``."""
    from observatory.lab.selectors import go_quote
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def validate_labels(labels: Any, path: str) -> list[Cause]:
    """``ValidateLabels``: ``ValidateLabelName`` of each key, then ``IsValidLabelValue`` of its value."""
    causes: list[Cause] = []
    for key, value in sorted(_map(labels).items()):
        causes += [field.invalid(path, key, msg) for msg in names.is_qualified_name(key)]
        if isinstance(value, str):
            causes += [field.invalid(path, value, msg) for msg in names.is_valid_label_value(value)]
    return causes


def validate_label_name(key: str, path: str) -> list[Cause]:
    """``ValidateLabelName``."""
    return [field.invalid(path, key, msg) for msg in names.is_qualified_name(key)]


def validate_annotations(annotations: Any, path: str) -> list[Cause]:
    """``ValidateAnnotations``: keys are qualified names (lower-cased first); 256 KiB of keys plus values in all."""
    items = sorted(_map(annotations).items())
    causes = [field.invalid(path, key, msg) for key, _ in items for msg in names.is_qualified_name(key.lower())]
    size = sum(names.blen(k) + names.blen(v if isinstance(v, str) else "") for k, v in items)
    if size > TOTAL_ANNOTATION_SIZE_LIMIT:
        causes.append(field.too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return causes


def validate_owner_references(refs: Any, path: str) -> list[Cause]:
    """``validateOwnerReference`` for each reference (the banned-owner and single-controller checks, whose values
    Go prints with pointer addresses, are not reproduced)."""
    causes: list[Cause] = []
    for ref in refs if isinstance(refs, list) else []:
        ref = _map(ref)
        api_version = ref.get("apiVersion") or ""
        parts = api_version.split("/")
        version = parts[-1] if len(parts) <= 2 else ""
        if not version:
            causes.append(field.invalid(f"{path}.apiVersion", api_version, "version must not be empty"))
        for key in ("kind", "name", "uid"):
            if not ref.get(key):
                causes.append(field.invalid(f"{path}.{key}", ref.get(key) or "", "must not be empty"))
    return causes


def validate_finalizers(finalizers: Any, path: str) -> list[Cause]:
    """``ValidateFinalizers``."""
    values = _strings(finalizers)
    causes = [field.invalid(path, f, msg) for f in values for msg in names.is_qualified_name(f)]
    if "orphan" in values and "foregroundDeletion" in values:
        causes.append(field.invalid(path, field.GoValue(go_string_slice(values)),
                                    "finalizer orphan and foregroundDeletion cannot be both set"))
    return causes


def _common(meta: dict[str, Any], namespaced: bool) -> list[Cause]:
    """``validateObjectMetaAccessorWithOptsCommon``."""
    causes: list[Cause] = []
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            causes.append(field.required("metadata.namespace"))
        else:
            causes += [field.invalid("metadata.namespace", namespace, msg)
                       for msg in names.name_is_dns_label(namespace)]
    elif namespace:
        causes.append(field.forbidden("metadata.namespace", "not allowed on this type"))
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        causes.append(field.invalid("metadata.generation", generation, NEGATIVE))
    causes += validate_labels(meta.get("labels"), "metadata.labels")
    causes += validate_annotations(meta.get("annotations"), "metadata.annotations")
    causes += validate_owner_references(meta.get("ownerReferences"), "metadata.ownerReferences")
    causes += validate_finalizers(meta.get("finalizers"), "metadata.finalizers")
    return causes


def validate_object_meta(meta: Any, namespaced: bool, name_fn: NameFn = names.name_is_dns_subdomain) -> list[Cause]:
    """``ValidateObjectMetaAccessor``: the metadata of a new object, after name generation."""
    meta = _map(meta)
    causes: list[Cause] = []
    generate_name = meta.get("generateName") or ""
    if generate_name:
        causes += [field.invalid("metadata.generateName", generate_name, msg) for msg in name_fn(generate_name, True)]
    name = meta.get("name") or ""
    if not name:
        causes.append(field.required("metadata.name", "name or generateName is required"))
    else:
        causes += [field.invalid("metadata.name", name, msg) for msg in name_fn(name, False)]
    return causes + _common(meta, namespaced)


def _immutable(path: str, new: Any, old: Any) -> list[Cause]:
    if new == old:
        return []
    return [field.invalid(path, new, FIELD_IMMUTABLE)]


def validate_object_meta_update(new: Any, old: Any) -> list[Cause]:
    """``ValidateObjectMetaAccessorUpdate``."""
    new, old = _map(new), _map(old)
    causes: list[Cause] = []
    if old.get("deletionTimestamp"):
        extra = sorted(set(_strings(new.get("finalizers"))) - set(_strings(old.get("finalizers"))))
        if extra:
            causes.append(field.forbidden("metadata.finalizers", "no new finalizers can be added if the object is "
                                          f"being deleted, found new finalizers {go_string_slice(extra)}"))
    if not new.get("resourceVersion"):
        causes.append(field.invalid("metadata.resourceVersion", new.get("resourceVersion") or "",
                                    "must be specified for an update"))
    if (new.get("generation") or 0) < (old.get("generation") or 0):
        causes.append(field.invalid("metadata.generation", new.get("generation") or 0, "must not be decremented"))
    for key in ("name", "namespace", "uid"):
        causes += _immutable(f"metadata.{key}", new.get(key) or "", old.get(key) or "")
    for key in ("creationTimestamp", "deletionTimestamp"):
        causes += _immutable(f"metadata.{key}", new.get(key), old.get(key))
    causes += _immutable("metadata.deletionGracePeriodSeconds", new.get("deletionGracePeriodSeconds"),
                         old.get("deletionGracePeriodSeconds"))
    causes += validate_labels(new.get("labels"), "metadata.labels")
    causes += validate_annotations(new.get("annotations"), "metadata.annotations")
    causes += validate_owner_references(new.get("ownerReferences"), "metadata.ownerReferences")
    causes += validate_finalizers(new.get("finalizers"), "metadata.finalizers")
    return causes


def before_update(new: dict[str, Any], old: dict[str, Any]) -> None:
    """What ``rest.BeforeUpdate`` restores before validating: the generation, a missing uid, the creation and
    deletion timestamps and a dropped deletion grace period come from the stored object. Mutates ``new``."""
    meta, old_meta = new.setdefault("metadata", {}), _map(old.get("metadata"))
    meta.pop("generation", None)
    for key in ("generation", "creationTimestamp", "deletionTimestamp"):
        if old_meta.get(key) is not None:
            meta[key] = old_meta[key]
    if not meta.get("uid") and old_meta.get("uid"):
        meta["uid"] = old_meta["uid"]
    if meta.get("deletionGracePeriodSeconds") is None and old_meta.get("deletionGracePeriodSeconds") is not None:
        meta["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]


def common_update(new: Any, old: Any, namespaced: bool) -> list[Cause]:
    """``rest.validateCommonFields``, run for every kind before its own update validation: the create-time meta
    checks with the path-segment name rule, then the update checks."""
    return validate_object_meta(new, namespaced, names.path_segment_name) + validate_object_meta_update(new, old)
