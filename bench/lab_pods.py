"""Realistic pod bodies for the lab benchmark, created straight through the lab's Registry (fast setup, no HTTP).

The shapes follow what a kind cluster holds for Deployment pods: ReplicaSet owner reference, ``app`` and
``pod-template-hash`` labels, one container with resource requests (some with a memory limit), the projected
``kube-api-access-*`` volume the ServiceAccount admission plugin adds, and, for bound pods, the status a kubelet
writes (Running, five conditions, IPs, one containerStatus). Pending pods carry the scheduler's Unschedulable
PodScheduled condition. Everything is deterministic for a given count.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from observatory.lab.registry import Registry
from observatory.lab.resources import CORE_V1
from observatory.lab.store import now_rfc3339

NAMESPACES = (("default", 5), ("sched-lab", 4), ("kube-system", 1))
"""Namespaces of the ``pair`` scenario and their share of the pods (out of 10)."""

APPS = (
    ("web", "registry.k8s.io/nginx-slim:0.27", "100m", "128Mi", None),
    ("api", "ghcr.io/example/api:1.14.2", "250m", "256Mi", "512Mi"),
    ("worker", "ghcr.io/example/worker:1.14.2", "500m", "512Mi", "1Gi"),
    ("cache", "docker.io/library/redis:7.4.1", "100m", "64Mi", "128Mi"),
)
NODE = "pair-worker"
HOST_IP = "172.18.0.3"
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
UNSCHEDULABLE = (
    "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
    "{node-role.kubernetes.io/control-plane: }. preemption: 0/2 nodes are available: 1 No preemption victims found "
    "for incoming pod, 1 Preemption is not helpful for scheduling."
)


@dataclass(frozen=True)
class PodRef:
    namespace: str
    name: str


def _suffix(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(n))


def _unique_suffix(index: int) -> str:
    """Five characters of ``generateName``'s alphabet, unique per index (27**5 names)."""
    out = []
    for _ in range(5):
        index, digit = divmod(index, len(_ALPHABET))
        out.append(_ALPHABET[digit])
    return "".join(out)


def pod_body(rng: random.Random, index: int, namespace: str, app_index: int, bound: bool) -> dict[str, Any]:
    """One Deployment-style pod manifest as a client would POST it (with nodeName when ``bound``)."""
    app, image, cpu, memory, mem_limit = APPS[app_index]
    template_hash = f"{app_index + 5}d{app_index + 4}b9c8f6d"
    rs = f"{app}-{template_hash}"
    resources: dict[str, Any] = {"requests": {"cpu": cpu, "memory": memory}}
    if mem_limit:
        resources["limits"] = {"memory": mem_limit}
    token_volume = f"kube-api-access-{_suffix(rng, 5)}"
    spec: dict[str, Any] = {
        "containers": [{
            "name": app,
            "image": image,
            "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
            "env": [{"name": "LOG_LEVEL", "value": "info"},
                    {"name": "POD_NAME",
                     "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
            "resources": resources,
            "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": token_volume,
                              "readOnly": True}],
        }],
        "volumes": [{"name": token_volume, "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                          "fieldPath": "metadata.namespace"}}]}},
        ]}}],
    }
    if bound:
        spec["nodeName"] = NODE
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{rs}-{_unique_suffix(index)}",
            "generateName": f"{rs}-",
            "namespace": namespace,
            "labels": {"app": app, "pod-template-hash": template_hash, "tier": "backend" if app_index else "frontend"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                 "uid": f"0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f{app_index}", "controller": True,
                                 "blockOwnerDeletion": True}],
        },
        "spec": spec,
    }


def running_status(pod: dict[str, Any], index: int, started: str) -> dict[str, Any]:
    """The status a kubelet writes once the pod's one container runs and is ready."""
    c = pod["spec"]["containers"][0]
    pod_ip = f"10.244.{1 + index // 250 % 250}.{2 + index % 250}"
    cond = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": started}
            for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
    return {
        "phase": "Running",
        "conditions": cond,
        "hostIP": HOST_IP,
        "hostIPs": [{"ip": HOST_IP}],
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "startTime": started,
        "containerStatuses": [{
            "name": c["name"],
            "state": {"running": {"startedAt": started}},
            "lastState": {},
            "ready": True,
            "restartCount": 0,
            "image": c["image"],
            "imageID": c["image"].split(":")[0] + "@sha256:" + "9f2c" * 16,
            "containerID": "containerd://" + f"{index:08x}" * 8,
            "started": True,
        }],
        "qosClass": "Burstable",
    }


def pending_status(now: str) -> dict[str, Any]:
    """The status the scheduler leaves on a pod it cannot place."""
    return {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                        "lastTransitionTime": now, "reason": "Unschedulable", "message": UNSCHEDULABLE}],
        "qosClass": "Burstable",
    }


def populate(registry: Registry, count: int, *, seed: int = 2) -> list[PodRef]:
    """Create ``count`` pods, 4 in 5 bound to pair-worker and Running, the rest Pending (create, then the status
    write a kubelet or scheduler would make). Returns them in creation order."""
    rng = random.Random(seed)
    now = now_rfc3339()
    pods_rt = CORE_V1["pods"]
    refs: list[PodRef] = []
    weights = [ns for ns, share in NAMESPACES for _ in range(share)]
    for i in range(count):
        namespace = weights[i % len(weights)]
        bound = i % 5 != 0
        body = pod_body(rng, i, namespace, i % len(APPS), bound)
        created = registry.create(pods_rt, namespace, body)
        name = created["metadata"]["name"]
        status = running_status(body, i, now) if bound else pending_status(now)
        registry.update_status(pods_rt, namespace, name, {"metadata": {}, "status": status})
        refs.append(PodRef(namespace, name))
    return refs
