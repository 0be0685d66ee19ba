"""``metav1.LabelSelector`` as kube-scheduler matches it: ``LabelSelectorAsSelector`` in
``k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go`` over the ``pkg/labels`` requirement semantics.

* ``None`` (the field is absent or null) selects **nothing** (``labels.Nothing()``);
* ``{}`` (no ``matchLabels``, no ``matchExpressions``) selects **everything**;
* otherwise every ``matchLabels`` pair (an ``=`` requirement) and every ``matchExpressions`` entry must hold:
  ``In`` (the label is present with one of the values), ``NotIn`` (absent, or none of the values), ``Exists``,
  ``DoesNotExist``.
* A malformed selector (an unknown operator, ``In``/``NotIn`` without values, ``Exists``/``DoesNotExist`` with
  values, a value that is no label value, a part that is not an object) is an error, as ``LabelSelectorAsSelector``
  returns one (``labels.NewRequirement``); :attr:`error` describes it (in these words, not upstream's
  field-error wording: the API server refuses such pods at creation, so kube-scheduler meets them only through
  objects written before validation existed) and the selector matches nothing. Label keys are the API server's
  to check.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["EVERYTHING", "NOTHING", "LabelSelector", "compile_label_selector"]

_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
"""``validation.IsValidLabelValue``: at most 63 characters of this form (the API server checks keys)."""


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A compiled selector. ``requirements`` are ``(key, operator, values)`` with the API's operator names;
    ``everything``/``nothing`` mark the two special selectors; ``error`` a malformed one (it matches nothing)."""

    requirements: tuple[tuple[str, str, frozenset[str]], ...] = ()
    everything: bool = False
    nothing: bool = False
    error: str | None = None

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.everything:
            return True
        if self.nothing:
            return False
        for key, op, values in self.requirements:
            value = labels.get(key)
            if op == "In" or op == "=":
                if value is None or value not in values:
                    return False
            elif op == "NotIn":
                if value is not None and value in values:
                    return False
            elif op == "Exists":
                if value is None:
                    return False
            elif value is not None:  # DoesNotExist
                return False
        return True

    def describe(self) -> str:
        """The selector as ``kubectl`` writes one (``app=web,tier in (a,b)``), for explanations."""
        if self.everything:
            return "every label set"
        if self.nothing:
            return "no labels"
        parts = []
        for key, op, values in self.requirements:
            listed = ",".join(sorted(values))
            parts.append({"=": f"{key}={listed}", "In": f"{key} in ({listed})", "NotIn": f"{key} notin ({listed})",
                          "Exists": key, "DoesNotExist": f"!{key}"}[op])
        return ",".join(parts)


EVERYTHING = LabelSelector(everything=True)
NOTHING = LabelSelector(nothing=True)


def compile_label_selector(raw: Any) -> LabelSelector:
    """Compile a ``metav1.LabelSelector`` JSON object (see the module docstring)."""
    if raw is None:
        return NOTHING
    if not isinstance(raw, Mapping):
        return LabelSelector(nothing=True, error=f"a label selector must be an object, not {type(raw).__name__}")
    match_labels = raw.get("matchLabels") or {}
    expressions = raw.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping) or not isinstance(expressions, list):
        return LabelSelector(nothing=True, error="matchLabels must be an object and matchExpressions a list")
    if not match_labels and not expressions:
        return EVERYTHING
    requirements: list[tuple[str, str, frozenset[str]]] = [
        (str(k), "=", frozenset((str(v),))) for k, v in match_labels.items()]
    for expr in expressions:
        if not isinstance(expr, Mapping):
            return LabelSelector(nothing=True, error="a matchExpressions entry must be an object")
        key, op = str(expr.get("key") or ""), expr.get("operator")
        values = expr.get("values") or []
        if op not in _OPERATORS:
            return LabelSelector(nothing=True, error=f'"{op}" is not a valid label selector operator')
        if not isinstance(values, list):
            return LabelSelector(nothing=True, error=f"values of {key} must be a list")
        if op in ("In", "NotIn") and not values:
            return LabelSelector(nothing=True,
                                 error="for 'in', 'notin' operators, values set can't be empty")
        if op in ("Exists", "DoesNotExist") and values:
            return LabelSelector(nothing=True,
                                 error="values set must be empty for exists and does not exist")
        for value in values:
            text = str(value)
            if len(text) > 63 or not _LABEL_VALUE.fullmatch(text):
                return LabelSelector(nothing=True, error=f"values of {key}: invalid label value {text!r}")
        requirements.append((key, op, frozenset(str(v) for v in values)))
    # labels.NewSelector sorts its requirements by key; matching does not depend on the order
    return LabelSelector(tuple(sorted(requirements, key=lambda r: r[0])))
