"""kubectl against the lab's storage: ``get``/``describe``/``get -w`` of PersistentVolumeClaims, PersistentVolumes
and StorageClasses with upstream's columns, kind's default class and the DefaultStorageClass admission plugin.

One lab for the module (``observatory lab serve`` on the pair scenario, no scheduler, no kubelets); each test uses
objects of its own names."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.e2e.test_kubectl_seed import Lab, serving


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    if shutil.which("kubectl") is None:
        pytest.fail("kubectl is not on PATH; the lab's kubectl tests require it")
    with serving(tmp_path_factory.mktemp("storage"), "--scenario", "pair", "--no-scheduler", "--no-kubelet") as lab:
        yield lab


def rows(out: str) -> list[list[str]]:
    """kubectl's table as cells (columns are separated by two or more spaces)."""
    return [re.split(r"\s{2,}", line.strip()) for line in out.splitlines() if line.strip()]


def ok(lab: Lab, script: str, stdin: str | None = None) -> str:
    result = lab.sh(script, stdin=stdin)
    assert result.returncode == 0, result.stderr
    return result.stdout


def claim_yaml(name: str, size: str = "1Gi", extra: str = "") -> str:
    return (f"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: {name}\nspec:\n"
            f"  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: {size}\n{extra}")


def test_get_sc_shows_kinds_default_class(lab):
    table = rows(ok(lab, "kubectl get sc"))
    assert table[0] == ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"]
    assert table[1][:5] == ["standard (default)", "rancher.io/local-path", "Delete", "WaitForFirstConsumer", "false"]
    assert len(table) == 2
    described = ok(lab, "kubectl describe storageclass standard")
    assert "IsDefaultClass:  Yes\n" in described
    assert "Provisioner:           rancher.io/local-path\n" in described
    assert "VolumeBindingMode:     WaitForFirstConsumer\n" in described


def test_claim_without_class_gets_the_default_and_prints_upstreams_columns(lab):
    assert ok(lab, "kubectl apply -f -", stdin=claim_yaml("data")) == "persistentvolumeclaim/data created\n"
    assert ok(lab, "kubectl get pvc data -o jsonpath='{.spec.storageClassName} {.spec.volumeMode}'") == (
        "standard Filesystem")
    table = rows(ok(lab, "kubectl get pvc data"))
    assert table[0] == ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS",
                        "VOLUMEATTRIBUTESCLASS", "AGE"]
    assert table[1][:4] == ["data", "Pending", "standard", "<unset>"]  # empty VOLUME, CAPACITY, ACCESS MODES
    wide = rows(ok(lab, "kubectl get pvc data -o wide"))
    assert wide[0][-1] == "VOLUMEMODE" and wide[1][-1] == "Filesystem"


def test_claim_with_an_empty_class_keeps_it(lab):
    ok(lab, "kubectl apply -f -", stdin=claim_yaml("noclass", extra='  storageClassName: ""\n'))
    assert ok(lab, "kubectl get pvc noclass -o jsonpath='{.spec.storageClassName}'") == ""


def test_invalid_claim_gets_upstreams_422(lab):
    bad = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: bad\nspec: {}\n"
    result = lab.sh("kubectl create -f -", stdin=bad)
    assert result.returncode == 1
    assert result.stderr == (
        'The PersistentVolumeClaim "bad" is invalid: \n'
        "* spec.accessModes: Required value: at least 1 access mode is required\n"
        "* spec.resources[storage]: Required value\n")


def test_describe_pvc(lab):
    ok(lab, "kubectl apply -f -", stdin=claim_yaml("described", "2Gi"))
    out = ok(lab, "kubectl describe pvc described")
    assert out.startswith("Name:          described\nNamespace:     default\nStorageClass:  standard\n"
                          "Status:        Pending\nVolume:        \n")
    assert "VolumeMode:    Filesystem\n" in out and "Used By:       <none>\n" in out
    assert "Finalizers:    [kubernetes.io/pvc-protection]\n" in out


PV = """apiVersion: v1
kind: PersistentVolume
metadata:
  name: {name}
spec:
  capacity:
    storage: {size}
  accessModes: [ReadWriteOnce, ReadOnlyMany]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: manual
  hostPath:
    path: /data/{name}
"""


def test_get_pv_prints_upstreams_columns(lab):
    assert ok(lab, "kubectl apply -f -", stdin=PV.format(name="pv-print", size="1.5Gi")) == (
        "persistentvolume/pv-print created\n")
    table = rows(ok(lab, "kubectl get pv pv-print"))
    assert table[0] == ["NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS",
                        "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"]
    assert table[1][:3] == ["pv-print", "1536Mi", "RWO,ROX"]
    assert table[1][3] == "Retain" and "manual" in table[1] and "<unset>" in table[1]
    described = ok(lab, "kubectl describe pv pv-print")
    assert "StorageClass:    manual\n" in described and "Capacity:        1536Mi\n" in described
    assert "    Type:          HostPath (bare host directory volume)\n" in described
    assert "Finalizers:      [kubernetes.io/pv-protection]\n" in described


def test_get_watch_shows_a_new_claim(lab):
    watcher = subprocess.Popen(["kubectl", "get", "pvc", "-w"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=lab.env(), cwd=lab.tmp)
    try:
        assert watcher.stdout is not None
        assert re.split(r"\s{2,}", watcher.stdout.readline().strip())[0] == "NAME"
        ok(lab, "kubectl apply -f -", stdin=claim_yaml("watched"))
        while True:
            cells = re.split(r"\s{2,}", watcher.stdout.readline().strip())
            if cells[0] == "watched":
                break
        assert cells[:4] == ["watched", "Pending", "standard", "<unset>"]
    finally:
        watcher.kill()
        watcher.wait()


def test_field_selector_errors_and_discovery_short_names(lab):
    bad = lab.sh("kubectl get pvc --field-selector status.phase=Bound")
    assert bad.returncode == 1
    assert bad.stderr == ('Error from server (BadRequest): Unable to find "/v1, Resource=persistentvolumeclaims" that '
                          'match label selector "", field selector "status.phase=Bound": "status.phase" is not a '
                          'known field selector: only "metadata.name", "metadata.namespace"\n')
    resources = rows(ok(lab, "kubectl api-resources --api-group=storage.k8s.io"))
    assert resources[1][:2] == ["storageclasses", "sc"]


# -- the PV controller and the local-path provisioner ----------------------------------------------------------------


def annotations_of(lab: Lab, what: str) -> dict[str, str]:
    """The object's annotations without the one ``kubectl apply`` adds."""
    found = json.loads(ok(lab, f"kubectl get {what} -o jsonpath='{{.metadata.annotations}}'") or "{}")
    found.pop("kubectl.kubernetes.io/last-applied-configuration", None)
    return found


def events_of(lab: Lab, kind: str, name: str) -> list[tuple[str, str, str, str]]:
    """(type, reason, source component, message) of the events about one object, oldest first."""
    out = ok(lab, f"kubectl get events -A --field-selector involvedObject.kind={kind},involvedObject.name={name} "
                  "--sort-by=.firstTimestamp -o jsonpath='{range .items[*]}{.type}|{.reason}|{.source.component}|"
                  "{.message}{\"\\n\"}{end}'")
    return [tuple(line.split("|", 3)) for line in out.splitlines()]  # type: ignore[misc]


def first_event(lab: Lab, claim: str) -> tuple[str, str, str, str]:
    """The first event about a claim, once there is one (the controller syncs a new claim at once)."""
    for _ in range(200):
        events = events_of(lab, "PersistentVolumeClaim", claim)
        if events:
            return events[0]
        lab.sh("sleep 0.1")
    pytest.fail(f"no event about claim {claim}")


def wait_for(lab: Lab, what: str, jsonpath: str, value: str) -> None:
    waited = lab.sh(f"kubectl wait --for=jsonpath='{jsonpath}'={value} {what} --timeout=30s")
    assert waited.returncode == 0, waited.stderr


def static_pv(name: str, size: str, cls: str, modes: str = "[ReadWriteOnce]") -> str:
    return (f"apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: {name}\nspec:\n  capacity:\n"
            f"    storage: {size}\n  accessModes: {modes}\n  storageClassName: {cls}\n"
            f"  hostPath:\n    path: /data/{name}\n")


def test_immediate_claim_binds_the_smallest_matching_volume(lab):
    docs = "---\n".join([static_pv("imm-1g", "1Gi", "imm"), static_pv("imm-5g", "5Gi", "imm"),
                         static_pv("imm-10g", "10Gi", "imm"), static_pv("imm-rox", "4Gi", "imm", "[ReadOnlyMany]")])
    ok(lab, "kubectl apply -f -", stdin=docs)
    for name in ("imm-1g", "imm-5g", "imm-10g"):
        wait_for(lab, f"pv/{name}", "{.status.phase}", "Available")
    ok(lab, "kubectl apply -f -", stdin=claim_yaml("imm-claim", "3Gi", '  storageClassName: imm\n'))
    wait_for(lab, "pvc/imm-claim", "{.status.phase}", "Bound")
    table = rows(ok(lab, "kubectl get pvc imm-claim"))
    assert table[1][:6] == ["imm-claim", "Bound", "imm-5g", "5Gi", "RWO", "imm"]
    pv = rows(ok(lab, "kubectl get pv imm-5g"))[1]
    assert pv[:6] == ["imm-5g", "5Gi", "RWO", "Retain", "Bound", "default/imm-claim"]
    assert annotations_of(lab, "pv imm-5g") == {"pv.kubernetes.io/bound-by-controller": "yes"}
    assert annotations_of(lab, "pvc imm-claim") == {"pv.kubernetes.io/bind-completed": "yes",
                                                    "pv.kubernetes.io/bound-by-controller": "yes"}
    assert [r[4] for r in rows(ok(lab, "kubectl get pv imm-1g imm-10g imm-rox"))[1:]] == ["Available"] * 3
    assert events_of(lab, "PersistentVolumeClaim", "imm-claim") == []  # binding records no event


def test_claim_without_class_and_without_volumes_records_failed_binding(lab):
    ok(lab, "kubectl apply -f -", stdin=claim_yaml("nothing-fits", "1Gi", '  storageClassName: ""\n'))
    assert first_event(lab, "nothing-fits") == ("Normal", "FailedBinding", "persistentvolume-controller",
                                "no persistent volumes available for this claim and no storage class is set")
    assert rows(ok(lab, "kubectl get pvc nothing-fits"))[1][1] == "Pending"


def test_wait_for_first_consumer_provisions_on_the_selected_node_and_binds(lab):
    ok(lab, "kubectl apply -f -", stdin=claim_yaml("wffc", "2Gi"))
    assert first_event(lab, "wffc") == (
        "Normal", "WaitForFirstConsumer", "persistentvolume-controller",
        "waiting for first consumer to be created before binding")
    ok(lab, "kubectl annotate pvc wffc volume.kubernetes.io/selected-node=pair-worker")
    wait_for(lab, "pvc/wffc", "{.status.phase}", "Bound")
    uid = ok(lab, "kubectl get pvc wffc -o jsonpath='{.metadata.uid}'")
    volume = f"pvc-{uid}"
    assert rows(ok(lab, "kubectl get pvc wffc"))[1][:6] == ["wffc", "Bound", volume, "2Gi", "RWO", "standard"]
    affinity = ok(lab, f"kubectl get pv {volume} -o jsonpath='{{.spec.nodeAffinity.required.nodeSelectorTerms[0]"
                       f".matchExpressions[0]}}'")
    assert affinity == '{"key":"kubernetes.io/hostname","operator":"In","values":["pair-worker"]}'
    assert rows(ok(lab, f"kubectl get pv {volume}"))[1][:7] == [
        volume, "2Gi", "RWO", "Delete", "Bound", "default/wffc", "standard"]
    assert ok(lab, f"kubectl get pv {volume} -o jsonpath='{{.spec.hostPath.path}}'") == (
        f"/var/local-path-provisioner/{volume}_default_wffc")
    events = [e for e in events_of(lab, "PersistentVolumeClaim", "wffc") if e[1] != "WaitForFirstConsumer"]
    provisioner = events[1][2]
    assert re.fullmatch(r"rancher\.io/local-path_local-path-provisioner-[0-9a-z]+-[0-9a-z]{5}_[0-9a-f-]{36}",
                        provisioner)
    assert events == [
        ("Normal", "ExternalProvisioning", "persistentvolume-controller",
         "Waiting for a volume to be created either by the external provisioner 'rancher.io/local-path' or manually "
         "by the system administrator. If volume creation is delayed, please verify that the provisioner is running "
         "and correctly registered."),
        ("Normal", "Provisioning", provisioner, 'External provisioner is provisioning volume for claim "default/wffc"'),
        ("Normal", "ProvisioningSucceeded", provisioner, f"Successfully provisioned volume {volume}")]
    assert annotations_of(lab, "pvc wffc") == {
        "pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes",
        "volume.beta.kubernetes.io/storage-provisioner": "rancher.io/local-path",
        "volume.kubernetes.io/selected-node": "pair-worker",
        "volume.kubernetes.io/storage-provisioner": "rancher.io/local-path"}
    assert annotations_of(lab, f"pv {volume}") == {"pv.kubernetes.io/provisioned-by": "rancher.io/local-path"}
    # reclaimPolicy Delete: deleting the claim releases the volume and the provisioner deletes it
    ok(lab, "kubectl delete pvc wffc")
    waited = lab.sh(f"kubectl wait --for=delete pv/{volume} --timeout=30s")
    assert waited.returncode == 0, waited.stderr


def test_claim_is_lost_when_its_bound_volume_is_deleted(lab):
    ok(lab, "kubectl apply -f -", stdin=static_pv("lost-pv", "1Gi", "lost"))
    ok(lab, "kubectl apply -f -", stdin=claim_yaml("lost-claim", "1Gi", '  storageClassName: lost\n'))
    wait_for(lab, "pvc/lost-claim", "{.status.phase}", "Bound")
    # pv-protection keeps a Bound volume: deleting it leaves it Terminating and the claim Bound
    assert ok(lab, "kubectl delete pv lost-pv --wait=false") == 'persistentvolume "lost-pv" deleted\n'
    assert rows(ok(lab, "kubectl get pv lost-pv"))[1][4] == "Terminating"
    assert ok(lab, "kubectl get pv lost-pv -o jsonpath='{.metadata.finalizers}'") == '["kubernetes.io/pv-protection"]'
    assert rows(ok(lab, "kubectl get pvc lost-claim"))[1][1] == "Bound"
    # once the finalizer is removed by hand the volume is gone, and the claim has lost it
    ok(lab, "kubectl patch pv lost-pv --type=merge -p '{\"metadata\":{\"finalizers\":null}}'")
    wait_for(lab, "pvc/lost-claim", "{.status.phase}", "Lost")
    assert lab.sh("kubectl get pv lost-pv").returncode == 1
    assert rows(ok(lab, "kubectl get pvc lost-claim"))[1][:4] == ["lost-claim", "Lost", "lost-pv", "0"]
    assert events_of(lab, "PersistentVolumeClaim", "lost-claim") == [
        ("Warning", "ClaimLost", "persistentvolume-controller",
         "Bound claim has lost its PersistentVolume. Data on the volume is lost!")]


def test_pvc_protection_holds_a_claim_a_scheduled_pod_uses(lab):
    ok(lab, "kubectl apply -f -", stdin=claim_yaml("held", extra='  storageClassName: ""\n'))
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: holder\nspec:\n  nodeName: pair-worker\n"
           "  containers:\n  - name: c\n    image: busybox\n  volumes:\n  - name: data\n"
           "    persistentVolumeClaim:\n      claimName: held\n")
    ok(lab, "kubectl apply -f -", stdin=pod)
    assert ok(lab, "kubectl delete pvc held --wait=false") == 'persistentvolumeclaim "held" deleted\n'
    assert rows(ok(lab, "kubectl get pvc held"))[1][1] == "Terminating"
    assert "Used By:       holder\n" in ok(lab, "kubectl describe pvc held")
    ok(lab, "kubectl delete pod holder --grace-period=0 --force")
    waited = lab.sh("kubectl wait --for=delete pvc/held --timeout=30s")
    assert waited.returncode == 0, waited.stderr


# -- the volumes scenario --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def volumes_lab(tmp_path_factory) -> Iterator[Lab]:
    if shutil.which("kubectl") is None:
        pytest.fail("kubectl is not on PATH; the lab's kubectl tests require it")
    with serving(tmp_path_factory.mktemp("volumes"), "--scenario", "volumes", "--no-scheduler",
                 "--no-kubelet") as lab:
        yield lab


def test_volumes_scenario_is_listed_and_serves_zones_volumes_and_claims(volumes_lab):
    lab = volumes_lab
    listed = ok(lab, f"{shlex.quote(sys.executable)} -m observatory lab scenarios")
    assert re.search(r"^\s*volumes\s+pair with zones", listed, re.M), listed
    zones = rows(ok(lab, "kubectl get nodes -L topology.kubernetes.io/zone"))
    assert [(r[0], r[-1]) for r in zones[1:]] == [("pair-control-plane", "lab-region-a"),
                                                  ("pair-worker", "lab-region-a"), ("pair-worker2", "lab-region-b")]
    wait_for(lab, "pvc/shared -n sched-lab", "{.status.phase}", "Bound")
    claims = {r[0]: r for r in rows(ok(lab, "kubectl get pvc -n sched-lab"))[1:]}
    assert claims["shared"][:6] == ["shared", "Bound", "nfs-10g", "10Gi", "RWX", "<unset>"]  # no class: empty
    assert claims["scratch"][:3] == ["scratch", "Pending", "standard"]
    assert claims["ssd"][:3] == ["ssd", "Pending", "local-ssd"]
    volumes = {r[0]: r for r in rows(ok(lab, "kubectl get pv"))[1:]}
    assert volumes["ssd-zone-a"][:6] == ["ssd-zone-a", "20Gi", "RWO", "Retain", "Available", "local-ssd"]
    assert volumes["nfs-2g"][4] == "Available"
    described = ok(lab, "kubectl describe pv ssd-zone-a")
    assert ("Node Affinity:     \n  Required Terms:  \n"
            "    Term 0:        topology.kubernetes.io/zone in [lab-region-a]\n") in described, described


# -- with the scheduler and the kubelets: kind's whole flow ----------------------------------------------------------


@pytest.fixture(scope="module")
def full_lab(tmp_path_factory) -> Iterator[Lab]:
    if shutil.which("kubectl") is None:
        pytest.fail("kubectl is not on PATH; the lab's kubectl tests require it")
    with serving(tmp_path_factory.mktemp("full"), "--scenario", "pair") as lab:
        yield lab


def test_a_pod_with_a_default_class_claim_gets_a_provisioned_volume_on_its_node_and_runs(full_lab):
    lab = full_lab
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n  - name: c\n    image: nginx\n"
           "    volumeMounts: [{name: d, mountPath: /data}]\n  volumes:\n  - name: d\n"
           "    persistentVolumeClaim: {claimName: app-data}\n")
    ok(lab, "kubectl apply -f -", stdin=claim_yaml("app-data") + "---\n" + pod)
    wait_for(lab, "pod/app", "{.status.phase}", "Running")
    node = ok(lab, "kubectl get pod app -o jsonpath='{.spec.nodeName}'")
    assert node == "pair-worker"
    assert annotations_of(lab, "pvc app-data")["volume.kubernetes.io/selected-node"] == node
    volume = ok(lab, "kubectl get pvc app-data -o jsonpath='{.spec.volumeName}'")
    assert ok(lab, f"kubectl get pv {volume} -o jsonpath='{{.spec.nodeAffinity.required.nodeSelectorTerms[0]"
                   f".matchExpressions[0].values[0]}}'") == node
    reasons = [e[1] for e in events_of(lab, "PersistentVolumeClaim", "app-data")]
    assert reasons[-3:] == ["ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"]
    assert set(reasons[:-3]) <= {"WaitForFirstConsumer", "WaitForPodScheduled"}  # before the scheduler chose
