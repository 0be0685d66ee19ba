"""Kubeconfig edge cases: each ends in a clear message or a choice, never a traceback, from
``connect()`` and from the installed command (``observatory``, ``observatory why``).

* a missing, empty or dangling ``current-context``: the contexts are listed with "use --context NAME", and
  ``--context`` works;
* several files in ``KUBECONFIG``: observatory's merged view is compared with ``kubectl config view -o json --raw``
  (and ``--minify``, ``--flatten``) run with the same ``KUBECONFIG``: kubectl is the reference;
* TLS and CA errors: an unknown CA, a wrong host name, a certificate-authority file that cannot be read; a refused
  connection.

Exec credential plugins are in test_exec_plugins.py, proxies in test_proxies.py.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from observatory import cli
from observatory.kube.connect import LAB_HINT, ConnectError, check_reachable, connect
from observatory.kube.kubeconfig import load_kubeconfig
from observatory.lab import security
from tests.kube.helpers import closed_port, loopback_url
from tests.kube.kc_tools import isolated, kubectl_json, observatory, one_paragraph, run, write_yaml

__all__ = ["isolated"]

pytestmark = pytest.mark.usefixtures("isolated")

CASES = ("missing", "empty", "dangling")


def two_contexts(server: str, case: str) -> dict[str, Any]:
    """Contexts ``alpha`` (namespace sched-lab) and ``beta`` (no namespace) on ``server``; the current-context
    is missing, empty or names a context that does not exist."""
    doc: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "lab", "cluster": {"server": server}}],
        "users": [{"name": "me", "user": {}}],
        "contexts": [{"name": "alpha", "context": {"cluster": "lab", "user": "me", "namespace": "sched-lab"}},
                     {"name": "beta", "context": {"cluster": "lab", "user": "me"}}]}
    if case == "empty":
        doc["current-context"] = ""
    elif case == "dangling":
        doc["current-context"] = "deleted"
    return doc


def check_choice(text: str, case: str) -> None:
    assert "\n" not in text and "Traceback" not in text and text.endswith(LAB_HINT)
    assert "alpha, beta" in text and "use --context NAME" in text
    if case == "dangling":
        assert 'no context named "deleted"' in text and "current-context" in text
    else:
        assert "sets no current-context" in text


# -- current-context: missing, empty, dangling -------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
async def test_current_context_cases_list_the_contexts_and_context_chooses(tmp_path, case):
    path = write_yaml(tmp_path / "kc", two_contexts(f"http://127.0.0.1:{closed_port()}", case))
    with pytest.raises(ConnectError) as exc:
        await connect(str(path))
    assert exc.value.reason == ("unknown-context" if case == "dangling" else "no-current-context")
    assert exc.value.contexts == ("alpha", "beta")
    check_choice(str(exc.value), case)
    conn = await connect(str(path), context="alpha")
    await conn.close()
    assert (conn.context, conn.namespace) == ("alpha", "sched-lab")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("command", [(), ("why", "manual")], ids=["observatory", "observatory-why"])
async def test_cli_current_context_cases_are_one_paragraph_with_the_choice(tmp_path, case, command):
    path = write_yaml(tmp_path / "kc", two_contexts(f"http://127.0.0.1:{closed_port()}", case))
    check_choice(one_paragraph(await observatory(*command, "--kubeconfig", str(path))), case)
    if not command:  # the same through KUBECONFIG
        check_choice(one_paragraph(await observatory(env={"KUBECONFIG": str(path)})), case)


@pytest.mark.parametrize("case", CASES)
async def test_cli_why_with_context_works_before_and_after_the_subcommand(lab, tmp_path, case):
    path = write_yaml(tmp_path / "kc", two_contexts(lab.url, case))
    for args in (("why", "manual", "--kubeconfig", str(path), "--context", "alpha", "-o", "json"),
                 ("--context", "alpha", "why", "manual", "-o", "json"),):
        result = await observatory(*args, env={"KUBECONFIG": str(path)})
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["pod"] == "sched-lab/manual"  # the namespace of context alpha


@pytest.mark.parametrize("case", CASES)
async def test_cli_screen_with_context_connects_before_the_ui(lab, tmp_path, monkeypatch, case):
    """``observatory --context NAME`` connects with that context; the app is built only after the connection
    (the UI itself is replaced by a recorder, so no terminal is needed)."""
    from observatory.ui.app import ObservatoryApp

    path = write_yaml(tmp_path / "kc", two_contexts(lab.url, case))
    seen: dict[str, Any] = {}

    async def no_ui(self, *args, **kwargs):
        conn = self.main.source.connection
        seen.update(context=conn.context, namespace=self.main.source.namespace, server=conn.server)

    monkeypatch.setattr(ObservatoryApp, "run_async", no_ui)
    code = await asyncio.to_thread(cli.main, ["--kubeconfig", str(path), "--context", "alpha"])
    assert code == 0
    assert seen == {"context": "alpha", "namespace": "sched-lab", "server": lab.url}


# -- several files in KUBECONFIG, compared with kubectl ----------------------------------------------------------


_EXEC_DEFAULTS = {"args": None, "env": None, "provideClusterInfo": False, "interactiveMode": "IfAvailable",
                  "installHint": ""}


def comparable(view: dict[str, Any]) -> dict[str, Any]:
    """A config view without what kubectl adds on its own (kind, apiVersion, preferences, exec defaults)."""
    out = {"current-context": view.get("current-context", "")}
    for section in ("clusters", "users", "contexts"):
        entries = []
        for entry in view.get(section) or []:
            entry = json.loads(json.dumps(entry))
            exec_ = (entry.get("user") or {}).get("exec")
            if exec_:
                for key, default in _EXEC_DEFAULTS.items():
                    if exec_.get(key, default) == default:
                        exec_.pop(key, None)
            entries.append(entry)
        out[section] = entries
    return out


PLUGIN = """#!{python}
import json, os, sys
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ran-by"), "a") as f:
    f.write(os.path.abspath(sys.argv[0]) + "\\n")
print(json.dumps({{"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                  "status": {{"token": "merged-exec-token"}}}}))
"""


@pytest.fixture
def merged_files(tmp_path) -> dict[str, Any]:
    """Three kubeconfig files in three folders, with overlapping names, three current-contexts ("", beta, alpha),
    and relative paths (CA, token file, exec command) that only resolve right against the file naming them."""
    pki, decoy = security.make_tls(["alpha.example"], tmp_path / "pki"), security.make_tls(["x"], tmp_path / "decoy")
    one, two, three = tmp_path / "d1" / "one.yaml", tmp_path / "d2" / "sub" / "two.yaml", tmp_path / "d3" / "three"
    (one.parent / "certs").mkdir(parents=True)
    (one.parent / "certs" / "ca.pem").write_bytes(pki.ca_pem)
    (two.parent / "certs").mkdir(parents=True)
    (two.parent / "certs" / "ca.pem").write_bytes(decoy.ca_pem)  # wrong if resolved against the other file
    (one.parent / "tokens").mkdir()
    (one.parent / "tokens" / "one").write_text("token-from-the-first-folder\n")
    plugin = two.parent / "bin" / "plugin"
    plugin.parent.mkdir()
    plugin.write_text(PLUGIN.format(python=sys.executable))
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    refused = f"http://127.0.0.1:{closed_port()}"
    write_yaml(one, {
        "apiVersion": "v1", "kind": "Config", "current-context": "",
        "clusters": [{"name": "alpha-cluster", "cluster": {"server": "https://alpha.example:6443",
                                                           "certificate-authority": "certs/ca.pem"}},
                     {"name": "shared", "cluster": {"server": "https://first.example:6443",
                                                    "insecure-skip-tls-verify": True}}],
        "users": [{"name": "alpha-user", "user": {"token": "alpha-token"}},
                  {"name": "shared-user", "user": {"tokenFile": "tokens/one"}}],
        "contexts": [{"name": "alpha", "context": {"cluster": "alpha-cluster", "user": "alpha-user",
                                                   "namespace": "a-ns"}},
                     {"name": "shared", "context": {"cluster": "shared", "user": "shared-user"}}]})
    write_yaml(two, {
        "apiVersion": "v1", "kind": "Config", "current-context": "beta",
        "clusters": [{"name": "shared", "cluster": {"server": "https://second.example:6443"}},
                     {"name": "beta-cluster", "cluster": {"server": "https://beta.example:8443", "proxy-url": refused,
                                                          "insecure-skip-tls-verify": True}}],
        "users": [{"name": "shared-user", "user": {"token": "second-token"}},
                  {"name": "beta-user", "user": {"exec": {
                      "apiVersion": "client.authentication.k8s.io/v1beta1", "command": "./bin/plugin"}}}],
        "contexts": [{"name": "beta", "context": {"cluster": "beta-cluster", "user": "beta-user", "namespace": "b-ns"}},
                     {"name": "shared", "context": {"cluster": "beta-cluster", "user": "beta-user"}}]})
    write_yaml(three, {
        "apiVersion": "v1", "kind": "Config", "current-context": "alpha",
        "contexts": [{"name": "gamma", "context": {"cluster": "shared", "user": "shared-user", "namespace": "g"}}]})
    files = [str(one), str(tmp_path / "missing"), str(two), "", str(three), str(one)]
    return {"KUBECONFIG": os.pathsep.join(files), "files": (str(one), str(two), str(three)), "pki": pki,
            "plugin": plugin}


async def test_merged_view_equals_kubectl_config_view(merged_files, kubectl, monkeypatch):
    env = {"KUBECONFIG": merged_files["KUBECONFIG"]}
    monkeypatch.setenv("KUBECONFIG", env["KUBECONFIG"])
    from observatory.kube.connect import find_kubeconfig

    files = find_kubeconfig(None)
    assert tuple(files) == merged_files["files"]  # missing and empty entries skipped, duplicates dropped
    merged = load_kubeconfig(files)
    reference = await kubectl_json(kubectl, "config", "view", "--raw", env=env)
    assert comparable(merged.view()) == comparable(reference)
    assert merged.current_context == reference["current-context"] == "beta"  # first non-empty, not the last
    for context in (None, "alpha", "shared", "gamma"):
        flags = ("--minify",) + (("--context", context) if context else ())
        minified = await kubectl_json(kubectl, "config", "view", "--raw", *flags, env=env)
        assert comparable(merged.view(minify_context=context or merged.current_context)) == comparable(minified)


@pytest.mark.parametrize("context", [None, "alpha", "shared"])
async def test_chosen_server_namespace_and_paths_equal_kubectl(merged_files, kubectl, monkeypatch, context):
    env = {"KUBECONFIG": merged_files["KUBECONFIG"]}
    monkeypatch.setenv("KUBECONFIG", env["KUBECONFIG"])
    flags = ("--context", context) if context else ()
    minified = await kubectl_json(kubectl, "config", "view", "--raw", "--minify", "--flatten", *flags, env=env)
    conn = await connect(context=context)
    await conn.close()
    assert conn.context == minified["current-context"]
    assert conn.server == minified["clusters"][0]["cluster"]["server"]
    assert conn.namespace == minified["contexts"][0]["context"].get("namespace", "default")
    merged = load_kubeconfig(list(merged_files["files"]))
    cluster_name = minified["clusters"][0]["name"]
    # --flatten embeds the CA file kubectl resolved; observatory resolved the same file.
    kubectl_ca = minified["clusters"][0]["cluster"].get("certificate-authority-data")
    ours = merged.resolved("clusters", cluster_name).get("certificate-authority")
    assert (kubectl_ca is None) == (ours is None)
    if ours:
        assert base64.b64decode(kubectl_ca) == Path(ours).read_bytes() == merged_files["pki"].ca_pem
    if context == "shared":  # the first file's user, with its token file next to the first file
        assert conn.auth == "token" and "token-from-the-first-folder" in conn.secrets


async def test_relative_exec_command_runs_from_the_folder_of_its_file(merged_files, kubectl, monkeypatch):
    """kubectl and observatory both run ``./bin/plugin`` next to the second file (not from the current folder).
    (kubectl runs exec plugins only for https:// servers, hence the https server behind a closed proxy port.)"""
    env = {"KUBECONFIG": merged_files["KUBECONFIG"]}
    monkeypatch.setenv("KUBECONFIG", env["KUBECONFIG"])
    ran_by = merged_files["plugin"].parent / "ran-by"
    conn = await connect()
    await conn.close()
    assert ran_by.read_text().splitlines() == [str(merged_files["plugin"])]
    result = await run(kubectl, "get", "--raw", "/version", "--request-timeout=10s", env=env)
    assert result.returncode == 1  # the proxy-url port is closed: the plugin ran first all the same
    assert ran_by.read_text().splitlines() == [str(merged_files["plugin"])] * 2


async def test_relative_ca_and_token_file_reach_a_tls_lab_like_kubectl(tls_lab, tmp_path, kubectl, monkeypatch):
    """Context and user in one file, the cluster in another folder's file; the CA and the token file are relative
    to the file that names each, and decoys sit where a wrong resolution would look."""
    a, b = tmp_path / "a" / "config", tmp_path / "b" / "nested" / "config"
    (a.parent / "secrets").mkdir(parents=True)
    (a.parent / "secrets" / "token").write_text(tls_lab.token)
    (b.parent / "pki").mkdir(parents=True)
    (b.parent / "pki" / "ca.crt").write_bytes(tls_lab.ca_pem)
    (a.parent / "pki").mkdir()
    (a.parent / "pki" / "ca.crt").write_bytes(security.make_tls(["x"], tmp_path / "other").ca_pem)
    (b.parent / "secrets").mkdir()
    (b.parent / "secrets" / "token").write_text("a-wrong-token")
    write_yaml(a, {"apiVersion": "v1", "kind": "Config", "current-context": "lab",
                   "contexts": [{"name": "lab",
                                 "context": {"cluster": "lab", "user": "lab", "namespace": "sched-lab"}}],
                   "users": [{"name": "lab", "user": {"tokenFile": "secrets/token"}}]})
    write_yaml(b, {"apiVersion": "v1", "kind": "Config", "clusters": [{"name": "lab", "cluster": {
        "server": loopback_url(tls_lab.url), "certificate-authority": "pki/ca.crt"}}]})
    env = {"KUBECONFIG": os.pathsep.join([str(a), str(b)])}
    monkeypatch.setenv("KUBECONFIG", env["KUBECONFIG"])
    reference = await run(kubectl, "get", "--raw", "/version", env=env)
    assert reference.returncode == 0, reference.stderr
    conn = await connect()
    try:
        await check_reachable(conn)
        assert conn.namespace == "sched-lab" and tls_lab.token in conn.secrets
    finally:
        await conn.close()


async def test_a_name_twice_in_one_file_is_refused_like_kubectl(tmp_path, kubectl):
    doc = two_contexts("http://127.0.0.1:1", "empty")
    doc["clusters"].append({"name": "lab", "cluster": {"server": "http://127.0.0.1:2"}})
    path = write_yaml(tmp_path / "kc", doc)
    reference = await run(kubectl, "--kubeconfig", str(path), "config", "view")
    assert reference.returncode == 1 and 'duplicate name "lab"' in reference.stderr
    with pytest.raises(ConnectError) as exc:
        await connect(str(path))
    assert exc.value.reason == "unparsable" and '"lab" twice' in str(exc.value) and str(path) in str(exc.value)


# -- TLS and CA errors, refused ----------------------------------------------------------------------------------


def tls_kubeconfig(path: Path, lab, *, server: str | None = None, ca: bytes | None = None,
                   ca_file: str | None = None) -> Path:
    cluster: dict[str, Any] = {"server": server or loopback_url(lab.url)}
    if ca_file is not None:
        cluster["certificate-authority"] = ca_file
    else:
        cluster["certificate-authority-data"] = base64.b64encode(ca if ca is not None else lab.ca_pem).decode()
    return write_yaml(path, {"apiVersion": "v1", "kind": "Config", "current-context": "lab",
                             "clusters": [{"name": "lab", "cluster": cluster}],
                             "users": [{"name": "lab", "user": {"token": lab.token}}],
                             "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "lab"}}]})


async def reach(path: Path) -> ConnectError:
    conn = await connect(str(path))
    try:
        with pytest.raises(ConnectError) as exc:
            await check_reachable(conn, timeout=15)
    finally:
        await conn.close()
    return exc.value


async def test_unknown_ca(tls_lab, tmp_path, kubectl):
    other = security.make_tls(["127.0.0.1"], tmp_path / "other-ca")
    path = tls_kubeconfig(tmp_path / "kc", tls_lab, ca=other.ca_pem)
    error = await reach(path)
    assert error.reason == "tls"
    assert "could not be verified" in str(error) and "certificate authority does not vouch" in str(error)
    reference = await run(kubectl, "--kubeconfig", str(path), "get", "--raw", "/version")
    assert reference.returncode == 1 and "x509" in reference.stderr
    message = one_paragraph(await observatory("why", "manual", "-n", "sched-lab", "--kubeconfig", str(path)))
    assert "TLS certificate" in message and loopback_url(tls_lab.url) in message


async def test_wrong_host_name(tls_lab, tmp_path, kubectl):
    """127.0.0.2 reaches the lab (bound to every address) but is not a name in its certificate."""
    server = "https://127.0.0.2:" + tls_lab.url.rsplit(":", 1)[1]
    path = tls_kubeconfig(tmp_path / "kc", tls_lab, server=server)
    error = await reach(path)
    assert error.reason == "tls" and server in str(error) and "mismatch" in str(error).lower()
    reference = await run(kubectl, "--kubeconfig", str(path), "get", "--raw", "/version")
    assert reference.returncode == 1 and "not 127.0.0.2" in reference.stderr
    message = one_paragraph(await observatory("--kubeconfig", str(path)))
    assert "127.0.0.2" in message and "TLS" in message


@pytest.mark.parametrize("problem", ["missing", "directory", "not-pem"])
async def test_certificate_authority_file_that_cannot_be_used(tls_lab, tmp_path, kubectl, problem):
    ca = tmp_path / "conf" / "ca.crt"
    ca.parent.mkdir()
    if problem == "directory":
        ca.mkdir()
    elif problem == "not-pem":
        ca.write_text("this is not a certificate\n")
    path = tls_kubeconfig(tmp_path / "conf" / "kc", tls_lab, ca_file="ca.crt")  # relative to the kubeconfig
    reference = await run(kubectl, "--kubeconfig", str(path), "get", "--raw", "/version")
    assert reference.returncode == 1
    with pytest.raises(ConnectError) as exc:
        await connect(str(path))
    text = str(exc.value)
    assert exc.value.reason == "bad-certificate" and "\n" not in text and text.endswith(LAB_HINT)
    expected = {"missing": f"{ca} of cluster \"lab\"", "directory": "is a directory",
                "not-pem": "not a usable PEM certificate"}[problem]
    assert expected in text
    for command in ((), ("why", "manual")):
        assert expected in one_paragraph(await observatory(*command, "--kubeconfig", str(path)))


async def test_refused_from_why(tmp_path):
    server = f"http://127.0.0.1:{closed_port()}"
    path = write_yaml(tmp_path / "kc", {**two_contexts(server, "empty"), "current-context": "beta"})
    message = one_paragraph(await observatory("why", "manual", "--kubeconfig", str(path)))
    assert "refused" in message and server in message and 'context "beta"' in message

