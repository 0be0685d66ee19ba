"""Simulated PVC and PV protection controllers: a claim or volume being deleted keeps its protection finalizer while
something still uses it, as kube-controller-manager's ``pvc-protection`` and ``pv-protection`` controllers do.

* ``pkg/controller/volume/pvcprotection/pvc_protection_controller.go``: a claim with a ``deletionTimestamp`` and the
  finalizer ``kubernetes.io/pvc-protection`` loses the finalizer (and so is deleted) once no scheduled pod that has
  not finished (phase neither Succeeded nor Failed) in its namespace names it in a ``persistentVolumeClaim``
  volume; until then ``kubectl get pvc`` shows it Terminating.
* ``pkg/controller/volume/pvprotection/pv_protection_controller.go``: a volume with a ``deletionTimestamp`` and
  ``kubernetes.io/pv-protection`` loses the finalizer once its phase is not Bound. Deleting a Bound volume therefore
  leaves it Terminating until its claim lets go of it (or someone removes the finalizer by hand, after which the
  claim is Lost).
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any

from observatory.lab import errors
from observatory.lab.resources import ALL
from observatory.lab.simulation.client import Client
from observatory.lab.simulation.informer import Informer
from observatory.lab.volumes.strategy import PV_PROTECTION, PVC_PROTECTION

log = logging.getLogger(__name__)

PVCS, PVS = ALL["persistentvolumeclaims"], ALL["persistentvolumes"]


class Protection:
    """Both protection controllers, for the whole lab."""

    def __init__(self, registry: Client, pv_client: Client | None = None) -> None:
        """``registry`` writes as the PVC protection controller, ``pv_client`` (default: the same) as the PV one."""
        store = registry.store
        self.registry = registry
        self.pv_client = pv_client or registry
        self.claims = Informer(store, "persistentvolumeclaims", self._on_claim)
        self.volumes = Informer(store, "persistentvolumes", self._on_volume)
        self.pods = Informer(store, "pods", self._on_pod)

    async def run(self) -> None:
        for informer in (self.pods, self.volumes, self.claims):
            informer.start()
        for pv in list(self.volumes.cache.values()):
            self._on_volume("ADDED", pv, None)
        for pvc in list(self.claims.cache.values()):
            self._on_claim("ADDED", pvc, None)
        await asyncio.gather(self.pods.run(), self.volumes.run(), self.claims.run())

    def _in_use(self, pvc: dict[str, Any]) -> bool:
        meta = pvc.get("metadata") or {}
        for (namespace, _name), pod in self.pods.cache.items():
            spec = pod.get("spec") or {}
            if namespace != meta.get("namespace") or not spec.get("nodeName"):
                continue
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            if any(((v or {}).get("persistentVolumeClaim") or {}).get("claimName") == meta.get("name")
                   for v in spec.get("volumes") or []):
                return True
        return False

    def _release(self, rt: Any, obj: dict[str, Any], finalizer: str) -> None:
        new = copy.deepcopy(obj)
        new["metadata"]["finalizers"] = [f for f in new["metadata"].get("finalizers") or [] if f != finalizer]
        meta = new["metadata"]
        try:
            client = self.pv_client if rt is PVS else self.registry
            client.update(rt, meta.get("namespace", ""), meta["name"], new)
        except errors.StatusError as exc:  # changed meanwhile: its next watch event brings it back here
            log.debug("protection: %s %s: %s", rt.name, meta["name"], exc.message)

    def _on_claim(self, type_: str, pvc: dict[str, Any], old: dict[str, Any] | None) -> None:
        meta = pvc.get("metadata") or {}
        if (type_ != "DELETED" and meta.get("deletionTimestamp") and PVC_PROTECTION in (meta.get("finalizers") or [])
                and not self._in_use(pvc)):
            self._release(PVCS, pvc, PVC_PROTECTION)

    def _on_volume(self, type_: str, pv: dict[str, Any], old: dict[str, Any] | None) -> None:
        meta = pv.get("metadata") or {}
        if (type_ != "DELETED" and meta.get("deletionTimestamp") and PV_PROTECTION in (meta.get("finalizers") or [])
                and (pv.get("status") or {}).get("phase") != "Bound"):
            self._release(PVS, pv, PV_PROTECTION)

    def _on_pod(self, type_: str, pod: dict[str, Any], old: dict[str, Any] | None) -> None:
        """A pod that goes away or finishes may free the claims being deleted in its namespace."""
        namespace = (pod.get("metadata") or {}).get("namespace")
        for (ns, _name), pvc in list(self.claims.cache.items()):
            if ns == namespace and (pvc.get("metadata") or {}).get("deletionTimestamp"):
                self._on_claim("MODIFIED", pvc, pvc)
