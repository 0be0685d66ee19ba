"""The InterPodAffinity plugin's PreFilter and Filter: required pod affinity and anti-affinity.

Reproduces ``pkg/scheduler/framework/plugins/interpodaffinity/filtering.go`` of kube-scheduler v1.34 and the
terms as ``framework.NewPodInfo`` builds them (``pkg/scheduler/framework/types.go``):

* **Terms.** Only ``requiredDuringSchedulingIgnoredDuringExecution`` terms filter (the preferred ones score, in
  :mod:`.interpodaffinity_scoring`). A term's namespaces are its
  ``namespaces`` list, or the pod's own namespace when the list is empty and there is no ``namespaceSelector``
  (``getNamespacesFromPodAffinityTerm``); its ``namespaceSelector`` (absent: nothing, ``{}``: every namespace) and
  ``labelSelector`` (absent: nothing) are compiled as ``LabelSelectorAsSelector`` does. A term matches a pod when
  the pod's namespace is listed or its namespace's labels match the namespace selector, and the pod's labels match
  the label selector (``AffinityTerm.Matches``). For the incoming pod, the namespaces its namespace selector picks
  are merged into the list at PreFilter (``mergeAffinityTermNamespacesIfNotEmpty``).
* **PreFilter** counts, per topology pair ``(topologyKey, node's value)``: the existing pods whose required
  anti-affinity terms match the incoming pod (against the incoming pod's namespace labels); the existing pods that
  match *all* the incoming pod's affinity terms (each term counts the pod under its own topology key); the existing
  pods that match each incoming anti-affinity term. With none of these it returns Skip and Filter does not run.
* **Filter**, in upstream's order:

  1. ``node(s) didn't match pod affinity rules`` (UnschedulableAndUnresolvable): the node lacks a term's topology
     label, or a term's pair has no matching pod; except that the first pod of a group that has affinity to
     itself passes when no pod anywhere matches and the pod matches all its own terms;
  2. ``node(s) didn't match pod anti-affinity rules`` (Unschedulable): a term's pair on this node has a match;
  3. ``node(s) didn't satisfy existing pods anti-affinity rules`` (Unschedulable): any of the node's label pairs
     is a pair of an existing pod's matching anti-affinity term.

* **AddPod / RemovePod** (``updateWithPod``) keep the counts right when preemption's dry run removes victims.

Existing pods are those the :class:`~.nodeinfo.Snapshot` counts on nodes (bound or assumed, not terminal).
The ``matchLabelKeys``/``mismatchLabelKeys`` of a term are merged into its label selector by the API server when
the pod is created (MatchLabelKeysInPodAffinity); the scheduler reads the merged selector, as this does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from ._json import listed
from .labelselector import NOTHING, LabelSelector, compile_label_selector
from .verdicts import UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE, Code, Pair, PodAffinityConflict

if TYPE_CHECKING:
    from .nodeinfo import NodeInfo, PodInfo, Snapshot

__all__ = [
    "ERR_AFFINITY_RULES", "ERR_ANTI_AFFINITY_RULES", "ERR_EXISTING_ANTI_AFFINITY_RULES", "INTER_POD_AFFINITY",
    "AffinityTerm", "PodAffinityConflict", "PodAffinityState", "WeightedAffinityTerm", "parse_terms",
    "parse_weighted_terms", "prefilter",
]

INTER_POD_AFFINITY = "InterPodAffinity"
ERR_AFFINITY_RULES = "node(s) didn't match pod affinity rules"
ERR_ANTI_AFFINITY_RULES = "node(s) didn't match pod anti-affinity rules"
ERR_EXISTING_ANTI_AFFINITY_RULES = "node(s) didn't satisfy existing pods anti-affinity rules"

@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """One required ``PodAffinityTerm``, compiled (``fwk.AffinityTerm``)."""

    namespaces: frozenset[str]
    namespace_selector: LabelSelector
    selector: LabelSelector
    topology_key: str

    def matches(self, namespace: str, labels: Mapping[str, str], namespace_labels: Mapping[str, str] | None) -> bool:
        """``AffinityTerm.Matches``: the pod's namespace is listed or its labels match the namespace selector, and
        the pod's labels match the label selector. Unknown namespace labels count as none."""
        if namespace in self.namespaces or self.namespace_selector.matches(namespace_labels or {}):
            return self.selector.matches(labels)
        return False

    def describe(self) -> str:
        """``app=web`` over ``kubernetes.io/hostname``, for explanations."""
        return f"{self.selector.describe()} by {self.topology_key}"


class WeightedAffinityTerm(NamedTuple):
    """One preferred term (``fwk.WeightedAffinityTerm``): the compiled term and its weight."""

    term: AffinityTerm
    weight: int


def _compile_term(namespace: str, raw: Mapping[str, Any], errors: list[str]) -> AffinityTerm:
    """One ``PodAffinityTerm`` (``newAffinityTerm``): its namespaces, or the pod's own when neither a list nor a
    namespace selector is given; malformed selectors are appended to ``errors``."""
    names = [str(n) for n in listed(raw.get("namespaces"))]
    ns_raw = raw.get("namespaceSelector")
    if not names and ns_raw is None:
        names = [namespace]
    ns_selector = compile_label_selector(ns_raw) if ns_raw is not None else NOTHING
    selector = compile_label_selector(raw.get("labelSelector"))
    errors += [e for e in (ns_selector.error, selector.error) if e]
    return AffinityTerm(frozenset(names), ns_selector, selector, str(raw.get("topologyKey") or ""))


def parse_terms(namespace: str, pod_affinity: Any, field: str = "podAffinity") -> tuple[tuple[AffinityTerm, ...],
                                                                                       tuple[str, ...]]:
    """The required terms of ``spec.affinity.<field>`` (``podAffinity`` or ``podAntiAffinity``) of a pod in
    ``namespace``, and the errors of malformed selectors (upstream fails the pod's PodInfo with them)."""
    if not isinstance(pod_affinity, Mapping):
        return (), ()
    section = pod_affinity.get(field)
    if not isinstance(section, Mapping):
        return (), ()
    terms: list[AffinityTerm] = []
    errors: list[str] = []
    for raw in listed(section.get("requiredDuringSchedulingIgnoredDuringExecution")):
        if isinstance(raw, Mapping):
            terms.append(_compile_term(namespace, raw, errors))
    return tuple(terms), tuple(errors)


def parse_weighted_terms(namespace: str, pod_affinity: Any, field: str = "podAffinity") -> tuple[
        tuple[WeightedAffinityTerm, ...], tuple[str, ...]]:
    """The ``preferredDuringSchedulingIgnoredDuringExecution`` terms of ``spec.affinity.<field>``
    (``getWeightedAffinityTerms``): each ``podAffinityTerm`` compiled as a required one, with its ``weight``
    (1-100 by validation; a missing weight counts 0). Also the errors of malformed selectors."""
    if not isinstance(pod_affinity, Mapping):
        return (), ()
    section = pod_affinity.get(field)
    if not isinstance(section, Mapping):
        return (), ()
    terms: list[WeightedAffinityTerm] = []
    errors: list[str] = []
    for raw in listed(section.get("preferredDuringSchedulingIgnoredDuringExecution")):
        term = raw.get("podAffinityTerm") if isinstance(raw, Mapping) else None
        if not isinstance(term, Mapping):
            continue
        weight = raw.get("weight")
        weight = weight if isinstance(weight, int) and not isinstance(weight, bool) else 0
        terms.append(WeightedAffinityTerm(_compile_term(namespace, term, errors), weight))
    return tuple(terms), tuple(errors)


def _add(counts: Counter[Pair], labels: Mapping[str, str], key: str, value: int) -> None:
    topology = labels.get(key)
    if topology is None:
        return
    pair = (key, topology)
    counts[pair] += value
    if counts[pair] == 0:
        del counts[pair]


class PodAffinityState:
    """The PreFilter state of one scheduling cycle for the incoming ``pod`` (``preFilterState``)."""

    __slots__ = ("affinity", "affinity_terms", "anti", "anti_terms", "existing_anti", "namespace_labels", "pod")

    def __init__(self, pod: PodInfo, affinity_terms: tuple[AffinityTerm, ...], anti_terms: tuple[AffinityTerm, ...],
                 namespace_labels: Mapping[str, str] | None) -> None:
        self.pod = pod
        self.affinity_terms = affinity_terms
        self.anti_terms = anti_terms
        self.namespace_labels = namespace_labels
        self.existing_anti: Counter[Pair] = Counter()
        self.affinity: Counter[Pair] = Counter()
        self.anti: Counter[Pair] = Counter()

    def copy(self) -> PodAffinityState:
        out = PodAffinityState(self.pod, self.affinity_terms, self.anti_terms, self.namespace_labels)
        out.existing_anti, out.affinity, out.anti = Counter(self.existing_anti), Counter(self.affinity), Counter(
            self.anti)
        return out

    def _matches_all(self, other: PodInfo) -> bool:
        """``podMatchesAllAffinityTerms``: the incoming pod's affinity terms (namespaces merged) all match."""
        return bool(self.affinity_terms) and all(t.matches(other.namespace, other.labels, None)
                                                 for t in self.affinity_terms)

    def update_with_pod(self, other: PodInfo, node: NodeInfo, value: int) -> None:
        """``updateWithPod``: count ``other`` on ``node`` (``value`` 1) or stop counting it (-1)."""
        labels = node.labels
        pod = self.pod
        for term in other.required_anti_affinity:
            if term.matches(pod.namespace, pod.labels, self.namespace_labels):
                _add(self.existing_anti, labels, term.topology_key, value)
        if self._matches_all(other):
            for term in self.affinity_terms:
                _add(self.affinity, labels, term.topology_key, value)
        for term in self.anti_terms:
            if term.matches(other.namespace, other.labels, None):
                _add(self.anti, labels, term.topology_key, value)

    def filter(self, node: NodeInfo) -> tuple[Code, str, PodAffinityConflict] | None:
        """The node's InterPodAffinity status: None when it passes, else the code, the reason and the detail."""
        labels = node.labels
        missing: PodAffinityConflict | None = None
        for term in self.affinity_terms:
            topology = labels.get(term.topology_key)
            if topology is None:  # all topology labels must exist on the node
                return UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_AFFINITY_RULES, PodAffinityConflict("affinity", None,
                                                                                               term=term)
            if missing is None and self.affinity[(term.topology_key, topology)] <= 0:
                missing = PodAffinityConflict("affinity", (term.topology_key, topology), term=term)
        if missing is not None and not (not self.affinity and self._matches_all(self.pod)):
            return UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_AFFINITY_RULES, missing
        if self.anti:
            for term in self.anti_terms:
                topology = labels.get(term.topology_key)
                if topology is not None and self.anti[(term.topology_key, topology)] > 0:
                    pair = (term.topology_key, topology)
                    return UNSCHEDULABLE, ERR_ANTI_AFFINITY_RULES, PodAffinityConflict(
                        "anti-affinity", pair, self.anti[pair], term)
        if self.existing_anti:
            for key, topology in labels.items():
                count = self.existing_anti.get((key, topology), 0)
                if count > 0:
                    return UNSCHEDULABLE, ERR_EXISTING_ANTI_AFFINITY_RULES, PodAffinityConflict(
                        "existing-anti-affinity", (key, topology), count)
        return None


def _merge_namespaces(terms: Sequence[AffinityTerm], namespaces: Mapping[str, Mapping[str, str]] | None,
                      known: Sequence[str]) -> tuple[AffinityTerm, ...]:
    """``mergeAffinityTermNamespacesIfNotEmpty``: the namespaces a term's namespace selector picks join its list,
    and the selector becomes "nothing". Without namespace labels (``namespaces`` None) an "every namespace"
    selector still takes every namespace the snapshot's pods are in."""
    out = []
    for term in terms:
        selector = term.namespace_selector
        if selector.nothing:
            out.append(term)
            continue
        if namespaces is not None:
            picked = {name for name, labels in namespaces.items() if selector.matches(labels)}
        else:
            picked = set(known) if selector.everything else set()
        out.append(AffinityTerm(term.namespaces | picked, NOTHING, term.selector, term.topology_key))
    return tuple(out)


def prefilter(pod: PodInfo, snapshot: Snapshot) -> PodAffinityState | str | None:
    """InterPodAffinity's PreFilter for ``pod`` over ``snapshot``: the state for Filter, None for Skip, or the
    PreFilter's rejection text (a malformed selector: ``parsing pod: …``)."""
    if pod.affinity_errors:
        return "parsing pod: " + "; ".join(pod.affinity_errors)
    nodes_with_anti = [n for n in snapshot if n.anti_affinity_pods]
    if not nodes_with_anti and not pod.required_affinity and not pod.required_anti_affinity:
        return None
    namespaces = snapshot.namespaces
    if pod.required_affinity or pod.required_anti_affinity:
        known = sorted({p.namespace for n in snapshot for p in n.pods.values()}) if namespaces is None else []
        affinity_terms = _merge_namespaces(pod.required_affinity, namespaces, known)
        anti_terms = _merge_namespaces(pod.required_anti_affinity, namespaces, known)
    else:
        affinity_terms = anti_terms = ()
    state = PodAffinityState(pod, affinity_terms, anti_terms,
                             namespaces.get(pod.namespace) if namespaces is not None else None)
    for node in nodes_with_anti:
        labels = node.labels
        for other in node.pods.values():
            for term in other.required_anti_affinity:
                if term.matches(pod.namespace, pod.labels, state.namespace_labels):
                    _add(state.existing_anti, labels, term.topology_key, 1)
    if affinity_terms or anti_terms:
        for node in snapshot:
            labels = node.labels
            for other in node.pods.values():
                if state._matches_all(other):
                    for term in affinity_terms:
                        _add(state.affinity, labels, term.topology_key, 1)
                for term in anti_terms:
                    if term.matches(other.namespace, other.labels, None):
                        _add(state.anti, labels, term.topology_key, 1)
    if not state.existing_anti and not affinity_terms and not anti_terms:
        return None
    return state
