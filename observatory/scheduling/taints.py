"""Taints and tolerations, matched as upstream does.

Reproduces ``k8s.io/api core/v1/toleration.go`` ``Toleration.ToleratesTaint`` and
``k8s.io/component-helpers scheduling/corev1/helpers.go`` ``TolerationsTolerateTaint`` /
``FindMatchingUntoleratedTaint`` (v1.34.1):

* a toleration with an ``effect`` matches only that effect; an empty effect matches every effect;
* a toleration with a ``key`` matches only that key; an empty key matches every key (with ``Exists``, that
  tolerates everything; API validation forbids an empty key with ``Equal``, but the code compares values then);
* operator ``Exists`` ignores the value; ``Equal`` (or no operator) needs the same value; any other operator
  tolerates nothing;
* the first untolerated taint in ``spec.taints`` order is the one reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ._json import listed

__all__ = ["Taint", "Toleration", "find_untolerated_taint", "parse_taints", "parse_tolerations", "tolerates"]

NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "PreferNoSchedule", "NoExecute"


@dataclass(frozen=True, slots=True)
class Taint:
    """``spec.taints[i]`` of a Node: ``key``, ``value`` (``""`` when absent) and ``effect``."""

    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class Toleration:
    """``spec.tolerations[i]`` of a Pod. ``operator`` is ``""``, ``Equal`` or ``Exists``."""

    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return self.operator == "Exists"


def _str(raw: Any) -> str:
    return raw if isinstance(raw, str) else ""


def parse_taints(node: Mapping[str, Any]) -> tuple[Taint, ...]:
    """A Node's ``spec.taints`` (malformed entries skipped)."""
    spec = node.get("spec") if isinstance(node, Mapping) else None
    raw = spec.get("taints") if isinstance(spec, Mapping) else None
    return tuple(Taint(_str(t.get("key")), _str(t.get("value")), _str(t.get("effect")))
                 for t in listed(raw) if isinstance(t, Mapping))


def parse_tolerations(pod: Mapping[str, Any]) -> tuple[Toleration, ...]:
    """A Pod's ``spec.tolerations`` (malformed entries skipped)."""
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    raw = spec.get("tolerations") if isinstance(spec, Mapping) else None
    return tuple(Toleration(_str(t.get("key")), _str(t.get("operator")), _str(t.get("value")), _str(t.get("effect")))
                 for t in listed(raw) if isinstance(t, Mapping))


def tolerates(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    """``TolerationsTolerateTaint``: any toleration tolerates ``taint``."""
    return any(t.tolerates(taint) for t in tolerations)


def find_untolerated_taint(taints: Iterable[Taint], tolerations: tuple[Toleration, ...],
                           effects: tuple[str, ...] = (NO_SCHEDULE, NO_EXECUTE)) -> Taint | None:
    """``FindMatchingUntoleratedTaint`` with the filter of ``DoNotScheduleTaintsFilterFunc`` (only NoSchedule and
    NoExecute taints count by default): the first such taint no toleration tolerates, or None."""
    for taint in taints:
        if taint.effect in effects and not tolerates(tolerations, taint):
            return taint
    return None
