"""Addresses the simulated components use: a node's InternalIP, the IP the kubelet gives a pod, and the addresses
the components' requests come from (each kubelet from its node's InternalIP; kube-controller-manager, with the host's
network, from the control-plane node's; a pod such as local-path-provisioner from its pod IP)."""

from __future__ import annotations

import hashlib
from typing import Any

__all__ = ["control_plane_node", "node_internal_ip", "pod_ip"]

CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"


def node_internal_ip(node: dict[str, Any]) -> str:
    """The node's ``InternalIP`` address, "" when it has none."""
    for addr in (node.get("status") or {}).get("addresses") or []:
        if addr.get("type") == "InternalIP":
            return str(addr.get("address", ""))
    return ""


def pod_ip(pod: dict[str, Any], node: dict[str, Any]) -> str:
    """A stable address inside the node's podCIDR (``10.244.N.0/24`` style), derived from the pod's uid."""
    cidr = (node.get("spec") or {}).get("podCIDR") or "10.244.0.0/24"
    prefix = cidr.split("/")[0].rsplit(".", 1)[0]
    digest = hashlib.sha256(pod["metadata"].get("uid", pod["metadata"]["name"]).encode()).digest()
    return f"{prefix}.{2 + digest[0] % 250}"


def control_plane_node(nodes: Any) -> dict[str, Any] | None:
    """The first node labelled ``node-role.kubernetes.io/control-plane`` (kind's ``<cluster>-control-plane``)."""
    for node in nodes:
        if CONTROL_PLANE_LABEL in ((node.get("metadata") or {}).get("labels") or {}):
            return dict(node)
    return None
