"""A kubeconfig server URL with ``user:password@`` and a token: observatory sends what kubectl sends (kubectl, run
against the same recording server, is the reference), never crashes, and never shows the password."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator

import pytest
import yaml
from aiohttp import web

from observatory.kube.connect import ConnectError, check_reachable, connect
from observatory.kube.rawhttp import request
from observatory.kube.server_url import split_userinfo
from tests.kube.helpers import closed_port
from tests.kube.kc_tools import isolated, run

__all__ = ["isolated"]

pytestmark = pytest.mark.usefixtures("isolated")

PASSWORD = "hunter2-pass"
TOKEN = "token-0123456789abcdef"


class Recorder:
    """An HTTP server answering ``/version`` like an API server and keeping each request's Authorization."""

    def __init__(self) -> None:
        self.authorizations: list[str | None] = []
        self.port = 0

    async def handle(self, request: web.Request) -> web.Response:
        self.authorizations.append(request.headers.get("Authorization"))
        return web.json_response({"major": "1", "minor": "34", "gitVersion": "v1.34.1"})


@pytest.fixture
async def recorder() -> AsyncIterator[Recorder]:
    rec = Recorder()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", rec.handle)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    rec.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield rec
    finally:
        await runner.cleanup()


def kubeconfig(path, server: str, user: dict) -> str:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": server}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        "users": [{"name": "u", "user": user}]}))
    return str(path)


@pytest.mark.parametrize(("userinfo", "user"), [
    (f"alice:{PASSWORD}", {"token": TOKEN}),  # the case: the URL's credentials win over the token
    (f"al%40ice:{PASSWORD.replace('-', '%2D')}", {"token": TOKEN}),  # percent-decoded, as Go's url.Userinfo
    (f"alice:{PASSWORD}", {"username": "bob", "password": "other-password"}),
    (f"alice:{PASSWORD}", {}),
])
async def test_the_url_credentials_are_sent_as_kubectl_sends_them(tmp_path, recorder, kubectl, userinfo, user):
    config = kubeconfig(tmp_path / "kc", f"http://{userinfo}@127.0.0.1:{recorder.port}", user)
    result = await run(kubectl, "--kubeconfig", config, "get", "--raw", "/version")
    assert result.returncode == 0, result.stderr
    kubectl_sent = set(recorder.authorizations)
    recorder.authorizations.clear()
    conn = await connect(config)
    try:
        await check_reachable(conn)
        answer = await request(conn.api, "GET", "/api/v1/pods")
        assert answer.status == 200
        assert conn.server == f"http://127.0.0.1:{recorder.port}" and conn.auth == "basic"
        assert PASSWORD not in repr(conn) and PASSWORD in conn.secrets
        assert all(PASSWORD not in f"{k}: {v}" for k, v in answer.request_headers)
    finally:
        await conn.close()
    assert len(kubectl_sent) == 1
    sent = kubectl_sent.pop()
    assert sent is not None and sent.startswith("Basic ")
    assert recorder.authorizations == [sent, sent]  # /version and the list: the very header kubectl sent
    if "%40" in userinfo:
        assert base64.b64decode(sent.split()[1]).decode() == f"al@ice:{PASSWORD}"


async def test_an_unreachable_server_with_userinfo_is_one_sentence_without_the_password(tmp_path):
    config = kubeconfig(tmp_path / "kc", f"http://alice:{PASSWORD}@127.0.0.1:{closed_port()}", {"token": TOKEN})
    conn = await connect(config)
    try:
        with pytest.raises(ConnectError) as caught:
            await check_reachable(conn)
    finally:
        await conn.close()
    assert caught.value.reason == "refused"
    assert PASSWORD not in str(caught.value) and "alice" not in str(caught.value)


async def test_an_invalid_server_url_with_userinfo_is_reported_without_the_password(tmp_path):
    config = kubeconfig(tmp_path / "kc", f"http://alice:{PASSWORD}@127.0.0.1:99999", {"token": TOKEN})
    with pytest.raises(ConnectError) as caught:
        await connect(config)
    assert caught.value.reason == "invalid" and "http://127.0.0.1:99999" in str(caught.value)
    assert PASSWORD not in str(caught.value)


def test_split_userinfo():
    assert split_userinfo("https://10.0.0.1:6443") == ("https://10.0.0.1:6443", None, frozenset())
    server, header, secrets = split_userinfo("https://a%3Ab:p%40ss@[::1]:6443/prefix")
    assert server == "https://[::1]:6443/prefix"
    assert header == "Basic " + base64.b64encode(b"a:b:p@ss").decode()
    assert "p@ss" in secrets and header in secrets
    assert split_userinfo("http://only-user@h:1")[1] == "Basic " + base64.b64encode(b"only-user:").decode()
