"""The scheduler's cache: nodes and bound pods from the watches, plus the pods it assumed. Pure, no I/O.

Like kube-scheduler's cache (``pkg/scheduler/backend/cache``): a pod this scheduler decided is *assumed* on its
node at once, so the next decision counts it, and stays so until the watch of bound pods shows it bound (then
the watch's version counts) or its Binding failed (:meth:`ClusterCache.forget`). Every ``apply_*`` returns
whether the change may make an unschedulable pod schedulable (upstream's queueing hints, coarsely): a node added
or changed in what the filters read (spec, labels, allocatable), a bound pod deleted, resized or finished; not a
node's status heartbeat and not a kubelet status update.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from observatory.model.deltas import Deleted, Delta, Relisted, Upserted
from observatory.scheduling import PodInfo, Snapshot
from observatory.scheduling.pods import is_terminal
from observatory.scheduling.volumes import VolumeCatalog

__all__ = ["ClusterCache", "pod_key"]

Key = tuple[str, str]


def pod_key(obj: Mapping[str, Any]) -> Key:
    """``(namespace, name)``."""
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def _identity(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return str(meta.get("uid") or "") or "/".join(pod_key(obj))


def _node_facts(node: Mapping[str, Any]) -> tuple[Any, ...]:
    """What the filters read from a Node: spec (taints, unschedulable), labels, allocatable."""
    return (node.get("spec"), (node.get("metadata") or {}).get("labels"), (node.get("status") or {}).get("allocatable"))


class ClusterCache:
    """``nodes`` (name -> Node JSON), ``bound`` (pod uid -> Pod JSON), ``assumed`` ((namespace, name) -> PodInfo
    with its chosen node) and the :class:`~observatory.scheduling.Snapshot` built from all three."""

    def __init__(self) -> None:
        self.namespaces: dict[str, dict[str, Any]] | None = None
        """name -> Namespace JSON once the Namespaces are listed (pod affinity terms' namespace selectors read
        their labels); None while unknown (not listed yet, or listing them is forbidden)."""
        self.nodes: dict[str, dict[str, Any]] = {}
        self.bound: dict[str, dict[str, Any]] = {}
        self.assumed: dict[Key, PodInfo] = {}
        self.volumes = VolumeCatalog()
        """The PersistentVolumeClaims, PersistentVolumes and StorageClasses the volume plugins read, with the
        PV and PVC versions a Reserve assumed; hung on every Snapshot as ``Snapshot.volumes``."""
        self.snapshot = Snapshot()
        self.snapshot.volumes = self.volumes

    def apply_bound(self, delta: Delta) -> bool:
        """A delta of the bound pods' watch."""
        if isinstance(delta, Relisted):
            self.bound = {_identity(obj): dict(obj) for obj in delta.objs}
            return self.rebuild()
        if isinstance(delta, Upserted):
            ident = _identity(delta.obj)
            old = self.bound.get(ident)
            self.bound[ident] = dict(delta.obj)
            self.assumed.pop(pod_key(delta.obj), None)
            self.snapshot.add_pod(delta.obj)
            return old is not None and (old.get("spec") != delta.obj.get("spec")
                                        or is_terminal(old) != is_terminal(delta.obj))
        if isinstance(delta, Deleted):
            self.bound.pop(_identity(delta.obj), None)
            self.assumed.pop(pod_key(delta.obj), None)
            self.snapshot.remove_pod(delta.obj)
            return True
        return False

    def apply_node(self, delta: Delta) -> bool:
        """A delta of the nodes' watch."""
        if isinstance(delta, Relisted):
            self.nodes = {str((obj.get("metadata") or {}).get("name") or ""): dict(obj) for obj in delta.objs}
            return self.rebuild()
        if isinstance(delta, Upserted):
            name = str(delta.obj["metadata"]["name"])
            old = self.nodes.get(name)
            self.nodes[name] = dict(delta.obj)
            self.snapshot.set_node(delta.obj)
            return old is None or _node_facts(old) != _node_facts(delta.obj)
        if isinstance(delta, Deleted):
            name = str(delta.obj["metadata"]["name"])
            self.nodes.pop(name, None)
            self.snapshot.remove_node(name)
            return True
        return False

    def apply_namespace(self, delta: Delta) -> bool:
        """A delta of the Namespaces' watch; a change of labels may matter to a pod affinity term's namespace
        selector."""
        if isinstance(delta, Relisted):
            self.namespaces = {str((o.get("metadata") or {}).get("name") or ""): dict(o) for o in delta.objs}
            self.snapshot.namespaces = {}
            for obj in self.namespaces.values():
                self.snapshot.set_namespace(obj)
            return True
        if self.namespaces is None:
            self.namespaces = {}
        name = str((delta.obj.get("metadata") or {}).get("name") or "") if isinstance(delta, (Upserted, Deleted)) \
            else ""
        if isinstance(delta, Upserted):
            old = self.namespaces.get(name)
            self.namespaces[name] = dict(delta.obj)
            self.snapshot.set_namespace(delta.obj)
            return old is None or (old.get("metadata") or {}).get("labels") != (delta.obj.get("metadata") or {}).get(
                "labels")
        if isinstance(delta, Deleted):
            self.namespaces.pop(name, None)
            self.snapshot.remove_namespace(name)
            return True
        return False

    def apply_volume(self, kind: str, delta: Delta) -> bool:
        """A delta of the PersistentVolumeClaims', PersistentVolumes' or StorageClasses' watch (``kind`` is the
        resource). Any change may make a pod with claims schedulable (VolumeBinding registers Add and Update of all
        three)."""
        if isinstance(delta, Relisted):
            self.volumes.relist(kind, delta.objs)
            return True
        if isinstance(delta, Upserted):
            self.volumes.upsert(kind, delta.obj)
            return True
        if isinstance(delta, Deleted):
            self.volumes.delete(kind, delta.obj)
            return True
        return False

    def volumes_forbidden(self, kind: str) -> None:
        """``kind`` cannot be listed: the volume plugins stop deciding until it can."""
        self.volumes.blind.add(kind)

    def rebuild(self) -> bool:
        """A fresh Snapshot from the caches (after a relist), with the assumed pods; always a change."""
        self.snapshot = Snapshot((self.nodes[n] for n in sorted(self.nodes)), self.bound.values())
        self.snapshot.volumes = self.volumes
        if self.namespaces is not None:
            self.snapshot.namespaces = {}
            for obj in self.namespaces.values():
                self.snapshot.set_namespace(obj)
        for info in self.assumed.values():
            self.snapshot.add_pod(info)
        return True

    def assume(self, key: Key, info: PodInfo) -> None:
        """Count ``info`` (whose ``node_name`` is the chosen node) before its Binding is answered."""
        self.snapshot.add_pod(info)
        self.assumed[key] = info

    def forget(self, key: Key) -> None:
        """Drop the assumption for ``key`` (its Binding failed); the pod counts as the watch last saw it, if bound."""
        info = self.assumed.pop(key, None)
        if info is None:
            return
        self.snapshot.remove_pod(info)
        current = self.bound.get(info.identity)
        if current is not None:
            self.snapshot.add_pod(current)
