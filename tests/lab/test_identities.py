"""Who each writer of the lab is: a pod's life on a lab whose simulated components write through audited clients
(a collecting fake Auditor), the scheduler's requests as they reach the lab (headers), and observatory's own agent.

Upstream sources of the exact strings: ``observatory.lab.audit.identity`` (users, groups, agents) and
``observatory.lab.simulation.statuspatch`` (the patch shapes); the lab shares one module-scoped lab."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import web

import observatory.lab.server as lab_server
from observatory.embedded import EmbeddedLab
from observatory.kube.connect import connect, observatory_agent
from observatory.lab import errors
from observatory.lab.audit import identity
from observatory.lab.audit.types import AuditedRequest
from observatory.lab.registry import Registry
from observatory.lab.resources import CORE_V1
from observatory.lab.simulation import Simulations
from observatory.lab.simulation.client import AuditedClient, Clients
from observatory.lab.simulation.nodelifecycle import NodeLifecycle
from observatory.lab.store import Store
from observatory.settings import LabSettings
from tests.waiting import eventually

pytestmark = pytest.mark.asyncio(loop_scope="module")

WORKER, WORKER_IP = "pair-worker", "172.18.0.3"
CONTROL_PLANE_IP = "172.18.0.2"


@dataclass
class Record:
    request: AuditedRequest
    code: int = 0
    response: Any = None


@dataclass
class Handle:
    record: Record
    audit_id: str = "id"

    def started(self, code: int) -> None:
        pass

    def finish(self, code: int, response_object: Any = None, *, panic: bool = False) -> None:
        self.record.code, self.record.response = code, response_object


@dataclass
class CollectingAuditor:
    records: list[Record] = field(default_factory=list)

    def begin(self, request: AuditedRequest) -> Handle:
        record = Record(request)
        self.records.append(record)
        return Handle(record)

    def subscribe(self, listener: Any) -> Any:
        return lambda: None


@dataclass
class Lab:
    server: EmbeddedLab
    auditor: CollectingAuditor
    headers: list[tuple[str, str, dict[str, str]]]
    """(method, path, headers) of every HTTP request the lab received."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lab(tmp_path_factory) -> AsyncIterator[Lab]:
    headers: list[tuple[str, str, dict[str, str]]] = []

    @web.middleware
    async def record(request: web.Request, handler: Any) -> web.StreamResponse:
        headers.append((request.method, request.path, dict(request.headers)))
        return await handler(request)

    original = lab_server.build_app

    def build_app(context: Any) -> web.Application:
        app = original(context)
        app.middlewares.append(record)
        return app

    settings = LabSettings(bind_delay=0, kubelet_start_seconds=0.05, termination_grace_cap=0.05, podgc=False,
                           pv_controller=False)
    server = EmbeddedLab(settings, scenario="pair", kubeconfig_path=tmp_path_factory.mktemp("lab") / "kubeconfig")
    auditor = CollectingAuditor()
    server.simulations = Simulations(server.registry, server.settings, auditor)
    lab_server.build_app = build_app  # type: ignore[assignment]
    try:
        await server.start()
    finally:
        lab_server.build_app = original  # type: ignore[assignment]
    try:
        yield Lab(server, auditor, headers)
    finally:
        await server.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def life(lab: Lab) -> dict[str, Any]:
    """One pod's life: created over HTTP, bound by the lab's scheduler, started by the kubelet, deleted."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "life"},
           "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.9"}]}}
    async with aiohttp.ClientSession(base_url=lab.server.url) as http:
        async with http.post("/api/v1/namespaces/default/pods", json=pod) as resp:
            assert resp.status == 201
            created = await resp.json()

        def running() -> Any:
            stored = lab.server.store.get("pods", "default", "life")
            return stored if (stored.get("status") or {}).get("phase") == "Running" else None

        stored = await eventually(running, "the pod to run")
        async with http.delete("/api/v1/namespaces/default/pods/life") as resp:
            assert resp.status == 200
        await eventually(lambda: lab.server.store.get("pods", "default", "life") is None, "the kubelet's delete")
    return {"uid": created["metadata"]["uid"], "running": stored}


def _writes(lab: Lab, user: str, resource: str, verb: str, subresource: str = "") -> list[Record]:
    return [r for r in lab.auditor.records if r.request.requester.user.username == user
            and r.request.resource == resource and r.request.verb == verb and r.request.subresource == subresource]


async def test_the_kubelet_patches_pod_status_as_its_node(lab: Lab, life: dict[str, Any]):
    patches = [r for r in _writes(lab, "system:node:pair-worker", "pods", "patch", "status")
               if r.request.name == "life"]
    assert len(patches) == 2  # ContainerCreating, then Running
    for record in patches:
        request = record.request
        assert request.requester == identity.kubelet(WORKER, WORKER_IP)
        assert request.requester.user.groups == ("system:nodes", "system:authenticated")
        assert request.requester.user_agent == "kubelet/v1.34.1 (linux/amd64) kubernetes/observa"
        assert request.requester.source_ips == (WORKER_IP,)
        assert request.request_uri == "/api/v1/namespaces/default/pods/life/status"
        assert (request.namespace, request.api_group, request.api_version) == ("default", "", "v1")
        body = request.request_object
        assert body["metadata"] == {"uid": life["uid"]}  # PatchPodStatus's uid precondition
        assert list(body) == ["metadata", "status"] and list(body["status"]) == sorted(body["status"])
        assert body["status"]["$setElementOrder/conditions"] == [
            {"type": t} for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                                  "PodScheduled")]
        assert record.code == 200 and record.response["kind"] == "Pod"
    assert patches[0].request.request_object["status"]["hostIP"] == WORKER_IP
    assert patches[1].request.request_object["status"]["phase"] == "Running"
    assert patches[1].response["status"] == life["running"]["status"]


async def test_the_kubelet_writes_events_lease_node_status_and_the_final_delete(lab: Lab, life: dict[str, Any]):
    user = "system:node:pair-worker"
    events = [r for r in _writes(lab, user, "events", "create") if r.request.request_object["involvedObject"]
              ["name"] == "life"]
    assert [r.request.request_object["reason"] for r in events][:2] == ["Pulling", "Pulled"]
    assert all(r.request.request_uri == "/api/v1/namespaces/default/events" and r.code == 201 for r in events)
    assert events[0].request.request_object["kind"] == "Event"
    deletes = [r for r in _writes(lab, user, "pods", "delete") if r.request.name == "life"]
    assert len(deletes) == 1
    assert deletes[0].request.request_uri == "/api/v1/namespaces/default/pods/life"
    assert deletes[0].request.request_object == {"kind": "DeleteOptions", "apiVersion": "v1",
                                                 "gracePeriodSeconds": 0, "preconditions": {"uid": life["uid"]}}
    leases = _writes(lab, user, "leases", "create") + _writes(lab, user, "leases", "update")
    assert leases and all(r.request.api_group == "coordination.k8s.io" and r.request.request_uri.startswith(
        "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases") for r in leases)
    images = _writes(lab, user, "nodes", "patch", "status")
    assert images and images[0].request.request_uri == "/api/v1/nodes/pair-worker/status"
    assert set(images[0].request.request_object) == {"status"}
    # nothing the simulated components wrote went unaudited or came from another kubelet than the pod's node's
    assert not [r for r in lab.auditor.records if r.request.requester.user.username.startswith("system:node:")
                and r.request.name == "life" and user != r.request.requester.user.username]


async def test_the_scheduler_reaches_the_lab_with_its_token_and_agents(lab: Lab, life: dict[str, Any]):
    assert lab.server.token is None and lab.server.control_plane_token  # a plain lab, with a control-plane token
    bearer = f"Bearer {lab.server.control_plane_token}"
    bindings = [h for m, p, h in lab.headers if m == "POST" and p == "/api/v1/namespaces/default/pods/life/binding"]
    assert len(bindings) == 1
    assert bindings[0]["User-Agent"] == "kube-scheduler/v1.34.1 (linux/amd64) kubernetes/observa/scheduler"
    assert bindings[0]["Authorization"] == bearer
    lease = [h for m, p, h in lab.headers if p.startswith("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases")]
    assert lease and {h["User-Agent"] for h in lease} == {
        "kube-scheduler/v1.34.1 (linux/amd64) kubernetes/observa/leader-election"}
    assert all(h["Authorization"] == bearer for h in lease)
    watches = [h for m, p, h in lab.headers if m == "GET" and p == "/api/v1/nodes"]
    assert watches and all(h["User-Agent"] == identity.SCHEDULER_AGENT for h in watches)


async def test_a_plain_lab_still_demands_nothing_of_anyone_else(lab: Lab):
    async with aiohttp.ClientSession(base_url=lab.server.url) as http:
        async with http.get("/api/v1/namespaces/default/pods") as resp:
            assert resp.status == 200
        async with http.get("/api/v1/nodes", headers={"Authorization": "Bearer not-the-token"}) as resp:
            assert resp.status == 200


async def test_observatorys_clients_send_its_agent(lab: Lab):
    connection = await connect(str(lab.server.kubeconfig_path))
    try:
        await connection.api.call_api("/version", "GET", _preload_content=False)
    finally:
        await connection.close()
    agents = [h.get("User-Agent") for m, p, h in lab.headers if p == "/version"]
    assert agents[-1] == observatory_agent()
    assert agents[-1].startswith("observatory/v") and "Authorization" not in [
        h for m, p, h in lab.headers if p == "/version"][-1]


def _registry_lab() -> tuple[Registry, CollectingAuditor, Clients]:
    from observatory.lab import scenarios
    from observatory.lab.server import apply_manifests
    registry = Registry(Store(1000, 100))
    apply_manifests(registry, scenarios.load_scenario("pair"), "pair")
    auditor = CollectingAuditor()
    return registry, auditor, Clients(registry, auditor)


async def test_node_lifecycle_patches_taints_as_its_service_account():
    registry, auditor, clients = _registry_lab()
    node = json.loads(json.dumps(registry.get(CORE_V1["nodes"], "", WORKER)))
    node["spec"]["unschedulable"] = True
    node = registry.update(CORE_V1["nodes"], "", WORKER, node)
    NodeLifecycle(clients.controller(identity.NODE_CONTROLLER))._reconcile(node)
    (record,) = auditor.records
    request = record.request
    assert request.requester.user.username == "system:serviceaccount:kube-system:node-controller"
    assert request.requester.user_agent == ("kube-controller-manager/v1.34.1 (linux/amd64) kubernetes/observa/"
                                            "system:serviceaccount:kube-system:node-controller")
    assert request.requester.source_ips == (CONTROL_PLANE_IP,)
    assert (request.verb, request.request_uri, request.subresource) == ("patch", "/api/v1/nodes/pair-worker", "")
    assert request.request_object == {"metadata": {"resourceVersion": node["metadata"]["resourceVersion"]},
                                      "spec": {"taints": [{"effect": "NoSchedule",
                                                           "key": "node.kubernetes.io/unschedulable"}]}}
    assert registry.get(CORE_V1["nodes"], "", WORKER)["spec"]["taints"] == [
        {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]


async def test_a_refused_write_is_finished_with_its_status_and_raised_again():
    registry, auditor, _clients = _registry_lab()
    client = AuditedClient(registry, identity.kubelet(WORKER, WORKER_IP), auditor)
    with pytest.raises(errors.StatusError) as refused:
        client.patch(CORE_V1["pods"], "default", "gone", "application/strategic-merge-patch+json",
                     b'{"metadata":{"uid":"u"}}', subresource="status")
    (record,) = auditor.records
    assert record.code == 404 == refused.value.code
    assert record.response == refused.value.status and record.response["reason"] == "NotFound"
    assert record.request.request_uri == "/api/v1/namespaces/default/pods/gone/status"


async def test_no_auditor_means_the_registry_itself():
    registry = Registry(Store(10, 10))
    clients = Clients(registry)
    assert clients.kubelet(WORKER) is registry and clients.controller(identity.POD_GARBAGE_COLLECTOR) is registry
