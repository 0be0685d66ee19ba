"""The cluster scenarios (refusals, gated, busy) and the ``scale`` generator: what they declare, that it is
consistent (bound pods fit their nodes, Running pods carry a kubelet's status, refusals really are refused), and
that the lab starts with every one of them.

The default scheduler's verdicts are recomputed here by a small filter that follows reference §4.3a (v1.34.1):
filters in order NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit, first failure per node.
"""

from __future__ import annotations

import asyncio
import collections
import ipaddress
import json
import re
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from observatory.embedded import EmbeddedLab
from observatory.lab import scenarios, strategy
from observatory.lab.printing import row_cells
from observatory.lab.scenarios import ScenarioError, list_scenarios, load_scenario, scale
from observatory.settings import LabSettings

SHIPPED = ["affinity", "busy", "gated", "manual-binding", "pair", "preemption", "refusals", "spread",
           "volumes", "workloads"]
TEACHES = "observatory.dev/teaches"
CONDITION_TYPES = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


# --- helpers: quantities, pods, a small default-scheduler filter ----------------------------------------------------

_QUANTITY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))((?:[KMGTPE]i)|[numkMGTPE]|[eE][+-]?[0-9]+)?$")
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


def quantity(text: str) -> Fraction:
    """A Kubernetes resource.Quantity as an exact number (``128m`` of memory is 0.128 bytes, as upstream)."""
    match = _QUANTITY.match(text)
    assert match, f"{text!r} is not a Kubernetes quantity"
    number, suffix = Fraction(match[1]), match[2] or ""
    if suffix in _BINARY:
        return number * 2 ** _BINARY[suffix]
    if suffix[:1] in ("e", "E"):
        return number * Fraction(10) ** int(suffix[1:])
    return number * Fraction(10) ** _DECIMAL[suffix]


def test_quantity_parser() -> None:
    assert quantity("250m") == Fraction(1, 4)
    assert quantity("0.5") == quantity("500m")
    assert quantity("1e3") == 1000 and quantity("1e9") == 10**9
    assert quantity("4Gi") == 4 * 2**30 and quantity("262144k") == 262_144_000
    assert quantity("128m") == Fraction(128, 1000)


def by_name(manifests: list[dict], kind: str, name: str, namespace: str | None = None) -> dict:
    (found,) = [m for m in manifests if m["kind"] == kind and m["metadata"]["name"] == name
                and (namespace is None or m["metadata"].get("namespace") == namespace)]
    return found


def kinds(manifests: list[dict], kind: str) -> list[dict]:
    return [m for m in manifests if m["kind"] == kind]


def key(pod: dict) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def requests_of(pod: dict) -> dict[str, Fraction]:
    """Effective requests: per container, a resource's request, or its limit when only that is set (the API
    server's defaulting), summed over containers."""
    total: dict[str, Fraction] = collections.defaultdict(Fraction)
    for c in pod["spec"]["containers"]:
        res = c.get("resources") or {}
        limits, requests = res.get("limits") or {}, res.get("requests") or {}
        for name in {*limits, *requests}:
            total[name] += quantity(str(requests.get(name, limits.get(name))))
    return dict(total)


def terminal(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def tolerations_of(pod: dict) -> list[dict]:
    """The pod's tolerations plus the two DefaultTolerationSeconds adds at create."""
    return strategy.prepare_pod_create(pod)["spec"]["tolerations"]


def tolerates(tolerations: list[dict], taint: dict) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("operator") == "Exists" and not t.get("key"):
            return True
        if t.get("key") != taint["key"]:
            continue
        if t.get("operator") == "Exists" or t.get("value", "") == taint.get("value", ""):
            return True
    return False


def selector_matches(pod: dict, node: dict) -> bool:
    labels = node["metadata"].get("labels") or {}
    spec = pod["spec"]
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if not required:
        return True

    def requirement(req: dict, value: str | None) -> bool:
        op = req["operator"]
        if op == "In":
            return value in req["values"]
        if op == "NotIn":
            return value not in req["values"]
        if op == "Exists":
            return value is not None
        if op == "DoesNotExist":
            return value is None
        raise AssertionError(f"operator {op} not handled by this test")

    return any(all(requirement(r, labels.get(r["key"])) for r in term.get("matchExpressions") or [])
               and all(requirement(r, node["metadata"]["name"]) for r in term.get("matchFields") or [])
               for term in required["nodeSelectorTerms"])


def node_usage(manifests: list[dict]) -> dict[str, tuple[dict[str, Fraction], int]]:
    """Per node: the summed requests and the number of bound, non-terminal pods."""
    usage: dict[str, tuple[dict[str, Fraction], int]] = {}
    for pod in kinds(manifests, "Pod"):
        node = pod["spec"].get("nodeName")
        if not node or terminal(pod):
            continue
        used, count = usage.get(node, ({}, 0))
        for name, value in requests_of(pod).items():
            used[name] = used.get(name, Fraction(0)) + value
        usage[node] = (used, count + 1)
    return usage


def filter_node(pod: dict, node: dict, usage: dict) -> tuple[list[str], bool]:
    """The reasons ``node`` refuses ``pod`` (empty if it fits) and whether they are unresolvable by preemption."""
    spec = node.get("spec") or {}
    tolerations = tolerations_of(pod)
    if spec.get("unschedulable") and not tolerates(
            tolerations, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}):
        return ["node(s) were unschedulable"], True
    for taint in spec.get("taints") or []:
        if taint["effect"] in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint):
            return [f"node(s) had untolerated taint {{{taint['key']}: {taint.get('value', '')}}}"], True
    if not selector_matches(pod, node):
        return ["node(s) didn't match Pod's node affinity/selector"], True
    allocatable = {k: quantity(v) for k, v in node["status"]["allocatable"].items()}
    used, count = usage.get(node["metadata"]["name"], ({}, 0))
    reasons, unresolvable = [], False
    if count + 1 > allocatable["pods"]:
        reasons.append("Too many pods")
    for name, want in sorted(requests_of(pod).items()):
        have = allocatable.get(name, Fraction(0))
        if want > have - used.get(name, Fraction(0)):
            reasons.append(f"Insufficient {name}")
            unresolvable = unresolvable or want > have
    return reasons, unresolvable


def verdicts(pod: dict, manifests: list[dict]) -> dict[str, list[str]]:
    usage = node_usage(manifests)
    return {n["metadata"]["name"]: filter_node(pod, n, usage)[0] for n in kinds(manifests, "Node")}


def fit_error(pod: dict, manifests: list[dict]) -> str:
    """The FailedScheduling message of kube-scheduler v1.34.1 with DRA on, for pods of priority 0 on nodes whose
    pods all have priority 0 or more (reference §4.3, §4.3a)."""
    nodes = kinds(manifests, "Node")
    usage = node_usage(manifests)
    reasons: collections.Counter[str] = collections.Counter()
    preemption: collections.Counter[str] = collections.Counter()
    for node in nodes:
        found, unresolvable = filter_node(pod, node, usage)
        assert found, f"{node['metadata']['name']} would take {key(pod)}"
        reasons.update(found)
        preemption["Preemption is not helpful for scheduling" if unresolvable
                   else "No preemption victims found for incoming pod"] += 1

    def join(counter: collections.Counter[str]) -> str:
        return ", ".join(sorted(f"{count} {reason}" for reason, count in counter.items()))

    n = len(nodes)
    return (f"0/{n} nodes are available: {join(reasons)}. no new claims to deallocate, "
            f"preemption: 0/{n} nodes are available: {join(preemption)}.")


def comments_text(name: str) -> str:
    """All comment text of a shipped file, comment lines joined with spaces (messages wrap across lines)."""
    lines = (scenarios.SCENARIO_DIR / f"{name}.yaml").read_text().splitlines()
    return " ".join(line[1:].strip() for line in lines if line.startswith("#"))


def pod_ip_in_node_cidr(pod: dict, node: dict) -> bool:
    return ipaddress.ip_address(pod["status"]["podIP"]) in ipaddress.ip_network(node["spec"]["podCIDR"])


def internal_ip(node: dict) -> str:
    (ip,) = [a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP"]
    return ip


def kubectl_status(pod: dict) -> str:
    """kubectl's STATUS column for the pod as the API would serve it: pods no kubelet has seen get the API
    server's create-time status (phase Pending, and SchedulingGated when gated)."""
    served = pod if pod.get("status", {}).get("phase") else strategy.prepare_pod_create(pod)
    return row_cells("pods", served, datetime(2026, 11, 29, 10, tzinfo=UTC))[2]


def check_running_status(pod: dict, node: dict) -> None:
    """A Running pod carries what a v1.34 kubelet writes."""
    status, spec = pod["status"], pod["spec"]
    where = key(pod)
    assert status["phase"] == "Running", where
    assert [c["type"] for c in status["conditions"]] == CONDITION_TYPES, where
    assert all(c["observedGeneration"] == 1 and "lastProbeTime" in c for c in status["conditions"]), where
    assert [cs["name"] for cs in status["containerStatuses"]] == [c["name"] for c in spec["containers"]], where
    for cs, c in zip(status["containerStatuses"], spec["containers"], strict=True):
        assert cs["containerID"].startswith("containerd://") and len(cs["containerID"]) == 13 + 64, where
        assert re.fullmatch(r".+@sha256:[0-9a-f]{64}", cs["imageID"]), where
        assert cs["image"].endswith(c["image"].rsplit("/", 1)[-1]), where
        assert {"ready", "started", "restartCount", "state", "lastState"} <= cs.keys(), where
        if c.get("resources"):
            assert cs["resources"] == c["resources"], where
    assert status["hostIP"] == internal_ip(node) and status["hostIPs"] == [{"ip": status["hostIP"]}], where
    assert status["podIPs"] == [{"ip": status["podIP"]}], where
    if spec.get("hostNetwork"):
        assert status["podIP"] == status["hostIP"], where
    else:
        assert pod_ip_in_node_cidr(pod, node), where
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", status["startTime"]), where
    assert status["qosClass"] == strategy.qos_class(spec), where
    assert status["observedGeneration"] == 1, where


# --- the listing --------------------------------------------------------------------------------------------------


def test_list_scenarios_has_every_shipped_file_with_one_line_descriptions() -> None:
    infos = {info.name: info for info in list_scenarios()}
    assert sorted(infos) == SHIPPED
    for info in infos.values():
        assert info.description and "\n" not in info.description and len(info.description) < 200
    assert infos["refusals"].description.startswith("pair plus sched-lab pods the default scheduler refuses")
    assert infos["gated"].description.startswith("pair plus sched-lab pods held by spec.schedulingGates")
    assert infos["busy"].description.startswith("A busy 8-node kubeadm cluster")


def test_the_scale_generator_is_registered_on_import() -> None:
    assert scenarios._GENERATORS["scale"] is scale.generate


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_scenario_loads_as_json_with_valid_names(name: str) -> None:
    manifests = load_scenario(name)
    json.dumps(manifests, allow_nan=False)
    namespaces = {m["metadata"]["name"] for m in kinds(manifests, "Namespace")}
    seen = set()
    for m in manifests:
        assert _DNS1123_SUBDOMAIN.match(m["metadata"]["name"]), m["metadata"]["name"]
        if m["kind"] == "Pod":
            assert m["metadata"]["namespace"] in namespaces, key(m)
            assert key(m) not in seen
            seen.add(key(m))
            for c in m["spec"]["containers"]:
                for values in (c.get("resources") or {}).values():
                    for value in values.values():
                        quantity(str(value))


# --- refusals -----------------------------------------------------------------------------------------------------

REFERENCE_TOO_MUCH_CPU = (
    "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
    "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: 0/2 nodes are available: "
    "2 Preemption is not helpful for scheduling.")
REFERENCE_NO_SSD = (
    "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint "
    "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: 0/2 nodes are available: "
    "2 Preemption is not helpful for scheduling.")
EXPECTED_TAINTED_NODE = (
    "0/2 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint "
    "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: 0/2 nodes are available: "
    "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.")


STAMP = datetime(2026, 11, 29, 10, tzinfo=UTC)
"""The time stamped on conditions that carry none, when two loads are compared."""


def test_refusals_is_pair_plus_four_sched_lab_pods() -> None:
    pair = load_scenario("pair", now=STAMP)
    manifests = load_scenario("refusals", now=STAMP)  # one stamp: two loads may straddle a second
    assert [m for m in manifests if m["kind"] != "Pod"] == pair
    pods = kinds(manifests, "Pod")
    assert [key(p) for p in pods] == ["sched-lab/filler", "sched-lab/too-much-cpu", "sched-lab/no-ssd",
                                      "sched-lab/needs-the-tainted-node"]
    for pod in pods:
        assert pod["metadata"]["labels"] == {"lesson": "refusals"}
        sentence = pod["metadata"]["annotations"][TEACHES]
        assert sentence.endswith(".") and sentence.count(". ") == 0 and "\n" not in sentence
        assert "schedulerName" not in pod["spec"] and "schedulingGates" not in pod["spec"]


def test_refusals_filler_is_a_running_pod_on_the_worker() -> None:
    manifests = load_scenario("refusals")
    filler = by_name(manifests, "Pod", "filler")
    worker = by_name(manifests, "Node", "pair-worker")
    assert filler["spec"]["nodeName"] == "pair-worker"
    assert requests_of(filler)["memory"] == 6 * 2**30
    check_running_status(filler, worker)
    assert filler["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]
    assert filler["status"]["hostIP"] == "172.18.0.3"


@pytest.mark.parametrize(("name", "expected"), [
    ("too-much-cpu", REFERENCE_TOO_MUCH_CPU),
    ("no-ssd", REFERENCE_NO_SSD),
    ("needs-the-tainted-node", EXPECTED_TAINTED_NODE),
])
def test_refusals_are_refused_with_the_pinned_messages(name: str, expected: str) -> None:
    manifests = load_scenario("refusals")
    pod = by_name(manifests, "Pod", name)
    assert "nodeName" not in pod["spec"]
    assert fit_error(pod, manifests) == expected
    assert expected in comments_text("refusals"), "the comment above the pod quotes the message"


def test_needs_the_tainted_node_would_fit_the_control_plane_but_for_its_taint() -> None:
    manifests = load_scenario("refusals")
    pod = by_name(manifests, "Pod", "needs-the-tainted-node")
    control_plane = by_name(manifests, "Node", "pair-control-plane")
    untainted = {**control_plane, "spec": {k: v for k, v in control_plane["spec"].items() if k != "taints"}}
    assert filter_node(pod, untainted, node_usage(manifests)) == ([], False)
    without_filler = [m for m in manifests if m["metadata"]["name"] != "filler"]
    assert verdicts(pod, without_filler)["pair-worker"] == []


# --- gated --------------------------------------------------------------------------------------------------------


def test_gated_pods_carry_gates_and_nothing_that_conflicts() -> None:
    manifests = load_scenario("gated", now=STAMP)
    assert [m for m in manifests if m["kind"] != "Pod"] == load_scenario("pair", now=STAMP)
    pods = kinds(manifests, "Pod")
    gates = {p["metadata"]["name"]: [g["name"] for g in p["spec"]["schedulingGates"]] for p in pods}
    assert gates == {"quota-gated": ["example.com/quota-check"],
                     "twice-gated": ["example.com/quota-check", "example.com/data-ready"],
                     "gated-too-big": ["example.com/quota-check"]}
    for pod in pods:
        assert pod["metadata"]["namespace"] == "sched-lab"
        assert "nodeName" not in pod["spec"] and "status" not in pod
        assert strategy.validate_pod_create(pod) == []
        assert kubectl_status(pod) == "SchedulingGated"
    ungated = {**by_name(manifests, "Pod", "gated-too-big"), "spec": {
        k: v for k, v in by_name(manifests, "Pod", "gated-too-big")["spec"].items() if k != "schedulingGates"}}
    assert fit_error(ungated, manifests) == REFERENCE_TOO_MUCH_CPU


# --- busy ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def busy() -> list[dict]:
    return load_scenario("busy")


def test_busy_counts(busy: list[dict]) -> None:
    assert collections.Counter(m["kind"] for m in busy) == {"Namespace": 7, "Node": 8, "Pod": 60}
    assert {m["metadata"]["name"] for m in kinds(busy, "Namespace")} == {
        "default", "kube-system", "kube-public", "kube-node-lease", "sched-lab", "team-web", "team-data"}
    assert "extends" not in (scenarios._read_header(scenarios.SCENARIO_DIR / "busy.yaml") or {})


def test_busy_nodes_are_mixed_and_realistic(busy: list[dict]) -> None:
    nodes = kinds(busy, "Node")
    labels = [n["metadata"]["labels"] for n in nodes]
    assert {lab["topology.kubernetes.io/zone"] for lab in labels} == {"eu-west-1a", "eu-west-1b", "eu-west-1c"}
    assert {lab["disktype"] for lab in labels} == {"ssd", "hdd"}
    assert {lab["kubernetes.io/arch"] for lab in labels} == {"amd64", "arm64"}
    assert len({lab["node.kubernetes.io/instance-type"] for lab in labels}) >= 5
    assert len({n["status"]["allocatable"]["cpu"] for n in nodes}) >= 4
    for node in nodes:
        name, status = node["metadata"]["name"], node["status"]
        assert node["metadata"]["labels"]["kubernetes.io/hostname"] == name
        assert node["metadata"]["labels"]["kubernetes.io/arch"] == status["nodeInfo"]["architecture"]
        capacity, allocatable = status["capacity"], status["allocatable"]
        assert quantity(capacity["memory"]) - quantity(allocatable["memory"]) == 100 * 2**20
        assert quantity(allocatable["ephemeral-storage"]) < quantity(capacity["ephemeral-storage"])
        assert capacity["cpu"] == allocatable["cpu"] and allocatable["pods"] == "110"
        assert [c["type"] for c in status["conditions"]] == ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
        assert status["addresses"][1] == {"address": name, "type": "Hostname"}
        assert status["nodeInfo"]["kubeletVersion"] == "v1.34.1"
        assert status["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 10250}}
    for field in ("machineID", "systemUUID", "bootID"):
        assert len({n["status"]["nodeInfo"][field] for n in nodes}) == 8
    assert len({n["spec"]["podCIDR"] for n in nodes}) == 8
    assert len({internal_ip(n) for n in nodes}) == 8


def test_busy_special_nodes(busy: list[dict]) -> None:
    cordoned = by_name(busy, "Node", "busy-compute-a")
    assert cordoned["spec"]["unschedulable"] is True
    assert [(t["key"], t["effect"]) for t in cordoned["spec"]["taints"]] == [
        ("node.kubernetes.io/unschedulable", "NoSchedule")]
    assert [c["status"] for c in cordoned["status"]["conditions"]] == ["False", "False", "False", "True"]

    lost = by_name(busy, "Node", "busy-general-c")
    assert "unschedulable" not in lost["spec"]
    for condition in lost["status"]["conditions"]:
        assert (condition["status"], condition["reason"], condition["message"]) == (
            "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
        assert condition["lastHeartbeatTime"] < condition["lastTransitionTime"]
    assert [(t["key"], t["effect"]) for t in lost["spec"]["taints"]] == [
        ("node.kubernetes.io/unreachable", "NoSchedule"), ("node.kubernetes.io/unreachable", "NoExecute")]
    assert all(t["timeAdded"] for t in lost["spec"]["taints"])

    gpu = by_name(busy, "Node", "busy-gpu-c")
    assert gpu["spec"]["taints"] == [{"effect": "NoSchedule", "key": "dedicated", "value": "gpu"}]
    assert gpu["status"]["allocatable"]["nvidia.com/gpu"] == gpu["status"]["capacity"]["nvidia.com/gpu"] == "4"

    control_plane = by_name(busy, "Node", "busy-control-plane")
    assert control_plane["spec"]["taints"] == [{"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}]
    healthy = [n for n in kinds(busy, "Node") if n["metadata"]["name"] != "busy-general-c"]
    assert all(n["status"]["conditions"][3]["reason"] == "KubeletReady" for n in healthy)


def test_busy_bound_pods_fit_their_nodes(busy: list[dict]) -> None:
    nodes = {n["metadata"]["name"]: n for n in kinds(busy, "Node")}
    usage = node_usage(busy)
    assert set(usage) - set(nodes) == {"busy-general-d"}, "only one pod is bound to a node that does not exist"
    for name, (used, count) in usage.items():
        if name not in nodes:
            continue
        allocatable = {k: quantity(v) for k, v in nodes[name]["status"]["allocatable"].items()}
        assert count <= allocatable["pods"], name
        for resource, value in used.items():
            assert value <= allocatable.get(resource, 0), (name, resource)


def test_busy_pods_run_on_many_nodes_with_full_status(busy: list[dict]) -> None:
    nodes = {n["metadata"]["name"]: n for n in kinds(busy, "Node")}
    running = [p for p in kinds(busy, "Pod") if (p.get("status") or {}).get("phase") == "Running"]
    assert len(running) >= 30
    assert {p["spec"]["nodeName"] for p in running} == set(nodes), "something runs on every node"
    for pod in running:
        check_running_status(pod, nodes[pod["spec"]["nodeName"]])
    ready = {key(p): next(c["status"] for c in p["status"]["conditions"] if c["type"] == "Ready") for p in running}
    on_lost_node = {key(p) for p in running if p["spec"]["nodeName"] == "busy-general-c"}
    assert on_lost_node == {"kube-system/kube-proxy-c2h7p", "team-data/kafka-0"}
    assert all(ready[k] == "False" for k in on_lost_node), "the node lifecycle controller marked them not ready"
    pod_ips = [p["status"]["podIP"] for p in kinds(busy, "Pod") if p.get("status", {}).get("podIP")
               and not p["spec"].get("hostNetwork")]
    assert len(pod_ips) == len(set(pod_ips))


def test_busy_kubectl_status_column_covers_every_state(busy: list[dict]) -> None:
    statuses = {key(p): kubectl_status(p) for p in kinds(busy, "Pod")}
    assert {
        "team-web/api-5c8f7d9b64-q8w2n": "CrashLoopBackOff",
        "team-data/stream-worker-6d5f8c4b7-tx2qn": "CrashLoopBackOff",
        "team-web/frontend-84d6c9b7f5-l5wq9": "ImagePullBackOff",
        "team-data/jupyter-5b7d9c8f6-qm7xd": "ContainerCreating",
        "default/curl": "Completed",
        "team-web/db-migrate-29405760-7pwxk": "Completed",
        "team-data/etl-nightly-29405400-ks7pq": "Completed",
        "team-web/cache-warmup-29406120-d8rjz": "Error",
        "team-data/etl-nightly-29403960-b4nhz": "OOMKilled",
        "team-data/report-q4-8gk2m": "SchedulingGated",
        "team-data/bulk-import-2x9fd": "SchedulingGated",
        "sched-lab/waits-for-quota": "SchedulingGated",
    }.items() <= statuses.items()
    counts = collections.Counter(statuses.values())
    assert set(counts) == {"Running", "Pending", "Completed", "Error", "OOMKilled", "CrashLoopBackOff",
                           "ImagePullBackOff", "ContainerCreating", "SchedulingGated"}
    assert counts["Running"] >= 30 and counts["Pending"] >= 15


def test_busy_pending_pods_placed_or_refused(busy: list[dict]) -> None:
    """Every unbound, ungated pod for the default scheduler is either placeable or refused, as the file says."""
    nodes = {n["metadata"]["name"]: n for n in kinds(busy, "Node")}
    candidates = [p for p in kinds(busy, "Pod") if not p["spec"].get("nodeName")
                  and not p["spec"].get("schedulingGates") and not p["spec"].get("schedulerName")]
    feasible = {key(p): sorted(n for n, why in verdicts(p, busy).items() if not why) for p in candidates}
    assert {k for k, v in feasible.items() if v} == {
        "default/hello", "team-web/web-7d9f8b6c5-r6w8k", "team-web/api-5c8f7d9b64-v4n8s",
        "team-data/ingest-7b9c5d8f6-w4n7h", "sched-lab/fits-anywhere", "sched-lab/only-highmem-fits"}
    assert {k for k, v in feasible.items() if not v} == {
        "sched-lab/too-much-cpu", "sched-lab/too-much-memory", "sched-lab/no-nvme", "sched-lab/wrong-zone",
        "sched-lab/wants-a-gpu", "sched-lab/only-on-the-cordoned-node", "team-data/train-bert-large-0"}
    assert feasible["sched-lab/only-highmem-fits"] == ["busy-highmem-c"]
    assert feasible["team-data/ingest-7b9c5d8f6-w4n7h"] == ["busy-arm-b", "busy-general-b"]
    assert not any(n in v for v in feasible.values() for n in ("busy-compute-a", "busy-general-c", "busy-gpu-c",
                                                               "busy-control-plane"))
    pod = lambda ns, name: by_name(busy, "Pod", name, ns)  # noqa: E731
    assert verdicts(pod("sched-lab", "only-on-the-cordoned-node"), busy)["busy-compute-a"] == [
        "node(s) were unschedulable"]
    assert verdicts(pod("sched-lab", "wants-a-gpu"), busy)["busy-gpu-c"] == [
        "node(s) had untolerated taint {dedicated: gpu}"]
    assert verdicts(pod("sched-lab", "wants-a-gpu"), busy)["busy-general-a"] == ["Insufficient nvidia.com/gpu"]
    assert verdicts(pod("team-data", "train-bert-large-0"), busy)["busy-gpu-c"] == ["Insufficient nvidia.com/gpu"]
    assert verdicts(pod("sched-lab", "no-nvme"), busy)["busy-general-c"] == [
        "node(s) had untolerated taint {node.kubernetes.io/unreachable: }"]
    too_big = verdicts(pod("sched-lab", "too-much-cpu"), busy)
    assert too_big["busy-general-a"] == too_big["busy-highmem-c"] == ["Insufficient cpu"]
    assert verdicts(pod("sched-lab", "too-much-memory"), busy)["busy-highmem-c"] == ["Insufficient memory"]
    for refused in ("too-much-cpu", "no-nvme", "wants-a-gpu"):
        for name in nodes:
            assert verdicts(pod("sched-lab", refused), busy)[name], (refused, name)


def test_busy_pods_nobody_schedules(busy: list[dict]) -> None:
    pods = kinds(busy, "Pod")
    others = {key(p): p["spec"]["schedulerName"] for p in pods if p["spec"].get("schedulerName")}
    assert others == {"team-data/spark-driver-7c4xq": "my-scheduler", "sched-lab/for-nobody": "nobody-at-all"}
    gated = {key(p): len(p["spec"]["schedulingGates"]) for p in pods if p["spec"].get("schedulingGates")}
    assert gated == {"team-data/report-q4-8gk2m": 1, "team-data/bulk-import-2x9fd": 2, "sched-lab/waits-for-quota": 1}
    for pod in pods:
        assert strategy.validate_pod_create(pod) == [], key(pod)
        if pod["spec"].get("schedulingGates") or pod["spec"].get("schedulerName"):
            assert "nodeName" not in pod["spec"] and "status" not in pod


def test_busy_pods_bound_but_not_running(busy: list[dict]) -> None:
    on_lost = {key(p): p for p in kinds(busy, "Pod") if p["spec"].get("nodeName") == "busy-general-c"
               and (p.get("status") or {}).get("phase") != "Running"}
    assert set(on_lost) == {"sched-lab/landed-then-lost", "sched-lab/pinned-to-the-lost-node"}
    landed = on_lost["sched-lab/landed-then-lost"]["status"]
    assert landed["phase"] == "Pending" and "containerStatuses" not in landed
    assert [(c["type"], c["status"]) for c in landed["conditions"]] == [("PodScheduled", "True")]
    assert "status" not in on_lost["sched-lab/pinned-to-the-lost-node"]
    missing = by_name(busy, "Pod", "pinned-to-missing-node")
    assert missing["spec"]["nodeName"] == "busy-general-d" and "status" not in missing
    assert "busy-general-d" not in {n["metadata"]["name"] for n in kinds(busy, "Node")}


def test_busy_terminated_pods(busy: list[dict]) -> None:
    done = {key(p): p for p in kinds(busy, "Pod") if terminal(p)}
    assert len(done) == 5
    for name, pod in done.items():
        (cs,) = pod["status"]["containerStatuses"]
        terminated = cs["state"]["terminated"]
        assert pod["spec"]["restartPolicy"] == "Never", name
        assert (terminated["exitCode"] == 0) == (pod["status"]["phase"] == "Succeeded"), name
        assert terminated["startedAt"] < terminated["finishedAt"], name
        reason = "PodCompleted" if pod["status"]["phase"] == "Succeeded" else "PodFailed"
        assert [c.get("reason") for c in pod["status"]["conditions"]] == [None, reason, reason, reason, None], name
    assert done["team-data/etl-nightly-29403960-b4nhz"]["status"]["containerStatuses"][0]["state"]["terminated"][
        "exitCode"] == 137


def test_busy_quantity_spellings(busy: list[dict]) -> None:
    values = {str(v) for p in kinds(busy, "Pod") for c in p["spec"]["containers"]
              for group in (c.get("resources") or {}).values() for v in group.values()}
    spellings = {
        "millis": r"\d+m", "binary Mi": r"\d+Mi", "binary Gi": r"\d+Gi", "decimal k": r"\d+k", "decimal M": r"\d+M",
        "exponent": r"\d+e\d+", "fraction": r"\d+\.\d+", "plain": r"\d+",
    }
    for label, pattern in spellings.items():
        assert any(re.fullmatch(pattern, v) for v in values), label
    assert "1e12" in values and "128m" in values


def test_busy_names_look_generated_where_controllers_would_name_them(busy: list[dict]) -> None:
    """Hashes and suffixes use apimachinery's utilrand alphabet (no vowels, no 0, 1 or 3), as real ones do."""
    names = [p["metadata"]["name"] for p in kinds(busy, "Pod")]
    chars = "[bcdfghjklmnpqrstvwxz2456789]"
    replicaset = [n for n in names if re.fullmatch(rf"[a-z-]+-{chars}{{9,10}}-{chars}{{5}}", n)]
    daemonset = [n for n in names if re.fullmatch(rf"(kube-proxy|nvidia-device-plugin-daemonset)-{chars}{{5}}", n)]
    cronjob = [n for n in names if re.fullmatch(rf"[a-z-]+-\d{{8}}-{chars}{{5}}", n)]
    assert len(replicaset) == 16 and len(daemonset) == 9 and len(cronjob) == 4
    pods = {p["metadata"]["name"]: p for p in kinds(busy, "Pod")}
    for name in replicaset:
        assert name.split("-")[-2] == pods[name]["metadata"]["labels"]["pod-template-hash"], name
    assert {"redis-0", "redis-1", "postgres-0", "kafka-0", "kafka-1"} <= set(names)


def test_busy_sched_lab_pods_say_what_they_teach(busy: list[dict]) -> None:
    lab_pods = [p for p in kinds(busy, "Pod") if p["metadata"]["namespace"] == "sched-lab"]
    assert len(lab_pods) == 12
    for pod in lab_pods:
        assert pod["metadata"]["labels"] == {"lesson": "busy"}
        assert pod["metadata"]["annotations"][TEACHES].endswith(".")


# --- scale ----------------------------------------------------------------------------------------------------------


def states_of(pods: list[dict]) -> collections.Counter[str]:
    def state(pod: dict) -> str:
        spec, phase = pod["spec"], (pod.get("status") or {}).get("phase")
        if phase:
            return phase.lower()
        if spec.get("schedulingGates"):
            return "gated"
        if spec.get("schedulerName"):
            return "other-scheduler"
        return "pending"
    return collections.Counter(state(p) for p in pods)


def test_scale_small() -> None:
    manifests = load_scenario("scale:nodes=3,pods=10")
    nodes, pods = kinds(manifests, "Node"), kinds(manifests, "Pod")
    assert [n["metadata"]["name"] for n in nodes] == ["scale-node-0001", "scale-node-0002", "scale-node-0003"]
    assert len(pods) == 10
    assert [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes] == ["lab-1a", "lab-1b", "lab-1c"]
    assert {m["metadata"]["name"] for m in kinds(manifests, "Namespace")} == {
        "default", "kube-system", "kube-public", "kube-node-lease", "team-web", "team-data", "team-batch",
        "sched-lab"}
    assert states_of(pods) == {"running": 8, "pending": 1, "succeeded": 1}
    assert [m["kind"] for m in manifests] == ["Namespace"] * 8 + ["Node"] * 3 + ["Pod"] * 10


@pytest.mark.parametrize("pods", [0, 1, 7, 99, 1000])
def test_scale_state_counts_add_up(pods: int) -> None:
    counts = scale.state_counts(pods)
    assert sum(counts.values()) == pods and min(counts.values()) >= 0


def test_scale_is_deterministic_and_seeded() -> None:
    # The loader stamps missing condition times with "now": pin it, or two loads straddling a second differ.
    now = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)

    def load(name: str) -> list[dict]:
        return load_scenario(name, now=now)

    assert load("scale:nodes=20,pods=300") == load("scale:nodes=20,pods=300")
    assert load("scale: nodes = 20 , pods = 300 ") == load("scale:pods=300,nodes=20,seed=0")
    assert load("scale:nodes=20,pods=300,seed=7") != load("scale:nodes=20,pods=300")


@pytest.fixture(scope="module")
def scaled() -> list[dict]:
    return load_scenario("scale:nodes=50,pods=2000")


def test_scale_mixed_states(scaled: list[dict]) -> None:
    pods = kinds(scaled, "Pod")
    assert len(pods) == 2000
    assert states_of(pods) == {"running": 1600, "pending": 160, "succeeded": 120, "other-scheduler": 60,
                               "gated": 60}
    assert {p["metadata"]["namespace"] for p in pods} == {"team-web", "team-data", "team-batch", "sched-lab"}
    assert len({key(p) for p in pods}) == 2000
    for pod in pods:
        spec, phase = pod["spec"], (pod.get("status") or {}).get("phase")
        assert _DNS1123_SUBDOMAIN.match(pod["metadata"]["name"]) and len(pod["metadata"]["name"]) <= 63
        assert strategy.validate_pod_create(pod) == [], key(pod)
        assert bool(spec.get("nodeName")) == (phase in ("Running", "Succeeded")), key(pod)
        if spec.get("schedulerName"):
            assert spec["schedulerName"] == "my-scheduler"
        if spec.get("schedulingGates"):
            assert spec["schedulingGates"] == [{"name": "example.com/quota-check"}]
        if phase == "Succeeded":
            assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
            assert kubectl_status(pod) == "Completed"


def test_scale_running_pods_have_kubelet_status_and_fit(scaled: list[dict]) -> None:
    nodes = {n["metadata"]["name"]: n for n in kinds(scaled, "Node")}
    running = [p for p in kinds(scaled, "Pod") if (p.get("status") or {}).get("phase") == "Running"]
    for pod in running:
        check_running_status(pod, nodes[pod["spec"]["nodeName"]])
    assert len({p["status"]["podIP"] for p in running}) == len(running)
    assert len({p["spec"]["nodeName"] for p in running}) == 50
    usage = node_usage(scaled)
    for name, (used, count) in usage.items():
        allocatable = {k: quantity(v) for k, v in nodes[name]["status"]["allocatable"].items()}
        assert count <= allocatable["pods"] and used.get("cpu", 0) <= allocatable["cpu"]
        assert used.get("memory", 0) <= allocatable["memory"]


def test_scale_pending_pods_fit_somewhere(scaled: list[dict]) -> None:
    pending = [p for p in kinds(scaled, "Pod") if "status" not in p and not p["spec"].get("schedulingGates")
               and not p["spec"].get("schedulerName")]
    assert len(pending) == 160
    usage = node_usage(scaled)
    nodes = kinds(scaled, "Node")
    for pod in pending[:40]:
        assert any(not filter_node(pod, n, usage)[0] for n in nodes), key(pod)


def test_scale_nodes_are_kind_like_and_proportional(scaled: list[dict]) -> None:
    nodes = kinds(scaled, "Node")
    assert [n["metadata"]["name"] for n in nodes] == [f"scale-node-{i:04d}" for i in range(1, 51)]
    factors = [int(n["status"]["allocatable"]["pods"]) // 110 for n in nodes]
    assert factors[0] == 2, "1,600 Running pods would fill these 50 nodes past three quarters of their CPU"
    for node in nodes:
        allocatable, capacity = node["status"]["allocatable"], node["status"]["capacity"]
        assert quantity(allocatable["memory"]) == 4 * 2**30 * quantity(allocatable["cpu"])
        assert quantity(capacity["memory"]) - quantity(allocatable["memory"]) == 100 * 2**20
        factor, rest = divmod(int(allocatable["pods"]), 110)
        assert rest == 0 and factor == factors[0], "every node is scaled by the same whole factor"
        shape = {"lab.small": 4, "lab.medium": 8, "lab.large": 16}[
            node["metadata"]["labels"]["node.kubernetes.io/instance-type"]]
        assert allocatable["cpu"] == capacity["cpu"] == str(shape * factor)
        assert [c["reason"] for c in node["status"]["conditions"]][-1] == "KubeletReady"
    cidrs = [ipaddress.ip_network(n["spec"]["podCIDR"]) for n in nodes]
    assert all(c.prefixlen == 23 for c in cidrs) and len(set(cidrs)) == 50, "room for twice 220 pods"
    assert collections.Counter(n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes) == {
        "lab-1a": 17, "lab-1b": 17, "lab-1c": 16}


def test_scale_dense_cluster_grows_every_node() -> None:
    manifests = load_scenario("scale:nodes=2,pods=3000")
    nodes = {n["metadata"]["name"]: n for n in kinds(manifests, "Node")}
    assert all(int(n["status"]["allocatable"]["pods"]) > 110 for n in nodes.values())
    assert all(ipaddress.ip_network(n["spec"]["podCIDR"]).prefixlen < 24 for n in nodes.values())
    for name, (used, count) in node_usage(manifests).items():
        allocatable = {k: quantity(v) for k, v in nodes[name]["status"]["allocatable"].items()}
        assert count <= allocatable["pods"] * Fraction(3, 4) + 1
        assert used.get("cpu", 0) <= allocatable["cpu"] and used.get("memory", 0) <= allocatable["memory"]
    running = [p for p in kinds(manifests, "Pod") if p.get("status", {}).get("phase") == "Running"]
    for pod in running:
        assert pod_ip_in_node_cidr(pod, nodes[pod["spec"]["nodeName"]])


def test_scale_names_are_wide_enough_for_big_clusters() -> None:
    names = [n["metadata"]["name"] for n in kinds(load_scenario("scale:nodes=5000,pods=0"), "Node")]
    assert names[0] == "scale-node-0001" and names[-1] == "scale-node-5000" and len(set(names)) == 5000


def test_scale_ten_thousand_pods_on_a_thousand_nodes() -> None:
    manifests = load_scenario("scale:nodes=1000,pods=10000")
    assert collections.Counter(m["kind"] for m in manifests) == {"Namespace": 8, "Node": 1000, "Pod": 10000}
    assert states_of(kinds(manifests, "Pod"))["running"] == 8000


@pytest.mark.parametrize(("arguments", "reason"), [
    ("", "no parameters given; write scale:nodes=N,pods=M (optionally ,seed=S), for example "
         "scale:nodes=100,pods=3000"),
    ("nodes=abc,pods=3", "nodes must be a whole number, not 'abc'"),
    ("nodes=3,pods=1.5", "pods must be a whole number, not '1.5'"),
    ("nodes=3,pods=", "pods must be a whole number, not ''"),
    ("nodes=3", "pods is missing; write scale:nodes=N,pods=M (optionally ,seed=S), for example "
                "scale:nodes=100,pods=3000"),
    ("pods=3", "nodes is missing; write scale:nodes=N,pods=M (optionally ,seed=S), for example "
               "scale:nodes=100,pods=3000"),
    ("nodes=-1,pods=3", "nodes must be between 1 and 5,000, not -1"),
    ("nodes=0,pods=3", "nodes must be between 1 and 5,000, not 0"),
    ("nodes=5001,pods=3", "nodes must be between 1 and 5,000, not 5,001"),
    ("nodes=3,pods=-5", "pods must be between 0 and 200,000, not -5"),
    ("nodes=3,pods=200001", "pods must be between 0 and 200,000, not 200,001"),
    ("nodes=3,pods=1000000000", "pods must be between 0 and 200,000, not 1,000,000,000"),
    ("nodes=3,pods=3,seed=-2", "seed must be 0 or more, not -2"),
    ("nodes=3,pods=3,nodes=4", "nodes is given twice"),
    ("nodes=3,pods=3,zones=4", "unknown parameter 'zones'; the parameters are nodes, pods and seed"),
    ("nodes=3;pods=3", "nodes must be a whole number, not '3;pods=3'"),
    ("nodes=3,,pods=3", "'' is not a key=value pair; write scale:nodes=N,pods=M (optionally ,seed=S), for example "
                        "scale:nodes=100,pods=3000"),
    ("nodes", "'nodes' is not a key=value pair; write scale:nodes=N,pods=M (optionally ,seed=S), for example "
              "scale:nodes=100,pods=3000"),
])
def test_scale_bad_arguments(arguments: str, reason: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(f"scale:{arguments}")
    assert str(caught.value) == f"scale:{arguments}: cannot generate the scenario: {reason}."
    assert caught.value.document is None


def test_scale_maximum_is_accepted_by_the_parser() -> None:
    assert scale.parse_arguments("nodes=5000,pods=200000") == (5000, 200000, 0)
    assert scale.parse_arguments("nodes=+2,pods=007,seed=3") == (2, 7, 3)


# --- the lab accepts every scenario ---------------------------------------------------------------------------------


async def served(lab: EmbeddedLab, path: str) -> list[dict[str, Any]]:
    async with aiohttp.ClientSession(base_url=lab.url) as session:
        async with session.get(path) as resp:
            assert resp.status == 200, await resp.text()
            return (await resp.json())["items"]


@pytest.mark.parametrize("name", [*SHIPPED, "scale:nodes=3,pods=10", "scale:nodes=40,pods=600,seed=3"])
async def test_lab_starts_with_every_scenario(tmp_path: Path, name: str) -> None:
    expected = load_scenario(name)
    lab = EmbeddedLab(LabSettings(), scenario=name, kubeconfig_path=tmp_path / "kc")
    await lab.start()
    try:
        for kind, path in (("Namespace", "/api/v1/namespaces"), ("Node", "/api/v1/nodes"), ("Pod", "/api/v1/pods")):
            items = await served(lab, path)
            want = {(m["metadata"].get("namespace", ""), m["metadata"]["name"]) for m in kinds(expected, kind)}
            got = {(m["metadata"].get("namespace", ""), m["metadata"]["name"]) for m in items}
            assert got == want, kind
        pods = {key(p): p for p in await served(lab, "/api/v1/pods")}
        for pod in kinds(expected, "Pod"):  # the simulated scheduler may have bound the others by now
            if pod["spec"].get("nodeName"):
                assert pods[key(pod)]["spec"]["nodeName"] == pod["spec"]["nodeName"], key(pod)
    finally:
        await lab.stop()


async def test_lab_serves_busy(tmp_path: Path) -> None:
    lab = EmbeddedLab(LabSettings(), scenario="busy", kubeconfig_path=tmp_path / "kc")
    await lab.start()
    try:
        nodes = {n["metadata"]["name"]: n for n in await served(lab, "/api/v1/nodes")}
        pods = {key(p): p for p in await served(lab, "/api/v1/pods")}
        assert len(nodes) == 8 and len(pods) == 60
        assert nodes["busy-compute-a"]["spec"]["unschedulable"] is True
        assert nodes["busy-gpu-c"]["status"]["allocatable"]["nvidia.com/gpu"] == "4"
        ready = {n: next(c["status"] for c in v["status"]["conditions"] if c["type"] == "Ready")
                 for n, v in nodes.items()}
        assert ready["busy-general-c"] == "Unknown" and list(ready.values()).count("True") == 7
        assert pods["default/pinned-to-missing-node"]["spec"]["nodeName"] == "busy-general-d"
        assert "nodeName" not in pods["sched-lab/too-much-cpu"]["spec"]
        gated = pods["team-data/bulk-import-2x9fd"]
        assert gated["status"]["conditions"][0]["reason"] == "SchedulingGated"
        assert pods["team-data/spark-driver-7c4xq"]["spec"]["schedulerName"] == "my-scheduler"
        assert pods["kube-system/kube-scheduler-busy-control-plane"]["spec"]["priority"] == 2000001000
    finally:
        await lab.stop()


async def test_lab_serves_refusals_and_scale(tmp_path: Path) -> None:
    lab = EmbeddedLab(LabSettings(), scenario="refusals", kubeconfig_path=tmp_path / "kc")
    await lab.start()
    try:
        pods = {key(p): p for p in await served(lab, "/api/v1/namespaces/sched-lab/pods")}
        assert pods["sched-lab/filler"]["spec"]["nodeName"] == "pair-worker"
        assert sorted(pods) == ["sched-lab/filler", "sched-lab/needs-the-tainted-node", "sched-lab/no-ssd",
                                "sched-lab/too-much-cpu"]
    finally:
        await lab.stop()
    lab = EmbeddedLab(LabSettings(), scenario="scale:nodes=3,pods=10", kubeconfig_path=tmp_path / "kc2")
    await lab.start()
    try:
        assert len(await served(lab, "/api/v1/nodes")) == 3
        assert len(await served(lab, "/api/v1/pods")) == 10
    finally:
        await lab.stop()


# --- the lab's simulated scheduler agrees with the scenarios ------------------------------------------------------


def pod_scheduled(pod: dict) -> tuple[str | None, str | None]:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition["type"] == "PodScheduled":
            return condition.get("reason"), condition.get("message")
    return None, None


async def settle(lab: EmbeddedLab, done, timeout: float = 20.0) -> dict[str, dict]:
    """Pods by namespace/name once ``done(pods)`` holds, or as they are when ``timeout`` runs out."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        pods = {key(p): p for p in await served(lab, "/api/v1/pods")}
        if done(pods) or asyncio.get_running_loop().time() > deadline:
            return pods
        await asyncio.sleep(0.1)


async def test_lab_scheduler_refuses_the_refusals_with_the_pinned_messages(tmp_path: Path) -> None:
    expected = {"sched-lab/too-much-cpu": REFERENCE_TOO_MUCH_CPU, "sched-lab/no-ssd": REFERENCE_NO_SSD,
                "sched-lab/needs-the-tainted-node": EXPECTED_TAINTED_NODE}
    lab = EmbeddedLab(LabSettings(), scenario="refusals", kubeconfig_path=tmp_path / "kc")
    await lab.start()
    try:
        pods = await settle(lab, lambda pods: all(pod_scheduled(pods[k])[0] == "Unschedulable" for k in expected)
                            and pods["sched-lab/filler"]["status"]["phase"] == "Running")
    finally:
        await lab.stop()
    assert {k: pod_scheduled(pods[k]) for k in expected} == {k: ("Unschedulable", m) for k, m in expected.items()}
    assert pods["sched-lab/filler"]["spec"]["nodeName"] == "pair-worker"
    assert pods["sched-lab/filler"]["status"]["phase"] == "Running"


async def test_lab_scheduler_places_and_refuses_busy_pods_as_designed(tmp_path: Path) -> None:
    placed = {"default/hello", "team-web/web-7d9f8b6c5-r6w8k", "team-web/api-5c8f7d9b64-v4n8s",
              "team-data/ingest-7b9c5d8f6-w4n7h", "sched-lab/fits-anywhere", "sched-lab/only-highmem-fits"}
    refused = {"sched-lab/too-much-cpu", "sched-lab/too-much-memory", "sched-lab/no-nvme", "sched-lab/wrong-zone",
               "sched-lab/wants-a-gpu", "sched-lab/only-on-the-cordoned-node", "team-data/train-bert-large-0"}
    lab = EmbeddedLab(LabSettings(), scenario="busy", kubeconfig_path=tmp_path / "kc")
    await lab.start()
    try:
        pods = await settle(lab, lambda pods: all(pods[k]["spec"].get("nodeName") for k in placed)
                            and all(pod_scheduled(pods[k])[0] == "Unschedulable" for k in refused))
    finally:
        await lab.stop()
    assert {k: pods[k]["spec"].get("nodeName") is not None for k in placed} == dict.fromkeys(placed, True)
    assert {k: pod_scheduled(pods[k])[0] for k in refused} == dict.fromkeys(refused, "Unschedulable")
    assert pods["sched-lab/only-highmem-fits"]["spec"]["nodeName"] == "busy-highmem-c"
    assert pods["team-data/ingest-7b9c5d8f6-w4n7h"]["spec"]["nodeName"] in ("busy-general-b", "busy-arm-b")
    assert not {pods[k]["spec"]["nodeName"] for k in placed} & {
        "busy-control-plane", "busy-general-c", "busy-compute-a", "busy-gpu-c"}
    message = pod_scheduled(pods["sched-lab/too-much-cpu"])[1]
    assert message.startswith("0/8 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, ")
    assert "1 node(s) were unschedulable, 4 Insufficient cpu." in message
    for gated in ("team-data/report-q4-8gk2m", "team-data/bulk-import-2x9fd", "sched-lab/waits-for-quota"):
        assert pod_scheduled(pods[gated])[0] == "SchedulingGated" and "nodeName" not in pods[gated]["spec"]
    for ignored in ("team-data/spark-driver-7c4xq", "sched-lab/for-nobody"):
        assert pod_scheduled(pods[ignored]) == (None, None) and "nodeName" not in pods[ignored]["spec"]
