"""The VolumeZone plugin: a bound PersistentVolume's zone and region labels against the node's.

Reproduces ``pkg/scheduler/framework/plugins/volumezone/volume_zone.go`` of kube-scheduler v1.34.1:

* **PreFilter** (``getPVbyPod``), for each ``persistentVolumeClaim`` volume (generic ephemeral volumes are not
  looked at), each an UnschedulableAndUnresolvable rejection: ``PersistentVolumeClaim had no name``; the claim
  missing (``persistentvolumeclaim "X" not found``); a claim without ``spec.volumeName``: no class gives
  ``PersistentVolumeClaim had no pv name and storageClass name``, a missing class ``storageclass.storage.k8s.io "X"
  not found``, a class without a binding mode ``VolumeBindingMode not set for StorageClass "X"``, a
  WaitForFirstConsumer class is skipped, any other ``PersistentVolume had no name``; the PV missing
  (``persistentvolume "X" not found``). The PV's labels ``failure-domain.beta.kubernetes.io/zone``,
  ``failure-domain.beta.kubernetes.io/region``, ``topology.kubernetes.io/zone`` and ``topology.kubernetes.io/region``
  each give a set of values (``LabelZonesToSet``: split on ``__``; a label with an empty part is ignored). None at
  all: Skip.
* **Filter**: a node without any of those four labels fits (a single-zone cluster); otherwise every PV label must
  find the node's value of the same key (or, for a beta key, of its GA key) in its set, else ``node(s) had no
  available volume zone`` (UnschedulableAndUnresolvable).

The claims and PVs are read as the watch last showed them (the listers), not as a Reserve assumed them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .verdicts import VolumeConflict
from .volumes import VolumeCatalog

if TYPE_CHECKING:
    from .nodeinfo import NodeInfo, PodInfo

__all__ = ["ERR_VOLUME_ZONE", "TOPOLOGY_LABELS", "VOLUME_ZONE", "ZoneState", "prefilter"]

VOLUME_ZONE = "VolumeZone"
ERR_VOLUME_ZONE = "node(s) had no available volume zone"
BETA_ZONE, BETA_REGION = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
_GA = {BETA_ZONE: ZONE, BETA_REGION: REGION}
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"


@dataclass(frozen=True, slots=True)
class ZoneState:
    """``podPVTopologies``: ``(pv name, label key, allowed values)`` for every topology label of the pod's PVs."""

    topologies: tuple[tuple[str, str, frozenset[str]], ...]

    def filter(self, node: NodeInfo) -> VolumeConflict | None:
        labels = node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None
        for pv, key, values in self.topologies:
            value = labels.get(key)
            if value is None:
                value = labels.get(_GA.get(key, key))
            if value is None or value not in values:
                return VolumeConflict("zone", volume=pv, key=key, values=tuple(sorted(values)))
        return None


def prefilter(pod: PodInfo, catalog: VolumeCatalog) -> ZoneState | str | None:
    """VolumeZone's PreFilter: the state, None for Skip, or the rejection text."""
    topologies: list[tuple[str, str, frozenset[str]]] = []
    for volume in pod.volumes:
        if volume.ephemeral or volume.disk is not None:
            continue
        name = volume.claim
        if not name:
            return "PersistentVolumeClaim had no name"
        claim = catalog.api_claim(f"{pod.namespace}/{name}")
        if claim is None:
            return f'persistentvolumeclaim "{name}" not found'
        if not claim.volume_name:
            class_name = claim.storage_class
            if not class_name:
                return "PersistentVolumeClaim had no pv name and storageClass name"
            cls = catalog.storage_class(class_name)
            if cls is None:
                return f'storageclass.storage.k8s.io "{class_name}" not found'
            if not cls.binding_mode:
                return f'VolumeBindingMode not set for StorageClass "{class_name}"'
            if cls.binding_mode == WAIT_FOR_FIRST_CONSUMER:
                continue
            return "PersistentVolume had no name"
        pv = catalog.api_volume(claim.volume_name)
        if pv is None:
            return f'persistentvolume "{claim.volume_name}" not found'
        for key in TOPOLOGY_LABELS:
            value = pv.labels.get(key)
            if value is None:
                continue
            zones = value.split("__")
            if any(not z.strip() for z in zones):
                continue
            topologies.append((pv.name, key, frozenset(z.strip() for z in zones)))
    return ZoneState(tuple(topologies)) if topologies else None
