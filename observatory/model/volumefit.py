"""The volume plugins' verdicts in plain words, per node, from the same catalog the plugins read.

:func:`explain_volume` turns one :class:`~observatory.scheduling.verdicts.VolumeConflict` into a sentence (``PVC
data is bound to PV pv-3, whose node affinity needs topology.kubernetes.io/zone in (b); the node has
topology.kubernetes.io/zone=a``); :func:`explain_prefilter` says which claim a PreFilter rejection is about;
:func:`blind_note` is what a preview says when its cache holds no volume data, so it never claims a fit the
volume plugins might deny. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from observatory.scheduling.nodeaffinity import NodeSelectorTerm
from observatory.scheduling.nodeinfo import PodInfo, Snapshot
from observatory.scheduling.verdicts import VolumeConflict
from observatory.scheduling.volumebinding import ERR_UNBOUND_IMMEDIATE
from observatory.scheduling.volumes import VolumeCatalog

from .units import memory

__all__ = ["blind_note", "explain_prefilter", "explain_volume", "has_claims"]


def has_claims(info: PodInfo) -> bool:
    """Whether the pod mounts a PersistentVolumeClaim or a generic ephemeral volume."""
    return any(v.claim or v.ephemeral for v in info.volumes)


def blind_note(info: PodInfo, snapshot: Snapshot) -> str | None:
    """The note for every node when the pod has claims but the cache cannot run the volume plugins; else None."""
    if not has_claims(info):
        return None
    catalog = snapshot.volumes
    if catalog is not None and catalog.usable:
        return None
    missing = ", ".join(sorted(catalog.blind)) if catalog is not None else "PVCs, PVs and StorageClasses"
    return (f"volumes not checked: this prediction cannot see {missing}, so it cannot tell whether the pod's "
            "claims allow this node")


def _term_text(term: NodeSelectorTerm) -> str:
    parts = []
    for r in term.expressions:
        values = ", ".join(r.values)
        parts.append({"In": f"{r.key} in ({values})", "NotIn": f"{r.key} not in ({values})", "Exists": f"{r.key}",
                      "DoesNotExist": f"no {r.key}", "Gt": f"{r.key} > {values}", "Lt": f"{r.key} < {values}"}
                     .get(r.operator, f"{r.key} {r.operator} ({values})"))
    for r in term.fields:
        parts.append(f"{r.key} {r.operator} ({', '.join(r.values)}), which a PV's node affinity never matches")
    return " and ".join(parts) or "nothing"


def _node_has(terms: tuple[NodeSelectorTerm, ...], labels: Mapping[str, str]) -> str:
    keys = sorted({r.key for t in terms for r in t.expressions})
    have = [f"{k}={labels[k]}" for k in keys if k in labels]
    lacking = [k for k in keys if k not in labels]
    out = ", ".join(have)
    if lacking:
        out += (", " if out else "") + "no " + ", no ".join(lacking) + " label"
    return out


def _claim_name(key: str) -> str:
    return key.split("/", 1)[-1]


def _no_volume(conflict: VolumeConflict, catalog: VolumeCatalog, labels: Mapping[str, str]) -> str:
    name = _claim_name(conflict.claim)
    claim = catalog.claim(*conflict.claim.split("/", 1))
    size = f", {memory(claim.requested)}" if claim is not None and claim.requested else ""
    class_name = conflict.key
    cls = catalog.storage_class(class_name)
    if cls is None:
        why = f"StorageClass {class_name or '(none)'} does not exist"
    elif not cls.provisions:
        why = f"StorageClass {class_name} has no provisioner ({cls.provisioner or 'none set'})"
    elif not cls.topology_matches(labels):
        why = f"StorageClass {class_name} provisions only where its allowedTopologies match, not on this node"
    else:
        why = f"StorageClass {class_name} cannot provision here"
    return f"PVC {name} (class {class_name or '(none)'}{size}) has no available PV this node reaches, and {why}"


def explain_volume(conflict: VolumeConflict, snapshot: Snapshot, labels: Mapping[str, str]) -> str:
    """One volume plugin's rejection of a node, in words."""
    catalog = snapshot.volumes or VolumeCatalog()
    kind, name = conflict.kind, _claim_name(conflict.claim)
    if kind == "node-affinity":
        pv = catalog.volume(conflict.volume)
        if pv is None or not pv.node_affinity:
            return f"PVC {name} is bound to PV {conflict.volume}, whose node affinity this node does not match"
        needs = " or ".join(_term_text(t) for t in pv.node_affinity)
        has = _node_has(pv.node_affinity, labels)
        return (f"PVC {name} is bound to PV {pv.name}, whose node affinity needs {needs}"
                + (f"; the node has {has}" if has else ""))
    if kind == "pv-missing":
        return f"PVC {name} is bound to PV {conflict.volume}, which does not exist"
    if kind == "selected-node":
        return f"PVC {name} is being provisioned for node {conflict.key} (volume.kubernetes.io/selected-node)"
    if kind == "no-volume":
        return _no_volume(conflict, catalog, labels)
    if kind == "zone":
        values = ", ".join(conflict.values)
        value = labels.get(conflict.key)
        has = f"the node has {conflict.key}={value}" if value is not None else f"the node has no {conflict.key} label"
        return f"PV {conflict.volume} is labelled {conflict.key} in ({values}); {has}"
    if kind == "read-write-once-pod":
        holder = f"pod {conflict.holder}" if conflict.holder else "another pod"
        return (f"PVC {name} is ReadWriteOncePod and {holder} already uses it, which rules out every node until "
                "that pod is gone")
    if kind == "disk":
        return f"volume {conflict.volume} is a disk pod {conflict.holder} already mounts on this node"
    return kind


def explain_prefilter(reason: str, info: PodInfo, snapshot: Snapshot) -> str:
    """A volume PreFilter rejection (the same for every node), naming the claims behind it."""
    if reason != ERR_UNBOUND_IMMEDIATE or snapshot.volumes is None:
        return reason
    catalog = snapshot.volumes
    pod_name = info.key.split("/", 1)[-1]
    waiting = []
    for volume in info.volumes:
        if not volume.claim and not volume.ephemeral:
            continue
        claim = catalog.claim(info.namespace, volume.claim_name(pod_name))
        if claim is None or claim.fully_bound:
            continue
        cls = catalog.storage_class(claim.storage_class) if claim.storage_class else None
        if cls is not None and cls.delay_binding and not claim.volume_name:
            continue
        mode = "pre-bound to PV " + claim.volume_name if claim.volume_name else (
            f"class {claim.storage_class}, Immediate binding" if claim.storage_class else "no StorageClass")
        waiting.append(f"PVC {claim.name} ({mode})")
    if not waiting:
        return reason
    return (f"{', '.join(waiting)} {'is' if len(waiting) == 1 else 'are'} not bound yet: the PV controller must bind "
            "it before any node is considered")
