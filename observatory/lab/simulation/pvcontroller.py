"""Simulated PersistentVolume controller: binds claims to volumes, tracks both sides' phases, reclaims released
volumes, and asks external provisioners for volumes, as kube-controller-manager's does.

Reproduces ``pkg/controller/volume/persistentvolume/pv_controller.go`` (v1.3x) on the lab's objects:

* ``syncUnboundClaim``: a claim without ``spec.volumeName`` gets the best match (``findBestMatchForClaim``:
  a volume pre-bound to it, else the smallest Available volume of its class, access modes, volume mode and selector;
  none while binding is delayed). With no match: the default class is set on a claim that has none
  (``assignDefaultStorageClass``); a delayed claim the scheduler has not picked a node for records
  ``WaitForFirstConsumer`` ``waiting for first consumer to be created before binding`` (``WaitForPodScheduled``
  ``waiting for pod X to be scheduled`` when unscheduled pods use it); a claim with a class is provisioned
  (``ProvisioningFailed`` with the class lister's ``storageclass.storage.k8s.io "X" not found``, or for an external
  provisioner the two ``storage-provisioner`` annotations and ``ExternalProvisioning`` ``Waiting for a volume to be
  created either by the external provisioner 'P' or manually by the system administrator. If volume creation is
  delayed, please verify that the provisioner is running and correctly registered.``); a claim without a class
  records ``FailedBinding`` ``no persistent volumes available for this claim and no storage class is set``. A claim
  naming a volume binds to it, or records ``VolumeMismatch`` ``Cannot bind to requested volume "V": <reason>`` or
  ``FailedBinding`` ``volume "V" already bound to a different claim.``.
* ``bind``: the volume's claimRef (and ``pv.kubernetes.io/bound-by-controller: yes`` unless pre-bound), its phase
  Bound, the claim's volumeName with ``pv.kubernetes.io/bound-by-controller`` and ``pv.kubernetes.io/bind-completed``
  (``yes``), then the claim's phase Bound with the volume's access modes and capacity. Binding records no event.
* ``syncBoundClaim``: a bound claim whose volume is gone becomes Lost with Warning ``ClaimLost`` ``Bound claim has
  lost its PersistentVolume. Data on the volume is lost!`` (``... lost reference to PersistentVolume ...`` when its
  volumeName was cleared); one whose volume is bound to another claim becomes Lost with ``ClaimMisbound``.
* ``syncVolume``: a volume without a claim is Available; one whose claim is gone is Released and reclaimed: Retain
  keeps it, Delete leaves an externally provisioned volume to its provisioner, deletes a ``hostPath`` under ``/tmp``
  and otherwise fails it with ``VolumeFailedDelete`` (``error getting deleter volume plugin for volume "V": no
  deletable volume plugin matched``); Recycle fails with ``VolumeFailedRecycle`` ``No recycler plugin found for the
  volume!``.

Events come from ``persistentvolume-controller`` through the legacy recorder (:mod:`.recorder`). Every claim and
volume is synced again each ``LabSettings.pv_resync_seconds`` (``--pvclaimbinder-sync-period``, 15 s), so waiting
events repeat with a growing count, as on a real cluster.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import re
from typing import Any

from observatory.lab import errors
from observatory.lab.resources import ALL
from observatory.lab.simulation.client import Client
from observatory.lab.simulation.informer import Informer
from observatory.lab.simulation.pvbinding import Binder, Key
from observatory.lab.simulation.recorder import Recorder
from observatory.lab.volumes import helpers as h
from observatory.settings import LabSettings

log = logging.getLogger(__name__)

PVCS, PVS = ALL["persistentvolumeclaims"], ALL["persistentvolumes"]
COMPONENT = "persistentvolume-controller"
NO_CLASS = "no persistent volumes available for this claim and no storage class is set"
WAITING = "waiting for first consumer to be created before binding"
LOST = "Bound claim has lost its PersistentVolume. Data on the volume is lost!"
LOST_REFERENCE = "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!"
MISBOUND = "Two claims are bound to the same volume, this one is bound incorrectly"
EXTERNAL = ("Waiting for a volume to be created either by the external provisioner '{}' or manually by the system "
            "administrator. If volume creation is delayed, please verify that the provisioner is running and "
            "correctly registered.")
NO_DELETER = 'error getting deleter volume plugin for volume "{}": no deletable volume plugin matched'


class PersistentVolumeController(Binder):
    """One controller for the whole lab; a single worker syncs queued claims and volumes in order."""

    def __init__(self, registry: Client, settings: LabSettings) -> None:
        store = registry.store
        super().__init__(registry, Recorder(registry, COMPONENT),
                         Informer(store, "persistentvolumeclaims", self._on_claim),
                         Informer(store, "persistentvolumes", self._on_volume))
        self.settings = settings
        self.classes = Informer(store, "storageclasses", self._on_class)
        self.pods = Informer(store, "pods")
        self._queue: asyncio.Queue[tuple[str, Key]] = asyncio.Queue()
        self._queued: set[tuple[str, Key]] = set()

    # -- informers and the work queue ------------------------------------------------------------------------------

    async def run(self) -> None:
        for informer in (self.classes, self.pods, self.volumes, self.claims):
            informer.start()
        self.resync()
        await asyncio.gather(self.classes.run(), self.pods.run(), self.volumes.run(), self.claims.run(),
                             self._work(), self._resync_periodically())

    def enqueue(self, what: str, key: Key) -> None:
        if (what, key) not in self._queued:
            self._queued.add((what, key))
            self._queue.put_nowait((what, key))

    def resync(self) -> None:
        """Queue every volume, then every claim: at start, volumes a scenario declares are Available before the
        claims that could bind to them are synced (upstream's two workers run in no fixed order)."""
        for key in list(self.volumes.cache):
            self.enqueue("volume", key)
        for key in list(self.claims.cache):
            self.enqueue("claim", key)

    async def _resync_periodically(self) -> None:
        while True:
            await asyncio.sleep(self.settings.pv_resync_seconds)
            self.resync()

    def _on_claim(self, type_: str, pvc: dict[str, Any], old: dict[str, Any] | None) -> None:
        if type_ == "DELETED":
            name = (pvc.get("spec") or {}).get("volumeName")
            if name:
                self.enqueue("volume", ("", name))  # its volume is released now
            return
        self.enqueue("claim", _key(pvc))

    def _on_volume(self, type_: str, pv: dict[str, Any], old: dict[str, Any] | None) -> None:
        if type_ == "DELETED":
            ref = (pv.get("spec") or {}).get("claimRef")
            if isinstance(ref, dict) and ref.get("name"):
                self.enqueue("claim", (ref.get("namespace") or "", ref["name"]))
            return
        self.enqueue("volume", _key(pv))

    def _on_class(self, type_: str, sc: dict[str, Any], old: dict[str, Any] | None) -> None:
        for key, pvc in list(self.claims.cache.items()):
            if not (pvc.get("spec") or {}).get("volumeName"):
                self.enqueue("claim", key)

    async def _work(self) -> None:
        while True:
            what, key = await self._queue.get()
            self._queued.discard((what, key))
            try:
                if what == "claim":
                    pvc = self.claims.cache.get(key)
                    if pvc is not None:
                        self.sync_claim(pvc)
                else:
                    pv = self.volumes.cache.get(key)
                    if pv is not None:
                        self.sync_volume(pv)
            except errors.StatusError as exc:  # a conflict or a vanished object: the next sync tries again
                log.debug("pv controller: %s %s: %s", what, key, exc.message)
            except Exception:
                log.exception("pv controller failed to sync %s %s", what, key)
            await asyncio.sleep(0)

    # -- claims ----------------------------------------------------------------------------------------------------

    def sync_claim(self, pvc: dict[str, Any]) -> None:
        """``syncClaim``: a claim that has completed binding once is a bound claim."""
        if h.ANN_BIND_COMPLETED in ((pvc.get("metadata") or {}).get("annotations") or {}):
            self._sync_bound_claim(pvc)
        else:
            self._sync_unbound_claim(pvc)

    def _class(self, name: str) -> dict[str, Any] | None:
        return self.classes.cache.get(("", name)) if name else None

    def _delay_binding(self, pvc: dict[str, Any]) -> bool:
        """``IsDelayBindingMode``: the claim's class exists and binds WaitForFirstConsumer."""
        sc = self._class(h.claim_class(pvc))
        return sc is not None and sc.get("volumeBindingMode") == "WaitForFirstConsumer"

    def _sync_unbound_claim(self, pvc: dict[str, Any]) -> None:
        spec = pvc.get("spec") or {}
        wanted = spec.get("volumeName")
        if not wanted:
            delay = self._delay_binding(pvc)
            volume = h.find_matching_volume(pvc, list(self.volumes.cache.values()), delay)
            if volume is not None:
                self.bind(volume, pvc)
                return
            if self._assign_default_class(pvc):
                return
            annotations = (pvc.get("metadata") or {}).get("annotations") or {}
            if delay and h.ANN_SELECTED_NODE not in annotations:
                self._event_for_delayed_claim(pvc)
            elif h.claim_class(pvc):
                self._provision(pvc)
                return
            else:
                self.recorder.event(pvc, "PersistentVolumeClaim", "Normal", "FailedBinding", NO_CLASS)
            self.update_claim_status(pvc, "Pending", None)
            return
        volume = self.volumes.cache.get(("", wanted))
        if volume is None:
            self.update_claim_status(pvc, "Pending", None)
        elif not (volume.get("spec") or {}).get("claimRef"):
            problem = _unsatisfied(volume, pvc)
            if problem:
                self.recorder.event(pvc, "PersistentVolumeClaim", "Warning", "VolumeMismatch",
                                    f'Cannot bind to requested volume "{wanted}": {problem}')
                self.update_claim_status(pvc, "Pending", None)
            else:
                self.bind(volume, pvc)
        elif h.is_volume_bound_to_claim(volume, pvc):
            self.bind(volume, pvc)
        else:
            self.recorder.event(pvc, "PersistentVolumeClaim", "Warning", "FailedBinding",
                                f'volume "{wanted}" already bound to a different claim.')
            if h.ANN_BOUND_BY_CONTROLLER not in ((pvc.get("metadata") or {}).get("annotations") or {}):
                self.update_claim_status(pvc, "Pending", None)

    def _sync_bound_claim(self, pvc: dict[str, Any]) -> None:
        name = (pvc.get("spec") or {}).get("volumeName")
        if not name:
            self._claim_lost(pvc, "ClaimLost", LOST_REFERENCE)
            return
        volume = self.volumes.cache.get(("", name))
        if volume is None:
            self._claim_lost(pvc, "ClaimLost", LOST)
            return
        ref = (volume.get("spec") or {}).get("claimRef")
        if not ref or ref.get("uid") == (pvc.get("metadata") or {}).get("uid"):
            self.bind(volume, pvc)
        else:
            self._claim_lost(pvc, "ClaimMisbound", MISBOUND)

    def _claim_lost(self, pvc: dict[str, Any], reason: str, message: str) -> None:
        """``updateClaimStatusWithEvent(Lost)``: the event only when the phase changes."""
        if (pvc.get("status") or {}).get("phase") == "Lost":
            return
        updated = self.update_claim_status(pvc, "Lost", None)
        self.recorder.event(updated, "PersistentVolumeClaim", "Warning", reason, message)

    def _assign_default_class(self, pvc: dict[str, Any]) -> bool:
        """``assignDefaultStorageClass``: a claim with no class at all gets the default class, if any."""
        if h.claim_has_class(pvc):
            return False
        default = h.default_class(self.classes.cache.values())
        if default is None:
            return False
        new = copy.deepcopy(pvc)
        new["spec"]["storageClassName"] = default["metadata"]["name"]
        self.store_claim(self.registry.update(PVCS, *_key(pvc), new))
        return True

    def _event_for_delayed_claim(self, pvc: dict[str, Any]) -> None:
        """``emitEventForUnboundDelayBindingClaim``, naming the unscheduled live pods that use the claim."""
        meta = pvc.get("metadata") or {}
        names = []
        for (namespace, name), pod in self.pods.cache.items():
            spec, phase = pod.get("spec") or {}, (pod.get("status") or {}).get("phase")
            if namespace != meta.get("namespace") or spec.get("nodeName") or phase in ("Succeeded", "Failed"):
                continue
            if any(((v or {}).get("persistentVolumeClaim") or {}).get("claimName") == meta.get("name")
                   for v in spec.get("volumes") or []):
                names.append(name)
        if not names:
            self.recorder.event(pvc, "PersistentVolumeClaim", "Normal", "WaitForFirstConsumer", WAITING)
        elif len(names) == 1:
            self.recorder.event(pvc, "PersistentVolumeClaim", "Normal", "WaitForPodScheduled",
                                f"waiting for pod {names[0]} to be scheduled")
        else:
            self.recorder.event(pvc, "PersistentVolumeClaim", "Normal", "WaitForPodScheduled",
                                f"waiting for pods {','.join(names)} to be scheduled")

    def _provision(self, pvc: dict[str, Any]) -> None:
        """``provisionClaim``: in-tree plugins are not in the lab; an external provisioner is asked through the
        claim's annotations and an ExternalProvisioning event."""
        name = h.claim_class(pvc)
        sc = self._class(name)
        if sc is None:
            self.recorder.event(pvc, "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
                                f'storageclass.storage.k8s.io "{name}" not found')
            return
        provisioner = sc.get("provisioner", "")
        if provisioner.startswith("kubernetes.io/"):
            self.recorder.event(pvc, "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
                                f"no volume plugin matched name: {provisioner}")
            return
        annotations = (pvc.get("metadata") or {}).get("annotations") or {}
        if annotations.get(h.ANN_STORAGE_PROVISIONER) != provisioner:
            new = copy.deepcopy(pvc)
            new_annotations = new["metadata"].setdefault("annotations", {})
            new_annotations[h.ANN_BETA_STORAGE_PROVISIONER] = provisioner
            new_annotations[h.ANN_STORAGE_PROVISIONER] = provisioner
            pvc = self.store_claim(self.registry.update(PVCS, *_key(pvc), new))
        self.recorder.event(pvc, "PersistentVolumeClaim", "Normal", "ExternalProvisioning",
                            EXTERNAL.format(provisioner))

    # -- volumes ---------------------------------------------------------------------------------------------------

    def sync_volume(self, pv: dict[str, Any]) -> None:
        """``syncVolume``."""
        ref = (pv.get("spec") or {}).get("claimRef")
        if not isinstance(ref, dict) or not ref.get("uid"):
            self.update_volume_phase(pv, "Available")  # unused, or only pre-bound to a claim
            return
        pvc = self.claims.cache.get((ref.get("namespace") or "", ref.get("name", "")))
        if pvc is not None and (pvc.get("metadata") or {}).get("uid") != ref.get("uid"):
            pvc = None  # the claim it was bound to was deleted and another made with its name
        if pvc is None:
            if (pv.get("status") or {}).get("phase") not in ("Released", "Failed"):
                pv = self.update_volume_phase(pv, "Released")
            self._reclaim(pv)
            return
        claimed = (pvc.get("spec") or {}).get("volumeName")
        if not claimed:
            self.enqueue("claim", _key(pvc))
        elif claimed == pv["metadata"]["name"]:
            self.update_volume_phase(pv, "Bound")
        elif (h.ANN_DYNAMICALLY_PROVISIONED in (pv["metadata"].get("annotations") or {})
              and pv["spec"].get("persistentVolumeReclaimPolicy") == "Delete"):
            if (pv.get("status") or {}).get("phase") not in ("Released", "Failed"):
                pv = self.update_volume_phase(pv, "Released")
            self._reclaim(pv)
        else:
            self.unbind_volume(pv)

    def _reclaim(self, pv: dict[str, Any]) -> None:
        """``reclaimVolume`` with the lab's deleters: a hostPath under ``/tmp`` (the host_path plugin's rule)."""
        spec = pv.get("spec") or {}
        policy = spec.get("persistentVolumeReclaimPolicy")
        if policy == "Retain":
            return
        if policy == "Recycle":
            self.fail_volume(pv, "VolumeFailedRecycle", "No recycler plugin found for the volume!")
            return
        if policy != "Delete":
            self.fail_volume(pv, "VolumeUnknownReclaimPolicy", "Volume has unrecognized PersistentVolumeReclaimPolicy")
            return
        provisioned_by = ((pv.get("metadata") or {}).get("annotations") or {}).get(h.ANN_DYNAMICALLY_PROVISIONED)
        if (provisioned_by and not provisioned_by.startswith("kubernetes.io/")) or spec.get("csi"):
            return  # an external deleter (the provisioner) deletes it
        path = (spec.get("hostPath") or {}).get("path")
        if path is not None:
            if re.search(r"/tmp/.+", path):
                self.registry.delete(PVS, "", pv["metadata"]["name"])
            else:
                self.fail_volume(pv, "VolumeFailedDelete",
                                 f"host_path deleter only supports /tmp/.+ but received provided {path}")
            return
        self.fail_volume(pv, "VolumeFailedDelete", NO_DELETER.format(pv["metadata"]["name"]))


def _key(obj: dict[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name", ""))


def _unsatisfied(pv: dict[str, Any], pvc: dict[str, Any]) -> str:
    """``checkVolumeSatisfyClaim``: why a requested volume does not fit the claim, or ``""``."""
    if (pv.get("metadata") or {}).get("deletionTimestamp"):
        return f'the volume is marked for deletion "{pv["metadata"]["name"]}"'
    if h.volume_capacity(pv) < h.requested_storage(pvc):
        return "requested PV is too small"
    if h.volume_class(pv) != h.claim_class(pvc):
        return "storageClassName does not match"
    if h.volume_mode_mismatch(pvc, pv):
        return "incompatible volumeMode"
    if not h.access_modes_fit(pvc, pv):
        return "incompatible accessMode"
    return ""
