"""Validation of the pod fields kube-scheduler reads (k/k ``pkg/apis/core/validation/validation.go``).

* ``ValidateTolerations``: the key a qualified name; an empty key needs ``operator`` Exists (``operator must be Exists
  when `key` is empty, which means "match all values and all keys"``); ``tolerationSeconds`` needs effect NoExecute
  (``effect must be 'NoExecute' when `tolerationSeconds` is set``); with Equal (or no operator) the value must be a
  label value (its messages joined by ``;``, reported at ``operator``), with Exists it must be empty (``value must be
  empty when `operator` is 'Exists'``); other operators are ``Unsupported value``; an effect, when set, is one of
  NoSchedule, PreferNoSchedule, NoExecute.
* ``validateTaintEffect``, shared with node taints.
* ``validateSchedulingGates``: each gate a qualified name, no duplicates (``Duplicate value``).
* node affinity (``ValidateNodeSelectorRequirement``: ``must be specified when `operator` is 'In' or 'NotIn'``,
  ``may not be specified when `operator` is 'Exists' or 'DoesNotExist'``, ``must be specified single value when
  `operator` is 'Lt' or 'Gt'``, ``not a valid selector operator``; required terms need ``must have at least one node
  selector term``; preferred weights ``must be in the range 1-100``; ``matchFields`` only ``metadata.name`` with one
  value), pod (anti-)affinity terms (``topologyKey: Required value: can not be empty``, namespaces, weights) and
  ``validateTopologySpreadConstraints`` (``must be greater than zero``, ``can not be empty``, whenUnsatisfiable
  DoNotSchedule/ScheduleAnyway, no repeated ``{topologyKey, whenUnsatisfiable}``, minDomains).

Label selectors inside affinity and spread terms are checked for their keys and values only.
"""

from __future__ import annotations

from typing import Any

from observatory.lab.validation import field, names
from observatory.lab.validation.field import Cause
from observatory.lab.validation.meta import validate_label_name

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def validate_taint_effect(effect: Any, allow_empty: bool, path: str) -> list[Cause]:
    effect = effect or ""
    if not effect:
        return [] if allow_empty else [field.required(path)]
    if effect not in TAINT_EFFECTS:
        return [field.not_supported(path, effect, TAINT_EFFECTS)]
    return []


def validate_tolerations(tolerations: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for i, tol in enumerate(_list(tolerations)):
        tol, at = _map(tol), f"{path}[{i}]"
        key, operator, value = tol.get("key") or "", tol.get("operator") or "", tol.get("value") or ""
        effect = tol.get("effect") or ""
        if key:
            causes += validate_label_name(key, f"{at}.key")
        if not key and operator != "Exists":
            causes.append(field.invalid(f"{at}.operator", operator, "operator must be Exists when `key` is empty, "
                                        'which means "match all values and all keys"'))
        if tol.get("tolerationSeconds") is not None and effect != "NoExecute":
            causes.append(field.invalid(f"{at}.effect", effect,
                                        "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if operator in ("Equal", ""):
            errs = names.is_valid_label_value(value)
            if errs:
                causes.append(field.invalid(f"{at}.operator", value, ";".join(errs)))
        elif operator == "Exists":
            if value:
                causes.append(field.invalid(f"{at}.operator", value, "value must be empty when `operator` is 'Exists'"))
        else:
            causes.append(field.not_supported(f"{at}.operator", operator, ("Equal", "Exists")))
        if effect:
            causes += validate_taint_effect(effect, True, f"{at}.effect")
    return causes


def validate_scheduling_gates(gates: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, gate in enumerate(_list(gates)):
        name = _map(gate).get("name") or ""
        causes += [field.invalid(f"{path}[{i}]", name, msg) for msg in names.is_qualified_name(name)]
        if name in seen:
            causes.append(field.duplicate(f"{path}[{i}]", name))
        seen.add(name)
    return causes


def _node_selector_requirement(req: dict[str, Any], check_values: bool, path: str) -> list[Cause]:
    causes: list[Cause] = []
    operator, values = req.get("operator") or "", _list(req.get("values"))
    if operator in ("In", "NotIn"):
        if not values:
            causes.append(field.required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            causes.append(field.forbidden(f"{path}.values",
                                          "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            causes.append(field.required(f"{path}.values",
                                         "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        causes.append(field.invalid(f"{path}.operator", operator, "not a valid selector operator"))
    causes += validate_label_name(req.get("key") or "", f"{path}.key")
    if check_values:
        for j, value in enumerate(values):
            if isinstance(value, str):
                causes += [field.invalid(f"{path}.values[{j}]", value, msg)
                           for msg in names.is_valid_label_value(value)]
    return causes


def _node_field_requirement(req: dict[str, Any], path: str) -> list[Cause]:
    causes: list[Cause] = []
    operator, values = req.get("operator") or "", _list(req.get("values"))
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            causes.append(field.required(f"{path}.values", "must be only one value when `operator` is 'In' or "
                                         "'NotIn' for node field selector"))
    else:
        causes.append(field.invalid(f"{path}.operator", operator, "not a valid selector operator"))
    key = req.get("key") or ""
    if key != "metadata.name":
        causes.append(field.invalid(f"{path}.key", key, "not a valid field selector key"))
    else:
        for j, value in enumerate(values):
            if isinstance(value, str):
                causes += [field.invalid(f"{path}.values[{j}]", value, msg)
                           for msg in names.name_is_dns_subdomain(value)]
    return causes


def _node_selector_term(term: dict[str, Any], check_values: bool, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for j, req in enumerate(_list(term.get("matchExpressions"))):
        causes += _node_selector_requirement(_map(req), check_values, f"{path}.matchExpressions[{j}]")
    for j, req in enumerate(_list(term.get("matchFields"))):
        causes += _node_field_requirement(_map(req), f"{path}.matchFields[{j}]")
    return causes


def _weight(weight: Any, path: str) -> list[Cause]:
    if not isinstance(weight, int) or not 0 < weight <= 100:
        return [field.invalid(path, weight if isinstance(weight, int) else 0, "must be in the range 1-100")]
    return []


def _label_selector(selector: Any, path: str) -> list[Cause]:
    """The keys and values of a ``metav1.LabelSelector`` (``ValidateLabelSelector``'s label checks)."""
    selector = _map(selector)
    causes = [c for k, v in sorted(_map(selector.get("matchLabels")).items())
              for c in validate_label_name(k, f"{path}.matchLabels")
              + ([field.invalid(f"{path}.matchLabels", v, msg) for msg in names.is_valid_label_value(v)]
                 if isinstance(v, str) else [])]
    for j, expr in enumerate(_list(selector.get("matchExpressions"))):
        causes += validate_label_name(_map(expr).get("key") or "", f"{path}.matchExpressions[{j}].key")
    return causes


def _pod_affinity_term(term: dict[str, Any], path: str) -> list[Cause]:
    causes = _label_selector(term.get("labelSelector"), f"{path}.labelSelector")
    for ns in _list(term.get("namespaces")):
        if isinstance(ns, str):
            causes += [field.invalid(f"{path}.namespace", ns, msg) for msg in names.name_is_dns_label(ns)]
    key = term.get("topologyKey") or ""
    if not key:
        causes.append(field.required(f"{path}.topologyKey", "can not be empty"))
    return causes + validate_label_name(key, f"{path}.topologyKey")


def _pod_affinity(affinity: dict[str, Any], path: str) -> list[Cause]:
    causes: list[Cause] = []
    required = "requiredDuringSchedulingIgnoredDuringExecution"
    preferred = "preferredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(_list(affinity.get(required))):
        causes += _pod_affinity_term(_map(term), f"{path}.{required}[{i}]")
    for i, weighted in enumerate(_list(affinity.get(preferred))):
        weighted = _map(weighted)
        causes += _weight(weighted.get("weight"), f"{path}.{preferred}[{i}].weight")
        causes += _pod_affinity_term(_map(weighted.get("podAffinityTerm")), f"{path}.{preferred}[{i}].podAffinityTerm")
    return causes


def validate_affinity(affinity: Any, path: str) -> list[Cause]:
    affinity, causes = _map(affinity), []
    node = _map(affinity.get("nodeAffinity"))
    required = "requiredDuringSchedulingIgnoredDuringExecution"
    preferred = "preferredDuringSchedulingIgnoredDuringExecution"
    if node.get(required) is not None:
        terms_path = f"{path}.nodeAffinity.{required}.nodeSelectorTerms"
        terms = _list(_map(node[required]).get("nodeSelectorTerms"))
        if not terms:
            causes.append(field.required(terms_path, "must have at least one node selector term"))
        for i, term in enumerate(terms):
            causes += _node_selector_term(_map(term), True, f"{terms_path}[{i}]")
    for i, term in enumerate(_list(node.get(preferred))):
        term, at = _map(term), f"{path}.nodeAffinity.{preferred}[{i}]"
        causes += _weight(term.get("weight"), f"{at}.weight")
        causes += _node_selector_term(_map(term.get("preference")), False, f"{at}.preference")
    for kind in ("podAffinity", "podAntiAffinity"):
        if affinity.get(kind) is not None:
            causes += _pod_affinity(_map(affinity[kind]), f"{path}.{kind}")
    return causes


def validate_topology_spread(constraints: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    items = [_map(c) for c in _list(constraints)]
    for i, c in enumerate(items):
        at = f"{path}[{i}]"
        raw_skew = c.get("maxSkew")
        max_skew = raw_skew if isinstance(raw_skew, int) else 0
        if max_skew <= 0:
            causes.append(field.invalid(f"{at}.maxSkew", max_skew, "must be greater than zero"))
        key, action = c.get("topologyKey") or "", c.get("whenUnsatisfiable") or ""
        if not key:
            causes.append(field.required(f"{at}.topologyKey", "can not be empty"))
        if action not in ("DoNotSchedule", "ScheduleAnyway"):
            causes.append(field.not_supported(f"{at}.whenUnsatisfiable", action, ("DoNotSchedule", "ScheduleAnyway")))
        if any((o.get("topologyKey") or "", o.get("whenUnsatisfiable") or "") == (key, action) for o in items[i + 1:]):
            causes.append(field.duplicate(f"{at}.{{topologyKey, whenUnsatisfiable}}", f"{{{key}, {action}}}"))
        min_domains = c.get("minDomains")
        if isinstance(min_domains, int):
            if min_domains <= 0:
                causes.append(field.invalid(f"{at}.minDomains", min_domains, "must be greater than zero"))
            if action != "DoNotSchedule":
                causes.append(field.invalid(f"{at}.minDomains", min_domains, "can only use minDomains if "
                                            f"whenUnsatisfiable=DoNotSchedule, not {action}"))
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = c.get(policy)
            if value is not None and value not in ("Honor", "Ignore"):
                causes.append(field.not_supported(f"{at}.{policy}", value, ("Honor", "Ignore")))
        causes += _label_selector(c.get("labelSelector"), f"{at}.labelSelector")
    return causes
