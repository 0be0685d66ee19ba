"""Scenario loading: the shipped pair and manual-binding scenarios, extends, ordering and every error path."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from observatory.lab import scenarios
from observatory.lab.scenarios import ScenarioError, ScenarioInfo, list_scenarios, load_scenario, register_generator

NOW = datetime(2026, 7, 1, 12, 30, 45, tzinfo=UTC)
STAMP = "2026-07-01T12:30:45Z"
SHIPPED = ["affinity", "busy", "gated", "manual-binding", "pair", "preemption", "refusals", "spread",
           "volumes", "workloads"]
"""The scenarios the package ships, by name in sorted order."""
AVAILABLE = ", ".join(SHIPPED)
"""How the loader's errors list them."""


def by_name(manifests: list[dict], kind: str, name: str) -> dict:
    (found,) = [m for m in manifests if m["kind"] == kind and m["metadata"]["name"] == name]
    return found


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- listing ------------------------------------------------------------------------------------------------------


def test_list_scenarios_names_descriptions_and_paths() -> None:
    infos = list_scenarios()
    assert [info.name for info in infos] == SHIPPED
    assert all(isinstance(info, ScenarioInfo) for info in infos)
    for info in infos:
        assert info.path == scenarios.SCENARIO_DIR / f"{info.name}.yaml"
        assert info.path.is_file()
        assert info.description and "\n" not in info.description
    described = {info.name: info.description for info in infos}
    assert described["pair"].startswith("Two kind-like nodes")
    assert described["manual-binding"].startswith("pair plus sched-lab/manual")


def test_shipped_files_are_inside_the_package() -> None:
    package_dir = Path(scenarios.__file__).parent
    assert {p.name for p in package_dir.glob("*.yaml")} == {f"{name}.yaml" for name in SHIPPED}


# --- pair ---------------------------------------------------------------------------------------------------------


def test_pair_order_and_identities() -> None:
    manifests = load_scenario("pair", now=NOW)
    assert [(m["kind"], m["metadata"]["name"]) for m in manifests] == [
        ("Namespace", "default"),
        ("Namespace", "kube-system"),
        ("Namespace", "kube-public"),
        ("Namespace", "kube-node-lease"),
        ("Namespace", "sched-lab"),
        ("Node", "pair-control-plane"),
        ("Node", "pair-worker"),
    ]
    assert all(m["apiVersion"] == "v1" for m in manifests)
    assert all("namespace" not in m["metadata"] for m in manifests)
    json.dumps(manifests, allow_nan=False)


def test_pair_control_plane_label_and_taint() -> None:
    cp = by_name(load_scenario("pair"), "Node", "pair-control-plane")
    assert cp["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] == ""
    assert cp["spec"]["taints"] == [{"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}]
    worker = by_name(load_scenario("pair"), "Node", "pair-worker")
    assert "taints" not in worker["spec"]
    assert "node-role.kubernetes.io/control-plane" not in worker["metadata"]["labels"]


@pytest.mark.parametrize(("name", "ip", "cidr"), [
    ("pair-control-plane", "172.18.0.2", "10.244.0.0/24"),
    ("pair-worker", "172.18.0.3", "10.244.1.0/24"),
])
def test_pair_nodes_are_kind_like(name: str, ip: str, cidr: str) -> None:
    node = by_name(load_scenario("pair", now=NOW), "Node", name)
    labels = node["metadata"]["labels"]
    assert {k: labels[k] for k in (
        "kubernetes.io/arch", "kubernetes.io/hostname", "kubernetes.io/os", "beta.kubernetes.io/arch",
        "beta.kubernetes.io/os")} == {
        "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux"}
    spec, status = node["spec"], node["status"]
    assert spec["podCIDR"] == cidr and spec["podCIDRs"] == [cidr]
    assert spec["providerID"] == f"kind://docker/pair/{name}"
    assert status["allocatable"]["cpu"] == "4"
    assert status["allocatable"]["memory"] == "8Gi"
    assert status["allocatable"]["pods"] == "110"
    assert status["capacity"]["cpu"] == "4"
    assert status["capacity"]["pods"] == "110"
    assert status["capacity"]["hugepages-1Gi"] == "0" and status["capacity"]["hugepages-2Mi"] == "0"
    capacity_ki = int(status["capacity"]["memory"].removesuffix("Ki"))
    assert 8 * 1024 * 1024 < capacity_ki < 9 * 1024 * 1024
    assert status["capacity"]["ephemeral-storage"].endswith("Ki")
    assert status["allocatable"]["ephemeral-storage"]
    assert status["addresses"] == [{"address": ip, "type": "InternalIP"}, {"address": name, "type": "Hostname"}]
    assert status["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 10250}}
    info = status["nodeInfo"]
    assert info["architecture"] == "amd64"
    assert info["containerRuntimeVersion"] == "containerd://2.1.3"
    assert info["kubeletVersion"] == "v1.34.1"
    assert info["operatingSystem"] == "linux"
    assert info["osImage"] == "Debian GNU/Linux 12 (bookworm)"
    assert {"bootID", "kernelVersion", "kubeProxyVersion", "machineID", "systemUUID"} <= info.keys()
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]
    for condition in status["conditions"]:
        assert condition["lastHeartbeatTime"] == STAMP
        assert condition["lastTransitionTime"] == STAMP


def test_nodes_have_distinct_machine_ids() -> None:
    nodes = [m for m in load_scenario("pair") if m["kind"] == "Node"]
    assert len({n["status"]["nodeInfo"]["machineID"] for n in nodes}) == 2
    assert len({n["status"]["nodeInfo"]["systemUUID"] for n in nodes}) == 2


def test_each_load_returns_fresh_objects() -> None:
    first = load_scenario("pair")
    first[0]["metadata"]["name"] = "changed"
    assert load_scenario("pair")[0]["metadata"]["name"] == "default"


# --- manual-binding and extends -----------------------------------------------------------------------------------


def test_manual_binding_is_pair_plus_the_seed_pod() -> None:
    pair = load_scenario("pair", now=NOW)
    manual = load_scenario("manual-binding", now=NOW)
    assert manual[:-1] == pair
    assert manual[-1] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "manual", "namespace": "sched-lab"},
        "spec": {
            "schedulerName": "nobody-at-all",
            "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.9"}],
        },
    }


def test_manual_binding_file_does_not_copy_pair() -> None:
    text = (scenarios.SCENARIO_DIR / "manual-binding.yaml").read_text()
    assert "extends: pair" in text
    assert "kind: Node" not in text and "kind: Namespace" not in text


def test_load_by_path_string_and_pathlike() -> None:
    path = scenarios.SCENARIO_DIR / "pair.yaml"
    assert load_scenario(str(path), now=NOW) == load_scenario("pair", now=NOW)
    assert load_scenario(path, now=NOW) == load_scenario("pair", now=NOW)


def test_extends_from_a_user_file_orders_and_overrides(tmp_path: Path) -> None:
    path = write(tmp_path, "mine.yaml", """\
kind: Scenario
description: pair with a bigger worker and one pod
extends: pair
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Namespace
metadata: {name: extra}
---
apiVersion: v1
kind: Node
metadata: {name: pair-worker}
status: {allocatable: {cpu: "8"}}
""")
    manifests = load_scenario(str(path))
    assert [(m["kind"], m["metadata"]["name"]) for m in manifests] == [
        ("Namespace", "default"), ("Namespace", "kube-system"), ("Namespace", "kube-public"),
        ("Namespace", "kube-node-lease"), ("Namespace", "sched-lab"), ("Namespace", "extra"),
        ("Node", "pair-control-plane"), ("Node", "pair-worker"), ("Pod", "web"),
    ]
    assert by_name(manifests, "Node", "pair-worker")["status"] == {"allocatable": {"cpu": "8"}}
    assert by_name(manifests, "Pod", "web")["metadata"]["namespace"] == "default"


def test_extends_relative_path_chain(tmp_path: Path) -> None:
    write(tmp_path, "base.yaml", "kind: Scenario\ndescription: base\n---\n"
          "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n")
    (tmp_path / "sub").mkdir()
    child = write(tmp_path / "sub", "child.yaml", "kind: Scenario\ndescription: child\nextends: ../base.yaml\n---\n"
                  "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\n")
    assert [(m["kind"], m["metadata"]["name"]) for m in load_scenario(str(child))] == [("Namespace", "a"), ("Pod", "p")]


def test_file_without_header_and_server_fields_dropped(tmp_path: Path) -> None:
    path = write(tmp_path, "dump.yaml", """\
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: x
  uid: 0a1b
  resourceVersion: "123"
  creationTimestamp: 2025-01-02T03:04:05Z
  managedFields: []
status:
  conditions:
  - {type: PodScheduled, status: "True", lastProbeTime: null, lastTransitionTime: 2025-01-02T03:04:06Z}
  - {type: Ready, status: "False", lastProbeTime: null}
""")
    (pod,) = load_scenario(str(path), now=NOW)
    assert pod["metadata"] == {"name": "p", "namespace": "x"}
    assert pod["status"]["conditions"] == [
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": "2025-01-02T03:04:06Z"},
        {"type": "Ready", "status": "False", "lastProbeTime": None, "lastTransitionTime": STAMP},
    ]


def test_empty_documents_are_skipped(tmp_path: Path) -> None:
    path = write(tmp_path, "e.yaml", "---\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n")
    assert load_scenario(str(path)) == [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}]


# --- errors -------------------------------------------------------------------------------------------------------


def error_for(tmp_path: Path, text: str) -> ScenarioError:
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(str(path))
    return caught.value


def test_unknown_name_lists_available() -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario("trio")
    assert str(caught.value) == f"trio: unknown scenario 'trio'; available scenarios: {AVAILABLE}."


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ScenarioError) as caught:
        load_scenario(str(missing))
    assert str(caught.value) == f"{missing}: the file does not exist."
    assert caught.value.document is None


def test_directory_is_not_a_scenario(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(tmp_path)
    assert str(caught.value) == f"{tmp_path}: this is a directory, not a scenario file."


def test_yaml_syntax_error_names_document_and_line(tmp_path: Path) -> None:
    err = error_for(tmp_path, "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n"
                              "apiVersion: v1\nkind: Pod\nmetadata: {name: [b\n")
    assert err.document == 2
    assert str(err).startswith(f"{tmp_path / 'bad.yaml'}: document 2: YAML syntax error at line 8, column 1: ")


def test_duplicate_key_is_an_error(tmp_path: Path) -> None:
    err = error_for(tmp_path, "apiVersion: v1\nkind: Pod\nkind: Node\nmetadata: {name: a}\n")
    assert str(err) == (f"{tmp_path / 'bad.yaml'}: document 1: YAML error at line 3, column 1: "
                        "found duplicate key 'kind'.")


@pytest.mark.parametrize(("text", "reason"), [
    ("- a\n- b\n", "document 1: the document is a list, not a mapping (a Kubernetes object)."),
    ("just text\n", "document 1: the document is the text 'just text', not a mapping (a Kubernetes object)."),
    ("kind: Pod\nmetadata: {name: a}\n", "document 1: apiVersion is missing."),
    ("apiVersion: v1\nmetadata: {name: a}\n", "document 1: kind is missing."),
    ("apiVersion: v1\nkind: 3\nmetadata: {name: a}\n",
     "document 1: kind must be a non-empty string, not the number 3."),
    ("apiVersion: v1\nkind: Pod\n", "document 1: metadata is missing (every object needs metadata.name)."),
    ("apiVersion: v1\nkind: Pod\nmetadata: [a]\n", "document 1: metadata must be a mapping, not a list."),
    ("apiVersion: v1\nkind: Pod\nmetadata: {namespace: x}\n", "document 1: metadata.name is missing."),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: ''}\n",
     "document 1: metadata.name must be a non-empty string, not empty text."),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {x: .nan}\n",
     "document 1: the object cannot be expressed as JSON (Out of range float values are not JSON compliant)."),
    ("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n"
     "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
     "document 2: Namespace a is already defined by document 1."),
    ("kind: Scenario\ndescription: d\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\nkind: Pod\n",
     "document 3: apiVersion is missing."),
    ("kind: Scenario\n", "document 1: the Scenario header needs a one-line text 'description'."),
    ("kind: Scenario\ndescription: d\nextend: pair\n",
     "document 1: the Scenario header has unknown field(s) extend; allowed are kind, description and extends."),
    ("kind: Scenario\ndescription: d\nextends: [pair]\n",
     "document 1: 'extends' must name one scenario (a name or a file path)."),
    ("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\nkind: Scenario\ndescription: d\n",
     "document 2: a 'kind: Scenario' header must be the first document."),
    ("kind: Scenario\ndescription: d\nextends: trio\n",
     f"document 1: extends: unknown scenario 'trio'; available scenarios: {AVAILABLE}."),
    ("!!python/object:os.system {}\n", None),
])
def test_bad_documents(tmp_path: Path, text: str, reason: str | None) -> None:
    err = error_for(tmp_path, text)
    if reason is not None:
        assert str(err) == f"{tmp_path / 'bad.yaml'}: {reason}"
    else:
        assert str(err) == (f"{tmp_path / 'bad.yaml'}: document 1: YAML error at line 1, column 1: could not "
                            "determine a constructor for the tag 'tag:yaml.org,2002:python/object:os.system'.")


def test_extends_missing_file_names_both(tmp_path: Path) -> None:
    err = error_for(tmp_path, "kind: Scenario\ndescription: d\nextends: gone.yaml\n")
    gone = tmp_path / "gone.yaml"
    assert str(err) == f"{tmp_path / 'bad.yaml'}: document 1: extends {gone}: the file does not exist."


def test_error_inside_extended_file_names_that_file(tmp_path: Path) -> None:
    write(tmp_path, "base.yaml", "apiVersion: v1\nkind: Pod\n")
    err = error_for(tmp_path, "kind: Scenario\ndescription: d\nextends: base.yaml\n")
    assert str(err) == f"{tmp_path / 'base.yaml'}: document 1: metadata is missing (every object needs metadata.name)."


def test_extends_cycle(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "kind: Scenario\ndescription: a\nextends: b.yaml\n")
    write(tmp_path, "b.yaml", "kind: Scenario\ndescription: b\nextends: a.yaml\n")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(str(tmp_path / "a.yaml"))
    assert str(caught.value) == (f"{tmp_path / 'a.yaml'}: document 1: "
                                 "extends forms a cycle (a.yaml -> b.yaml -> a.yaml).")


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"kind: \xff\xfe\n")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(str(path))
    assert str(caught.value) == f"{path}: the file is not UTF-8 text (bad byte at offset 6)."


# --- generated scenarios hook -------------------------------------------------------------------------------------


def test_unregistered_generator_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario("grid:nodes=3")
    assert str(caught.value) == ("grid:nodes=3: unknown scenario generator 'grid' "
                                 f"(generators: scale; scenarios: {AVAILABLE}).")
    monkeypatch.setattr(scenarios, "_GENERATORS", {})
    with pytest.raises(ScenarioError) as caught:
        load_scenario("scale:nodes=3,pods=10")
    assert str(caught.value) == ("scale:nodes=3,pods=10: unknown scenario generator 'scale' "
                                 f"(generators: none registered yet; scenarios: {AVAILABLE}).")


def test_registered_generator_is_checked_and_ordered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenarios, "_GENERATORS", {})

    def generate(arguments: str) -> list[dict]:
        count = int(arguments.removeprefix("nodes="))
        return [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}] + [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"}} for i in range(count)]

    register_generator("scale", generate)
    manifests = load_scenario("scale:nodes=2")
    assert [(m["kind"], m["metadata"]["name"]) for m in manifests] == [("Node", "n0"), ("Node", "n1"), ("Pod", "p")]
    with pytest.raises(ScenarioError) as caught:
        load_scenario("scale:nodes=x")
    assert str(caught.value) == ("scale:nodes=x: cannot generate the scenario: "
                                 "invalid literal for int() with base 10: 'x'.")
    with pytest.raises(ValueError):
        register_generator("a:b", generate)
