"""Connection facts for the equivalent commands (kubeconfig, auth kind, CA, insecure) and the secrets to redact,
for a kubeconfig of each auth kind, in-cluster, and through ClusterSource.commands_context()."""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path

import pytest
import yaml

from observatory.kube import connect as connect_module
from observatory.kube.connect import connect
from observatory.kube.credentials import auth_kind, cluster_tls
from observatory.kube.source import ClusterSource
from observatory.lab import security
from observatory.model.commands import CommandsContext
from observatory.model.exchange import BindingExchange
from observatory.model.transcript import redact

TOKEN = "s3cret-token-of-the-user-0123"
PASSWORD = "pa55word-of-the-user"
FILE_TOKEN = "token-from-a-file-4567"
EXEC_TOKEN = "token-from-exec-plugin-89ab"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
    monkeypatch.setattr(connect_module, "SERVICE_ACCOUNT_DIR", tmp_path / "no-service-account")


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A CA, and a certificate with its key (used here as a client certificate)."""
    return security.make_tls(["127.0.0.1"], tmp_path_factory.mktemp("pki"))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def kubeconfig(path: Path, user: dict, *, server: str = "https://127.0.0.1:6443", cluster: dict | None = None,
               name: str = "ctx") -> Path:
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": name,
           "clusters": [{"name": f"{name}-cluster", "cluster": {"server": server, **(cluster or {})}}],
           "users": [{"name": f"{name}-user", "user": user}],
           "contexts": [{"name": name, "context": {"cluster": f"{name}-cluster", "user": f"{name}-user"}}]}
    path.write_text(yaml.safe_dump(doc))
    return path


async def facts(path: Path | str):
    conn = await connect(str(path))
    await conn.close()
    return conn


def exchange() -> BindingExchange:
    from datetime import UTC, datetime
    return BindingExchange(pod="sched-lab/manual", node="pair-worker", method="POST",
                           path="/api/v1/namespaces/sched-lab/pods/manual/binding",
                           request_headers=(("Content-Type", "application/json"),), request_body=b'{"kind":"Binding"}',
                           http_version="HTTP/1.1", status=201, reason="Created", response_headers=(),
                           response_body=b"{}", sent_at=datetime(2026, 11, 29, tzinfo=UTC), elapsed_ms=1.0)


# -- auth kinds from the user entry ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("user", "kind"), [
    ({}, "none"),
    (None, "none"),
    ({"token": "abcd"}, "token"),
    ({"tokenFile": "/var/token"}, "token"),
    ({"auth-provider": {"name": "oidc", "config": {"id-token": "x"}}}, "token"),
    ({"client-certificate-data": "Y2VydA==", "client-key-data": "a2V5"}, "client-certificate"),
    ({"client-certificate": "/c.crt", "client-key": "/c.key"}, "client-certificate"),
    ({"username": "admin", "password": "pw"}, "basic"),
    ({"exec": {"command": "aws", "apiVersion": "client.authentication.k8s.io/v1beta1"}}, "exec"),
    ({"exec": {"command": "x"}, "token": "abcd"}, "exec"),
    ({"client-certificate-data": "Y2VydA==", "client-key-data": "a2V5", "token": "abcd"}, "client-certificate"),
])
def test_auth_kind(user, kind):
    assert auth_kind(user) == kind


def test_cluster_tls():
    assert cluster_tls({"server": "https://x"}) == (False, False)
    assert cluster_tls({"certificate-authority-data": "Y2E="}) == (True, False)
    assert cluster_tls({"certificate-authority": "/ca.crt", "insecure-skip-tls-verify": False}) == (True, False)
    assert cluster_tls({"insecure-skip-tls-verify": True}) == (False, True)


# -- kubeconfigs of each kind, through connect() ---------------------------------------------------------------------


async def test_no_user_credentials_over_plain_http(tmp_path):
    path = kubeconfig(tmp_path / "kc", {}, server="http://127.0.0.1:8080")
    conn = await facts(path)
    assert (conn.kubeconfig, conn.auth, conn.ca, conn.insecure) == (str(path), "none", False, False)
    assert conn.kubeconfig_files == (str(path),)
    assert conn.secrets == frozenset()


async def test_token_with_a_ca(tmp_path, pki):
    path = kubeconfig(tmp_path / "kc", {"token": TOKEN}, cluster={"certificate-authority-data": b64(pki.ca_pem)})
    conn = await facts(path)
    assert (conn.kubeconfig, conn.auth, conn.ca, conn.insecure) == (str(path), "token", True, False)
    assert TOKEN in conn.secrets
    assert TOKEN not in repr(conn) and "secrets" not in repr(conn)


async def test_token_file_relative_to_the_kubeconfig(tmp_path):
    (tmp_path / "tok").write_text(FILE_TOKEN + "\n")
    path = kubeconfig(tmp_path / "kc", {"tokenFile": "tok"}, cluster={"insecure-skip-tls-verify": True})
    conn = await facts(path)
    assert (conn.auth, conn.ca, conn.insecure) == ("token", False, True)
    assert FILE_TOKEN in conn.secrets


async def test_client_certificate(tmp_path, pki):
    key = pki.key_path.read_bytes()
    user = {"client-certificate-data": b64(pki.cert_path.read_bytes()), "client-key-data": b64(key)}
    path = kubeconfig(tmp_path / "kc", user, cluster={"certificate-authority-data": b64(pki.ca_pem)})
    conn = await facts(path)
    assert (conn.auth, conn.ca) == ("client-certificate", True)
    assert b64(key) in conn.secrets
    body = [line for line in key.decode().splitlines() if not line.startswith("-----")]
    assert body and all(line in conn.secrets for line in body)
    # The PEM as it would appear inside a JSON string (newlines escaped) is redacted line by line.
    assert all(line not in redact(key.decode().replace("\n", "\\n"), conn.secrets) for line in body)


async def test_basic_auth(tmp_path):
    path = kubeconfig(tmp_path / "kc", {"username": "admin", "password": PASSWORD}, server="http://127.0.0.1:8080")
    conn = await facts(path)
    assert conn.auth == "basic"
    assert PASSWORD in conn.secrets
    assert b64(f"admin:{PASSWORD}".encode()) in conn.secrets  # the Authorization value sent


async def test_exec_plugin(tmp_path):
    plugin = tmp_path / "plugin.py"
    credential = {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                  "status": {"token": EXEC_TOKEN}}
    plugin.write_text(f"import json\nprint(json.dumps({credential!r}))\n")
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                     "args": [str(plugin)]}}
    conn = await facts(kubeconfig(tmp_path / "kc", user, server="http://127.0.0.1:8080"))
    assert conn.auth == "exec"
    assert EXEC_TOKEN in conn.secrets  # the token the plugin handed out at connect time


async def test_merged_kubeconfig_files(tmp_path, monkeypatch):
    a = kubeconfig(tmp_path / "a", {"token": TOKEN}, name="first")
    b = kubeconfig(tmp_path / "b", {"password": PASSWORD, "username": "u"}, name="second")
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(a), str(b)]))
    conn = await connect()
    await conn.close()
    assert conn.kubeconfig_files == (str(a), str(b))
    assert conn.kubeconfig == os.pathsep.join([str(a), str(b)])
    assert conn.context == "first" and conn.auth == "token"
    assert {TOKEN, PASSWORD} <= conn.secrets  # every user's credentials, not just the current one's
    # kubectl --kubeconfig takes one file: with several, the commands leave it out.
    assert ClusterSource(conn).commands_context().kubeconfig is None


async def test_in_cluster(tmp_path, monkeypatch, pki):
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text(FILE_TOKEN)
    (sa / "ca.crt").write_bytes(pki.ca_pem)
    monkeypatch.setattr(connect_module, "SERVICE_ACCOUNT_DIR", sa)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    conn = await connect()
    await conn.close()
    assert (conn.kubeconfig, conn.kubeconfig_files, conn.auth, conn.ca, conn.insecure) == (None, (), "token", True,
                                                                                           False)
    assert FILE_TOKEN in conn.secrets
    context = ClusterSource(conn).commands_context()
    assert (context.kubeconfig, context.context, context.auth) == (None, "", "token")


# -- what the UI gets --------------------------------------------------------------------------------------------------


async def test_commands_context_of_a_cluster_source(tmp_path, pki):
    path = kubeconfig(tmp_path / "kc", {"token": TOKEN}, cluster={"certificate-authority-data": b64(pki.ca_pem)})
    conn = await facts(path)
    source = ClusterSource(conn)
    context = source.commands_context()
    assert context == CommandsContext(server="https://127.0.0.1:6443", context="ctx", kubeconfig=str(path),
                                      auth="token", ca=True, insecure=False)
    assert source.secrets == conn.secrets and TOKEN in source.secrets
    commands = context.commands(exchange())
    assert f"kubectl --kubeconfig {path} --context ctx create --raw " \
           "/api/v1/namespaces/sched-lab/pods/manual/binding -f binding.json" in commands.kubectl
    assert '-H "Authorization: Bearer $TOKEN"' in commands.curl and '--cacert "$CA_CERT"' in commands.curl
    assert TOKEN not in commands.curl + commands.kubectl


def test_commands_context_refuses_an_unknown_auth_kind():
    with pytest.raises(ValueError, match="auth must be one of"):
        CommandsContext(server="https://x", auth="kerberos")
