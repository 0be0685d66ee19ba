"""Which pods a scheduler is responsible for, and pod priority."""

from __future__ import annotations

import pytest

from observatory.scheduling import not_responsible_reason, pod_key, pod_priority, responsible_for_pod

from .objects import pod


def test_default_scheduler_takes_pods_without_scheduler_name():
    assert responsible_for_pod(pod())
    assert responsible_for_pod(pod(schedulerName="default-scheduler"))


@pytest.mark.parametrize("build, reason", [
    (lambda: pod(schedulerName="nobody-at-all"), 'schedulerName is "nobody-at-all"'),
    (lambda: pod(node_name="pair-worker"), "already bound to pair-worker"),
    (lambda: pod(phase="Failed"), "phase is Failed"),
    (lambda: pod(schedulingGates=[{"name": "a"}, {"name": "b"}]), "scheduling gates: a, b"),
])
def test_not_responsible(build, reason):
    p = build()
    assert not responsible_for_pod(p)
    assert not_responsible_reason(p) == reason


def test_deleting_pod_is_skipped():
    p = pod()
    p["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    assert not_responsible_reason(p) == "being deleted"


def test_other_scheduler_name():
    p = pod(schedulerName="my-scheduler")
    assert responsible_for_pod(p, "my-scheduler") and not responsible_for_pod(p)


def test_priority_defaults_to_zero():
    assert pod_priority(pod()) == 0
    assert pod_priority(pod(priority=1000)) == 1000
    assert pod_priority(pod(priority=-5)) == -5
    assert pod_priority({}) == 0


def test_pod_key():
    assert pod_key(pod("web", namespace="sched-lab")) == "sched-lab/web"
    assert pod_key({"metadata": {"name": "x"}}) == "default/x"
