"""QueueingHints on the lab, driven with kubectl: the lab's default-scheduler retries a pod that only lacked cpu when
its node's allocatable cpu goes up, and not when the node is labelled (kube-scheduler v1.34.1: NodeResourcesFit
registers Node/Add|UpdateNodeAllocatable only, TaintToleration Node/Add|UpdateNodeTaint). A retry shows as one more
FailedScheduling (a new event or a higher ``count``).

The label change is observed through a second pod, ``probe``, whose nodeSelector the label satisfies: once
``probe`` is bound, the scheduler has handled the label event, and ``huge`` (queued ahead of ``probe``, by name on a
creation-time tie) has been tried again or not.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.test_interpod_affinity import apply, events, failed_scheduling, node_of
from tests.e2e.test_kubectl_seed import Lab, serving


def cpu_pod(name: str, cpu: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {**spec, "containers": [{"name": name, "image": "nginx",
                                               "resources": {"requests": {"cpu": cpu}}}]}}


def until(check: Callable[[], Any], what: str, timeout: float = 20.0) -> Any:
    """Poll ``check`` until it is truthy; AssertionError naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)
    return value


def attempts(lab: Lab, name: str) -> int:
    """FailedScheduling occurrences for ``name``: every event, with its ``count``."""
    return sum(int(e.get("count") or 1) for e in events(lab, name) if e["reason"] == "FailedScheduling")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("hints"), "--scenario", "pair", "--no-kubelet") as lab:
        yield lab


def test_a_label_does_not_retry_a_pod_that_lacked_cpu_and_more_allocatable_cpu_does(lab: Lab):
    apply(lab, cpu_pod("hog", "2"))
    assert node_of(lab, "hog") == "pair-worker"
    apply(lab, cpu_pod("huge", "3"), cpu_pod("probe", "100m", nodeSelector={"lesson": "again"}))
    assert "1 Insufficient cpu" in failed_scheduling(lab, "huge")
    assert "didn't match Pod's node affinity/selector" in failed_scheduling(lab, "probe")
    before = attempts(lab, "huge")

    labelled = lab.sh("kubectl label node pair-worker lesson=again")
    assert labelled.returncode == 0, labelled.stderr
    assert node_of(lab, "probe") == "pair-worker"  # NodeAffinity's hint queued probe: the label event was handled
    until(lambda: any(e["reason"] == "Scheduled" for e in events(lab, "probe")), "probe's Scheduled event")
    assert attempts(lab, "huge") == before

    patch = {"status": {"allocatable": {"cpu": "4500m"}}}
    raised = lab.sh(f"kubectl patch node pair-worker --subresource=status -p '{json.dumps(patch)}'")
    assert raised.returncode == 0, raised.stderr
    until(lambda: attempts(lab, "huge") > before, "a retry after allocatable cpu went up")
    assert "1 Insufficient cpu" in failed_scheduling(lab, "huge")  # 2 + 3 cpu still exceed 4.5
