"""Inter-pod affinity on the lab, driven with kubectl: the scheduler's exact FailedScheduling events, and
``observatory why`` naming the same plugin for every node.

The pair cluster: pair-control-plane carries the kubeadm taint (no toleration here), pair-worker is the only
schedulable node; both carry ``kubernetes.io/hostname``. The expected FitErrors are kube-scheduler v1.34.1's format
(reference §4.3a) with InterPodAffinity's reasons (``interpodaffinity/filtering.go``): required affinity that no pod
matches is UnschedulableAndUnresolvable (preemption is not helpful anywhere), the two anti-affinity reasons are
Unschedulable (preemption looks for lower-priority victims on pair-worker and finds none at equal priority).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from observatory import cli
from tests.e2e.test_kubectl_seed import Lab, serving

TAINT = "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"
TAIL_NO_VICTIMS = ("no new claims to deallocate, preemption: 0/2 nodes are available: 1 No preemption victims found "
                   "for incoming pod, 1 Preemption is not helpful for scheduling.")
TAIL_NOT_HELPFUL = ("no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful "
                    "for scheduling.")


def manifest(name: str, labels: dict[str, str], affinity: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": name, "image": "nginx"}]}
    if affinity:
        spec["affinity"] = affinity
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": spec}


def required(kind: str, key: str, *values: str) -> dict[str, Any]:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]},
        "topologyKey": "kubernetes.io/hostname"}]}}


def apply(lab: Lab, *objs: dict[str, Any]) -> None:
    done = lab.sh("kubectl apply -f -", stdin="\n".join(json.dumps(o) for o in objs))
    assert done.returncode == 0, done.stderr


def events(lab: Lab, name: str) -> list[dict[str, Any]]:
    out = lab.sh(f"kubectl get events -n default --field-selector involvedObject.name={name} -o json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["items"]


def failed_scheduling(lab: Lab, name: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [e for e in events(lab, name) if e["reason"] == "FailedScheduling"]
        if found:
            return found[0]["message"]
        time.sleep(0.1)
    raise AssertionError(f"no FailedScheduling event for {name}")


def node_of(lab: Lab, name: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = lab.sh(f"kubectl get pod {name} -o jsonpath={{.spec.nodeName}}")
        if out.returncode == 0 and out.stdout:
            return out.stdout
        time.sleep(0.1)
    raise AssertionError(f"{name} was not scheduled")


def why(capsys, lab: Lab, name: str) -> dict[str, dict[str, Any]]:
    code = cli.main(["why", name, "-n", "default", "-o", "json", "--kubeconfig", lab.kubeconfig])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    doc = json.loads(out)
    return {n["node"]: n for n in doc["nodeFit"]["nodes"]}


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    with serving(tmp_path_factory.mktemp("affinity"), "--scenario", "pair", "--no-kubelet") as lab:
        yield lab


def test_required_anti_affinity_against_a_running_app_web_pod(lab, capsys):
    apply(lab, manifest("web-1", {"app": "web"}))
    assert node_of(lab, "web-1") == "pair-worker"
    apply(lab, manifest("web-2", {"app": "web"}, required("podAntiAffinity", "app", "web")))
    assert failed_scheduling(lab, "web-2") == (
        f"0/2 nodes are available: 1 node(s) didn't match pod anti-affinity rules, {TAINT}. {TAIL_NO_VICTIMS}")
    fit = why(capsys, lab, "web-2")
    assert (fit["pair-worker"]["fits"], fit["pair-worker"]["filter"]) == (False, "InterPodAffinity")
    assert fit["pair-worker"]["why"] == ["anti-affinity: default/web-1 on this node matches app in (web)"]
    assert fit["pair-control-plane"]["filter"] == "TaintToleration"


def test_required_affinity_that_no_pod_matches(lab, capsys):
    apply(lab, manifest("cache", {"app": "cache"}, required("podAffinity", "app", "db")))
    assert failed_scheduling(lab, "cache") == (
        f"0/2 nodes are available: 1 node(s) didn't match pod affinity rules, {TAINT}. {TAIL_NOT_HELPFUL}")
    fit = why(capsys, lab, "cache")
    assert (fit["pair-worker"]["fits"], fit["pair-worker"]["filter"]) == (False, "InterPodAffinity")
    assert fit["pair-worker"]["why"] == ["pod affinity: no pod matching app in (db) on this node"]


def test_an_existing_pods_anti_affinity_keeps_others_off_its_node(lab, capsys):
    apply(lab, manifest("loner", {"app": "loner"}, {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchExpressions": [{"key": "team", "operator": "Exists"}]},
            "topologyKey": "kubernetes.io/hostname"}]}}))
    assert node_of(lab, "loner") == "pair-worker"
    apply(lab, manifest("teammate", {"team": "blue"}))
    assert failed_scheduling(lab, "teammate") == (
        f"0/2 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules, {TAINT}. "
        f"{TAIL_NO_VICTIMS}")
    fit = why(capsys, lab, "teammate")
    assert (fit["pair-worker"]["fits"], fit["pair-worker"]["filter"]) == (False, "InterPodAffinity")
    assert fit["pair-worker"]["why"] == [
        "existing pods' anti-affinity: default/loner on this node will not run beside a pod labelled team=blue"]


def test_a_namespace_selector_reads_the_namespaces_labels(lab, capsys):
    """The existing pod's anti-affinity selects pods of namespaces labelled team=blue: a pod in such a namespace is
    kept off its node, the same pod in a namespace without the label is not (the scheduler watches Namespaces)."""
    for name, labels in (("blue", {"team": "blue"}), ("plain", {})):
        done = lab.sh("kubectl apply -f -", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}))
        assert done.returncode == 0, done.stderr
    guard = manifest("guard", {"app": "guard"}, {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"app": "db"}}, "namespaceSelector": {"matchLabels": {"team": "blue"}},
            "topologyKey": "kubernetes.io/hostname"}]}})
    guard["metadata"]["name"] = "guard"
    apply(lab, guard)
    assert node_of(lab, "guard") == "pair-worker"
    for namespace in ("blue", "plain"):
        db = manifest("db", {"app": "db"})
        db["metadata"]["namespace"] = namespace
        apply(lab, db)
    assert node_of(lab, "db -n plain") == "pair-worker"
    out = lab.sh("kubectl get events -n blue --field-selector involvedObject.name=db,reason=FailedScheduling "
                 "-o jsonpath={.items[0].message}")
    deadline = time.monotonic() + 20
    while not out.stdout and time.monotonic() < deadline:
        time.sleep(0.1)
        out = lab.sh("kubectl get events -n blue --field-selector involvedObject.name=db,reason=FailedScheduling "
                     "-o jsonpath={.items[0].message}")
    assert out.stdout == (f"0/2 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules, "
                          f"{TAINT}. {TAIL_NO_VICTIMS}")
