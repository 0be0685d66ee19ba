"""The InterPodAffinity plugin's PreScore, Score and NormalizeScore: preferred pod affinity and anti-affinity.

Reproduces ``pkg/scheduler/framework/plugins/interpodaffinity/scoring.go`` of kube-scheduler v1.34.1 with the
default args (``hardPodAffinityWeight: 1``, ``ignorePreferredTermsOfExistingPods: false``):

* **PreScore** walks every node when the incoming pod has preferred affinity or anti-affinity terms, otherwise only
  the nodes running pods with any pod (anti-)affinity (``HavePodsWithAffinityList``, and on them only those pods).
  For each existing pod on a node with labels, with the node's value of each term's topology key:

  - each preferred affinity term of the incoming pod that matches the existing pod adds its weight, each preferred
    anti-affinity term subtracts it (the incoming pod's namespace selectors merged into its namespaces first);
  - each *required* affinity term of the existing pod that matches the incoming pod adds ``hardPodAffinityWeight``;
  - each preferred affinity term of the existing pod that matches the incoming pod adds its weight, each preferred
    anti-affinity term subtracts it (against the incoming pod's namespace labels).

  The sums are kept per ``(topologyKey, value)``. No pair touched at all: ``Skip`` (the plugin does not score).
* **Score**: a node's score is the sum of the pairs its labels carry.
* **NormalizeScore** (min-max): ``int(100 * (score - min) / (max - min))`` in float, and 0 everywhere when
  ``max == min``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .interpodaffinity import WeightedAffinityTerm, _merge_namespaces
from .scoring_helpers import MAX_NODE_SCORE

if TYPE_CHECKING:
    from .nodeinfo import NodeInfo, PodInfo, Snapshot

__all__ = ["HARD_POD_AFFINITY_WEIGHT", "TopologyScore", "inter_pod_affinity_normalize", "inter_pod_affinity_prescore",
           "inter_pod_affinity_score"]

HARD_POD_AFFINITY_WEIGHT = 1
"""``InterPodAffinityArgs.HardPodAffinityWeight`` default (``pkg/scheduler/apis/config/v1/defaults.go``)."""

TopologyScore = dict[str, dict[str, int]]
"""topologyKey -> topology value -> summed weight (``scoreMap``)."""


def _merged(terms: Sequence[WeightedAffinityTerm], snapshot: Snapshot) -> tuple[WeightedAffinityTerm, ...]:
    if not terms:
        return ()
    namespaces = snapshot.namespaces
    known: list[str] = []
    if namespaces is None and any(t.term.namespace_selector.everything for t in terms):
        known = sorted({ns for n in snapshot for ns in n.pod_namespaces})
    merged = _merge_namespaces([t.term for t in terms], namespaces, known)
    return tuple(WeightedAffinityTerm(term, t.weight) for term, t in zip(merged, terms, strict=True))


def _add(scores: TopologyScore, labels: Mapping[str, str], key: str, value: int) -> None:
    topology = labels.get(key)
    if topology is not None:
        pairs = scores.setdefault(key, {})
        pairs[topology] = pairs.get(topology, 0) + value


def inter_pod_affinity_prescore(pod: PodInfo, snapshot: Snapshot,
                                hard_pod_affinity_weight: int = HARD_POD_AFFINITY_WEIGHT) -> TopologyScore | None:
    """InterPodAffinity's PreScore for ``pod``: the topology scores, or None for ``Skip``."""
    has_constraints = bool(pod.preferred_affinity or pod.preferred_anti_affinity)
    nodes = list(snapshot) if has_constraints else [n for n in snapshot if n.affinity_pods]
    if not nodes:
        return None
    affinity = _merged(pod.preferred_affinity, snapshot)
    anti = _merged(pod.preferred_anti_affinity, snapshot)
    namespaces = snapshot.namespaces
    ns_labels = namespaces.get(pod.namespace) if namespaces is not None else None
    namespace, labels = pod.namespace, pod.labels
    # The incoming pod's merged terms match on namespace list and label selector only (their namespace selectors
    # were merged away), so a pod of another namespace is passed over without a call.
    incoming = [(t.namespaces, t.selector, t.topology_key, w) for t, w in affinity]
    incoming += [(t.namespaces, t.selector, t.topology_key, -w) for t, w in anti]
    wanted = frozenset().union(*(t[0] for t in incoming))
    scores: TopologyScore = {}
    for node in nodes:
        node_labels = node.labels
        if not node_labels or (not node.affinity_pods and wanted.isdisjoint(node.pod_namespaces)):
            continue  # nothing on this node can add to a pair
        for other in node.pods.values():
            if other.namespace in wanted:
                for term_namespaces, selector, key, weight in incoming:
                    if other.namespace in term_namespaces and selector.matches(other.labels):
                        _add(scores, node_labels, key, weight)
            if not other.with_affinity:
                continue
            if hard_pod_affinity_weight > 0:
                for required in other.required_affinity:
                    if required.matches(namespace, labels, ns_labels):
                        _add(scores, node_labels, required.topology_key, hard_pod_affinity_weight)
            for term, weight in other.preferred_affinity:
                if term.matches(namespace, labels, ns_labels):
                    _add(scores, node_labels, term.topology_key, weight)
            for term, weight in other.preferred_anti_affinity:
                if term.matches(namespace, labels, ns_labels):
                    _add(scores, node_labels, term.topology_key, -weight)
    return scores or None


def inter_pod_affinity_score(state: TopologyScore, nodes: Sequence[NodeInfo]) -> list[int]:
    """Score: per node, the sum of the topology scores of the pairs on its labels."""
    out = []
    for node in nodes:
        labels = node.labels
        total = 0
        for key, values in state.items():
            value = labels.get(key)
            if value is not None:
                total += values.get(value, 0)
        out.append(total)
    return out


def inter_pod_affinity_normalize(scores: Sequence[int]) -> list[int]:
    """NormalizeScore: min-max to 0-100 (float, truncated); all 0 when every score is equal."""
    if not scores:
        return []
    low, high = min(scores), max(scores)
    spread = high - low
    if spread <= 0:
        return [0] * len(scores)
    return [int(float(MAX_NODE_SCORE) * (float(s - low) / float(spread))) for s in scores]
