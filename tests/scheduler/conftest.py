"""Fixtures and helpers for the scheduler tests: a Connection to the in-process lab, pod manifests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from observatory.kube.connect import Connection, connect

SCHEDULER = "my-scheduler"
CPU_TOO_MUCH = ("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
                "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: 0/2 nodes are "
                "available: 2 Preemption is not helpful for scheduling.")
"""../shared/k8s-api-reference.md §4.3a, worked example "pod requesting cpu 100" on the pair cluster."""


def pod_manifest(name: str, *, cpu: str = "100m", scheduler: str = SCHEDULER, namespace: str = "sched-lab",
                 **spec: Any) -> dict[str, Any]:
    """A one-container pod for ``scheduler`` requesting ``cpu``."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"schedulerName": scheduler, **spec,
                     "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.9",
                                     "resources": {"requests": {"cpu": cpu}}}]}}


@pytest.fixture
async def conn(lab) -> AsyncIterator[Connection]:
    connection = await connect(str(lab.kubeconfig_path))
    try:
        yield connection
    finally:
        await connection.close()
