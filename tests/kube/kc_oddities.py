"""Kubeconfigs that cannot be used, one per oddity, for the tests that every command connecting to a cluster (the
screen, ``why``, ``schedule``) answers each with one paragraph and exit code 2."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

PASSWORD = "hunter2-url-password"
"""The password in the server URL of the ``userinfo-*`` cases: it must never be printed."""
TOKEN = "tok-oddities-0123456789"

COMMANDS = {"screen": [], "why": ["why", "some-pod"], "schedule": ["schedule", "--scheduler-name", "odd"]}
"""The arguments before ``--kubeconfig`` for each command that connects."""


def _config(server: str, *, cluster: dict[str, Any] | None = None, user: dict[str, Any] | None = None,
            context: dict[str, Any] | None = None, current: str | None = "c") -> dict[str, Any]:
    doc: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "k", "cluster": cluster if cluster is not None else {"server": server}}],
        "contexts": [{"name": "c", "context": context if context is not None else {"cluster": "k", "user": "u"}}],
        "users": [{"name": "u", "user": user if user is not None else {"token": TOKEN}}]}
    if current is not None:
        doc["current-context"] = current
    return doc


def cases(server: str) -> dict[str, Callable[[Path], str]]:
    """Oddity name -> a function writing that kubeconfig under a folder and returning the ``--kubeconfig`` value.
    ``server`` is an http URL where nothing listens (``http://127.0.0.1:PORT``)."""
    tls = "https://127.0.0.1:1"

    def doc(name: str, **kw: Any) -> Callable[[Path], str]:
        def write(folder: Path) -> str:
            path = folder / name
            path.write_text(yaml.safe_dump(_config(server, **kw)))
            return str(path)
        return write

    def raw(name: str, data: bytes) -> Callable[[Path], str]:
        def write(folder: Path) -> str:
            path = folder / name
            path.write_bytes(data)
            return str(path)
        return write

    def directory(folder: Path) -> str:
        (folder / "a-directory").mkdir(exist_ok=True)
        return str(folder / "a-directory")

    host = server.split("//", 1)[1]
    exec_user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "no-such-plugin-xyz",
                          "interactiveMode": "Never"}}
    return {
        "missing-file": lambda folder: str(folder / "no-such-kubeconfig"),
        "unreadable-file": directory,
        "invalid-yaml": raw("invalid-yaml", b"clusters: [a\n  b: {"),
        "not-a-mapping": raw("not-a-mapping", b"- a\n- b\n"),
        "not-utf8": raw("not-utf8", b"apiVersion: v1\nclusters: \xff\xfe\n"),
        "empty": raw("empty", b""),
        "no-current-context": doc("no-current-context", current=None),
        "missing-context": doc("missing-context", current="gone"),
        "missing-cluster": doc("missing-cluster", context={"cluster": "zz", "user": "u"}),
        "missing-user": doc("missing-user", context={"cluster": "k", "user": "zz"}),
        "empty-server": doc("empty-server", cluster={"server": ""}),
        "unsupported-scheme": doc("unsupported-scheme", cluster={"server": "ftp://127.0.0.1:21"}),
        "invalid-port": doc("invalid-port", cluster={"server": f"http://alice:{PASSWORD}@127.0.0.1:99999"}),
        "invalid-ipv6": doc("invalid-ipv6", cluster={"server": f"http://alice:{PASSWORD}@[::1:80"}),
        "bad-ca-data": doc("bad-ca-data", cluster={"server": tls, "certificate-authority-data": "not base64!"}),
        "ca-data-not-pem": doc("ca-data-not-pem", cluster={
            "server": tls, "certificate-authority-data": base64.b64encode(b"not a certificate").decode()}),
        "ca-file-missing": doc("ca-file-missing", cluster={"server": tls, "certificate-authority": "/no/ca.crt"}),
        "exec-plugin-missing": doc("exec-plugin-missing", user=exec_user),
        "token-file-missing": doc("token-file-missing", user={"tokenFile": "/no/such/token"}),
        "client-cert-missing": doc("client-cert-missing", cluster={"server": tls, "insecure-skip-tls-verify": True},
                                   user={"client-certificate": "/no/c.crt", "client-key": "/no/c.key"}),
        "userinfo-and-token": doc("userinfo-and-token", cluster={"server": f"http://alice:{PASSWORD}@{host}"}),
        "userinfo-and-exec": doc("userinfo-and-exec", cluster={"server": f"http://alice:{PASSWORD}@{host}"},
                                 user=exec_user),
    }
