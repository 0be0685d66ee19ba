"""Scoring: plugin formulas and weights of the default profile, normalisation, and deterministic selection."""

from __future__ import annotations

from observatory.scheduling import SCORE_WEIGHTS, Snapshot, schedule_one, seeded_tie_breaker
from observatory.scheduling.scoring import default_normalize_score

from .objects import expr, node, pod


def test_weights_of_the_default_profile():
    assert list(SCORE_WEIGHTS.items()) == [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1),
                                           ("PodTopologySpread", 2), ("InterPodAffinity", 2),
                                           ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1)]


def test_least_allocated_node_wins():
    nodes = [node("busy"), node("idle"), node("half")]
    pods = [pod("a", node_name="busy", requests={"cpu": "3", "memory": "6Gi"}),
            pod("b", node_name="half", requests={"cpu": "2", "memory": "4Gi"})]
    decision = schedule_one(pod(requests={"cpu": "500m", "memory": "1Gi"}), nodes, pods)
    assert decision.node == "idle"
    totals = {n: s.total for n, s in decision.scores.items()}
    assert totals["idle"] > totals["half"] > totals["busy"]


def test_score_numbers_by_hand():
    """cpu 1 of 4 (pod) and no memory request on an empty 4 cpu / 8Gi node.

    LeastAllocated uses non-zero requests: cpu (4000-1000)*100//4000 = 75; memory defaults to 200Mi:
    (8Gi-200Mi)*100//8Gi = 97; mean 172//2 = 86. BalancedAllocation uses real requests: fractions 0.25 and 0,
    std 0.125, int(87.5) = 87. TaintToleration: no PreferNoSchedule taints anywhere, reversed -> 100, weight 3.
    ImageLocality: the node reports no images -> 0. PodTopologySpread and InterPodAffinity skip (no constraints,
    no pod affinity anywhere).
    """
    decision = schedule_one(pod(requests={"cpu": "1"}), [node("n")])
    score = decision.scores["n"]
    assert score.plugins == ("TaintToleration", "NodeResourcesFit", "NodeResourcesBalancedAllocation",
                             "ImageLocality")
    assert score.raw == (0, 86, 87, 0)
    assert score.by_plugin == {"TaintToleration": 100, "NodeResourcesFit": 86, "NodeResourcesBalancedAllocation": 87,
                               "ImageLocality": 0}
    assert score.weighted == {"TaintToleration": 300, "NodeResourcesFit": 86, "NodeResourcesBalancedAllocation": 87,
                              "ImageLocality": 0}
    assert score.total == 473


def test_balanced_allocation_is_skipped_for_best_effort_pods():
    score = schedule_one(pod(), [node("n")]).scores["n"]
    assert "NodeResourcesBalancedAllocation" not in score.plugins
    assert score.raw == (0, 97, 0)  # cpu 100m default: 97; memory 200Mi default: 97; ImageLocality 0


def test_prefer_no_schedule_taints_lower_the_score():
    soft = {"key": "spot", "effect": "PreferNoSchedule"}
    nodes = [node("a", taints=[soft]), node("b"), node("c", taints=[soft, {"key": "x", "effect": "PreferNoSchedule"}])]
    decision = schedule_one(pod(), nodes)
    assert decision.node == "b"
    assert {n: s.by_plugin["TaintToleration"] for n, s in decision.scores.items()} == {"a": 50, "b": 100, "c": 0}
    tolerant = pod(tolerations=[{"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"}])
    assert schedule_one(tolerant, nodes).scores["a"].raw[0] == 0


def test_preferred_node_affinity_is_normalised_and_weighted():
    preferred = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "preference": {"matchExpressions": [expr("zone", "In", "a")]}},
        {"weight": 30, "preference": {"matchExpressions": [expr("disk", "In", "ssd")]}},
    ]}}
    nodes = [node("n1", labels={"zone": "a"}), node("n2", labels={"disk": "ssd"}), node("n3")]
    decision = schedule_one(pod(affinity=preferred), nodes)
    assert decision.node == "n2"
    assert {n: s.by_plugin["NodeAffinity"] for n, s in decision.scores.items()} == {"n1": 33, "n2": 100, "n3": 0}
    assert decision.scores["n2"].weighted["NodeAffinity"] == 200


def test_default_normalize_score():
    assert default_normalize_score([0, 0], reverse=False) == [0, 0]
    assert default_normalize_score([0, 0], reverse=True) == [100, 100]
    assert default_normalize_score([1, 2, 3], reverse=False) == [33, 66, 100]
    assert default_normalize_score([1, 2, 3], reverse=True) == [67, 34, 0]


def test_only_feasible_nodes_are_scored():
    decision = schedule_one(pod(requests={"cpu": "3"}), [node("small", cpu="2"), node("big")])
    assert list(decision.scores) == ["big"] and decision.feasible == ("big",)


def test_ties_go_to_the_lowest_name_by_default():
    nodes = [node("zeta"), node("alpha"), node("mid")]
    assert schedule_one(pod(), nodes).node == "alpha"


def test_tie_breaker_hook_gets_the_tied_names_in_node_order():
    seen = []

    def last(tied):
        seen.append(list(tied))
        return tied[-1]

    assert schedule_one(pod(), [node("zeta"), node("alpha"), node("mid")], tie_breaker=last).node == "mid"
    assert seen == [["zeta", "alpha", "mid"]]


def test_tie_breaker_is_not_called_without_a_tie():
    def boom(tied):
        raise AssertionError("no tie expected")

    assert schedule_one(pod(requests={"cpu": "1"}), [node("a", cpu="8"), node("b")], tie_breaker=boom).node == "a"


def test_seeded_tie_breaker_is_reproducible():
    nodes = [node(f"n{i}") for i in range(8)]
    runs = []
    for _ in range(2):
        breaker = seeded_tie_breaker(42)
        runs.append([schedule_one(pod(), nodes, tie_breaker=breaker).node for _ in range(5)])
    assert runs[0] == runs[1]


def test_spreading_with_a_snapshot():
    snapshot = Snapshot([node("a"), node("b")])
    placed = []
    for i in range(4):
        p = pod(f"p{i}", requests={"cpu": "500m", "memory": "512Mi"})
        decision = schedule_one(p, snapshot)
        snapshot.assume(p, decision.node)
        placed.append(decision.node)
    assert placed == ["a", "b", "a", "b"]


def test_scores_are_a_mapping_built_on_lookup():
    nodes = [node(f"n{i:02d}") for i in range(12)]
    scores = schedule_one(pod(requests={"cpu": "1"}), nodes).scores
    assert list(scores) == [f"n{i:02d}" for i in range(12)] and len(scores) == 12
    assert "nope" not in scores and scores.get("nope") is None
    by_lookup = {name: scores[name].total for name in scores}  # more than eight lookups: through an index
    assert by_lookup == scores.total_by_node() and len(set(by_lookup.values())) == 1
    assert dict(scores.items())["n03"] == scores["n03"]
