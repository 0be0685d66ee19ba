"""The lab's simulated node-side and controller components: kubelets, pod GC, node lifecycle, the PersistentVolume
controller with the PVC/PV protection controllers, and kind's local-path provisioner.

Each component is a client of the store (list-then-watch through :mod:`.informer`, writes through the registry),
never reaching into its dicts, so it behaves towards the API exactly as its real counterpart does. Each writes
through its own client (:mod:`.client`), which audits its writes as its real counterpart's requests when the lab
audits (``auditor``): the kubelets as their nodes, the controllers as kube-controller-manager's service accounts,
the provisioner as kind's local-path-provisioner (:mod:`observatory.lab.audit.identity`). The lab's
default-scheduler is not here: it is observatory's one scheduler, a client of the lab over HTTP
(:mod:`observatory.embedded`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from typing import Any

from observatory.lab.audit.types import Auditor
from observatory.lab.registry import Registry
from observatory.settings import LabSettings

log = logging.getLogger(__name__)


class Simulations:
    """Starts and stops the simulated components that ``settings`` turns on; with an ``auditor`` their writes are
    audited (None: nothing is, as in tests and benchmarks)."""

    def __init__(self, registry: Registry, settings: LabSettings, auditor: Auditor | None = None) -> None:
        self.registry = registry
        self.settings = settings
        self.auditor = auditor
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        from observatory.lab.audit import identity
        from observatory.lab.simulation.client import Clients
        from observatory.lab.simulation.events import EventWriter
        from observatory.lab.simulation.kubelet import Kubelets
        from observatory.lab.simulation.nodelifecycle import NodeLifecycle
        from observatory.lab.simulation.podgc import PodGC
        from observatory.lab.simulation.protection import Protection
        from observatory.lab.simulation.provisioner import LocalPathProvisioner
        from observatory.lab.simulation.pvcontroller import PersistentVolumeController

        clients = Clients(self.registry, self.auditor)
        events = EventWriter(self.registry, clients)
        components: list[Any] = []
        if self.settings.node_lifecycle:
            components.append(NodeLifecycle(clients.controller(identity.NODE_CONTROLLER)))
        if self.settings.kubelet:
            components.append(Kubelets(self.registry, events, self.settings, clients))
        if self.settings.podgc:
            components.append(PodGC(clients.controller(identity.POD_GARBAGE_COLLECTOR), self.settings))
        if self.settings.pv_controller:
            components.append(PersistentVolumeController(clients.controller(identity.PERSISTENT_VOLUME_BINDER),
                                                         self.settings))
            components.append(LocalPathProvisioner(clients.local_path_provisioner(), self.settings))
            components.append(Protection(clients.controller(identity.PVC_PROTECTION_CONTROLLER),
                                         clients.controller(identity.PV_PROTECTION_CONTROLLER)))
        if self.settings.controllers:
            from observatory.lab.simulation import (
                daemonset,
                deployment,
                disruption,
                endpoints,
                garbagecollector,
                job,
                namespace,
                serviceaccounts,
                statefulset,
                tainteviction,
            )

            for module in (deployment, daemonset, statefulset, job, disruption, serviceaccounts, endpoints, namespace,
                           garbagecollector, tainteviction):
                components.extend(module.components(clients, self.settings))
        loop = asyncio.get_running_loop()
        for component in components:
            task = loop.create_task(component.run(), name=f"lab-{type(component).__name__}")
            task.add_done_callback(_report_crash)
            self._tasks.append(task)

    async def stop(self) -> None:
        await cancel_all(self._tasks)


async def cancel_all(tasks: list[asyncio.Task[None]]) -> None:
    """Cancel background tasks, wait until each has finished, and empty the list."""
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task
    tasks.clear()


def _report_crash(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("simulated component %s stopped: %r", task.get_name(), task.exception())


def scheduler_host(registry: Registry) -> str:
    """The host kube-scheduler runs on: the control-plane node when the lab has one (as in kind), else this host."""
    for node in registry.store.iter("nodes"):
        if "node-role.kubernetes.io/control-plane" in ((node.get("metadata") or {}).get("labels") or {}):
            return node["metadata"]["name"]
    return socket.gethostname()
