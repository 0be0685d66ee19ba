"""Simulated node lifecycle controller: taints that follow a node's Ready condition and cordon.

kube-controller-manager's node lifecycle controller (``pkg/controller/nodelifecycle``, TaintNodesByCondition)
keeps ``node.kubernetes.io/not-ready:NoSchedule`` on a node whose Ready condition is False,
``node.kubernetes.io/unreachable:NoSchedule`` when it is Unknown, and ``node.kubernetes.io/unschedulable:NoSchedule``
while ``spec.unschedulable`` is true, and removes each when its cause goes. (Eviction through NoExecute taints is not
simulated.)
"""

from __future__ import annotations

import copy
import json
from typing import Any

from observatory.lab import errors
from observatory.lab.resources import CORE_V1
from observatory.lab.simulation.client import STRATEGIC_MERGE, Client
from observatory.lab.simulation.informer import Informer
from observatory.lab.simulation.statuspatch import node_taints_patch

CONDITION_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable",
                    "node.kubernetes.io/unschedulable")


def wanted_taints(node: dict[str, Any]) -> set[str]:
    """The controller-owned NoSchedule taint keys this node should carry."""
    wanted = set()
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            if cond.get("status") == "False":
                wanted.add("node.kubernetes.io/not-ready")
            elif cond.get("status") != "True":
                wanted.add("node.kubernetes.io/unreachable")
    if (node.get("spec") or {}).get("unschedulable"):
        wanted.add("node.kubernetes.io/unschedulable")
    return wanted


class NodeLifecycle:
    """Reconciles the condition taints of every node on each change."""

    def __init__(self, registry: Client) -> None:
        self.registry = registry
        self.nodes = Informer(registry.store, "nodes", self._on_node)

    async def run(self) -> None:
        for node in self.nodes.start():
            self._reconcile(node)
        await self.nodes.run()

    def _on_node(self, type_: str, node: dict[str, Any], old: dict[str, Any] | None) -> None:
        if type_ != "DELETED":
            self._reconcile(node)

    def _reconcile(self, node: dict[str, Any]) -> None:
        taints = list((node.get("spec") or {}).get("taints") or [])
        have = {t.get("key") for t in taints if t.get("effect") == "NoSchedule" and t.get("key") in CONDITION_TAINTS}
        want = wanted_taints(node)
        if have == want:
            return
        kept = [t for t in taints if not (t.get("effect") == "NoSchedule" and t.get("key") in CONDITION_TAINTS)]
        kept += [{"key": key, "effect": "NoSchedule"} for key in sorted(want)]
        patch = node_taints_patch(node, copy.deepcopy(kept))
        try:  # PatchNodeTaints: a strategic merge PATCH of the node, its resourceVersion as precondition
            self.registry.patch(CORE_V1["nodes"], "", node["metadata"]["name"], STRATEGIC_MERGE,
                                json.dumps(patch).encode())
        except errors.StatusError:
            pass  # changed meanwhile: the next event reconciles again
