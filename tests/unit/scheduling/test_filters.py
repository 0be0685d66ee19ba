"""The six Filter plugins: each one's edge cases, its status code, and "first failing plugin wins"."""

from __future__ import annotations

import pytest

from observatory.scheduling import (
    SUCCESS,
    UNSCHEDULABLE,
    UNSCHEDULABLE_AND_UNRESOLVABLE,
    AffinityMismatch,
    NodeNameMismatch,
    PortConflict,
    filter_nodes,
)
from observatory.scheduling.taints import Taint

from .objects import CONTROL_PLANE, expr, node, pair, pod, required_affinity


def verdict(p, n, pods=()):
    return filter_nodes(p, [n], pods)[n["metadata"]["name"]]


# NodeUnschedulable


def test_unschedulable_node_is_rejected_as_unresolvable():
    v = verdict(pod(), node("n", unschedulable=True))
    assert (v.plugin, v.code, v.reasons) == ("NodeUnschedulable", UNSCHEDULABLE_AND_UNRESOLVABLE,
                                             ("node(s) were unschedulable",))


@pytest.mark.parametrize("toleration", [
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
    {"operator": "Exists"},
])
def test_tolerating_the_unschedulable_taint_passes(toleration):
    assert verdict(pod(tolerations=[toleration]), node("n", unschedulable=True)).code == SUCCESS


def test_unschedulable_toleration_with_another_effect_does_not_help():
    tol = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoExecute"}
    assert verdict(pod(tolerations=[tol]), node("n", unschedulable=True)).plugin == "NodeUnschedulable"


# NodeName


def test_node_name_mismatch():
    v = verdict(pod(nodeName="elsewhere"), node("n"))
    assert (v.plugin, v.code, v.reasons, v.details) == (
        "NodeName", UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match the requested node name",),
        (NodeNameMismatch("elsewhere"),))
    assert verdict(pod(nodeName="n"), node("n")).code == SUCCESS


# TaintToleration


def taint(key, effect="NoSchedule", value=None):
    out = {"key": key, "effect": effect}
    if value is not None:
        out["value"] = value
    return out


def test_taint_reason_prints_key_and_value():
    v = verdict(pod(), node("n", taints=[taint("dedicated", value="gpu")]))
    assert (v.plugin, v.code, v.reasons) == ("TaintToleration", UNSCHEDULABLE_AND_UNRESOLVABLE,
                                             ("node(s) had untolerated taint {dedicated: gpu}",))
    assert v.details == (Taint("dedicated", "gpu", "NoSchedule"),)


def test_empty_taint_value_prints_as_key_colon_space():
    v = filter_nodes(pod(), pair())["pair-control-plane"]
    assert v.reasons == ("node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }",)


@pytest.mark.parametrize("toleration, tolerated", [
    ({"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}, True),
    ({"key": "dedicated", "value": "gpu"}, True),                                   # no operator means Equal
    ({"key": "dedicated", "operator": "Equal", "value": "cpu"}, False),
    ({"key": "dedicated", "operator": "Exists"}, True),
    ({"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}, False),     # effect must match
    ({"key": "other", "operator": "Exists"}, False),
    ({"operator": "Exists"}, True),                                                 # empty key + Exists: all
    ({"operator": "Exists", "effect": "PreferNoSchedule"}, False),
    ({"key": "dedicated", "operator": "Gt", "value": "1"}, False),                  # unknown operator
])
def test_toleration_matching(toleration, tolerated):
    v = verdict(pod(tolerations=[toleration]), node("n", taints=[taint("dedicated", value="gpu")]))
    assert (v.code == SUCCESS) is tolerated


def test_prefer_no_schedule_taints_do_not_filter():
    assert verdict(pod(), node("n", taints=[taint("soft", "PreferNoSchedule")])).code == SUCCESS


def test_no_execute_taints_filter():
    assert verdict(pod(), node("n", taints=[taint("evict", "NoExecute")])).plugin == "TaintToleration"


def test_first_untolerated_taint_in_node_order_is_reported():
    n = node("n", taints=[taint("a"), taint("b"), taint("c")])
    v = verdict(pod(tolerations=[{"key": "a", "operator": "Exists"}]), n)
    assert v.reasons == ("node(s) had untolerated taint {b: }",)


# NodeAffinity


def labelled(**labels):
    return node("n", labels=labels)


def test_node_selector_mismatch_with_details():
    v = verdict(pod(nodeSelector={"disktype": "ssd", "zone": "a"}), labelled(disktype="hdd", zone="a"))
    assert (v.plugin, v.code, v.reasons) == ("NodeAffinity", UNSCHEDULABLE_AND_UNRESOLVABLE,
                                             ("node(s) didn't match Pod's node affinity/selector",))
    assert v.details == (AffinityMismatch(selector_misses=(("disktype", "ssd", "hdd"),)),)
    assert verdict(pod(nodeSelector={"disktype": "ssd"}), labelled(disktype="ssd")).code == SUCCESS


@pytest.mark.parametrize("requirement, labels, matches", [
    (expr("zone", "In", "a", "b"), {"zone": "b"}, True),
    (expr("zone", "In", "a"), {}, False),
    (expr("zone", "NotIn", "a"), {"zone": "b"}, True),
    (expr("zone", "NotIn", "a"), {}, True),                     # NotIn holds when the label is absent
    (expr("zone", "NotIn", "a"), {"zone": "a"}, False),
    (expr("gpu", "Exists"), {"gpu": ""}, True),
    (expr("gpu", "DoesNotExist"), {"gpu": ""}, False),
    (expr("gpu", "DoesNotExist"), {}, True),
    (expr("cores", "Gt", "8"), {"cores": "16"}, True),
    (expr("cores", "Gt", "8"), {"cores": "8"}, False),
    (expr("cores", "Lt", "8"), {"cores": "-3"}, True),
    (expr("cores", "Lt", "8"), {"cores": "4x"}, False),        # not an integer label
    (expr("cores", "Gt", "8"), {}, False),
    (expr("cores", "Gt", "eight"), {"cores": "16"}, False),    # malformed requirement matches nothing
    (expr("cores", "Gt", "1", "2"), {"cores": "16"}, False),
    (expr("zone", "In"), {"zone": "a"}, False),                # In needs values
    (expr("zone", "Near", "a"), {"zone": "a"}, False),
])
def test_match_expressions_operators(requirement, labels, matches):
    p = pod(affinity=required_affinity({"matchExpressions": [requirement]}))
    assert (verdict(p, labelled(**labels)).code == SUCCESS) is matches


def test_terms_are_ored_and_expressions_anded():
    terms = required_affinity(
        {"matchExpressions": [expr("zone", "In", "a"), expr("disk", "In", "ssd")]},
        {"matchExpressions": [expr("gpu", "Exists")]},
    )
    assert verdict(pod(affinity=terms), labelled(zone="a", disk="ssd")).code == SUCCESS
    assert verdict(pod(affinity=terms), labelled(zone="a", disk="hdd")).code != SUCCESS
    assert verdict(pod(affinity=terms), labelled(gpu="1")).code == SUCCESS


def test_node_selector_and_affinity_must_both_hold():
    p = pod(nodeSelector={"disk": "ssd"}, affinity=required_affinity({"matchExpressions": [expr("zone", "In", "a")]}))
    assert verdict(p, labelled(disk="ssd", zone="a")).code == SUCCESS
    v = verdict(p, labelled(disk="ssd", zone="b"))
    assert v.details == (AffinityMismatch(required_unmatched=True),)


def test_malformed_requirement_is_reported_in_details():
    p = pod(affinity=required_affinity({"matchExpressions": [expr("cores", "Gt", "eight")]}))
    (detail,) = verdict(p, labelled(cores="9")).details
    assert detail.errors == ("cores: for 'Gt', 'Lt' operators, the value must be an integer",)


def test_empty_term_selects_nothing_and_no_terms_match_nothing():
    assert verdict(pod(affinity=required_affinity({})), labelled()).code != SUCCESS
    assert verdict(pod(affinity=required_affinity()), labelled()).code != SUCCESS
    either = required_affinity({}, {"matchExpressions": [expr("zone", "Exists")]})
    assert verdict(pod(affinity=either), labelled(zone="a")).code == SUCCESS


@pytest.mark.parametrize("operator, name, matches", [
    ("In", "n", True), ("In", "m", False), ("NotIn", "n", False), ("NotIn", "m", True),
])
def test_match_fields_metadata_name(operator, name, matches):
    p = pod(affinity=required_affinity({"matchFields": [expr("metadata.name", operator, name)]}))
    assert (verdict(p, node("n")).code == SUCCESS) is matches


def test_match_fields_in_restricts_the_cycle_to_the_named_nodes():
    """NodeAffinity's PreFilter: other nodes are never filtered and get the "didn't satisfy plugin(s)" reason."""
    p = pod(affinity=required_affinity({"matchFields": [expr("metadata.name", "In", "pair-worker")]}))
    verdicts = filter_nodes(p, pair())
    assert verdicts["pair-control-plane"].reasons == ("node(s) didn't satisfy plugin(s) [NodeAffinity]",)
    assert verdicts["pair-control-plane"].code == UNSCHEDULABLE_AND_UNRESOLVABLE
    assert verdicts["pair-worker"].code == SUCCESS


def test_match_fields_naming_disjoint_nodes_conflict():
    p = pod(affinity=required_affinity({"matchFields": [expr("metadata.name", "In", "a"),
                                                         expr("metadata.name", "In", "b")]}))
    assert {v.reasons for v in filter_nodes(p, pair()).values()} == {("pod affinity terms conflict",)}


# NodePorts


def port_pod(name="p", node_name=None, port=8080, protocol=None, host_ip=None, phase=None):
    entry = {"containerPort": 80, "hostPort": port}
    if protocol:
        entry["protocol"] = protocol
    if host_ip:
        entry["hostIP"] = host_ip
    out = pod(name, node_name=node_name, phase=phase)
    out["spec"]["containers"][0]["ports"] = [entry]
    return out


@pytest.mark.parametrize("existing, wanted, conflict", [
    ({}, {}, True),
    ({"protocol": "UDP"}, {}, False),
    ({"port": 9090}, {}, False),
    ({"host_ip": "10.0.0.1"}, {"host_ip": "10.0.0.2"}, False),
    ({"host_ip": "10.0.0.1"}, {"host_ip": "10.0.0.1"}, True),
    ({}, {"host_ip": "10.0.0.2"}, True),                        # 0.0.0.0 on the node takes every IP
    ({"host_ip": "10.0.0.1"}, {}, True),                        # wanting 0.0.0.0 conflicts with any IP
    ({"phase": "Succeeded"}, {}, False),                        # terminal pods free their ports
])
def test_host_port_conflicts(existing, wanted, conflict):
    on_node = port_pod("old", node_name="n", **existing)
    v = verdict(port_pod("new", **wanted), node("n"), [on_node])
    assert (v.plugin == "NodePorts") is conflict
    if conflict:
        assert v.code == UNSCHEDULABLE
        assert v.reasons == ("node(s) didn't have free ports for the requested pod ports",)
        assert isinstance(v.details[0], PortConflict) and v.details[0].port == 8080


def test_a_protocol_or_host_ip_that_is_not_a_string_counts_as_unset():
    """Found by hypothesis: ``protocol: {"0": "TCP"}`` made the port key unhashable and the filter raised."""
    on_node = port_pod("old", node_name="n")
    wanted = port_pod("new")
    wanted["spec"]["containers"][0]["ports"][0].update(protocol={"0": "TCP"}, hostIP=["10.0.0.1"])
    v = verdict(wanted, node("n"), [on_node])
    assert v.plugin == "NodePorts" and v.details[0].port == 8080


def test_container_port_without_host_port_never_conflicts():
    a = pod("old", node_name="n")
    a["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
    b = pod("new")
    b["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
    assert verdict(b, node("n"), [a]).code == SUCCESS


# NodeResourcesFit


def test_insufficient_cpu_carries_the_numbers():
    v = verdict(pod(requests={"cpu": "1500m"}), node("n", cpu="4"), [pod("a", node_name="n",
                                                                         requests={"cpu": "3"})])
    assert (v.plugin, v.code, v.reasons) == ("NodeResourcesFit", UNSCHEDULABLE, ("Insufficient cpu",))
    (short,) = v.details
    assert (short.requested, short.used, short.free, short.allocatable) == (1500, 3000, 1000, 4000)
    cpu = v.resource("cpu")
    assert (cpu.requested, cpu.used, cpu.allocatable, cpu.free, cpu.fits) == (1500, 3000, 4000, 1000, False)


def test_request_above_allocatable_is_unresolvable():
    v = verdict(pod(requests={"cpu": "5"}), node("n", cpu="4"))
    assert v.code == UNSCHEDULABLE_AND_UNRESOLVABLE and v.details[0].unresolvable


def test_every_shortfall_is_reported():
    n = node("n", cpu="1", memory="1Gi", pods="1", example__com_foo="1")
    v = verdict(pod(requests={"cpu": "2", "memory": "2Gi", "ephemeral-storage": "1Ti", "example.com/foo": "2"}),
                n, [pod("a", node_name="n")])
    assert set(v.reasons) == {"Too many pods", "Insufficient cpu", "Insufficient memory",
                              "Insufficient ephemeral-storage", "Insufficient example.com/foo"}
    assert v.code == UNSCHEDULABLE_AND_UNRESOLVABLE


def test_too_many_pods_is_resolvable():
    v = verdict(pod(), node("n", pods="1"), [pod("a", node_name="n")])
    assert (v.reasons, v.code) == (("Too many pods",), UNSCHEDULABLE)
    assert (v.details[0].requested, v.details[0].used, v.details[0].allocatable) == (1, 1, 1)


def test_extended_resource_the_node_lacks():
    v = verdict(pod(requests={"example.com/foo": "1"}), node("n"))
    assert v.reasons == ("Insufficient example.com/foo",)
    assert v.code == UNSCHEDULABLE_AND_UNRESOLVABLE


def test_extended_resource_that_fits():
    n = node("n", example__com_foo="2")
    assert verdict(pod(requests={"example.com/foo": "2"}), n).code == SUCCESS
    v = verdict(pod(requests={"example.com/foo": "1"}), n, [pod("a", node_name="n",
                                                                requests={"example.com/foo": "2"})])
    assert (v.reasons, v.code) == (("Insufficient example.com/foo",), UNSCHEDULABLE)


def test_container_without_request_counts_zero_for_filtering():
    full = [pod("a", node_name="n", requests={"cpu": "4", "memory": "8Gi"})]
    assert verdict(pod(), node("n"), full).code == SUCCESS


def test_terminal_pods_do_not_use_resources():
    done = [pod("a", node_name="n", requests={"cpu": "4"}, phase="Succeeded"),
            pod("b", node_name="n", requests={"cpu": "4"}, phase="Failed")]
    assert verdict(pod(requests={"cpu": "1"}), node("n"), done).code == SUCCESS


def test_unassigned_pods_do_not_use_resources():
    assert verdict(pod(requests={"cpu": "4"}), node("n"), [pod("pending", requests={"cpu": "4"})]).code == SUCCESS


def test_init_container_raises_the_request():
    p = pod(requests={"cpu": "500m"})
    p["spec"]["initContainers"] = [{"name": "init", "resources": {"requests": {"cpu": "3"}}}]
    v = verdict(p, node("n"), [pod("a", node_name="n", requests={"cpu": "2"})])
    assert v.reasons == ("Insufficient cpu",) and v.details[0].requested == 3000


# first failure wins


def test_only_the_first_failing_plugin_reports():
    v = filter_nodes(pod(requests={"cpu": "100"}), pair())["pair-control-plane"]
    assert v.plugin == "TaintToleration" and v.reasons == (
        "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }",)
    assert v.resource("cpu").fits is False  # the numbers are still there for a diagnosis


def test_taint_checked_before_affinity():
    n = node("n", labels={}, taints=[{"key": CONTROL_PLANE, "effect": "NoSchedule"}])
    assert verdict(pod(nodeSelector={"a": "b"}), n).plugin == "TaintToleration"


def test_resource_table_rows():
    v = verdict(pod(requests={"cpu": "250m", "memory": "64Mi", "example.com/foo": "1"}),
                node("n", example__com_foo="3"))
    assert [(r.resource, r.requested, r.allocatable) for r in v.resources] == [
        ("pods", 1, 110), ("cpu", 250, 4000), ("memory", 64 * 2**20, 8 * 2**30), ("example.com/foo", 1, 3)]
