"""Quantities and pod requests: Kubernetes units and rounding, init and sidecar containers, overhead, bad input."""

from __future__ import annotations

from decimal import Decimal

import pytest

from observatory.scheduling import InvalidQuantity, compute_pod_resources, pod_requests, schedule_one
from observatory.scheduling.quantity import milli_value, parse, value
from observatory.scheduling.resources import is_scalar_resource

from .objects import node, pod


@pytest.mark.parametrize("raw, expected", [
    ("100m", Decimal("0.1")), ("1", Decimal(1)), ("1.5", Decimal("1.5")), ("1k", Decimal(1000)),
    ("1M", Decimal(10**6)), ("1G", Decimal(10**9)), ("1Ki", Decimal(1024)), ("64Mi", Decimal(64 * 2**20)),
    ("8Gi", Decimal(8 * 2**30)), ("1e3", Decimal(1000)), ("12e-3", Decimal("0.012")), (2, Decimal(2)),
    (0.5, Decimal("0.5")),
])
def test_parse_units(raw, expected):
    assert parse(raw) == expected


@pytest.mark.parametrize("raw", ["abc", "", " 1", "1_000", "1ki", "NaN", "Infinity", None, True, [], "1.2.3"])
def test_invalid_quantities_are_values_not_exceptions(raw):
    result = parse(raw)
    assert isinstance(result, InvalidQuantity)
    assert "invalid quantity" in str(result)


def test_rounding_is_away_from_zero_like_apimachinery():
    assert milli_value(parse("0.5m")) == 1
    assert milli_value(parse("100m")) == 100
    assert value(parse("1.5")) == 2
    assert value(parse("100m")) == 1
    assert value(parse("-1.5")) == -2


def test_units_of_pod_requests():
    p = pod(requests={"cpu": "250m", "memory": "64Mi", "ephemeral-storage": "1Gi", "example.com/foo": "2"})
    assert pod_requests(p) == {"cpu": 250, "memory": 64 * 2**20, "ephemeral-storage": 2**30, "example.com/foo": 2}


def test_containers_are_summed():
    p = pod(requests={"cpu": "250m"})
    p["spec"]["containers"].append({"name": "b", "resources": {"requests": {"cpu": "250m", "memory": "1Gi"}}})
    assert pod_requests(p) == {"cpu": 500, "memory": 2**30, "ephemeral-storage": 0}


def test_init_containers_take_the_max_per_resource():
    """The worked example of upstream's computePodResourceRequest: CPU 3, memory 3G."""
    p = pod()
    p["spec"]["initContainers"] = [
        {"name": "ic1", "resources": {"requests": {"cpu": "2", "memory": "1G"}}},
        {"name": "ic2", "resources": {"requests": {"cpu": "2", "memory": "3G"}}},
    ]
    p["spec"]["containers"] = [
        {"name": "c1", "resources": {"requests": {"cpu": "2", "memory": "1G"}}},
        {"name": "c2", "resources": {"requests": {"cpu": "1", "memory": "1G"}}},
    ]
    assert pod_requests(p) == {"cpu": 3000, "memory": 3 * 10**9, "ephemeral-storage": 0}


def test_sidecar_init_containers_add_to_everything_after_them():
    p = pod(requests={"cpu": "1"})
    p["spec"]["initContainers"] = [
        {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
        {"name": "setup", "resources": {"requests": {"cpu": "2"}}},
    ]
    # max(containers 1 + sidecar 0.5, setup 2 + sidecar 0.5) = 2.5
    assert pod_requests(p)["cpu"] == 2500


def test_overhead_is_added():
    p = pod(requests={"cpu": "1"}, overhead={"cpu": "250m", "memory": "120Mi"})
    assert pod_requests(p) == {"cpu": 1250, "memory": 120 * 2**20, "ephemeral-storage": 0}


def test_pod_level_requests_override_cpu_and_memory():
    p = pod(requests={"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi"},
            resources={"requests": {"cpu": "2", "memory": "3Gi", "ephemeral-storage": "5Gi"}})
    assert pod_requests(p) == {"cpu": 2000, "memory": 3 * 2**30, "ephemeral-storage": 2**30}


def test_sums_are_exact_before_rounding():
    p = pod(requests={"cpu": "0.4m"})
    p["spec"]["containers"].append({"name": "b", "resources": {"requests": {"cpu": "0.4m"}}})
    assert pod_requests(p)["cpu"] == 1  # 0.8m rounds up once, not 1m + 1m


def test_scoring_defaults_for_containers_without_requests():
    p = pod()
    p["spec"]["containers"].append({"name": "b", "resources": {"requests": {"cpu": "0", "memory": "1Gi"}}})
    res = compute_pod_resources(p)
    assert (res.nonzero_cpu, res.nonzero_memory) == (100, 200 * 2**20 + 2**30)  # explicit "0" stays 0
    assert res.requests["cpu"] == 0


@pytest.mark.parametrize("name, scalar", [
    ("example.com/foo", True), ("nvidia.com/gpu", True), ("hugepages-2Mi", True),
    ("attachable-volumes-aws-ebs", True), ("kubernetes.io/batteries", True), ("foo", False), ("cpu", False),
    ("requests.example.com/foo", False), ("bad_domain/foo", False),
])
def test_which_resource_names_count(name, scalar):
    assert is_scalar_resource(name) is scalar


def test_unknown_plain_names_are_ignored():
    assert pod_requests(pod(requests={"cpu": "1", "widgets": "5"})) == {"cpu": 1000, "memory": 0,
                                                                         "ephemeral-storage": 0}


def test_invalid_pod_quantity_is_a_scheduler_error_not_a_crash():
    decision = schedule_one(pod(requests={"cpu": "lots"}), [node("n")])
    assert decision.node is None
    assert decision.condition_reason == "SchedulerError"
    assert decision.message == decision.error
    assert "spec.containers[0].resources.requests.cpu" in decision.error and "'lots'" in decision.error
    assert decision.verdicts["n"].code == "Success"  # the rest of the pod is still judged


def test_invalid_node_allocatable_counts_zero_and_is_reported():
    n = node("n", cpu="four")
    v = schedule_one(pod(requests={"cpu": "1"}), [n]).verdicts["n"]
    assert v.reasons == ("Insufficient cpu",)
    assert any("status.allocatable.cpu" in e for e in v.errors)


def test_invalid_quantity_of_a_pod_on_the_node_is_reported():
    bad = pod("bad", node_name="n", requests={"memory": "x"})
    v = schedule_one(pod(requests={"cpu": "1"}), [node("n")], [bad]).verdicts["n"]
    assert v.code == "Success"
    assert v.errors and v.errors[0].startswith("default/bad: spec.containers[0].resources.requests.memory")
