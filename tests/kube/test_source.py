"""ClusterSource: what the UI holds. Scope, cluster-scoped kinds, binding and read-only mode."""

from __future__ import annotations

import pytest

from observatory.kube.source import ClusterSource
from tests.kube.helpers import Collector, until


async def test_attributes_and_scopes(lab, conn):
    source = ClusterSource(conn, namespace="sched-lab", lab=True)
    assert (source.context, source.server, source.namespace, source.lab, source.read_only) == (
        "observatory-lab", lab.url, "sched-lab", True, False)
    everywhere = source.with_namespace(None)
    assert everywhere.namespace is None and everywhere.lab and everywhere.connection is conn
    pods = Collector(source.stream("pods"))
    all_pods = Collector(everywhere.stream("pods"))
    nodes = Collector(source.stream("nodes"))
    try:
        await until(lambda: pods.relists() and all_pods.relists() and nodes.relists(), "three lists")
        assert set(pods.model()) == {"sched-lab/manual"}
        assert set(all_pods.model()) == {f"{p['metadata']['namespace']}/{p['metadata']['name']}"
                                         for p in lab.store.iter("pods")}
        assert set(nodes.model()) == {"/pair-control-plane", "/pair-worker"}  # nodes are always cluster-wide
    finally:
        for collector in (pods, all_pods, nodes):
            await collector.stop()
    with pytest.raises(ValueError):
        source.stream("deployments")


async def test_bind_and_read_only(lab, conn):
    read_only = ClusterSource(conn, namespace="sched-lab", read_only=True)
    refused = await read_only.bind("sched-lab", "manual", "pair-worker")
    assert refused.status == 0 and "Read-only" in refused.error
    assert not lab.store.get("pods", "sched-lab", "manual")["spec"].get("nodeName")
    source = ClusterSource(conn, namespace="sched-lab", reflector_options={"page_size": 1})
    exchange = await source.bind("sched-lab", "manual", "pair-worker")
    assert exchange.status_line == "HTTP/1.1 201 Created"
    assert lab.store.get("pods", "sched-lab", "manual")["spec"]["nodeName"] == "pair-worker"


async def test_close_closes_the_connection(lab):
    from observatory.kube.connect import connect

    source = ClusterSource(await connect(str(lab.kubeconfig_path)))
    await source.close()
    assert source.connection.api.rest_client.pool_manager.closed
