"""Builders for Node and Pod JSON as the API serves them, and the reference ``pair`` cluster (§4.3a)."""

from __future__ import annotations

from typing import Any

CONTROL_PLANE = "node-role.kubernetes.io/control-plane"


def node(name: str, *, cpu: str = "4", memory: str = "8Gi", pods: str = "110", labels: dict | None = None,
         taints: list[dict] | None = None, unschedulable: bool = False, **allocatable: str) -> dict[str, Any]:
    """A Ready node with ``status.allocatable`` cpu/memory/pods (plus extra resources given as keyword arguments,
    ``_`` in the keyword standing for ``/`` and ``__`` for ``.``: ``example__com_foo="2"``)."""
    alloc = {"cpu": cpu, "memory": memory, "pods": pods, "ephemeral-storage": "102625208Ki"}
    alloc.update({k.replace("__", ".").replace("_", "/"): v for k, v in allocatable.items()})
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": {"allocatable": alloc, "capacity": dict(alloc)},
    }


def pair() -> list[dict[str, Any]]:
    """The reference ``pair`` cluster: ``pair-control-plane`` labelled and tainted
    ``node-role.kubernetes.io/control-plane:NoSchedule``, and an untainted ``pair-worker``; 4 cpu, 8Gi, 110 pods."""
    return [
        node("pair-control-plane", labels={CONTROL_PLANE: ""},
             taints=[{"key": CONTROL_PLANE, "effect": "NoSchedule"}]),
        node("pair-worker"),
    ]


def pod(name: str = "web", *, namespace: str = "default", node_name: str | None = None,
        requests: dict[str, str] | None = None, priority: int | None = None, phase: str | None = None,
        uid: str | None = None, **spec: Any) -> dict[str, Any]:
    """A one-container pod (``requests`` on that container); other keyword arguments go into ``spec``."""
    container: dict[str, Any] = {"name": "app", "image": "registry.k8s.io/pause:3.9"}
    if requests is not None:
        container["resources"] = {"requests": requests}
    body: dict[str, Any] = {"containers": [container], **spec}
    if node_name:
        body["nodeName"] = node_name
    if priority is not None:
        body["priority"] = priority
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": name, "namespace": namespace}, "spec": body,
                           "status": {"phase": phase or ("Running" if node_name else "Pending")}}
    if uid:
        obj["metadata"]["uid"] = uid
    return obj


def required_affinity(*terms: dict) -> dict[str, Any]:
    """``spec.affinity`` with required node affinity made of ``terms``."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    """One ``matchExpressions`` / ``matchFields`` requirement."""
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out
