"""Races: concurrent Bindings of one pod, half from observatory (``kube.binding.post_binding``)
and half from kubectl (``kubectl create --raw …/binding -f binding.json``, reference §1.7), each to another node.

Exactly one gets ``201 Created``; every other gets the API server's 409 of reference §1.3, naming the winner's
node: byte-exact Status bodies for observatory, kubectl's printed error line (``Error from server (Conflict): …``,
exit code 1) for kubectl.

"Started together" is made literal: every client goes through a forward proxy on loopback (the cluster's
``proxy-url``) that holds each binding POST until all of them have arrived, then lets them all through at once, so
the requests reach the API server together whichever client started faster.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from observatory.kube.binding import post_binding
from observatory.kube.connect import connect
from observatory.kube.fetch import get_json, send_json
from tests.kube.forward_proxy import ForwardProxy
from tests.kube.kc_tools import isolated, run, write_yaml

__all__ = ["isolated"]

pytestmark = pytest.mark.usefixtures("isolated")

CLIENTS = 8
CREATED_201 = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}\n'
CONFLICT_409 = ('{{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":"Operation cannot be '
                'fulfilled on pods/binding \\"{pod}\\": pod {pod} is already assigned to node \\"{node}\\"",'
                '"reason":"Conflict","details":{{"name":"{pod}","kind":"pods/binding"}},"code":409}}\n')
KUBECTL_409 = ('Error from server (Conflict): Operation cannot be fulfilled on pods/binding "{pod}": pod {pod} is '
               'already assigned to node "{node}"\n')


def is_binding(method: str, target: str) -> bool:
    return method == "POST" and target.split("?", 1)[0].endswith("/binding")


def proxied_kubeconfig(path: Path, server: str, proxy: str) -> Path:
    return write_yaml(path, {
        "apiVersion": "v1", "kind": "Config", "current-context": "race",
        "clusters": [{"name": "lab", "cluster": {"server": server, "proxy-url": proxy}}],
        "users": [{"name": "me", "user": {}}],
        "contexts": [{"name": "race", "context": {"cluster": "lab", "user": "me", "namespace": "default"}}]})


def binding_file(folder: Path, pod: str, node: str) -> Path:
    path = folder / f"binding-{node}.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod},
                                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}))
    return path


@pytest.mark.parametrize("pod", ["race-a", "race-b"])
async def test_concurrent_binds_from_observatory_and_kubectl_give_one_201(lab, tmp_path, kubectl, pod):
    nodes = [f"race-node-{i}" for i in range(CLIENTS)]
    setup = await connect(str(lab.kubeconfig_path))
    try:
        for node in nodes:
            await send_json(setup.api, "POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                                                 "metadata": {"name": node}})
        await send_json(setup.api, "POST", "/api/v1/namespaces/default/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod},
            "spec": {"schedulerName": "nobody-at-all", "containers": [{"name": "c", "image": "pause"}]}})
    finally:
        await setup.close()

    async with ForwardProxy() as proxy:
        proxy.gate(is_binding, CLIENTS)
        kubeconfig = proxied_kubeconfig(tmp_path / "kc", lab.url, proxy.url)
        conn = await connect(str(kubeconfig))
        ours, theirs = nodes[: CLIENTS // 2], nodes[CLIENTS // 2:]
        try:
            async def by_kubectl(node: str):
                return await run(kubectl, "--kubeconfig", str(kubeconfig), "create", "--raw",
                                 f"/api/v1/namespaces/default/pods/{pod}/binding", "-f",
                                 str(binding_file(tmp_path, pod, node)))

            results = await asyncio.wait_for(asyncio.gather(
                *(post_binding(conn.api, "default", pod, node) for node in ours),
                *(by_kubectl(node) for node in theirs)), timeout=120)
            winner = (await get_json(conn.api, f"/api/v1/namespaces/default/pods/{pod}"))["spec"]["nodeName"]
        finally:
            await conn.close()
        assert proxy.held == CLIENTS  # all of them waited at the barrier, then went together

    exchanges, processes = results[: CLIENTS // 2], results[CLIENTS // 2:]
    assert all(e.error is None for e in exchanges), [e.error for e in exchanges]
    created = [e.node for e in exchanges if e.status == 201] + \
        [node for node, p in zip(theirs, processes, strict=True) if p.returncode == 0]
    assert created == [winner], (created, winner)
    conflict = CONFLICT_409.format(pod=pod, node=winner).encode()
    for exchange in exchanges:
        if exchange.node == winner:
            assert (exchange.status_line, exchange.response_body) == ("HTTP/1.1 201 Created", CREATED_201)
        else:
            assert (exchange.status, exchange.reason, exchange.response_body) == (409, "Conflict", conflict)
    for node, process in zip(theirs, processes, strict=True):
        if node == winner:
            assert (process.returncode, process.stdout.encode(), process.stderr) == (0, CREATED_201, "")
        else:
            assert (process.returncode, process.stdout) == (1, "")
            assert process.stderr == KUBECTL_409.format(pod=pod, node=winner)
