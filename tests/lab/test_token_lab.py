"""A token lab on loopback (``LabSettings.token``, ``lab serve --token``): a bearer token required, and
kube-apiserver's 401 for everything else; the health checks stay open to requests without credentials. It serves
HTTPS with a generated CA, because kubectl sends kubeconfig credentials only over TLS (client-go clientcmd: "only
try to read the auth information if we are secure")."""

from __future__ import annotations

import asyncio
import json
import ssl

import aiohttp
import pytest
import yaml

from observatory.embedded import EmbeddedLab
from observatory.kube.connect import check_reachable, connect
from observatory.settings import LabSettings, Settings
from tests.conftest import API_ONLY

# kube-apiserver's answer to a request it cannot authenticate (apierrors.NewUnauthorized("Unauthorized") from the
# authentication filter). The API reference does not quote it; this is upstream's body, followed by the newline
# json.Encoder adds (reference: "It is followed by a single \n").
UNAUTHORIZED = (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized",'
                b'"reason":"Unauthorized","code":401}\n')


def session(lab: EmbeddedLab) -> aiohttp.ClientSession:
    """A client that trusts the lab's CA (and sends no credentials of its own)."""
    context = ssl.create_default_context(cadata=lab.ca_pem.decode("ascii"))
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context))


async def run(*argv: str) -> tuple[int, str, str]:
    """A command run without blocking the event loop the in-process lab serves on."""
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    return proc.returncode, out.decode(), err.decode()


@pytest.fixture
async def token_lab(tmp_path):
    lab = EmbeddedLab(LabSettings(token=True, **API_ONLY), scenario="manual-binding",
                    kubeconfig_path=tmp_path / "kubeconfig")
    await lab.start()
    try:
        yield lab
    finally:
        await lab.stop()


def test_the_setting_comes_from_the_environment(monkeypatch):
    assert Settings().lab.token is False
    monkeypatch.setenv("OBSERVATORY_LAB__TOKEN", "true")
    assert Settings().lab.token is True


async def test_https_on_loopback_with_the_token_and_ca_in_the_kubeconfig(token_lab):
    assert token_lab.url.startswith("https://127.0.0.1:")
    assert token_lab.token and token_lab.ca_pem
    config = yaml.safe_load(token_lab.kubeconfig_path.read_text())
    assert config["users"][0]["user"] == {"token": token_lab.token}
    assert config["clusters"][0]["cluster"]["certificate-authority-data"]


async def test_without_the_setting_loopback_stays_plain_and_open(lab):
    assert lab.url.startswith("http://127.0.0.1:") and lab.token is None


async def test_kubectl_works_through_the_kubeconfig(token_lab, kubectl):
    code, out, err = await run(kubectl, "--kubeconfig", str(token_lab.kubeconfig_path), "get", "pods", "-A",
                               "-o", "name")
    assert (code, out) == (0, "pod/manual\n"), err


async def test_kubectl_with_another_token_is_unauthorized(token_lab, kubectl, tmp_path):
    # (With no credentials at all kubectl would prompt for a username on its stdin.)
    bare = tmp_path / "bare"
    config = yaml.safe_load(token_lab.kubeconfig_path.read_text())
    config["users"][0]["user"] = {"token": "not-the-lab-token"}
    bare.write_text(yaml.safe_dump(config))
    code, _, err = await run(kubectl, "--kubeconfig", str(bare), "get", "--raw", "/api/v1/pods")  # no discovery
    assert (code, err) == (1, "error: You must be logged in to the server (Unauthorized)\n")


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token", "Basic YWRtaW46cHc=", "Bearer", "bearer  x"])
async def test_a_request_without_the_right_token_gets_the_exact_401(token_lab, authorization):
    headers = {"Authorization": authorization} if authorization is not None else {}
    async with session(token_lab) as client:
        for path in ("/api/v1/namespaces/sched-lab/pods", "/version", "/api", "/no/such/path"):
            async with client.get(token_lab.url + path, headers=headers) as resp:
                assert resp.status == 401
                assert resp.content_type == "application/json"
                assert await resp.read() == UNAUTHORIZED


async def test_the_right_token_in_any_case_of_bearer(token_lab):
    async with session(token_lab) as client:
        for scheme in ("Bearer", "bearer", "BEARER"):
            headers = {"Authorization": f"{scheme} {token_lab.token}"}
            async with client.get(token_lab.url + "/api/v1/namespaces/sched-lab/pods/manual", headers=headers) as resp:
                assert resp.status == 200
                assert json.loads(await resp.read())["metadata"]["name"] == "manual"


async def test_health_checks_are_anonymous_but_a_wrong_token_is_still_refused(token_lab):
    async with session(token_lab) as client:
        for path in ("/healthz", "/livez", "/readyz"):
            async with client.get(token_lab.url + path) as resp:
                assert (resp.status, await resp.text()) == (200, "ok")
            async with client.get(token_lab.url + path, headers={"Authorization": "Bearer wrong"}) as resp:
                assert (resp.status, await resp.read()) == (401, UNAUTHORIZED)
            async with client.get(token_lab.url + path,
                                   headers={"Authorization": f"Bearer {token_lab.token}"}) as resp:
                assert (resp.status, await resp.text()) == (200, "ok")


async def test_observatory_connects_with_the_token(token_lab):
    conn = await connect(str(token_lab.kubeconfig_path))
    try:
        await check_reachable(conn)
        assert conn.auth == "token" and token_lab.token in conn.secrets
    finally:
        await conn.close()
