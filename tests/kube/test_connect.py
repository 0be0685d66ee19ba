"""Connecting: kubeconfig files and KUBECONFIG lists, token auth over TLS, in-cluster, and every ConnectError."""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path

import pytest
import yaml

from observatory.embedded import EmbeddedLab
from observatory.kube import connect as connect_module
from observatory.kube.connect import LAB_HINT, ConnectError, check_reachable, connect, find_kubeconfig, in_cluster
from observatory.lab.kubeconfig import write_kubeconfig
from tests.kube.helpers import closed_port, loopback_url, rewrite_kubeconfig, silent_server

TOKEN = "s3cret-token-never-shown"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """No KUBECONFIG, an empty HOME and no service account, unless a test sets them."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
    monkeypatch.setattr(connect_module, "SERVICE_ACCOUNT_DIR", tmp_path / "no-service-account")
    return home


def assert_paragraph(exc: ConnectError, *needles: str) -> str:
    text = str(exc)
    assert "\n" not in text and text == " ".join(text.split())
    assert text.endswith(LAB_HINT)
    assert "Traceback" not in text and "ConfigException" not in text and "{'" not in text and "Error(" not in text
    assert TOKEN not in text and TOKEN not in repr(exc)
    for needle in needles:
        assert needle in text, (needle, text)
    return text


def write_yaml(path: Path, doc: dict) -> Path:
    path.write_text(yaml.safe_dump(doc))
    return path


# -- finding the files -------------------------------------------------------------------------------------------


def test_find_kubeconfig_order(tmp_path, monkeypatch, isolated_env):
    assert find_kubeconfig(None) is None
    home_config = isolated_env / ".kube" / "config"
    home_config.parent.mkdir()
    home_config.write_text("")
    assert find_kubeconfig(None) == [str(home_config)]
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("")
    b.write_text("")
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join(["", str(a), str(tmp_path / "missing"), "", str(b), str(a)]))
    assert find_kubeconfig(None) == [str(a), str(b)]
    assert find_kubeconfig(str(tmp_path / "explicit")) == [str(tmp_path / "explicit")]
    # KUBECONFIG set but naming no existing file: nothing (kubectl does not fall back to ~/.kube/config).
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    assert find_kubeconfig(None) is None


def test_in_cluster_needs_env_and_token(tmp_path, monkeypatch):
    sa = tmp_path / "sa"
    sa.mkdir()
    monkeypatch.setattr(connect_module, "SERVICE_ACCOUNT_DIR", sa)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    assert not in_cluster()
    (sa / "token").write_text("t")
    assert in_cluster()
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "")
    assert not in_cluster()


# -- connecting --------------------------------------------------------------------------------------------------


async def test_kubeconfig_with_a_context_namespace(lab, tmp_path):
    path = write_kubeconfig(tmp_path / "kc-ns", lab.url, namespace="sched-lab")
    conn = await connect(str(path))
    try:
        assert (conn.context, conn.server, conn.namespace, conn.source) == (
            "observatory-lab", lab.url, "sched-lab", "kubeconfig")
        await check_reachable(conn)
    finally:
        await conn.close()
    conn = await connect(str(path), namespace="default")
    assert conn.namespace == "default"
    await conn.close()


async def test_context_without_namespace_defaults_to_default(lab, tmp_path):
    doc = yaml.safe_load(lab.kubeconfig_path.read_text())
    del doc["contexts"][0]["context"]["namespace"]
    conn = await connect(str(write_yaml(tmp_path / "kc", doc)))
    assert conn.namespace == "default"
    await conn.close()


async def test_kubeconfig_list_context_in_one_file_cluster_and_user_in_the_other(lab, tmp_path, monkeypatch):
    doc = yaml.safe_load(lab.kubeconfig_path.read_text())
    contexts = write_yaml(tmp_path / "contexts", {
        "apiVersion": "v1", "kind": "Config", "current-context": "team",
        "contexts": [{"name": "team", "context": {"cluster": "observatory-lab", "user": "observatory-lab",
                                                  "namespace": "sched-lab"}}]})
    credentials = write_yaml(tmp_path / "credentials", {
        "apiVersion": "v1", "kind": "Config", "clusters": doc["clusters"], "users": doc["users"],
        "contexts": [{"name": "other", "context": {"cluster": "observatory-lab", "user": "observatory-lab"}}],
        "current-context": "other"})
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(contexts), str(tmp_path / "gone"), str(credentials)]))
    conn = await connect()
    try:
        # kubectl: the first file's current-context wins, though the second file sets one too.
        assert (conn.context, conn.server, conn.namespace) == ("team", lab.url, "sched-lab")
        await check_reachable(conn)
    finally:
        await conn.close()
    conn = await connect(context="other")
    assert (conn.context, conn.namespace) == ("other", "default")
    await conn.close()


async def test_kubeconfig_list_current_context_only_in_the_second_file(lab, tmp_path, monkeypatch):
    doc = yaml.safe_load(lab.kubeconfig_path.read_text())
    doc.pop("current-context")
    doc["contexts"][0]["context"]["namespace"] = "sched-lab"
    first = write_yaml(tmp_path / "first", doc)
    # The second file also defines a cluster of the same name pointing nowhere: the first definition wins.
    second = write_yaml(tmp_path / "second", {
        "apiVersion": "v1", "kind": "Config", "current-context": "observatory-lab",
        "clusters": [{"name": "observatory-lab", "cluster": {"server": f"http://127.0.0.1:{closed_port()}"}}]})
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(first), str(second)]))
    conn = await connect()
    try:
        assert (conn.context, conn.server, conn.namespace) == ("observatory-lab", lab.url, "sched-lab")
        await check_reachable(conn)
    finally:
        await conn.close()


async def test_token_auth_over_tls(tls_lab, tmp_path):
    assert tls_lab.url.startswith("https://") and tls_lab.token
    path = rewrite_kubeconfig(tls_lab.kubeconfig_path, tmp_path / "kc", server=loopback_url(tls_lab.url),
                              namespace="sched-lab")
    conn = await connect(str(path))
    try:
        assert conn.namespace == "sched-lab" and conn.server.startswith("https://127.0.0.1:")
        assert tls_lab.token not in repr(conn)
        await check_reachable(conn)
    finally:
        await conn.close()


async def test_rejected_token_is_one_sentence_without_the_token(tls_lab, tmp_path):
    path = rewrite_kubeconfig(tls_lab.kubeconfig_path, tmp_path / "kc", server=loopback_url(tls_lab.url),
                              token=TOKEN)
    conn = await connect(str(path))
    try:
        with pytest.raises(ConnectError) as exc:
            await check_reachable(conn)
    finally:
        await conn.close()
    assert exc.value.reason == "unauthorized"
    assert_paragraph(exc.value, "401 Unauthorized", "rejected the credentials", 'context "observatory-lab"')


async def test_tls_verification_failure(tls_lab, tmp_path):
    path = rewrite_kubeconfig(tls_lab.kubeconfig_path, tmp_path / "kc", server=loopback_url(tls_lab.url),
                              drop_ca=True)
    conn = await connect(str(path))
    try:
        with pytest.raises(ConnectError) as exc:
            await check_reachable(conn)
    finally:
        await conn.close()
    assert exc.value.reason == "tls"
    assert_paragraph(exc.value, "TLS certificate", "could not be verified", conn.server)


async def test_in_cluster_configuration(tls_lab, tmp_path, monkeypatch):
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text(tls_lab.token)
    (sa / "ca.crt").write_bytes(tls_lab.ca_pem)
    (sa / "namespace").write_text("sched-lab\n")
    monkeypatch.setattr(connect_module, "SERVICE_ACCOUNT_DIR", sa)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", tls_lab.url.rsplit(":", 1)[1])
    assert in_cluster() and find_kubeconfig(None) is None
    conn = await connect()
    try:
        assert (conn.source, conn.context, conn.namespace) == ("in-cluster", "in-cluster", "sched-lab")
        await check_reachable(conn)
    finally:
        await conn.close()


# -- reachability failures ---------------------------------------------------------------------------------------


async def test_connection_refused(tmp_path):
    server = f"http://127.0.0.1:{closed_port()}"
    conn = await connect(str(write_kubeconfig(tmp_path / "kc", server, token=TOKEN)))
    try:
        with pytest.raises(ConnectError) as exc:
            await check_reachable(conn)
    finally:
        await conn.close()
    assert exc.value.reason == "refused"
    assert_paragraph(exc.value, "refused", server, 'context "observatory-lab"')


async def test_unknown_host(tmp_path):
    conn = await connect(str(write_kubeconfig(tmp_path / "kc", "http://observatory-no-such-host.invalid:6443")))
    try:
        with pytest.raises(ConnectError) as exc:
            await check_reachable(conn, timeout=10)
    finally:
        await conn.close()
    assert exc.value.reason == "dns"
    assert_paragraph(exc.value, "observatory-no-such-host.invalid", "could not be resolved")


async def test_timeout(tmp_path):
    server, port = await silent_server()
    try:
        conn = await connect(str(write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")))
        try:
            with pytest.raises(ConnectError) as exc:
                await check_reachable(conn, timeout=0.3)
        finally:
            await conn.close()
    finally:
        server.close()
    assert exc.value.reason == "timeout"
    assert_paragraph(exc.value, "did not answer within 0.3 s", f"127.0.0.1:{port}")


# -- kubeconfig errors -------------------------------------------------------------------------------------------


def valid_doc(server: str = "http://127.0.0.1:6443") -> dict:
    return {"apiVersion": "v1", "kind": "Config", "current-context": "ctx",
            "clusters": [{"name": "c", "cluster": {"server": server}}],
            "users": [{"name": "u", "user": {"token": TOKEN}}],
            "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}},
                         {"name": "spare", "context": {"cluster": "c", "user": "u"}}]}


async def test_missing_file(tmp_path):
    path = tmp_path / "nope" / "config"
    assert_paragraph(await refused(path, "missing-file"), str(path), "does not exist")


async def test_unparsable_yaml(tmp_path):
    path = tmp_path / "kc"
    path.write_text(f"apiVersion: v1\nusers:\n- name: u\n  user: {{token: {TOKEN}\n")
    assert_paragraph(await refused(path, "unparsable"), str(path), "not valid YAML", "line")


async def test_yaml_that_is_not_a_kubeconfig(tmp_path):
    path = tmp_path / "kc"
    path.write_text("- just\n- a list\n")
    with pytest.raises(ConnectError) as exc:
        await connect(str(path))
    assert_paragraph(exc.value, str(path), "not a kubeconfig")


async def test_unknown_context(tmp_path):
    path = write_yaml(tmp_path / "kc", valid_doc())
    with pytest.raises(ConnectError) as exc:
        await connect(str(path), context="prod")
    assert exc.value.reason == "unknown-context" and exc.value.contexts == ("ctx", "spare")
    assert_paragraph(exc.value, str(path), 'no context named "prod"', "--context", "ctx, spare")


async def test_dangling_and_missing_current_context(tmp_path):
    doc = valid_doc()
    doc["current-context"] = "deleted"
    path = write_yaml(tmp_path / "kc", doc)
    with pytest.raises(ConnectError) as exc:
        await connect(str(path))
    assert_paragraph(exc.value, str(path), '"deleted"', "current-context", "ctx, spare")
    doc["current-context"] = ""
    write_yaml(path, doc)
    assert_paragraph(await refused(path, "no-current-context"), str(path), "sets no current-context", "ctx, spare",
                     "--context NAME")


async def refused(path, reason: str) -> ConnectError:
    """The ConnectError connecting with the kubeconfig at ``path`` raises, checked to carry ``reason``."""
    with pytest.raises(ConnectError) as exc:
        await connect(str(path))
    assert exc.value.reason == reason
    return exc.value


async def test_missing_cluster(tmp_path):
    doc = valid_doc()
    doc["contexts"][0]["context"]["cluster"] = "gone"
    path = write_yaml(tmp_path / "kc", doc)
    assert_paragraph(await refused(path, "missing-cluster"), str(path), 'Context "ctx"', 'cluster "gone"',
                     "not defined")


async def test_missing_user(tmp_path):
    doc = valid_doc()
    doc["contexts"][0]["context"]["user"] = "nobody"
    path = write_yaml(tmp_path / "kc", doc)
    assert_paragraph(await refused(path, "missing-user"), str(path), 'Context "ctx"', 'user "nobody"', "not defined")


async def test_bad_certificate_data(tmp_path):
    doc = valid_doc("https://127.0.0.1:6443")
    doc["clusters"][0]["cluster"]["certificate-authority-data"] = "%%% not base64 %%%"
    path = write_yaml(tmp_path / "kc", doc)
    assert_paragraph(await refused(path, "bad-certificate"), str(path), "certificate-authority-data",
                     "not valid base64", 'context "ctx"')
    doc["clusters"][0]["cluster"]["certificate-authority-data"] = base64.b64encode(b"not a PEM").decode()
    write_yaml(path, doc)
    assert_paragraph(await refused(path, "bad-certificate"), str(path), "certificate authority",
                     "not a usable PEM certificate")


async def test_bad_client_key_data(tmp_path):
    doc = valid_doc("https://127.0.0.1:6443")
    doc["users"][0]["user"] = {"client-certificate-data": base64.b64encode(b"junk").decode(),
                               "client-key-data": base64.b64encode(TOKEN.encode()).decode()}
    path = write_yaml(tmp_path / "kc", doc)
    with pytest.raises(ConnectError) as exc:
        await connect(str(path))
    assert exc.value.reason == "bad-certificate"
    text = assert_paragraph(exc.value, str(path), "client certificate and key", "cannot be used")
    assert doc["users"][0]["user"]["client-key-data"] not in text


async def test_no_kubeconfig_at_all():
    with pytest.raises(ConnectError) as exc:
        await connect()
    assert exc.value.reason == "no-kubeconfig"
    assert_paragraph(exc.value, "No kubeconfig was found", "KUBECONFIG is not set", "~/.kube/config", "--kubeconfig")


async def test_empty_kubeconfig(tmp_path):
    path = tmp_path / "kc"
    path.write_text("")
    with pytest.raises(ConnectError) as exc:
        await connect(str(path))
    assert_paragraph(exc.value, str(path), "empty")


# -- exec credential plugins -------------------------------------------------------------------------------------


def exec_kubeconfig(tmp_path: Path, lab: EmbeddedLab, script: str) -> Path:
    plugin = tmp_path / "plugin.py"
    plugin.write_text(script)
    doc = yaml.safe_load(lab.kubeconfig_path.read_text())
    doc["clusters"][0]["cluster"]["server"] = loopback_url(lab.url)
    doc["users"][0]["user"] = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1",
                                        "command": sys.executable, "args": [str(plugin)]}}
    return write_yaml(tmp_path / "kc-exec", doc)


async def test_exec_plugin_token(tls_lab, tmp_path):
    credential = {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                  "status": {"token": tls_lab.token, "expirationTimestamp": "2999-01-01T00:00:00Z"}}
    script = f"import json\nprint(json.dumps({credential!r}))\n"
    conn = await connect(str(exec_kubeconfig(tmp_path, tls_lab, script)))
    try:
        await check_reachable(conn)  # the token is sent through the refresh hook, which reuses the unexpired one
        assert tls_lab.token not in repr(conn)
    finally:
        await conn.close()


async def test_failing_exec_plugin_shows_its_stderr(tls_lab, tmp_path):
    script = "import sys\nsys.stderr.write('error: you must be logged in to the server\\n')\nsys.exit(1)\n"
    with pytest.raises(ConnectError) as exc:
        await connect(str(exec_kubeconfig(tmp_path, tls_lab, script)))
    assert_paragraph(exc.value, 'Context "observatory-lab"', "failed with exit code 1",
                     "you must be logged in to the server")
