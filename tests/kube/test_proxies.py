"""Proxies: the cluster's ``proxy-url`` and ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``NO_PROXY`` as
kubectl honours them, compared with kubectl itself through a recording forward proxy on loopback
(tests/kube/forward_proxy.py): an http:// lab gets absolute-form GETs, an https:// one a CONNECT. A proxy that
refuses, and a proxy setting observatory cannot use, end in one clear paragraph.

Go never proxies ``localhost`` or loopback addresses from the environment, so the environment cases reach the lab as
``lab.observatory.test``, a name only the proxy resolves: reached through the proxy, or a DNS failure without it.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from observatory.kube.connect import LAB_HINT, ConnectError, check_reachable, connect
from observatory.kube.fetch import get_json
from observatory.kube.proxy import ProxyError, env_proxy
from tests.kube.forward_proxy import ForwardProxy
from tests.kube.helpers import closed_port, loopback_url
from tests.kube.kc_tools import isolated, observatory, one_paragraph, run, write_yaml

__all__ = ["isolated"]

pytestmark = pytest.mark.usefixtures("isolated")

HOST = "lab.observatory.test"


def kubeconfig(path: Path, server: str, *, lab=None, proxy_url: str | None = None,
               tls_server_name: str | None = None) -> Path:
    """A kubeconfig for ``server``; with a TLS ``lab``, its CA and token."""
    cluster: dict[str, Any] = {"server": server}
    user: dict[str, Any] = {}
    if lab is not None and lab.ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(lab.ca_pem).decode()
        user["token"] = lab.token
    if proxy_url:
        cluster["proxy-url"] = proxy_url
    if tls_server_name:
        cluster["tls-server-name"] = tls_server_name
    return write_yaml(path, {"apiVersion": "v1", "kind": "Config", "current-context": "c",
                             "clusters": [{"name": "c", "cluster": cluster}], "users": [{"name": "u", "user": user}],
                             "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u",
                                                                    "namespace": "sched-lab"}}]})


@pytest.fixture
async def proxy():
    async with ForwardProxy(hosts={HOST: "127.0.0.1"}) as server:
        yield server


async def observatory_reaches(path: Path) -> tuple[bool, str]:
    conn = await connect(str(path))
    try:
        await check_reachable(conn, timeout=15)
        return True, ""
    except ConnectError as exc:
        return False, str(exc)
    finally:
        await conn.close()


async def kubectl_reaches(kubectl: str, path: Path) -> tuple[bool, str]:
    result = await run(kubectl, "--kubeconfig", str(path), "get", "--raw", "/version", "--request-timeout=15s")
    return result.returncode == 0, result.stderr


# -- proxy-url ---------------------------------------------------------------------------------------------------


async def test_proxy_url_with_an_http_lab_sends_absolute_form_gets(lab, proxy, tmp_path, kubectl):
    path = kubeconfig(tmp_path / "kc", lab.url, proxy_url=proxy.url)  # loopback too: proxy-url applies to all
    conn = await connect(str(path))
    try:
        assert conn.proxy == proxy.url
        await check_reachable(conn)
        pod = await get_json(conn.api, "/api/v1/namespaces/sched-lab/pods/manual")
        assert pod["metadata"]["name"] == "manual"
    finally:
        await conn.close()
    ours = list(proxy.requests)
    assert ("GET", f"{lab.url}/version") in ours
    assert ("GET", f"{lab.url}/api/v1/namespaces/sched-lab/pods/manual") in ours
    proxy.requests.clear()
    assert (await kubectl_reaches(kubectl, path))[0]
    assert proxy.requests and all(m == "GET" and t.startswith(f"{lab.url}/version") for m, t in proxy.requests)


async def test_proxy_url_with_a_tls_lab_tunnels_with_connect(tls_lab, proxy, tmp_path, kubectl):
    server = loopback_url(tls_lab.url)
    path = kubeconfig(tmp_path / "kc", server, lab=tls_lab, proxy_url=proxy.url)
    assert await observatory_reaches(path) == (True, "")
    hostport = server.split("//", 1)[1]
    assert proxy.requests and set(proxy.requests) == {("CONNECT", hostport)}
    proxy.requests.clear()
    assert (await kubectl_reaches(kubectl, path))[0]
    assert proxy.requests and set(proxy.requests) == {("CONNECT", hostport)}


# -- the environment, compared with kubectl ----------------------------------------------------------------------

P, CLOSED = "{proxy}", "{closed}"
ENV_CASES = {
    # id: (server kind, environment, proxied?)
    "HTTP_PROXY": ("http-name", {"HTTP_PROXY": P}, True),
    "http_proxy": ("http-name", {"http_proxy": P}, True),
    "upper-case-wins": ("http-name", {"HTTP_PROXY": P, "http_proxy": CLOSED}, True),
    "no-scheme-means-http": ("http-name", {"HTTP_PROXY": "127.0.0.1:{port}"}, True),
    "HTTPS_PROXY-not-for-http": ("http-name", {"HTTPS_PROXY": P}, False),
    "NO_PROXY-domain": ("http-name", {"HTTP_PROXY": P, "NO_PROXY": "observatory.test"}, False),
    "NO_PROXY-dot-domain": ("http-name", {"HTTP_PROXY": P, "NO_PROXY": "example.com, .observatory.test"}, False),
    "NO_PROXY-other-port": ("http-name", {"HTTP_PROXY": P, "NO_PROXY": f"{HOST}:1"}, True),
    "NO_PROXY-star": ("http-name", {"HTTP_PROXY": P, "NO_PROXY": "*"}, False),
    "no_proxy-when-NO_PROXY-empty": ("http-name", {"HTTP_PROXY": P, "NO_PROXY": "", "no_proxy": HOST}, False),
    "loopback-never": ("http-loopback", {"HTTP_PROXY": P}, False),
    "localhost-never": ("http-localhost", {"HTTP_PROXY": P}, False),
    "HTTPS_PROXY-connect": ("https-name", {"HTTPS_PROXY": P}, True),
    "HTTP_PROXY-not-for-https": ("https-name", {"HTTP_PROXY": P}, False),
}


@pytest.mark.parametrize("case", list(ENV_CASES))
async def test_environment_proxies_as_kubectl_honours_them(lab, tls_lab, proxy, tmp_path, kubectl, monkeypatch,
                                                         case):
    kind, env, proxied = ENV_CASES[case]
    lab_port, tls_port = lab.url.rsplit(":", 1)[1], tls_lab.url.rsplit(":", 1)[1]
    servers = {"http-name": (f"http://{HOST}:{lab_port}", None), "http-loopback": (lab.url, None),
               "http-localhost": (f"http://localhost:{lab_port}", None),
               "https-name": (f"https://{HOST}:{tls_port}", tls_lab)}
    server, tls = servers[kind]
    path = kubeconfig(tmp_path / "kc", server, lab=tls, tls_server_name="localhost" if tls else None)
    closed = f"http://127.0.0.1:{closed_port()}"
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(proxy=proxy.url, closed=closed, port=proxy.port))
    ours, why = await observatory_reaches(path)
    our_requests = list(proxy.requests)
    proxy.requests.clear()
    theirs, their_why = await kubectl_reaches(kubectl, path)
    assert bool(proxy.requests) == proxied, (proxy.requests, their_why)  # kubectl, the reference
    assert bool(our_requests) == proxied, (our_requests, why)
    assert ours == theirs, (why, their_why)
    if proxied:
        expected = "CONNECT" if kind.startswith("https") else "GET"
        assert {m for m, _ in our_requests} == {expected} and all(HOST in t for _, t in our_requests)
    elif not ours:
        assert "could not be resolved" in why and HOST in why and why.endswith(LAB_HINT)


# -- proxies that refuse, settings observatory cannot use --------------------------------------------------------


async def test_proxy_that_refuses_the_connection(lab, tmp_path, kubectl):
    port = closed_port()
    path = kubeconfig(tmp_path / "kc", lab.url, proxy_url=f"http://127.0.0.1:{port}")
    reached, why = await observatory_reaches(path)
    assert not reached
    assert f"The proxy 127.0.0.1:{port} refused the connection" in why and lab.url in why and "\n" not in why
    theirs, their_why = await kubectl_reaches(kubectl, path)
    assert not theirs and "refused" in their_why
    message = one_paragraph(await observatory("why", "manual", "--kubeconfig", str(path)))
    assert f"proxy 127.0.0.1:{port} refused" in message


@pytest.mark.parametrize("status", [403, 407])
async def test_proxy_that_refuses_the_tunnel(tls_lab, tmp_path, kubectl, status):
    async with ForwardProxy(deny=status) as denying:
        server = loopback_url(tls_lab.url)
        path = kubeconfig(tmp_path / "kc", server, lab=tls_lab, proxy_url=denying.url)
        reached, why = await observatory_reaches(path)
        assert not reached
        assert f"The proxy {denying.url}" in why and f"refused to open a tunnel to {server}" in why
        assert f"CONNECT with {status}" in why
        if status == 407:
            assert "wants credentials" in why
        assert not (await kubectl_reaches(kubectl, path))[0]
        message = one_paragraph(await observatory("--kubeconfig", str(path)))
        assert f"CONNECT with {status}" in message


async def test_proxy_that_answers_in_the_servers_stead(lab, tmp_path):
    async with ForwardProxy(deny=403) as denying:
        path = kubeconfig(tmp_path / "kc", lab.url, proxy_url=denying.url)
        reached, why = await observatory_reaches(path)
    assert not reached
    assert f"The proxy {denying.url} answered GET {lab.url}/version" in why and "403" in why
    assert "instead of passing the request on" in why


async def test_proxy_password_never_shown(lab, tmp_path):
    secret = "pr0xy-passw0rd"
    port = closed_port()
    path = kubeconfig(tmp_path / "kc", lab.url, proxy_url=f"http://someone:{secret}@127.0.0.1:{port}")
    conn = await connect(str(path))
    try:
        assert secret not in repr(conn) and conn.proxy == f"http://127.0.0.1:{port}" and secret in conn.secrets
        with pytest.raises(ConnectError) as exc:
            await check_reachable(conn)
    finally:
        await conn.close()
    assert secret not in str(exc.value) and exc.value.reason == "proxy"


@pytest.mark.parametrize(("setting", "env", "needle"), [
    ({"proxy-url": "socks5://127.0.0.1:1080"}, {}, "socks5 proxy"),
    ({"proxy-url": "ftp://127.0.0.1:21"}, {}, "not an http:// or https:// proxy URL"),
    ({}, {"HTTP_PROXY": "http://127.0.0.1:3128", "REQUEST_METHOD": "GET"}, "CGI"),
])
async def test_proxy_settings_that_cannot_be_used(tmp_path, monkeypatch, setting, env, needle):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    path = kubeconfig(tmp_path / "kc", f"http://{HOST}:6443", proxy_url=setting.get("proxy-url"))
    with pytest.raises(ConnectError) as exc:
        await connect(str(path))
    text = str(exc.value)
    assert exc.value.reason == "proxy" and needle in text and "\n" not in text and text.endswith(LAB_HINT)
    assert needle in one_paragraph(await observatory("why", "manual", "--kubeconfig", str(path), env=env))


# -- the rules themselves (golang.org/x/net/http/httpproxy) for what the lab cannot show -------------------------


@pytest.mark.parametrize(("server", "no_proxy", "proxied"), [
    ("http://10.1.2.3:6443", "10.0.0.0/8", False),
    ("http://10.1.2.3:6443", "10.1.2.4", True),
    ("http://10.1.2.3:6443", "10.1.2.3:6443", False),
    ("http://10.1.2.3:6443", "10.1.2.3:443", True),
    ("http://[2001:db8::1]:6443", "2001:db8::/32", False),
    ("http://[2001:db8::1]:6443", "[2001:db8::1]:6443", False),
    ("http://[::1]:6443", "", False),
    ("http://127.8.9.10:6443", "", False),
    ("http://api.example.com", "*.example.com", False),
    ("http://example.com", "*.example.com", True),
    ("http://example.com", ".example.com", True),
    ("http://example.com", "example.com", False),
    ("http://notexample.com", "example.com", True),
    ("http://api.example.com", "example.com:80", False),
    ("http://API.Example.COM", "example.com", False),
    ("http://foo.localhost:6443", "", True),
])
def test_no_proxy_rules(server, no_proxy, proxied):
    env = {"HTTP_PROXY": "http://proxy.example:3128", "NO_PROXY": no_proxy}
    assert (env_proxy(server, env) is not None) == proxied


def test_a_cgi_environment_refuses_http_proxy_only():
    env = {"HTTP_PROXY": "http://p:1", "HTTPS_PROXY": "http://p:2", "REQUEST_METHOD": "GET"}
    with pytest.raises(ProxyError):
        env_proxy("http://api.example.com", env)
    assert env_proxy("https://api.example.com", env) == "http://p:2"
