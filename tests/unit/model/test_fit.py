"""Node-fit preview and warnings before a bind, on hand-made Node and Pod JSON whose numbers are chosen here."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from observatory.model.deltas import Deleted, Relisted, Upserted
from observatory.model.fit import OBSERVATORY_PREDICTION, SIMULATOR_RESULT, pod_info
from observatory.model.state import ClusterState

T0 = datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC)


def node(name: str, cpu: str = "2", memory: str = "4Gi", pods: str = "110", *, ready: str = "True",
         cordoned: bool = False, taints: list | None = None, labels: dict | None = None, **extra: str) -> dict:
    return {"metadata": {"name": name, "resourceVersion": "1", "labels": labels or {}},
            "spec": {"unschedulable": cordoned, "taints": taints or []},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods, **extra},
                       "conditions": [{"type": "Ready", "status": ready}]}}


def pod(name: str, cpu: str = "1", memory: str = "1Gi", node_name: str = "", phase: str = "Pending",
        annotations: dict | None = None, extra: dict | None = None, **spec) -> dict:
    requests = {"cpu": cpu, "memory": memory, **(extra or {})}
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": "1",
                         "annotations": annotations or {}},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "x",
                                                              "resources": {"requests": requests}}], **spec},
            "status": {"phase": phase}}


def state_with(nodes: list[dict], pods: list[dict]) -> ClusterState:
    state = ClusterState(lambda: T0)
    state.apply(Relisted("nodes", tuple(nodes), "1"))
    state.apply(Relisted("pods", tuple(pods), "1"))
    return state


CLUSTER = [
    node("small"),
    node("tainted", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                            {"key": "soft", "value": "", "effect": "PreferNoSchedule"},
                            {"key": "example.com/evict", "value": "yes", "effect": "NoExecute"}]),
    node("cordoned", cordoned=True),
    node("down", ready="False"),
    node("hdd", labels={"disktype": "hdd"}),
]


def test_each_node_gets_the_first_rejecting_filter_and_its_numbers():
    state = state_with(CLUSTER, [pod("p"), pod("there", cpu="1500m", node_name="small", phase="Running")])
    preview = state.fit("default/p")
    assert (preview.source, preview.label, preview.scope) == ("observatory", OBSERVATORY_PREDICTION, None)
    assert OBSERVATORY_PREDICTION == "observatory's prediction from cached objects"
    got = {n.node: (n.fits, n.filter, n.why, n.notes) for n in preview.nodes}
    assert got == {
        "cordoned": (False, "NodeUnschedulable", ("cordoned (spec.unschedulable)",), ()),  # said once, not twice
        "down": (True, None, (), ("NotReady",)),
        "hdd": (True, None, (), ()),
        "small": (False, "NodeResourcesFit", ("cpu: requests 1, free 500m of 2 (1500m in use)",), ()),
        "tainted": (False, "TaintToleration", ("untolerated taint dedicated=gpu:NoSchedule",
                                               "untolerated taint example.com/evict=yes:NoExecute"), ()),
    }
    assert [n.node for n in preview.nodes] == ["cordoned", "down", "hdd", "small", "tainted"]
    assert preview.feasible == ("down", "hdd")
    small = preview.get("small")
    assert small.reasons == ("Insufficient cpu",)
    assert ("cpu", 1000, 1500, 2000) in small.resources and ("pods", 1, 1, 110) in small.resources
    as_json = preview.to_json()["nodes"][3]
    assert as_json["resources"][1] == {"resource": "cpu", "requested": 1000, "used": 1500, "allocatable": 2000,
                                       "free": 500}


def test_memory_pods_and_extended_resources_carry_their_numbers():
    nodes = [node("full", pods="1"), node("mem", memory="2Gi"), node("gpu", **{"nvidia.com/gpu": "1"})]
    pods = [pod("p", memory="3Gi", extra={"nvidia.com/gpu": "2"}),
            pod("squatter", cpu="0", memory="0", node_name="full", phase="Running"),
            pod("hog", cpu="0", memory="1536Mi", node_name="mem", phase="Running")]
    got = {n.node: n.why for n in state_with(nodes, pods).fit("default/p").nodes}
    assert got["full"] == ("pods: 1 of 1 already on the node", "nvidia.com/gpu: requests 2, free 0 of 0 (0 in use)")
    assert got["mem"] == ("memory: requests 3Gi, free 512Mi of 2Gi (1536Mi in use)",
                          "nvidia.com/gpu: requests 2, free 0 of 0 (0 in use)")
    assert got["gpu"] == ("nvidia.com/gpu: requests 2, free 1 of 1 (0 in use)",)


def test_node_selector_and_required_affinity_name_the_failing_term():
    selector = pod("sel", nodeSelector={"disktype": "ssd"})
    affinity = pod("aff", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "disktype", "operator": "In", "values": ["ssd", "nvme"]}]},
                              {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}]}}})
    state = state_with([node("hdd", labels={"disktype": "hdd"}), node("bare")], [selector, affinity])
    sel = {n.node: (n.filter, n.why) for n in state.fit("default/sel").nodes}
    assert sel == {"bare": ("NodeAffinity", ("nodeSelector disktype=ssd: node has no disktype label",)),
                   "hdd": ("NodeAffinity", ("nodeSelector disktype=ssd: node has disktype=hdd",))}
    aff = state.fit("default/aff").get("hdd")
    assert aff.why == ("nodeAffinity term 1: disktype In [ssd, nvme]: node has disktype=hdd",
                       "nodeAffinity term 2: zone Exists: node has no zone label")


def test_a_bound_pod_is_not_counted_against_itself_and_deletions_free_room():
    state = state_with([node("small")], [pod("a", cpu="1500m", node_name="small", phase="Running"), pod("p")])
    assert state.fit("default/a").get("small").fits  # its own 1500m is not "in use" for the question
    assert not state.fit("default/p").get("small").fits
    state.apply(Deleted("pods", pod("a", cpu="1500m", node_name="small", phase="Running")))
    assert state.fit("default/p").get("small").fits
    # The bound pod's own count is still right after the preview (the snapshot is restored).
    state.apply(Upserted("pods", pod("b", cpu="1500m", node_name="small", phase="Running")))
    assert state.fit("default/b").get("small").fits
    assert not state.fit("default/p").get("small").fits
    # A terminal pod frees its node.
    state.apply(Upserted("pods", pod("b", cpu="1500m", node_name="small", phase="Succeeded")))
    assert state.fit("default/p").get("small").fits


def test_pods_of_one_shape_share_a_parse_but_not_their_identity():
    a, b = pod("a", node_name="n1"), pod("b")
    ia, ib = pod_info(a), pod_info(b)
    assert (ia.key, ia.uid, ia.node_name) == ("default/a", "uid-a", "n1")
    assert (ib.key, ib.uid, ib.node_name) == ("default/b", "uid-b", "")
    assert ia.resources is ib.resources  # one parse for the shape
    assert pod_info(pod("c", cpu="2")).resources.requests["cpu"] == 2000


def test_simulator_annotations_replace_the_prediction():
    result = {"n1": {"NodeUnschedulable": "passed", "NodeResourcesFit": "passed"},
              "n2": {"NodeUnschedulable": "passed", "TaintToleration": "node(s) had untolerated taint {a: b}",
                     "NodeResourcesFit": "passed"}}
    annotated = pod("sim", annotations={"kube-scheduler-simulator.sigs.k8s.io/filter-result": json.dumps(result),
                                        "kube-scheduler-simulator.sigs.k8s.io/selected-node": "n1"})
    older = pod("old", annotations={"scheduler-simulator/filter-result": json.dumps(result)})
    broken = pod("broken", annotations={"scheduler-simulator/filter-result": "{not json"})
    state = state_with([node("n1"), node("n2")], [annotated, older, broken])
    preview = state.fit("default/sim")
    assert (preview.source, preview.label) == ("kube-scheduler-simulator", SIMULATOR_RESULT)
    assert [(n.node, n.fits, n.filter, n.why, n.notes) for n in preview.nodes] == [
        ("n1", True, None, (), ("selected by kube-scheduler-simulator",)),
        ("n2", False, "TaintToleration", ("node(s) had untolerated taint {a: b}",), ())]
    assert state.fit("default/old").source == "kube-scheduler-simulator"
    assert state.fit("default/broken").source == "observatory"  # unreadable annotation: the prediction instead
    shapeless = pod("shapeless", annotations={"scheduler-simulator/filter-result": '{"n1": "x"}'})
    state.apply(Upserted("pods", shapeless))
    assert state.fit("default/shapeless").source == "observatory"  # no node with plugin results: same


def test_bind_warnings_name_taints_resources_and_selector():
    state = state_with([*CLUSTER, node("gpu", **{"nvidia.com/gpu": "1"})],
                       [pod("p", extra={"nvidia.com/gpu": "2"}), pod("sel", nodeSelector={"disktype": "ssd"})])
    assert state.bind_warnings("default/p", "tainted") == [
        "node tainted has taint dedicated=gpu:NoSchedule, which the pod does not tolerate: a hand-bind ignores that, "
        "the scheduler would not",
        "node tainted has taint example.com/evict=yes:NoExecute, which the pod does not tolerate: the taint manager "
        "evicts the pod once it is bound",
        "node tainted lacks nvidia.com/gpu (requests 2, free 0): the API server accepts the binding, the kubelet "
        "will reject the pod"]
    assert state.bind_warnings("default/p", "gpu") == [
        "node gpu lacks nvidia.com/gpu (requests 2, free 1): the API server accepts the binding, the kubelet will "
        "reject the pod"]
    assert state.bind_warnings("default/sel", "hdd") == [
        "the pod's node selector/affinity does not match node hdd (nodeSelector disktype=ssd: node has "
        "disktype=hdd): the kubelet will reject the pod"]
    tolerant = pod("t", tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu",
                                      "effect": "NoSchedule"},
                                     {"operator": "Exists", "effect": "NoExecute"}])
    state.apply(Upserted("pods", tolerant))
    assert state.bind_warnings("default/t", "tainted") == []
    assert state.bind_warnings("default/gone", "small") == [
        "default/gone no longer exists: the API server will answer 404 Not Found"]


def test_when_the_api_server_will_refuse_node_side_warnings_are_left_out():
    state = state_with(CLUSTER, [pod("g", cpu="100", schedulingGates=[{"name": "example.com/quota"}])])
    assert state.bind_warnings("default/g", "small") == [
        "the pod has scheduling gates (example.com/quota): the API server will refuse"]


def test_a_namespace_scoped_view_says_other_namespaces_are_not_counted():
    state = state_with([node("small")], [pod("p")])
    assert state.fit("default/p", scope="default").scope == "default"
    assert state.bind_warnings("default/p", "small", scope="default") == [
        "only default's pods are counted on node small (observatory watches that namespace): pods of other "
        "namespaces may leave no room, and the kubelet would reject the pod; observatory why counts every namespace"]
    assert state.bind_warnings("default/p", "small") == []
