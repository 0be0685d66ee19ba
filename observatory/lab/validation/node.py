"""``ValidateNode`` and ``ValidateNodeUpdate`` of k/k ``pkg/apis/core/validation/validation.go``.

Node names are DNS subdomains; taints are validated at ``metadata.taints[i]`` (upstream passes the metadata path
to ``validateNodeTaints``): key a qualified name, value a label value (messages joined by ``;``), effect ``Required
value`` or one of NoSchedule, PreferNoSchedule, NoExecute, and one taint per key and effect: ``metadata.taints[1]:
Duplicate value: core.Taint{Key:"k", Value:"v", Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: taints must be
unique by key and effect pair``. Capacity and allocatable quantities (``status.capacity.cpu``) may not be negative and
integer resources must be whole. On update, ObjectMeta update rules, taints and resources again, duplicate
addresses, and ``node updates may not change podCIDR except from "" to valid`` / ``... providerID ...``.
"""

from __future__ import annotations

from typing import Any

from observatory.lab.selectors import go_quote
from observatory.lab.validation import field, names
from observatory.lab.validation.field import Cause
from observatory.lab.validation.meta import validate_label_name, validate_object_meta, validate_object_meta_update
from observatory.lab.validation.pod import _quantity_value
from observatory.lab.validation.scheduling import validate_taint_effect


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _go_taint(taint: dict[str, Any]) -> str:
    """``%#v`` of a ``core.Taint`` (a set ``timeAdded`` prints as a pointer, whose address Go shows)."""
    added = "(*v1.Time)(nil)" if taint.get("timeAdded") is None else "(*v1.Time)(0xc000000000)"
    return (f"core.Taint{{Key:{go_quote(taint.get('key') or '')}, Value:{go_quote(taint.get('value') or '')}, "
            f"Effect:{go_quote(taint.get('effect') or '')}, TimeAdded:{added}}}")


def validate_taints(taints: Any, path: str) -> list[Cause]:
    """``validateNodeTaints``."""
    causes: list[Cause] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints if isinstance(taints, list) else []):
        taint, at = _map(taint), f"{path}[{i}]"
        key, value, effect = taint.get("key") or "", taint.get("value") or "", taint.get("effect") or ""
        causes += validate_label_name(key, f"{at}.key")
        errs = names.is_valid_label_value(value)
        if errs:
            causes.append(field.invalid(f"{at}.value", value, ";".join(errs)))
        causes += validate_taint_effect(effect, False, f"{at}.effect")
        if (key, effect) in seen:
            causes.append(field.duplicate(at, field.GoValue(_go_taint(taint)),
                                          "taints must be unique by key and effect pair"))
            continue
        seen.add((key, effect))
    return causes


def _resources(node: dict[str, Any]) -> list[Cause]:
    """``ValidateNodeResources``."""
    status, causes = _map(node.get("status")), []
    for kind in ("capacity", "allocatable"):
        for name, raw in sorted(_map(status.get(kind)).items()):
            if isinstance(raw, (str, int, float)) and not isinstance(raw, bool):
                causes += _quantity_value(name, raw, f"status.{kind}.{name}")
    return causes


def validate_node(node: dict[str, Any]) -> list[Cause]:
    """``ValidateNode``."""
    causes = validate_object_meta(node.get("metadata"), False, names.name_is_dns_subdomain)
    spec = _map(node.get("spec"))
    if spec.get("taints"):
        causes += validate_taints(spec["taints"], "metadata.taints")
    return causes + _resources(node)


def validate_node_update(new: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """``ValidateNodeUpdate``."""
    causes = validate_object_meta_update(new.get("metadata"), old.get("metadata")) + _resources(new)
    seen: list[Any] = []
    for i, address in enumerate(_map(new.get("status")).get("addresses") or []):
        if address in seen and isinstance(address, dict):
            shown = f"core.NodeAddress{{Type:{go_quote(address.get('type') or '')}, " \
                    f"Address:{go_quote(address.get('address') or '')}}}"
            causes.append(field.duplicate(f"status.addresses[{i}]", field.GoValue(shown)))
        seen.append(address)
    spec, old_spec = _map(new.get("spec")), _map(old.get("spec"))
    old_cidrs, new_cidrs = old_spec.get("podCIDRs") or [], spec.get("podCIDRs") or []
    if old_cidrs:
        message = 'node updates may not change podCIDR except from "" to valid'
        if len(old_cidrs) != len(new_cidrs):
            causes.append(field.forbidden("spec.podCIDRs", message))
        else:
            causes += [field.forbidden("spec.podCIDRs", message) for a, b in zip(old_cidrs, new_cidrs, strict=True)
                       if a != b]
    if old_spec.get("providerID") and old_spec.get("providerID") != spec.get("providerID"):
        causes.append(field.forbidden("spec.providerID", 'node updates may not change providerID except from "" to '
                                      "valid"))
    if spec.get("taints"):
        causes += validate_taints(spec["taints"], "metadata.taints")
    return causes

