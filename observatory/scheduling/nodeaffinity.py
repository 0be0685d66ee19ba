"""``spec.nodeSelector`` and node affinity, matched as upstream does.

Reproduces ``k8s.io/component-helpers scheduling/corev1/nodeaffinity/nodeaffinity.go`` (``GetRequiredNodeAffinity``,
``LazyErrorNodeSelector``, ``PreferredSchedulingTerms``), the ``k8s.io/apimachinery pkg/labels`` requirement
semantics it builds on, and the PreFilter of ``pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go``
(v1.34.1):

* ``nodeSelector``: every key must be present with exactly that value;
* required affinity: ``nodeSelectorTerms`` are ORed, an empty term selects nothing, no term at all matches nothing;
  inside a term ``matchExpressions`` (labels) and ``matchFields`` (only ``metadata.name``) are ANDed;
* label operators ``In``, ``NotIn`` (true when the label is absent), ``Exists``, ``DoesNotExist``, ``Gt``, ``Lt``
  (one base-10 int64 value; a node label that is not an integer does not match);
* field operators ``In`` / ``NotIn`` with exactly one value;
* a malformed requirement makes its term match nothing ("parsing errors are ignored for backwards compatibility"),
  recorded in ``errors``. Label key and value syntax is not re-validated here (the API server does that).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._json import listed

__all__ = ["NodeSelectorTerm", "PodNodeAffinity", "Requirement", "compile_pod_affinity"]

_INT64 = re.compile(r"^[+-]?[0-9]+$")
_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1
METADATA_NAME = "metadata.name"


def _int64(text: str) -> int | None:
    """Go ``strconv.ParseInt(text, 10, 64)``, or None when it would fail."""
    if not _INT64.match(text):
        return None
    n = int(text)
    return n if _INT64_MIN <= n <= _INT64_MAX else None


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``matchExpressions`` (labels) or ``matchFields`` entry. ``error`` is set when it is malformed."""

    key: str
    operator: str
    values: tuple[str, ...]
    error: str | None = None

    def matches_labels(self, labels: Mapping[str, str]) -> bool:
        op, has = self.operator, self.key in labels
        if op == "In":
            return has and labels[self.key] in self.values
        if op == "NotIn":
            return not has or labels[self.key] not in self.values
        if op == "Exists":
            return has
        if op == "DoesNotExist":
            return not has
        if not has:  # Gt, Lt
            return False
        mine, theirs = _int64(labels[self.key]), _int64(self.values[0])
        if mine is None or theirs is None:
            return False
        return mine > theirs if op == "Gt" else mine < theirs

    def matches_fields(self, fields: Mapping[str, str]) -> bool:
        got = fields.get(self.key, "")
        return got == self.values[0] if self.operator == "In" else got != self.values[0]


def _label_requirement(raw: Mapping[str, Any]) -> Requirement:
    key, op = str(raw.get("key", "")), str(raw.get("operator", ""))
    values = tuple(str(v) for v in listed(raw.get("values")))
    error = None
    if op in ("In", "NotIn") and not values:
        error = "for 'in', 'notin' operators, values set can't be empty"
    elif op in ("Exists", "DoesNotExist") and values:
        error = "values set must be empty for exists and does not exist"
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            error = "for 'Gt', 'Lt' operators, exactly one value is required"
        elif _int64(values[0]) is None:
            error = "for 'Gt', 'Lt' operators, the value must be an integer"
    elif op not in ("In", "NotIn", "Exists", "DoesNotExist"):
        error = f'"{op}" is not a valid node selector operator'
    return Requirement(key, op, values, error)


def _field_requirement(raw: Mapping[str, Any]) -> Requirement:
    key, op = str(raw.get("key", "")), str(raw.get("operator", ""))
    values = tuple(str(v) for v in listed(raw.get("values")))
    error = None
    if op not in ("In", "NotIn"):
        error = f'Unsupported value: "{op}": supported values: "In", "NotIn"'
    elif len(values) != 1:
        error = "must have one element"
    return Requirement(key, op, values, error)


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """A ``NodeSelectorTerm``: its label and field requirements (ANDed)."""

    expressions: tuple[Requirement, ...]
    fields: tuple[Requirement, ...]

    @property
    def errors(self) -> tuple[str, ...]:
        return tuple(f"{r.key}: {r.error}" for r in self.expressions + self.fields if r.error)

    def matches(self, labels: Mapping[str, str], name: str) -> bool:
        if self.errors:
            return False
        if not all(r.matches_labels(labels) for r in self.expressions):
            return False
        if self.fields and name:
            node_fields = {METADATA_NAME: name}
            return all(r.matches_fields(node_fields) for r in self.fields)
        return True


def _term(raw: Any) -> NodeSelectorTerm | None:
    """None for an empty (or malformed) term, which selects nothing."""
    if not isinstance(raw, Mapping):
        return None
    exprs = [e for e in listed(raw.get("matchExpressions")) if isinstance(e, Mapping)]
    fields = [f for f in listed(raw.get("matchFields")) if isinstance(f, Mapping)]
    if not exprs and not fields:
        return None
    return NodeSelectorTerm(tuple(map(_label_requirement, exprs)), tuple(map(_field_requirement, fields)))


@dataclass(frozen=True, slots=True)
class PodNodeAffinity:
    """The node-affinity part of one Pod, compiled once.

    ``node_selector``: ``spec.nodeSelector`` or None. ``required``: the parsed required terms, or None when the
    pod has no ``requiredDuringSchedulingIgnoredDuringExecution``. ``preferred``: ``(weight, term)`` pairs with a
    non-zero weight. ``node_names``: the PreFilter's node-name restriction from ``matchFields metadata.name In``
    terms (None = every node); an empty set means the terms conflict."""

    node_selector: Mapping[str, str] | None
    required: tuple[NodeSelectorTerm, ...] | None
    preferred: tuple[tuple[int, NodeSelectorTerm], ...]
    node_names: frozenset[str] | None

    @property
    def filters(self) -> bool:
        """False when the NodeAffinity Filter has nothing to check (PreFilter returns Skip)."""
        return self.node_selector is not None or self.required is not None

    def selector_misses(self, labels: Mapping[str, str]) -> tuple[tuple[str, str, str | None], ...]:
        """``(key, wanted, actual or None)`` for each ``nodeSelector`` entry this node's labels fail."""
        return tuple((k, v, labels.get(k)) for k, v in (self.node_selector or {}).items() if labels.get(k) != v)

    def required_matches(self, labels: Mapping[str, str], name: str) -> bool:
        """Whether required affinity holds (True when the pod has none)."""
        return self.required is None or any(t.matches(labels, name) for t in self.required)

    def matches(self, labels: Mapping[str, str], name: str) -> bool:
        """``RequiredNodeAffinity.Match``: nodeSelector, then the required terms."""
        return not self.selector_misses(labels) and self.required_matches(labels, name)

    def preferred_score(self, labels: Mapping[str, str], name: str) -> int:
        """``PreferredSchedulingTerms.Score``: the sum of the weights of the matching preferred terms."""
        return sum(w for w, t in self.preferred if t.matches(labels, name))


def _prefilter_node_names(raw_terms: list) -> frozenset[str] | None:
    names: set[str] | None = None
    for t in raw_terms:
        term_names: set[str] | None = None
        for r in listed(t.get("matchFields")) if isinstance(t, Mapping) else ():
            if isinstance(r, Mapping) and r.get("key") == METADATA_NAME and r.get("operator") == "In":
                s = {str(v) for v in listed(r.get("values"))}
                term_names = s if term_names is None else term_names & s
        if term_names is None:
            return None  # a term without a name restriction: every node is eligible (terms are ORed)
        names = term_names if names is None else names | term_names
    return None if names is None else frozenset(names)


def compile_pod_affinity(pod: Mapping[str, Any]) -> PodNodeAffinity:
    """Compile ``spec.nodeSelector`` and ``spec.affinity.nodeAffinity`` of a Pod (JSON as served)."""
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    spec = spec if isinstance(spec, Mapping) else {}
    selector = spec.get("nodeSelector")
    node_selector = {str(k): str(v) for k, v in selector.items()} if isinstance(selector, Mapping) else None
    affinity = spec.get("affinity")
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, Mapping) else None
    node_affinity = node_affinity if isinstance(node_affinity, Mapping) else {}
    required_raw = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    required, node_names = None, None
    if isinstance(required_raw, Mapping):
        raw_terms = list(listed(required_raw.get("nodeSelectorTerms")))
        required = tuple(t for t in map(_term, raw_terms) if t is not None)
        if raw_terms:
            node_names = _prefilter_node_names(raw_terms)
    preferred = []
    for p in listed(node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution")):
        if not isinstance(p, Mapping) or not isinstance(p.get("weight"), int) or not p.get("weight"):
            continue
        term = _term(p.get("preference"))
        if term is not None and not term.errors:
            preferred.append((int(p["weight"]), term))
    return PodNodeAffinity(node_selector, required, tuple(preferred), node_names)
