"""The volume plugins on the lab, driven with kubectl: the scheduler's exact FailedScheduling events for an unbound
immediate claim, a PersistentVolume no node reaches and a ReadWriteOncePod claim in use, and ``observatory why``
agreeing with the scheduler node by node.

The pair cluster: pair-control-plane carries the kubeadm taint (TaintToleration rejects it before any volume
plugin runs), pair-worker is the only schedulable node. Expected texts: kube-scheduler v1.34.1's FitError (reference
§4.3a) with the volume plugins' reasons (``volumebinding/binder.go``, ``volumerestrictions/volume_restrictions.go``)
and, after a volume PreFilter rejection, DynamicResources' PostFilter error ``not found`` in place of the preemption
text (see :mod:`observatory.scheduling.volumeplugins`). Static claims are bound by the lab's PV controller to a PV
pre-bound to them (``spec.claimRef``) before their pod is created; the WaitForFirstConsumer case needs its
local-path provisioner too.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from typing import Any

import pytest

from observatory import cli
from observatory.scheduling.messages import fit_error_message
from tests.e2e.test_interpod_affinity import TAIL_NOT_HELPFUL, TAINT, apply, events, failed_scheduling, node_of
from tests.e2e.test_kubectl_seed import Lab, serving

NODES = ("pair-control-plane", "pair-worker")


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    if shutil.which("kubectl") is None:
        pytest.fail("kubectl is not on PATH; the lab's kubectl tests require it")
    with serving(tmp_path_factory.mktemp("volumes"), "--scenario", "pair", "--no-kubelet") as lab:
        apply(lab, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "manual"},
                    "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "Immediate"})
        yield lab


def claim(name: str, *, modes: tuple[str, ...] = ("ReadWriteOnce",)) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"storageClassName": "manual", "accessModes": list(modes),
                     "resources": {"requests": {"storage": "1Gi"}}}}


def volume(name: str, claim_name: str, *, zone: str = "", modes: tuple[str, ...] = ("ReadWriteOnce",)) -> dict:
    spec: dict[str, Any] = {"storageClassName": "manual", "capacity": {"storage": "1Gi"}, "accessModes": list(modes),
                            "hostPath": {"path": f"/data/{name}"},
                            "claimRef": {"namespace": "default", "name": claim_name}}
    if zone:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec}


def pod(name: str, claim_name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "nginx"}],
                     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}]}}


def phase(lab: Lab, name: str) -> str:
    out = lab.sh(f"kubectl get pvc {name} -o jsonpath={{.status.phase}}")
    assert out.returncode == 0, out.stderr
    return out.stdout


def bound(lab: Lab, pv: dict[str, Any], pvc: dict[str, Any], timeout: float = 30.0) -> None:
    """Create ``pv`` (pre-bound to ``pvc``) and ``pvc``, and wait until the PV controller has bound them."""
    apply(lab, pv, pvc)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if phase(lab, pvc["metadata"]["name"]) == "Bound":
            return
        time.sleep(0.1)
    raise AssertionError(f"the PV controller did not bind {pvc['metadata']['name']}")


class Verdict:
    """A node's verdict as ``observatory why -o json`` reports it, in the shape the FitError histogram reads."""

    def __init__(self, node: dict[str, Any]) -> None:
        self.code = "Success" if node["fits"] else "Rejected"
        self.reasons = tuple(node["reasons"])


def agrees(capsys, lab: Lab, name: str, message: str) -> dict[str, dict[str, Any]]:
    """``observatory why`` for pod ``name``: its per-node reasons rebuild the scheduler's FitError (the histogram,
    or the PreFilter message every node carries) and it reports no disagreement. Returns the nodes' verdicts."""
    code = cli.main(["why", name, "-n", "default", "-o", "json", "--kubeconfig", lab.kubeconfig])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    doc = json.loads(out)["nodeFit"]
    fit = {n["node"]: n for n in doc["nodes"]}
    assert set(fit) == set(NODES)
    assert (doc["disagreement"], doc["volumesChecked"]) == ("", True)
    head = message.split(". ", 1)[0] + "."
    body = head.split(": ", 1)[1]
    if body[0].isdigit():
        assert fit_error_message(len(fit), [Verdict(n) for n in fit.values()]) == head
    else:  # a PreFilter rejection: every node carries the one message
        assert {tuple(n["reasons"]) for n in fit.values()} == {(body[:-1],)}
    return fit


def test_an_unbound_immediate_claim(lab, capsys):
    apply(lab, claim("waiting"), pod("needs-waiting", "waiting"))
    message = failed_scheduling(lab, "needs-waiting")
    assert message == "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"
    fit = agrees(capsys, lab, "needs-waiting", message)
    for name in NODES:
        assert (fit[name]["fits"], fit[name]["filter"]) == (False, "VolumeBinding")
        assert fit[name]["why"] == ["PVC waiting (class manual, Immediate binding) is not bound yet: the PV "
                                    "controller must bind it before any node is considered"]


def test_a_persistent_volume_whose_node_affinity_no_node_matches(lab, capsys):
    bound(lab, volume("pv-3", "zonal", zone="b"), claim("zonal"))
    apply(lab, pod("needs-zone-b", "zonal"))
    message = failed_scheduling(lab, "needs-zone-b")
    assert message == (f"0/2 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, {TAINT}. "
                       f"{TAIL_NOT_HELPFUL}")
    fit = agrees(capsys, lab, "needs-zone-b", message)
    assert fit["pair-control-plane"]["filter"] == "TaintToleration"
    assert (fit["pair-worker"]["fits"], fit["pair-worker"]["filter"]) == (False, "VolumeBinding")
    assert fit["pair-worker"]["why"] == ["PVC zonal is bound to PV pv-3, whose node affinity needs "
                                         "topology.kubernetes.io/zone in (b); the node has no "
                                         "topology.kubernetes.io/zone label"]


def test_a_read_write_once_pod_claim_in_use(lab, capsys):
    solo = ("ReadWriteOncePod",)
    bound(lab, volume("pv-solo", "solo", modes=solo), claim("solo", modes=solo))
    apply(lab, pod("first", "solo"))
    assert node_of(lab, "first") == "pair-worker"
    apply(lab, pod("second", "solo"))
    message = failed_scheduling(lab, "second")
    assert message == (
        "0/2 nodes are available: 1 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "
        f"access mode, {TAINT}. no new claims to deallocate, preemption: 0/2 nodes are available: 1 No preemption "
        "victims found for incoming pod, 1 Preemption is not helpful for scheduling.")
    fit = agrees(capsys, lab, "second", message)
    assert (fit["pair-worker"]["fits"], fit["pair-worker"]["filter"]) == (False, "VolumeRestrictions")
    assert fit["pair-worker"]["why"] == ["PVC solo is ReadWriteOncePod and pod default/first already uses it, which "
                                         "rules out every node until that pod is gone"]


def jsonpath(lab: Lab, what: str, path: str) -> str:
    out = lab.sh(f"kubectl get {what} -o jsonpath='{path}'")
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_wait_for_first_consumer_claim_is_provisioned_on_the_chosen_node_before_the_pod_binds(lab):
    """kind's default class (WaitForFirstConsumer, rancher.io/local-path): Reserve picks pair-worker, PreBind sets
    ``volume.kubernetes.io/selected-node`` on the claim, the provisioner creates a PV for that node, the PV
    controller binds the claim, and only then is the Binding posted; no FailedScheduling on the way."""
    late = claim("late")
    del late["spec"]["storageClassName"]  # the DefaultStorageClass admission gives it "standard"
    apply(lab, late, pod("consumer", "late"))
    assert node_of(lab, "consumer", timeout=60) == "pair-worker"
    assert jsonpath(lab, "pvc late", "{.metadata.annotations.volume\\.kubernetes\\.io/selected-node}") == \
        "pair-worker"
    assert jsonpath(lab, "pvc late", "{.status.phase}") == "Bound"
    pv_name = jsonpath(lab, "pvc late", "{.spec.volumeName}")
    assert jsonpath(lab, f"pv {pv_name}",
                    "{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]}") == \
        "pair-worker"
    reasons = [e["reason"] for e in events(lab, "consumer")]
    assert "Scheduled" in reasons and "FailedScheduling" not in reasons
