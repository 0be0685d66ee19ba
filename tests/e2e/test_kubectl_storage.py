"""kubectl against the lab's storage: ``get``/``describe``/``get -w`` of PersistentVolumeClaims, PersistentVolumes
and StorageClasses with upstream's columns, kind's default class and the DefaultStorageClass admission plugin.

One lab for the module (``observatory lab serve`` on the pair scenario, no scheduler, no kubelets); each test uses
objects of its own names."""

from __future__ import annotations

import re
import shutil
import subprocess
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
