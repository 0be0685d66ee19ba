"""Simulated rancher local-path-provisioner, the dynamic provisioner of kind's ``standard`` class.

It runs sig-storage-lib-external-provisioner's controller loop (``controller/controller.go``) around
local-path-provisioner's ``Provision`` (``provisioner.go``), as a client of the lab's API:

* a claim is provisioned when it names no volume, its ``volume.kubernetes.io/storage-provisioner`` (or the beta key)
  annotation is ``rancher.io/local-path``, its class exists with that provisioner, no volume ``pvc-<uid>`` exists
  yet, and, for a WaitForFirstConsumer class, the scheduler has set ``volume.kubernetes.io/selected-node``;
* it records ``Provisioning`` ``External provisioner is provisioning volume for claim "<ns>/<name>"``, waits
  ``LabSettings.provisioning_seconds`` (the helper pod that makes the directory), then creates the PersistentVolume
  ``pvc-<claim uid>``: the claim's access modes, its requested storage as capacity, a ``hostPath``
  ``/var/local-path-provisioner/pvc-<uid>_<ns>_<name>`` (``DirectoryOrCreate``), node affinity ``In`` on the
  selected node's ``kubernetes.io/hostname`` label (its name without one), the class's reclaim policy and name,
  ``volumeMode: Filesystem``, a claimRef to the claim and ``pv.kubernetes.io/provisioned-by: rancher.io/local-path``;
  then ``ProvisioningSucceeded`` ``Successfully provisioned volume pvc-<uid>``. The PV controller binds the two;
* local-path refuses a claim with a selector (``claim.Spec.Selector is not supported``), an access mode other than
  ReadWriteOnce (``Only support ReadWriteOnce access mode``) or no selected node (``configuration error, no node was
  specified``): Warning ``ProvisioningFailed`` ``failed to provision volume with StorageClass "<class>": <error>``;
* a Released volume it provisioned with reclaim policy Delete is deleted (the lib's ``shouldDelete`` and
  ``deleteVolumeOperation``).

Events come from the provisioner's identity, ``rancher.io/local-path_<pod name>_<uuid>``, as the lib names its
recorder's component.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
import uuid
from typing import Any

from observatory.lab import errors
from observatory.lab.resources import ALL
from observatory.lab.simulation.client import Client
from observatory.lab.simulation.informer import Informer
from observatory.lab.simulation.recorder import Recorder, reference
from observatory.lab.strategy import _GENERATE_CHARS
from observatory.lab.volumes import helpers as h
from observatory.settings import LabSettings

log = logging.getLogger(__name__)

PROVISIONER = "rancher.io/local-path"
BASE_PATH = "/var/local-path-provisioner"
PVS = ALL["persistentvolumes"]


def identity() -> str:
    """The lib's recorder component: provisioner name, the provisioner pod's name (kind's Deployment in
    ``local-path-storage``) and a UUID, joined by ``_``."""
    pod = "local-path-provisioner-7dc846544d-" + "".join(secrets.choice(_GENERATE_CHARS) for _ in range(5))
    return f"{PROVISIONER}_{pod}_{uuid.uuid4()}"


class LocalPathProvisioner:
    """Provisions and deletes ``rancher.io/local-path`` volumes for the whole lab."""

    def __init__(self, registry: Client, settings: LabSettings) -> None:
        store = registry.store
        self.registry = registry
        self.settings = settings
        self.recorder = Recorder(registry, identity())
        self.claims = Informer(store, "persistentvolumeclaims", self._on_claim)
        self.volumes = Informer(store, "persistentvolumes", self._on_volume)
        self.classes = Informer(store, "storageclasses")
        self.nodes = Informer(store, "nodes")
        self._running: dict[str, asyncio.Task[None]] = {}

    async def run(self) -> None:
        for informer in (self.classes, self.nodes, self.volumes, self.claims):
            informer.start()
        for pvc in list(self.claims.cache.values()):
            self._on_claim("ADDED", pvc, None)
        for pv in list(self.volumes.cache.values()):
            self._on_volume("ADDED", pv, None)
        try:
            await asyncio.gather(self.classes.run(), self.nodes.run(), self.volumes.run(), self.claims.run())
        finally:
            for task in self._running.values():
                task.cancel()

    # -- provisioning ----------------------------------------------------------------------------------------------

    def _should_provision(self, pvc: dict[str, Any]) -> dict[str, Any] | None:
        """The lib's ``shouldProvision``: the claim's class when this provisioner should act on it."""
        meta, spec = pvc.get("metadata") or {}, pvc.get("spec") or {}
        annotations = meta.get("annotations") or {}
        if spec.get("volumeName") or meta.get("deletionTimestamp"):
            return None
        asked = annotations.get(h.ANN_STORAGE_PROVISIONER) or annotations.get(h.ANN_BETA_STORAGE_PROVISIONER)
        sc = self.classes.cache.get(("", h.claim_class(pvc)))
        if asked != PROVISIONER or sc is None or sc.get("provisioner") != PROVISIONER:
            return None
        if sc.get("volumeBindingMode") == "WaitForFirstConsumer" and not annotations.get(h.ANN_SELECTED_NODE):
            return None
        if ("", f"pvc-{meta.get('uid', '')}") in self.volumes.cache:
            return None
        return sc

    def _on_claim(self, type_: str, pvc: dict[str, Any], old: dict[str, Any] | None) -> None:
        if type_ == "DELETED" or self._should_provision(pvc) is None:
            return
        uid = pvc["metadata"].get("uid", "")
        if uid in self._running:
            return
        task = asyncio.get_running_loop().create_task(self._provision((pvc["metadata"].get("namespace", ""),
                                                                        pvc["metadata"]["name"])))
        self._running[uid] = task
        task.add_done_callback(functools.partial(self._finished, uid))

    def _finished(self, uid: str, _task: asyncio.Task[None]) -> None:
        self._running.pop(uid, None)

    async def _provision(self, key: tuple[str, str]) -> None:
        pvc = self.claims.cache.get(key)
        if pvc is None:
            return
        sc = self._should_provision(pvc)
        if sc is None:
            return
        self.recorder.event(pvc, "PersistentVolumeClaim", "Normal", "Provisioning",
                            f'External provisioner is provisioning volume for claim "{key[0]}/{key[1]}"')
        problem, volume = self._volume_for(pvc, sc)
        if problem:
            self.recorder.event(pvc, "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
                                f'failed to provision volume with StorageClass "{sc["metadata"]["name"]}": {problem}')
            return
        await asyncio.sleep(self.settings.provisioning_seconds)
        try:
            created = self.registry.create(PVS, "", volume)
        except errors.StatusError as exc:
            if exc.code != 409:  # AlreadyExists: provisioned before, reuse it
                self.recorder.event(pvc, "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
                                    f'failed to provision volume with StorageClass "{sc["metadata"]["name"]}": '
                                    f"{exc.message}")
                return
            created = volume
        self.volumes.cache[("", created["metadata"]["name"])] = created
        self.recorder.event(pvc, "PersistentVolumeClaim", "Normal", "ProvisioningSucceeded",
                            f"Successfully provisioned volume {created['metadata']['name']}")

    def _volume_for(self, pvc: dict[str, Any], sc: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """local-path's ``Provision``: an error text, or the PersistentVolume to create."""
        meta, spec = pvc["metadata"], pvc.get("spec") or {}
        if spec.get("selector") is not None:
            return "claim.Spec.Selector is not supported", {}
        if any(mode != "ReadWriteOnce" for mode in spec.get("accessModes") or []):
            return "Only support ReadWriteOnce access mode", {}
        node_name = (meta.get("annotations") or {}).get(h.ANN_SELECTED_NODE)
        if not node_name:
            return "configuration error, no node was specified", {}
        node = self.nodes.cache.get(("", node_name))
        if node is None:
            return f'nodes "{node_name}" not found', {}
        hostname = ((node.get("metadata") or {}).get("labels") or {}).get("kubernetes.io/hostname", node_name)
        name = f"pvc-{meta.get('uid', '')}"
        requests = (spec.get("resources") or {}).get("requests") or {}
        volume = {
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {h.ANN_DYNAMICALLY_PROVISIONED: PROVISIONER}},
            "spec": {
                "accessModes": list(spec.get("accessModes") or []),
                "capacity": {"storage": requests.get("storage")},
                "claimRef": reference(pvc, "PersistentVolumeClaim"),
                "hostPath": {"path": f"{BASE_PATH}/{name}_{meta.get('namespace', '')}_{meta['name']}",
                             "type": "DirectoryOrCreate"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "kubernetes.io/hostname", "operator": "In", "values": [hostname]}]}]}},
                "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
                "storageClassName": sc["metadata"]["name"],
                "volumeMode": "Filesystem",
            },
        }
        return "", volume

    # -- deleting --------------------------------------------------------------------------------------------------

    def _on_volume(self, type_: str, pv: dict[str, Any], old: dict[str, Any] | None) -> None:
        """The lib's ``shouldDelete``: a Released volume this provisioner made, with reclaim policy Delete."""
        if type_ == "DELETED":
            return
        annotations = (pv.get("metadata") or {}).get("annotations") or {}
        if ((pv.get("status") or {}).get("phase") == "Released" and not pv["metadata"].get("deletionTimestamp")
                and annotations.get(h.ANN_DYNAMICALLY_PROVISIONED) == PROVISIONER
                and (pv.get("spec") or {}).get("persistentVolumeReclaimPolicy") == "Delete"):
            try:
                self.registry.delete(PVS, "", pv["metadata"]["name"])
            except errors.StatusError:
                pass  # gone already
