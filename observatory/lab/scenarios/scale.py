"""The ``scale:nodes=N,pods=M[,seed=S]`` scenario generator: a big synthetic cluster, the same every time.

``scale:nodes=1000,pods=10000`` gives the four system namespaces plus ``team-web``, ``team-data``, ``team-batch``
and ``sched-lab``; nodes ``scale-node-0001`` ... ``scale-node-1000``; and the pods, spread over the four
non-system namespaces in the proportions of a working cluster:

* about 80 % Running, bound to a node, with the status a kubelet writes (conditions, containerStatuses, IPs);
* 8 % Pending with no node, small enough that a scheduler will place them;
* 6 % Succeeded (CronJob pods, container terminated with reason Completed), bound to a node;
* 3 % for a scheduler that is not running (``schedulerName: my-scheduler``);
* 3 % held by a scheduling gate (``example.com/quota-check``).

Nodes come in three shapes (4, 8 or 16 CPU, with 4Gi of memory per CPU and 110 pods each), spread round-robin over
the zones ``lab-1a``, ``lab-1b`` and ``lab-1c`` of region ``lab-1``. When the Running pods would fill the cluster
past three quarters, every node's allocatable (CPU, memory and pods alike) is multiplied by the same whole factor,
so the bound pods always fit their nodes and the Pending ones still fit somewhere.

``seed`` (default 0) picks another, equally reproducible cluster: the output depends only on the arguments. Bad
arguments raise ValueError, which the loader reports as ``scale:...: cannot generate the scenario: <why>.``
"""

from __future__ import annotations

import gc
import hashlib
import math
import random
import re
from datetime import UTC, datetime
from typing import Any

__all__ = ["MAX_NODES", "MAX_PODS", "generate", "parse_arguments", "state_counts"]

MAX_NODES = 5_000
"""The largest cluster upstream Kubernetes supports (its documented scalability limit)."""
MAX_PODS = 200_000

USAGE = "write scale:nodes=N,pods=M (optionally ,seed=S), for example scale:nodes=100,pods=3000"
_INTEGER = re.compile(r"[+-]?[0-9]+")

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
TEAM_NAMESPACES = ("team-web", "team-data", "team-batch", "sched-lab")
_NAMESPACE_CUM_WEIGHTS = (45, 75, 95, 100)
REGION = "lab-1"
ZONES = ("lab-1a", "lab-1b", "lab-1c")
SHAPES = (("lab.small", 4), ("lab.medium", 8), ("lab.large", 16))  # instance type, CPUs; memory is 4Gi per CPU
_SHAPE_CUM_WEIGHTS = (2, 7, 10)
MAX_USE = 0.75
"""The share of the cluster's allocatable that Running pods may use before every node is scaled up."""
OTHER_SCHEDULER = "my-scheduler"
GATE = "example.com/quota-check"
EPOCH = int(datetime(2026, 11, 29, 10, 0, tzinfo=UTC).timestamp())
"""The moment the generated cluster is a snapshot of; every start time is before it."""

STATES = ("running", "pending", "succeeded", "other-scheduler", "gated")
_SHARES = {"pending": 0.08, "succeeded": 0.06, "other-scheduler": 0.03, "gated": 0.03}  # Running: the rest
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
"""apimachinery's utilrand alphabet, which generated pod names are made of."""
_PAIRS = [a + b for a in _NAME_CHARS for b in _NAME_CHARS]
_REQUESTS = (  # (cpu, memory, millicores, MiB); one pod in ten has no requests at all (BestEffort)
    ("50m", "64Mi", 50, 64), ("100m", "128Mi", 100, 128), ("100m", "256Mi", 100, 256), ("250m", "128Mi", 250, 128),
    ("250m", "512Mi", 250, 512), ("500m", "1Gi", 500, 1024), ("0.5", "256Mi", 500, 256), ("200m", "300M", 200, 287),
)
_APPS = {  # namespace -> (app, image, container port or 0)
    "team-web": (("web", "nginx:1.29.3", 80), ("api", "ghcr.io/example/shop-api:2.14.0", 8080),
                 ("frontend", "ghcr.io/example/frontend:5.2.1", 3000)),
    "team-data": (("ingest", "ghcr.io/example/ingest:1.8.0", 0), ("search", "ghcr.io/example/search:7.4.0", 9200),
                  ("stream-worker", "ghcr.io/example/stream-worker:3.0.1", 0)),
    "team-batch": (("worker", "ghcr.io/example/batch-worker:0.12.3", 0),
                   ("render", "ghcr.io/example/render:2.0.0", 0)),
    "sched-lab": (("pause", "registry.k8s.io/pause:3.10", 0),),
}
_JOB = ("report", "ghcr.io/example/report:2.2.0", 0)
_POD_CIDR_BASE = 10 << 24 | 64 << 16  # 10.64.0.0/10, room for every node's pod CIDR
_NODE_IP_BASE = (172 << 24 | 16 << 16) + 10  # 172.16.0.10 onwards


def generate(arguments: str) -> list[dict[str, Any]]:
    """Manifests for ``scale:<arguments>``: namespaces, nodes, then pods. Raises ValueError on bad arguments."""
    nodes, pods, seed = parse_arguments(arguments)
    # The cyclic garbage collector would walk every new dict again and again while tens of thousands are made
    # (more than half the time at 50,000 pods); nothing here forms a cycle, so it rests until the list is built.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _Cluster(nodes, pods, seed).build()
    finally:
        if paused:
            gc.enable()


def parse_arguments(arguments: str) -> tuple[int, int, int]:
    """``nodes=N,pods=M[,seed=S]`` -> (N, M, S), or ValueError saying what is wrong."""
    if not arguments.strip():
        raise ValueError(f"no parameters given; {USAGE}")
    values: dict[str, int] = {}
    for part in arguments.split(","):
        key, equals, text = (s.strip() for s in part.partition("="))
        if not equals or not key:
            raise ValueError(f"{part.strip()!r} is not a key=value pair; {USAGE}")
        if key not in ("nodes", "pods", "seed"):
            raise ValueError(f"unknown parameter {key!r}; the parameters are nodes, pods and seed")
        if key in values:
            raise ValueError(f"{key} is given twice")
        if not _INTEGER.fullmatch(text):
            raise ValueError(f"{key} must be a whole number, not {text!r}")
        values[key] = int(text)
    for key in ("nodes", "pods"):
        if key not in values:
            raise ValueError(f"{key} is missing; {USAGE}")
    nodes, pods, seed = values["nodes"], values["pods"], values.get("seed", 0)
    if not 1 <= nodes <= MAX_NODES:
        raise ValueError(f"nodes must be between 1 and {MAX_NODES:,}, not {nodes:,}")
    if not 0 <= pods <= MAX_PODS:
        raise ValueError(f"pods must be between 0 and {MAX_PODS:,}, not {pods:,}")
    if seed < 0:
        raise ValueError(f"seed must be 0 or more, not {seed}")
    return nodes, pods, seed


def state_counts(pods: int) -> dict[str, int]:
    """How many of ``pods`` pods are in each state: the shares, rounded; Running takes the rest."""
    counts = {state: round(pods * share) for state, share in _SHARES.items()}
    return {"running": pods - sum(counts.values()), **counts}


_DAYS: dict[int, str] = {}


def _timestamp(seconds: int) -> str:
    """RFC 3339 UTC seconds, as Kubernetes writes times (cheaper than strftime for every pod)."""
    day, rest = divmod(seconds, 86400)
    date = _DAYS.get(day)
    if date is None:
        date = _DAYS[day] = datetime.fromtimestamp(day * 86400, UTC).strftime("%Y-%m-%d")
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{date}T{hours:02d}:{minutes:02d}:{secs:02d}Z"


def _ip(value: int) -> str:
    return f"{value >> 24 & 255}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"


class _Cluster:
    """One generation run: every random draw comes from ``rng``, in a fixed order."""

    def __init__(self, nodes: int, pods: int, seed: int) -> None:
        self.n_nodes = nodes
        self.n_pods = pods
        self.rng = random.Random(f"scale:{seed}")
        self.width = max(4, len(str(nodes)))
        self.taken: set[tuple[str, str]] = set()
        self.hashes: dict[tuple[str, str], str] = {}

    def node_name(self, i: int) -> str:
        return f"scale-node-{i + 1:0{self.width}d}"

    def build(self) -> list[dict[str, Any]]:
        rng, n, m = self.rng, self.n_nodes, self.n_pods
        states = [state for state, count in state_counts(m).items() for _ in range(count)]
        rng.shuffle(states)
        namespaces = rng.choices(TEAM_NAMESPACES, cum_weights=_NAMESPACE_CUM_WEIGHTS, k=m)
        apps = [_JOB if state == "succeeded" else rng.choice(_APPS[ns])
                for state, ns in zip(states, namespaces, strict=True)]
        requests = [None if rng.random() < 0.1 else rng.choice(_REQUESTS) for _ in range(m)]
        shapes = rng.choices(range(len(SHAPES)), cum_weights=_SHAPE_CUM_WEIGHTS, k=n)
        factor = self._factor(shapes, [r for s, r in zip(states, requests, strict=True) if s == "running"])
        cpus = [SHAPES[shape][1] * factor for shape in shapes]
        max_pods = 110 * factor
        nodes = self._place(states, requests, cpus, max_pods)
        # one pod CIDR per node, with room for twice its pods (kube-controller-manager gives 110 pods a /24)
        cidr_bits = max(8, math.ceil(math.log2(2 * max_pods)))
        docs = [_namespace(ns) for ns in (*SYSTEM_NAMESPACES, *TEAM_NAMESPACES)]
        docs.extend(self._node(i, shapes[i], cpus[i], max_pods, cidr_bits) for i in range(n))
        next_host = [0] * n
        hosts = (1 << cidr_bits) - 3
        for state, ns, app, req, node in zip(states, namespaces, apps, requests, nodes, strict=True):
            pod = self._pod(state, ns, app, req, node)
            if node is not None:
                # hosts 2 .. size-2 of the node's CIDR; finished pods gave theirs back, so addresses may come round
                pod_ip = _ip(_POD_CIDR_BASE + (node << cidr_bits) + 2 + next_host[node] % hosts)
                next_host[node] += 1
                pod["status"] = self._status(state, pod["spec"]["containers"][0], _ip(_NODE_IP_BASE + node), pod_ip)
            docs.append(pod)
        return docs

    @staticmethod
    def _factor(shapes: list[int], running: list[tuple | None]) -> int:
        """The whole factor every node is scaled by so that Running pods use at most MAX_USE of the cluster."""
        cpu = sum(r[2] for r in running if r) / 1000
        memory_gi = sum(r[3] for r in running if r) / 1024
        total_cpu = sum(SHAPES[shape][1] for shape in shapes)
        need = max(cpu / total_cpu, memory_gi / (4 * total_cpu), len(running) / (110 * len(shapes)))
        return max(1, math.ceil(need / MAX_USE))

    def _place(self, states: list[str], requests: list[tuple | None], cpus: list[int],
               max_pods: int) -> list[int | None]:
        """The node index of each pod, or None: Running and Succeeded pods go to a node drawn in proportion to its
        size (Running ones to the next node that still has room); the others stay unbound."""
        n = self.n_nodes
        free_cpu = [c * 1000 for c in cpus]
        free_mem = [c * 4096 for c in cpus]
        free_pods = [max_pods] * n
        draws = iter(self.rng.choices(range(n), weights=cpus, k=sum(s in ("running", "succeeded") for s in states)))
        nodes: list[int | None] = []
        for state, req in zip(states, requests, strict=True):
            if state == "succeeded":  # a finished pod holds nothing
                nodes.append(next(draws))
                continue
            if state != "running":
                nodes.append(None)
                continue
            cpu, mem = (req[2], req[3]) if req else (0, 0)
            start = next(draws)
            for step in range(n):
                i = (start + step) % n
                if free_cpu[i] >= cpu and free_mem[i] >= mem and free_pods[i]:
                    break
            else:  # cannot happen while Running pods use at most MAX_USE of the cluster
                raise ValueError("the pods do not fit on the nodes")
            free_cpu[i] -= cpu
            free_mem[i] -= mem
            free_pods[i] -= 1
            nodes.append(i)
        return nodes

    def _uuid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"

    def _node(self, i: int, shape: int, cpu: int, max_pods: int, cidr_bits: int) -> dict[str, Any]:
        name = self.node_name(i)
        instance_type = SHAPES[shape][0]
        memory_gi = 4 * cpu
        cidr = f"{_ip(_POD_CIDR_BASE + (i << cidr_bits))}/{32 - cidr_bits}"
        pods = str(max_pods)
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "annotations": {
                    "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///run/containerd/containerd.sock",
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
                "labels": {
                    "beta.kubernetes.io/arch": "amd64",
                    "beta.kubernetes.io/instance-type": instance_type,
                    "beta.kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    "kubernetes.io/hostname": name,
                    "kubernetes.io/os": "linux",
                    "node.kubernetes.io/instance-type": instance_type,
                    "topology.kubernetes.io/region": REGION,
                    "topology.kubernetes.io/zone": ZONES[i % len(ZONES)],
                },
            },
            "spec": {"podCIDR": cidr, "podCIDRs": [cidr], "providerID": f"kind://docker/scale/{name}"},
            "status": {
                "addresses": [{"address": _ip(_NODE_IP_BASE + i), "type": "InternalIP"},
                              {"address": name, "type": "Hostname"}],
                "allocatable": {"cpu": str(cpu), "ephemeral-storage": "102625208Ki", "hugepages-1Gi": "0",
                                "hugepages-2Mi": "0", "memory": f"{memory_gi}Gi", "pods": pods},
                "capacity": {"cpu": str(cpu), "ephemeral-storage": "102625208Ki", "hugepages-1Gi": "0",
                             "hugepages-2Mi": "0", "memory": f"{memory_gi * 1024 * 1024 + 102400}Ki", "pods": pods},
                "conditions": [
                    {"message": "kubelet has sufficient memory available", "reason": "KubeletHasSufficientMemory",
                     "status": "False", "type": "MemoryPressure"},
                    {"message": "kubelet has no disk pressure", "reason": "KubeletHasNoDiskPressure",
                     "status": "False", "type": "DiskPressure"},
                    {"message": "kubelet has sufficient PID available", "reason": "KubeletHasSufficientPID",
                     "status": "False", "type": "PIDPressure"},
                    {"message": "kubelet is posting ready status", "reason": "KubeletReady", "status": "True",
                     "type": "Ready"},
                ],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {
                    "architecture": "amd64",
                    "bootID": self._uuid(),
                    "containerRuntimeVersion": "containerd://2.1.3",
                    "kernelVersion": "6.8.0-79-generic",
                    "kubeProxyVersion": "",
                    "kubeletVersion": "v1.34.1",
                    "machineID": f"{self.rng.getrandbits(128):032x}",
                    "operatingSystem": "linux",
                    "osImage": "Debian GNU/Linux 12 (bookworm)",
                    "systemUUID": self._uuid(),
                },
            },
        }

    def _template_hash(self, namespace: str, app: str) -> str:
        """A Deployment's pod-template-hash, one per app and namespace."""
        key = (namespace, app)
        if key not in self.hashes:
            self.hashes[key] = "".join(self.rng.choices(_NAME_CHARS, k=self.rng.choice((9, 10))))
        return self.hashes[key]

    def _name(self, namespace: str, stem: str) -> str:
        """``stem`` plus a five-character suffix, unique in the namespace."""
        rng = self.rng
        while True:
            r = rng.getrandbits(24)
            name = f"{stem}-{_PAIRS[r % 729]}{_PAIRS[r // 729 % 729]}{_NAME_CHARS[r % 27]}"
            if (namespace, name) not in self.taken:
                self.taken.add((namespace, name))
                return name

    def _pod(self, state: str, namespace: str, app: tuple[str, str, int], req: tuple | None,
             node: int | None) -> dict[str, Any]:
        app_name, image, port = app
        container: dict[str, Any] = {"name": app_name, "image": image}
        if port:
            container["ports"] = [{"containerPort": port, "protocol": "TCP"}]
        if req:
            container["resources"] = {"requests": {"cpu": req[0], "memory": req[1]}, "limits": {"memory": req[1]}}
        spec: dict[str, Any] = {}
        if state == "succeeded":  # a CronJob's Job is named for its scheduled time in minutes since the epoch
            job = f"{app_name}-{(EPOCH // 60) - 60 * self.rng.randrange(1, 72)}"
            name = self._name(namespace, job)
            labels = {"batch.kubernetes.io/job-name": job, "job-name": job}
            spec["restartPolicy"] = "Never"
        elif namespace == "sched-lab":
            name = self._name(namespace, app_name)
            labels = {"app": app_name}
        else:
            template_hash = self._template_hash(namespace, app_name)
            name = self._name(namespace, f"{app_name}-{template_hash}")
            labels = {"app": app_name, "pod-template-hash": template_hash}
        if node is not None:
            spec["nodeName"] = self.node_name(node)
        elif state == "other-scheduler":
            spec["schedulerName"] = OTHER_SCHEDULER
        elif state == "gated":
            spec["schedulingGates"] = [{"name": GATE}]
        spec["containers"] = [container]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace,
                                                               "labels": labels}, "spec": spec}

    def _status(self, state: str, container: dict[str, Any], host_ip: str, pod_ip: str) -> dict[str, Any]:
        """What the kubelet writes for a Running pod, or for a Succeeded one whose container exited 0."""
        rng = self.rng
        started = EPOCH - rng.randrange(600, 30 * 86400)
        image = container["image"]
        if "." not in image.split("/")[0]:
            image = f"docker.io/library/{image}"
        container_id = f"containerd://{rng.getrandbits(256):064x}"
        digest = hashlib.sha256(image.encode()).hexdigest()
        status: dict[str, Any] = {"name": container["name"], "image": image,
                                  "imageID": f"{image.rsplit(':', 1)[0]}@sha256:{digest}",
                                  "containerID": container_id}
        if state == "running":
            status.update(started=True, ready=True, restartCount=0,
                          state={"running": {"startedAt": _timestamp(started + 3)}}, lastState={})
            ready, why = "True", None
        else:
            finished = _timestamp(started + 3 + rng.randrange(5, 900))
            status.update(started=False, ready=False, restartCount=0, state={"terminated": {
                "containerID": container_id, "exitCode": 0, "reason": "Completed",
                "startedAt": _timestamp(started + 3), "finishedAt": finished}}, lastState={})
            ready, why = "False", "PodCompleted"
        resources = container.get("resources")
        if resources:
            status["resources"] = {"requests": dict(resources["requests"]), "limits": dict(resources["limits"])}
        conditions = [
            {"type": "PodReadyToStartContainers", "status": ready, "lastProbeTime": None, "observedGeneration": 1},
            {"type": "Initialized", "status": "True", "lastProbeTime": None, "observedGeneration": 1},
            {"type": "Ready", "status": ready, "lastProbeTime": None, "observedGeneration": 1},
            {"type": "ContainersReady", "status": ready, "lastProbeTime": None, "observedGeneration": 1},
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "observedGeneration": 1},
        ]
        if why:
            for condition in conditions[1:4]:
                condition["reason"] = why
        return {
            "phase": "Running" if state == "running" else "Succeeded",
            "conditions": conditions,
            "containerStatuses": [status],
            "hostIP": host_ip,
            "hostIPs": [{"ip": host_ip}],
            "podIP": pod_ip,
            "podIPs": [{"ip": pod_ip}],
            "startTime": _timestamp(started),
            "qosClass": "Burstable" if resources else "BestEffort",
            "observedGeneration": 1,
        }


def _namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
