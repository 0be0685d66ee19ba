"""The lab through kubernetes-asyncio, loaded from the kubeconfig the lab writes, as any client would use it."""

from __future__ import annotations

import asyncio
import json

import pytest
from kubernetes_asyncio import client, config, watch
from kubernetes_asyncio.client.exceptions import ApiException

from observatory.embedded import EmbeddedLab
from observatory.settings import LabSettings
from tests.conftest import API_ONLY


async def api_client(lab: EmbeddedLab) -> client.ApiClient:
    cfg = client.Configuration()
    await config.load_kube_config(config_file=str(lab.kubeconfig_path), context="observatory-lab",
                                  client_configuration=cfg)
    return client.ApiClient(cfg)


async def test_list_then_watch_resumes_from_the_list_resource_version(lab):
    async with await api_client(lab) as api:
        core = client.CoreV1Api(api)
        pods = await core.list_namespaced_pod("sched-lab")
        assert [p.metadata.name for p in pods.items] == ["manual"]
        rv = pods.metadata.resource_version
        # A write after the list must arrive on a watch that starts from the list's resourceVersion.
        await core.create_namespaced_pod("sched-lab", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "later"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
        seen = []
        w = watch.Watch()
        async for event in w.stream(core.list_namespaced_pod, "sched-lab", resource_version=rv, timeout_seconds=2):
            seen.append((event["type"], event["object"].metadata.name))
            if event["object"].metadata.name == "later":
                w.stop()
        assert seen == [("ADDED", "later")]


async def test_watch_sees_exactly_one_modified_when_a_binding_lands(lab):
    async with await api_client(lab) as api:
        core = client.CoreV1Api(api)
        pods = await core.list_namespaced_pod("sched-lab")
        events = []

        async def collect():
            w = watch.Watch()
            async for event in w.stream(core.list_namespaced_pod, "sched-lab",
                                        resource_version=pods.metadata.resource_version, timeout_seconds=1):
                events.append((event["type"], event["object"].spec.node_name,
                               [(c.type, c.status) for c in event["object"].status.conditions or []]))

        task = asyncio.create_task(collect())
        await asyncio.sleep(0.1)
        await core.create_namespaced_pod_binding(
            "manual", "sched-lab",
            {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "manual"},
             "target": {"apiVersion": "v1", "kind": "Node", "name": "pair-worker"}},
            _preload_content=False)
        await task
        assert events == [("MODIFIED", "pair-worker", [("PodScheduled", "True")])]


async def test_watch_from_a_resource_version_older_than_the_history_gets_410(tmp_path):
    lab = EmbeddedLab(LabSettings(history_size=2, **API_ONLY), scenario="pair", kubeconfig_path=tmp_path / "kc")
    await lab.start()
    try:
        async with await api_client(lab) as api:
            core = client.CoreV1Api(api)
            for i in range(4):
                await core.create_namespaced_pod("default", {
                    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
            w = watch.Watch()
            with pytest.raises(ApiException) as exc:
                async for _ in w.stream(core.list_namespaced_pod, "default", resource_version="1", timeout_seconds=2):
                    pass
            assert exc.value.status == 410
            assert "too old resource version: 1 (" in exc.value.reason
    finally:
        await lab.stop()


async def test_binding_with_preload_content_false_returns_the_exact_bytes(lab):
    body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "manual", "namespace": "sched-lab"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "pair-worker"}}
    async with await api_client(lab) as api:
        core = client.CoreV1Api(api)
        first = await core.create_namespaced_pod_binding("manual", "sched-lab", body, _preload_content=False)
        assert first.status == 201
        assert await first.read() == (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success",'
                                      b'"code":201}\n')
        body["target"]["name"] = "pair-control-plane"
        # With _preload_content=False a 409 is data, not an exception: the raw response comes back.
        second = await core.create_namespaced_pod_binding("manual", "sched-lab", body, _preload_content=False)
        assert second.status == 409
        assert json.loads(await second.read())["message"] == (
            'Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node '
            '"pair-worker"'
        )


async def test_non_loopback_lab_over_tls_with_verification_and_token(tmp_path):
    lab = EmbeddedLab(LabSettings(**API_ONLY), host="0.0.0.0", scenario="pair", kubeconfig_path=tmp_path / "kc")
    await lab.start()
    try:
        assert lab.url.startswith("https://") and lab.token
        cfg = client.Configuration()
        await config.load_kube_config(config_file=str(lab.kubeconfig_path), client_configuration=cfg)
        assert cfg.verify_ssl and cfg.ssl_ca_cert
        cfg.host = "https://127.0.0.1:" + lab.url.rsplit(":", 1)[1]  # loopback only; the certificate names it
        async with client.ApiClient(cfg) as api:
            nodes = await client.CoreV1Api(api).list_node()
            assert [n.metadata.name for n in nodes.items] == ["pair-control-plane", "pair-worker"]
        cfg.api_key = {"BearerToken": "Bearer wrong"}
        async with client.ApiClient(cfg) as api:
            with pytest.raises(ApiException) as exc:
                await client.CoreV1Api(api).list_node()
        assert exc.value.status == 401
        assert json.loads(exc.value.body) == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                              "status": "Failure", "message": "Unauthorized",
                                              "reason": "Unauthorized", "code": 401}
    finally:
        await lab.stop()
