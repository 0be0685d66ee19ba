"""The VolumeRestrictions plugin: in-tree disks in use on the node, and ReadWriteOncePod claims in use anywhere.

Reproduces ``pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go`` of kube-scheduler v1.34.1:

* **PreFilter**: each ``persistentVolumeClaim`` volume's claim must exist (``persistentvolumeclaim "X" not found``,
  UnschedulableAndUnresolvable); the claims whose ``accessModes`` hold ``ReadWriteOncePod`` are counted against
  the pods already placed in the whole cluster (``StorageInfos().IsPVCUsedByPods``: one conflict per such claim
  that some scheduled pod of the namespace mounts). No in-tree disk and no conflict: Skip.
* **Filter**, Unschedulable (so preemption may help): ``node(s) had no available disk`` when a pod on the node
  mounts the same GCE PD (unless both read-only), AWS EBS volume, iSCSI IQN (unless both read-only) or RBD image
  (a shared monitor, same pool and image, unless both read-only); then ``node has pod using PersistentVolumeClaim
  with the same name and ReadWriteOncePod access mode`` on **every** node while the conflict count is above 0.
* **AddPod / RemovePod** (preemption's dry run): the count moves by the number of the pod's
  ``persistentVolumeClaim`` volumes whose claim name is one of the incoming pod's ReadWriteOncePod claims (upstream
  compares the names only, not the namespaces).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .verdicts import VolumeConflict
from .volumes import READ_WRITE_ONCE_POD, VolumeCatalog

if TYPE_CHECKING:
    from .nodeinfo import NodeInfo, PodInfo, Snapshot
    from .volumes import PodVolume

__all__ = ["ERR_DISK_CONFLICT", "ERR_READ_WRITE_ONCE_POD", "VOLUME_RESTRICTIONS", "RestrictionState", "prefilter"]

VOLUME_RESTRICTIONS = "VolumeRestrictions"
ERR_DISK_CONFLICT = "node(s) had no available disk"
ERR_READ_WRITE_ONCE_POD = ("node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "
                           "access mode")


def disk_conflict(mine: PodVolume, theirs: PodVolume) -> bool:
    """``isVolumeConflict`` for one pair of in-tree disks."""
    if mine.disk is None or theirs.disk is None or mine.disk[0] != theirs.disk[0]:
        return False
    kind, ident, read_only = mine.disk
    _, other, other_read_only = theirs.disk
    both_read_only = read_only and other_read_only
    if kind == "awsElasticBlockStore":
        return bool(ident == other)
    if kind == "rbd":
        return bool(ident[0] & other[0]) and ident[1:] == other[1:] and not both_read_only
    return bool(ident == other) and not both_read_only


@dataclass(slots=True)
class RestrictionState:
    """The PreFilter state: the incoming pod, its ReadWriteOncePod claim names and ``conflictingPVCRefCount``
    (``holders`` names the pods behind the count, for the explanation)."""

    pod: PodInfo
    read_write_once_pod: frozenset[str]
    conflicts: int
    holders: tuple[tuple[str, str], ...] = ()

    def copy(self) -> RestrictionState:
        return RestrictionState(self.pod, self.read_write_once_pod, self.conflicts, self.holders)

    def update_with_pod(self, other: PodInfo, value: int) -> None:
        if self.read_write_once_pod:
            self.conflicts += value * sum(1 for v in other.volumes if v.claim in self.read_write_once_pod
                                          and not v.ephemeral)

    def filter(self, node: NodeInfo) -> tuple[str, VolumeConflict] | None:
        for volume in self.pod.volumes:
            if volume.disk is None:
                continue
            for existing in node.pods.values():
                for theirs in existing.volumes:
                    if disk_conflict(volume, theirs):
                        return ERR_DISK_CONFLICT, VolumeConflict("disk", volume=volume.name, holder=existing.key)
        if self.conflicts > 0:
            claim, holder = self.holders[0] if self.holders else ("", "")
            return ERR_READ_WRITE_ONCE_POD, VolumeConflict("read-write-once-pod", claim, holder=holder)
        return None


def _users(snapshot: Snapshot, namespace: str, claims: frozenset[str]) -> dict[str, str]:
    """Claim name -> the first placed pod (``namespace/name``) of ``namespace`` that mounts it."""
    found: dict[str, str] = {}
    for node in snapshot:
        for pod in node.pods.values():
            if pod.namespace != namespace or not pod.volumes:
                continue
            for volume in pod.volumes:
                if volume.claim in claims and not volume.ephemeral and volume.claim not in found:
                    found[volume.claim] = pod.key
    return found


def prefilter(pod: PodInfo, catalog: VolumeCatalog, snapshot: Snapshot) -> RestrictionState | str | None:
    """VolumeRestrictions' PreFilter: the state, None for Skip, or the rejection text."""
    needs_check = any(v.disk is not None for v in pod.volumes)
    once: set[str] = set()
    for volume in pod.volumes:
        if volume.ephemeral or volume.disk is not None:
            continue
        claim = catalog.api_claim(f"{pod.namespace}/{volume.claim}")
        if claim is None:
            return f'persistentvolumeclaim "{volume.claim}" not found'
        if READ_WRITE_ONCE_POD in claim.access_modes:
            once.add(claim.name)
    users = _users(snapshot, pod.namespace, frozenset(once)) if once else {}
    if not needs_check and not users:
        return None
    return RestrictionState(pod, frozenset(once), len(users), tuple(sorted(users.items())))
