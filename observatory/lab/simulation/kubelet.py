"""Simulated kubelets: start what is bound to a Ready node, stop what is deleted, renew node Leases.

What a pod goes through is the kubelet's (reference §5; k/k ``pkg/kubelet/kubelet_pods.go``
``generateAPIPodStatus``, ``pkg/kubelet/events/event.go``, ``pkg/kubelet/images/image_manager.go``,
``pkg/kubelet/kuberuntime/kuberuntime_container.go``):

1. first sync: hostIP, startTime, every container waiting ``ContainerCreating``, conditions
   PodReadyToStartContainers False, Initialized True, Ready False and ContainersReady False (ContainersNotReady),
   PodScheduled True;
2. per container: ``Pulling image "IMG"``, ``Successfully pulled image "IMG" in …`` (or ``Container image "IMG"
   already present on machine``), ``Created container: NAME``, ``Started container NAME``; a pulled image joins the
   node's ``status.images`` as the container runtime names it (:mod:`.images`), which ImageLocality scores;
3. phase Running with podIP, containers running and ready, every condition True.

Before the first sync the kubelet admits the pod (``pkg/kubelet/lifecycle/predicate.go``, via
:func:`observatory.scheduling.admission.admission_check`): a pod bound by hand to a node without room, with a
non-matching node selector or an untolerated NoExecute taint is rejected: a Warning event with the reason
(``OutOfcpu``...) and phase Failed with ``status.reason`` and ``status.message`` ``Pod was rejected: ...``
(``kubelet.go`` ``rejectPod``).

A pod with ``deletionTimestamp`` is stopped (``Killing``: ``Stopping container NAME``) and removed after its grace
period, capped by the lab settings. Nothing happens on a node that is not Ready, so pods there stay Pending or
Terminating. Only one kubelet object runs for all nodes; it acts per node as each real kubelet would, and writes
as that node's kubelet (``system:node:NODE``, :meth:`~.client.Clients.kubelet`): pod status as the status manager's
strategic merge PATCH of ``pods/NAME/status``, ``status.images`` as the node status PATCH, its Lease by PUT, the
final delete with the pod's uid as precondition.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import hashlib
import json
import logging
import random
from typing import Any

from observatory.lab import errors
from observatory.lab.registry import Registry
from observatory.lab.resources import ALL, CORE_V1
from observatory.lab.simulation.addresses import node_internal_ip, pod_ip
from observatory.lab.simulation.client import STRATEGIC_MERGE, Clients
from observatory.lab.simulation.events import EventWriter, micro_time
from observatory.lab.simulation.images import image_ref, image_size, node_status_images, repo_digest
from observatory.lab.simulation.informer import Informer
from observatory.lab.simulation.statuspatch import node_status_patch, pod_status_patch
from observatory.lab.store import now_rfc3339
from observatory.scheduling import NodeInfo, PodInfo
from observatory.scheduling.admission import admission_check
from observatory.scheduling.pods import is_terminal
from observatory.settings import LabSettings

log = logging.getLogger(__name__)

PODS = CORE_V1["pods"]


def node_ready(node: dict[str, Any] | None) -> bool:
    """The node's Ready condition is True."""
    for cond in ((node or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def _cond(type_: str, status: str, now: str, reason: str = "", message: str = "") -> dict[str, Any]:
    cond: dict[str, Any] = {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": now}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    return cond


class Kubelets:
    """The kubelets of every node in the lab, acting on pods bound to Ready nodes."""

    def __init__(self, registry: Registry, events: EventWriter, settings: LabSettings,
                 clients: Clients | None = None) -> None:
        self.registry = registry
        self.clients = clients or Clients(registry)
        """Each node's kubelet writes through its own client (:meth:`Clients.kubelet`)."""
        self.events = events
        self.settings = settings
        self.pods = Informer(registry.store, "pods", self._on_pod)
        self.nodes = Informer(registry.store, "nodes", self._on_node)
        self._tasks: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._images: dict[str, set[str]] = {}
        self._admitted: set[tuple[str, str]] = set()
        self._images_changed: set[str] = set()  # nodes whose status.images is behind what they pulled
        self._on_nodes: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}  # node -> pods bound there

    # -- informer callbacks ----------------------------------------------------------------------------------------

    def start(self) -> None:
        self.nodes.start()
        pods = self.pods.start()
        for pod in pods:
            self._index(pod, None, deleted=False)
        for pod in pods:
            self._consider(pod)

    def _index(self, pod: dict[str, Any], old: dict[str, Any] | None, *, deleted: bool) -> None:
        """Pods by node, so admission looks at one node's pods, not the cluster's."""
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        for previous in (old, pod):
            node = ((previous or {}).get("spec") or {}).get("nodeName")
            if node and node in self._on_nodes:
                self._on_nodes[node].pop(key, None)
        node = (pod.get("spec") or {}).get("nodeName")
        if node and not deleted:
            self._on_nodes.setdefault(node, {})[key] = pod

    async def run(self) -> None:
        self.start()
        try:
            await asyncio.gather(self.pods.run(), self.nodes.run(), self._renew_leases())
        finally:
            for task in self._tasks.values():
                task.cancel()

    def _on_pod(self, type_: str, pod: dict[str, Any], old: dict[str, Any] | None) -> None:
        self._index(pod, old, deleted=type_ == "DELETED")
        if type_ != "DELETED":
            self._consider(pod)
        else:
            self._admitted.discard((pod["metadata"].get("namespace", ""), pod["metadata"]["name"]))

    def _on_node(self, type_: str, node: dict[str, Any], old: dict[str, Any] | None) -> None:
        if type_ != "DELETED" and node_ready(node) and not node_ready(old):
            name = node["metadata"]["name"]
            for pod in list(self.pods.cache.values()):
                if (pod.get("spec") or {}).get("nodeName") == name:
                    self._consider(pod)

    def _consider(self, pod: dict[str, Any]) -> None:
        """Start or stop the pod if its node is Ready and nothing is already under way for it."""
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        node = self.nodes.cache.get(("", (pod.get("spec") or {}).get("nodeName") or ""))
        if node is None or not node_ready(node):
            return
        running = self._tasks.get(key)
        if "deletionTimestamp" in meta:
            if running is not None and getattr(running, "purpose", "") == "stop":
                return
            if running is not None:
                running.cancel()
            self._spawn(key, "stop", self._stop(key, node["metadata"]["name"]))
            return
        status = pod.get("status") or {}
        if running is None and status.get("phase", "Pending") == "Pending" and not status.get("containerStatuses"):
            self._spawn(key, "start", self._start(key, node["metadata"]["name"]))

    def _spawn(self, key: tuple[str, str], purpose: str, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        task.purpose = purpose  # type: ignore[attr-defined]
        self._tasks[key] = task
        task.add_done_callback(functools.partial(self._forget, key))

    def _forget(self, key: tuple[str, str], task: asyncio.Task[None]) -> None:
        """A pod's task ended: forget it, unless a newer task for the same pod has taken its place."""
        if self._tasks.get(key) is task:
            self._tasks.pop(key, None)

    # -- pod lifecycle ---------------------------------------------------------------------------------------------

    def _current(self, key: tuple[str, str], node: str) -> dict[str, Any] | None:
        """The pod as stored now, if it is still bound to ``node`` and not being deleted."""
        pod = self.registry.store.get("pods", *key)
        if pod is None or (pod.get("spec") or {}).get("nodeName") != node or "deletionTimestamp" in pod["metadata"]:
            return None
        return pod

    def _write_status(self, pod: dict[str, Any], status: dict[str, Any]) -> dict[str, Any] | None:
        """The status manager's ``syncPod``: ``PatchPodStatus`` from the stored status to ``status``, a strategic
        merge PATCH of ``pods/NAME/status`` carrying ``metadata.uid`` (:func:`.statuspatch.pod_status_patch`);
        nothing is sent when nothing changes. ``pod`` is the pod as stored now."""
        meta = pod["metadata"]
        patch = pod_status_patch(pod, status)
        if patch is None:
            return pod
        client = self.clients.kubelet((pod.get("spec") or {}).get("nodeName") or "")
        try:
            return client.patch(PODS, meta.get("namespace", ""), meta["name"], STRATEGIC_MERGE,
                                json.dumps(patch).encode(), subresource="status")
        except errors.StatusError:
            return None  # gone meanwhile (deleted, replaced by a pod of another uid): the informer brings the next

    async def _pause(self, share: float) -> None:
        """Wait ``share`` of ``kubelet_start_seconds`` (the shares of one pod's start add up to 1), +-20 %."""
        total = self.settings.kubelet_start_seconds
        await asyncio.sleep(max(0.0, total * share * random.uniform(0.8, 1.2)))

    def _admit(self, key: tuple[str, str], pod: dict[str, Any], node: dict[str, Any]) -> bool:
        """``canAdmitPod`` against the pods this node already admitted; a rejected pod fails (``rejectPod``)."""
        name = node["metadata"]["name"]
        info = NodeInfo.from_node(node)
        for other in self._on_nodes.get(name, {}).values():
            meta = other["metadata"]
            other_key = (meta.get("namespace", ""), meta["name"])
            if (other_key != key and (other.get("spec") or {}).get("nodeName") == name and not is_terminal(other)
                    and (other_key in self._admitted or (other.get("status") or {}).get("startTime"))):
                info.add(PodInfo.from_pod(other))
        failure = admission_check(PodInfo.from_pod(pod), info)
        if failure is None:
            self._admitted.add(key)
            return True
        self.events.kubelet_event(pod, name, failure.reason, failure.message, type_="Warning")
        status = copy.deepcopy(pod.get("status") or {})
        status.update({"phase": "Failed", "reason": failure.reason, "message": "Pod was rejected: " + failure.message})
        self._write_status(pod, status)
        return False

    async def _start(self, key: tuple[str, str], node_name: str) -> None:
        pod = self._current(key, node_name)
        node = self.nodes.cache.get(("", node_name))
        if pod is None or node is None or not self._admit(key, pod, node):
            return
        now = now_rfc3339()
        containers = (pod.get("spec") or {}).get("containers") or []
        names = [c["name"] for c in containers]
        host_ip = node_internal_ip(node)
        waiting = [{"name": c["name"], "state": {"waiting": {"reason": "ContainerCreating"}}, "lastState": {},
                    "ready": False, "restartCount": 0, "image": c.get("image", ""), "imageID": "",
                    "started": False} for c in containers]
        unready = f"containers with unready status: [{' '.join(names)}]"
        status = copy.deepcopy(pod.get("status") or {})
        status.update({
            "phase": "Pending",
            "conditions": [
                _cond("PodReadyToStartContainers", "False", now),
                _cond("Initialized", "True", now),
                _cond("Ready", "False", now, "ContainersNotReady", unready),
                _cond("ContainersReady", "False", now, "ContainersNotReady", unready),
                self._scheduled(pod, now),
            ],
            "hostIP": host_ip, "hostIPs": [{"ip": host_ip}] if host_ip else [],
            "startTime": now, "containerStatuses": waiting,
        })
        pod = self._write_status(pod, status)
        if pod is None:
            return
        pulled = self._images.setdefault(node_name, set())
        share = 1.0 / max(len(containers), 1)
        for c in containers:
            await self._pause(0.2 * share)
            image = c.get("image", "")
            if image in pulled and c.get("imagePullPolicy") != "Always":
                await self._pause(0.5 * share)  # creating the container takes the time a pull would have
                self.events.kubelet_event(pod, node_name, "Pulled", f'Container image "{image}" already present on '
                                          "machine", container=c["name"])
            else:
                self.events.kubelet_event(pod, node_name, "Pulling", f'Pulling image "{image}"', container=c["name"])
                started = asyncio.get_running_loop().time()
                await self._pause(0.5 * share)
                took = _go_duration(asyncio.get_running_loop().time() - started)
                size = image_size(image)
                self.events.kubelet_event(pod, node_name, "Pulled", f'Successfully pulled image "{image}" in {took} '
                                          f"({took} including waiting). Image size: {size} bytes.", container=c["name"])
                pulled.add(image)
                self._report_images(node_name)
            self.events.kubelet_event(pod, node_name, "Created", f"Created container: {c['name']}", container=c["name"])
            self.events.kubelet_event(pod, node_name, "Started", f"Started container {c['name']}", container=c["name"])
        await self._pause(0.3)
        pod = self._current(key, node_name)
        if pod is None:
            return
        now = now_rfc3339()
        ip = pod_ip(pod, node)
        running = []
        for c in containers:
            ref = image_ref(c.get("image", ""))
            cid = hashlib.sha256((pod["metadata"].get("uid", "") + c["name"]).encode()).hexdigest()
            running.append({"name": c["name"], "state": {"running": {"startedAt": now}}, "lastState": {},
                            "ready": True, "restartCount": 0, "image": ref,
                            "imageID": repo_digest(ref),
                            "containerID": f"containerd://{cid}", "started": True})
        status = copy.deepcopy(pod.get("status") or {})
        status.update({
            "phase": "Running",
            "conditions": [_cond("PodReadyToStartContainers", "True", now), _cond("Initialized", "True",
                           _transition(status, "Initialized", now)), _cond("Ready", "True", now),
                           _cond("ContainersReady", "True", now), self._scheduled(pod, now)],
            "podIP": ip, "podIPs": [{"ip": ip}], "containerStatuses": running,
        })
        self._write_status(pod, status)

    @staticmethod
    def _scheduled(pod: dict[str, Any], now: str) -> dict[str, Any]:
        for cond in (pod.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "PodScheduled" and cond.get("status") == "True":
                return {k: v for k, v in cond.items() if k not in ("reason", "message")}
        return _cond("PodScheduled", "True", now)

    async def _stop(self, key: tuple[str, str], node_name: str) -> None:
        pod = self.registry.store.get("pods", *key)
        if pod is None:
            return
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            if "running" in (status.get("state") or {}):
                self.events.kubelet_event(pod, node_name, "Killing", f"Stopping container {status['name']}",
                                          container=status["name"])
        grace = pod["metadata"].get("deletionGracePeriodSeconds")
        grace = 30 if grace is None else grace
        await asyncio.sleep(min(float(grace), self.settings.termination_grace_cap))
        try:  # the status manager's final delete: grace period 0, the pod's uid as precondition
            self.clients.kubelet(node_name).delete(PODS, key[0], key[1], grace_period=0,
                                                   preconditions={"uid": pod["metadata"].get("uid", "")})
        except errors.StatusError:
            pass

    # -- node status -----------------------------------------------------------------------------------------------

    def _report_images(self, node_name: str) -> None:
        """Write the node's ``status.images`` (:mod:`.images`) once this tick's pulls are done, as the kubelet's
        next node status update reports a pulled image."""
        if not self._images_changed:
            asyncio.get_running_loop().call_soon(self._write_images)
        self._images_changed.add(node_name)

    def _write_images(self) -> None:
        nodes, self._images_changed = self._images_changed, set()
        for name in sorted(nodes):
            node = self.registry.store.get("nodes", "", name)
            if node is None:
                continue
            images = node_status_images(self._images.get(name, ()))
            if (node.get("status") or {}).get("images") == images:
                continue
            patch = node_status_patch(node, {**node, "status": {**(node.get("status") or {}), "images": images}})
            try:  # the node status update's PatchNodeStatus (pkg/util/node)
                self.clients.kubelet(name).patch(CORE_V1["nodes"], "", name, STRATEGIC_MERGE,
                                                 json.dumps(patch).encode(), subresource="status")
            except errors.StatusError:
                self._report_images(name)  # changed meanwhile: write again on the next tick

    # -- node leases -----------------------------------------------------------------------------------------------

    async def _renew_leases(self) -> None:
        """Each Ready node's kubelet renews ``kube-node-lease/<node>`` (leaseDurationSeconds 40)."""
        leases = ALL["leases"]
        while True:
            for (_, name), node in list(self.nodes.cache.items()):
                if not node_ready(node):
                    continue
                spec = {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": micro_time()}
                current = self.registry.store.get("leases", "kube-node-lease", name)
                client = self.clients.kubelet(name)
                try:  # the node lease controller creates the Lease once, then PUTs it with its resourceVersion
                    if current is None:
                        owner = {"apiVersion": "v1", "kind": "Node", "name": name,
                                 "uid": node["metadata"].get("uid", "")}
                        client.create(leases, "kube-node-lease", {
                            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                            "metadata": {"name": name, "ownerReferences": [owner]}, "spec": spec})
                    else:
                        client.update(leases, "kube-node-lease", name, {**current, "spec": spec})
                except errors.StatusError:
                    pass
            await asyncio.sleep(self.settings.node_lease_renew_interval)


def _transition(status: dict[str, Any], type_: str, default: str) -> str:
    for cond in status.get("conditions") or []:
        if cond.get("type") == type_ and cond.get("status") == "True":
            return cond.get("lastTransitionTime") or default
    return default


def _go_duration(seconds: float) -> str:
    """A Go ``time.Duration`` string truncated to milliseconds, as the kubelet prints pull times (``806ms``,
    ``1.462s``)."""
    ms = int(seconds * 1000)
    if ms < 1000:
        return f"{ms}ms"
    return f"{ms / 1000:.3f}".rstrip("0").rstrip(".") + "s"
