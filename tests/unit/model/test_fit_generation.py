"""ClusterState.fit_generation: the node-fit preview is reused while nothing it reads changed (under churn
the Why pane no longer recomputes every node's fit on every repaint)."""

from __future__ import annotations

import copy

from observatory.lab.scenarios.scale import generate
from observatory.model.deltas import Relisted, Upserted
from observatory.model.state import ClusterState


def cluster() -> tuple[ClusterState, list[dict], list[dict]]:
    docs = generate("nodes=3,pods=30")
    nodes = [d for d in docs if d["kind"] == "Node"]
    pods = [d for d in docs if d["kind"] == "Pod"]
    state = ClusterState()
    state.apply(Relisted("nodes", tuple(nodes), "1"))
    state.apply(Relisted("pods", tuple(pods), "1"))
    return state, nodes, pods


def running(pods: list[dict]) -> dict:
    return copy.deepcopy(next(p for p in pods if p["status"].get("phase") == "Running"))


def test_a_container_restart_keeps_the_generation_and_the_preview():
    state, _, pods = cluster()
    pod = running(pods)
    before = state.fit_generation
    pod["status"]["containerStatuses"][0]["restartCount"] += 1
    pod["metadata"]["resourceVersion"] = "999"
    assert state.apply(Upserted("pods", pod, "MODIFIED"))  # the pod itself did change
    assert state.fit_generation == before


def test_what_a_preview_reads_moves_the_generation():
    state, nodes, pods = cluster()
    pod = running(pods)
    seen = {state.fit_generation}

    bigger = copy.deepcopy(pod)
    bigger["spec"]["containers"][0].setdefault("resources", {})["requests"] = {"cpu": "3", "memory": "1Gi"}
    state.apply(Upserted("pods", bigger, "MODIFIED"))
    assert state.fit_generation not in seen
    seen.add(state.fit_generation)

    done = copy.deepcopy(bigger)
    done["status"]["phase"] = "Succeeded"  # no longer counts on its node
    state.apply(Upserted("pods", done, "MODIFIED"))
    assert state.fit_generation not in seen
    seen.add(state.fit_generation)

    cordoned = copy.deepcopy(nodes[0])
    cordoned["spec"]["unschedulable"] = True
    state.apply(Upserted("nodes", cordoned, "MODIFIED"))
    assert state.fit_generation not in seen
