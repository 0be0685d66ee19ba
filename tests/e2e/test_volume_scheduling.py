"""The volume plugins on the lab, driven with kubectl: the scheduler's exact FailedScheduling events for an unbound
immediate claim, a PersistentVolume no node reaches and a ReadWriteOncePod claim in use, and ``observatory why``
agreeing with the scheduler node by node.

The pair cluster: pair-control-plane carries the kubeadm taint (TaintToleration rejects it before any volume
plugin runs), pair-worker is the only schedulable node. Expected texts: kube-scheduler v1.34.1's FitError (reference
§4.3a) with the volume plugins' reasons (``volumebinding/binder.go``, ``volumerestrictions/volume_restrictions.go``)
and, after a volume PreFilter rejection, DynamicResources' PostFilter error ``not found`` in place of the preemption
text (see :mod:`observatory.scheduling.volumeplugins`). Claims are bound by hand (``spec.volumeName`` and
``pv.kubernetes.io/bind-completed``), as the PV controller leaves them, so these cases need no controller.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from observatory import cli
from observatory.scheduling.messages import fit_error_message
from tests.e2e.test_interpod_affinity import TAIL_NOT_HELPFUL, TAINT, apply, failed_scheduling, node_of
from tests.e2e.test_kubectl_seed import Lab, serving

NODES = ("pair-control-plane", "pair-worker")


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    if shutil.which("kubectl") is None:
        pytest.fail("kubectl is not on PATH; the lab's kubectl tests require it")
    with serving(tmp_path_factory.mktemp("volumes"), "--scenario", "pair", "--no-kubelet",
                 "--no-pv-controller") as lab:  # claims bound by hand: a PV controller would find them misbound
        apply(lab, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "manual"},
                    "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "Immediate"})
        yield lab


def claim(name: str, *, volume: str = "", modes: tuple[str, ...] = ("ReadWriteOnce",)) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    spec: dict[str, Any] = {"storageClassName": "manual", "accessModes": list(modes),
                            "resources": {"requests": {"storage": "1Gi"}}}
    if volume:
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        spec["volumeName"] = volume
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


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
    apply(lab, volume("pv-3", "zonal", zone="b"), claim("zonal", volume="pv-3"), pod("needs-zone-b", "zonal"))
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
    apply(lab, volume("pv-solo", "solo", modes=solo), claim("solo", volume="pv-solo", modes=solo),
          pod("first", "solo"))
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
