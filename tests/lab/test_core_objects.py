"""ConfigMaps, Secrets and ServiceAccounts on the lab, driven with kubectl: created with its generators, listed
with kube-apiserver's Table columns (``printConfigMap``, ``printSecret``, ``printServiceAccount`` in
``pkg/printers/internalversion/printers.go``), and a Secret's ``stringData`` folded into ``data`` and its ``type``
defaulted as the scheme does."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess

import pytest


@pytest.fixture
def run(lab, kubectl):
    """kubectl against the lab, in a thread: the lab serves on this test's event loop."""
    async def run(*args: str) -> subprocess.CompletedProcess:
        return await asyncio.to_thread(subprocess.run, [kubectl, *args], capture_output=True, text=True, timeout=30,
                                       env={**os.environ, "KUBECONFIG": str(lab.kubeconfig_path)})
    return run


def rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.splitlines()]


async def test_kubectl_creates_and_lists_configmaps_secrets_and_serviceaccounts(run) -> None:
    for args, said in ((("create", "configmap", "c1", "--from-literal=a=b", "--from-literal=c=d"),
                        "configmap/c1 created\n"),
                       (("create", "secret", "generic", "s1", "--from-literal=p=q"), "secret/s1 created\n"),
                       (("create", "serviceaccount", "sa1"), "serviceaccount/sa1 created\n")):
        done = await run(*args)
        assert (done.returncode, done.stdout, done.stderr) == (0, said, "")
    configmaps = rows((await run("get", "configmap", "c1")).stdout)
    assert configmaps[0] == ["NAME", "DATA", "AGE"] and configmaps[1][:2] == ["c1", "2"]
    secrets = rows((await run("get", "secret", "s1")).stdout)
    assert secrets[0] == ["NAME", "TYPE", "DATA", "AGE"] and secrets[1][:3] == ["s1", "Opaque", "1"]
    accounts = rows((await run("get", "sa", "sa1")).stdout)
    assert accounts[0] == ["NAME", "SECRETS", "AGE"] and accounts[1][:2] == ["sa1", "0"]
    stored = json.loads((await run("get", "secret", "s1", "-o", "json")).stdout)
    assert base64.b64decode(stored["data"]["p"]) == b"q"


async def test_a_secrets_string_data_is_stored_as_base64_data_and_its_type_defaults_to_opaque(http) -> None:
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s2"},
            "data": {"kept": base64.b64encode(b"old").decode(), "both": base64.b64encode(b"data").decode()},
            "stringData": {"both": "string wins", "new": "x"}}
    async with http.post("/api/v1/namespaces/default/secrets", json=body) as resp:
        assert resp.status == 201, await resp.text()
        created = await resp.json()
    assert "stringData" not in created and created["type"] == "Opaque"
    assert {k: base64.b64decode(v) for k, v in created["data"].items()} == {
        "kept": b"old", "both": b"string wins", "new": b"x"}
