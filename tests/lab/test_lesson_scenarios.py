"""The ``affinity`` and ``spread`` scenarios: what each pod teaches is what the scheduler does with it.

Each refused pod's expected FailedScheduling message is pinned here in kube-scheduler v1.34.1's FitError format
(``schedule_one.go``: ``0/N nodes are available: <sorted histogram>.`` then DRA's ``no new claims to deallocate, ``
and DefaultPreemption's ``preemption: ...`` tail), with the reasons of ``interpodaffinity/filtering.go`` and
``podtopologyspread/filtering.go``. Three checks per scenario: the file's comment quotes the message; observatory's
scheduling package, run on the loaded manifests, gives it; the lab's own scheduler writes it into the pod's
FailedScheduling event and binds the pods the scenario says it binds.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from observatory.embedded import EmbeddedLab
from observatory.lab import scenarios
from observatory.lab.scenarios import load_scenario
from observatory.scheduling import schedule_one
from observatory.settings import LabSettings

TAINT = "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"
DRA = "no new claims to deallocate, "

REFUSED: dict[str, dict[str, str]] = {
    "affinity": {
        "web-2": (f"0/2 nodes are available: 1 node(s) didn't match pod anti-affinity rules, 1 {TAINT}. {DRA}"
                  "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
                  "1 Preemption is not helpful for scheduling."),
        "cache": (f"0/2 nodes are available: 1 node(s) didn't match pod affinity rules, 1 {TAINT}. {DRA}"
                  "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
        "noisy": (f"0/2 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules, 1 {TAINT}. "
                  f"{DRA}preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
                  "1 Preemption is not helpful for scheduling."),
    },
    "spread": {
        "web-in-zone-a": (f"0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 {TAINT}, "
                          f"2 node(s) didn't match pod topology spread constraints. {DRA}preemption: 0/4 nodes are "
                          "available: 2 No preemption victims found for incoming pod, 2 Preemption is not helpful "
                          "for scheduling."),
        "web-on-racks": (f"0/4 nodes are available: 1 {TAINT}, 3 node(s) didn't match pod topology spread "
                         f"constraints (missing required label). {DRA}preemption: 0/4 nodes are available: "
                         "4 Preemption is not helpful for scheduling."),
    },
}
PLACED: dict[str, dict[str, str]] = {
    "affinity": {"web-friend": "pair-worker"},
    "spread": {"web-3": "spread-worker3"},
}


def comments_text(name: str) -> str:
    """The scenario file's comment lines joined with spaces (quoted messages wrap across lines)."""
    lines = (scenarios.SCENARIO_DIR / f"{name}.yaml").read_text(encoding="utf-8").splitlines()
    return " ".join(line[1:].strip() for line in lines if line.startswith("#"))


def pods_of(manifests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {m["metadata"]["name"]: m for m in manifests if m["kind"] == "Pod"}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_the_scenario_comments_quote_each_refusal(name: str) -> None:
    text = comments_text(name)
    for pod, message in REFUSED[name].items():
        assert message in text, pod


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_the_scheduling_package_refuses_and_places_as_the_scenario_says(name: str) -> None:
    manifests = load_scenario(name)
    nodes = [m for m in manifests if m["kind"] == "Node"]
    pods = pods_of(manifests)
    bound = [p for p in pods.values() if p["spec"].get("nodeName")]
    for pod, message in REFUSED[name].items():
        decision = schedule_one(pods[pod], nodes, bound)
        assert (decision.node, decision.message) == (None, message), pod
    for pod, node in PLACED[name].items():
        assert schedule_one(pods[pod], nodes, bound).node == node, pod


async def _get(session: aiohttp.ClientSession, path: str) -> list[dict[str, Any]]:
    async with session.get(path) as resp:
        assert resp.status == 200, await resp.text()
        items: list[dict[str, Any]] = (await resp.json())["items"]
        return items


@pytest.mark.parametrize("name", sorted(REFUSED))
async def test_the_lab_scheduler_writes_the_same_events(tmp_path: Path, name: str) -> None:
    lab = EmbeddedLab(LabSettings(), scenario=name, kubeconfig_path=tmp_path / "kc")
    await lab.start()
    seen: dict[str, str] = {}
    placed: dict[str, str] = {}

    try:
        async with aiohttp.ClientSession(base_url=lab.url) as session:
            deadline = asyncio.get_running_loop().time() + 15.0
            while not (set(REFUSED[name]) <= set(seen) and set(PLACED[name]) <= set(placed)):
                assert asyncio.get_running_loop().time() < deadline, f"events {sorted(seen)}, placed {placed}"
                await asyncio.sleep(0.05)
                for event in await _get(session, "/api/v1/namespaces/sched-lab/events"):
                    if event["reason"] == "FailedScheduling":
                        seen.setdefault(event["involvedObject"]["name"], event["message"])
                for pod in await _get(session, "/api/v1/namespaces/sched-lab/pods"):
                    if pod["spec"].get("nodeName"):
                        placed[pod["metadata"]["name"]] = pod["spec"]["nodeName"]
    finally:
        await lab.stop()
    assert {pod: seen[pod] for pod in REFUSED[name]} == REFUSED[name]
    assert {pod: placed[pod] for pod in PLACED[name]} == PLACED[name]
    assert not set(REFUSED[name]) & set(placed)
