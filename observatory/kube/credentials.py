"""What a kubeconfig's user and cluster say about authentication, for the equivalent commands and for redaction.

:func:`connect <observatory.kube.connect.connect>` puts these facts on the
:class:`~observatory.kube.connect.Connection`:

* :func:`auth_kind`: how the user authenticates, one of :data:`observatory.model.commands.AUTH_KINDS`;
* :func:`cluster_tls`: whether a CA is configured and whether TLS verification is skipped;
* :func:`kubeconfig_secrets`: every credential value written in the kubeconfig files' users;
* :func:`loaded_secrets`: the credential values kubernetes-asyncio loaded (bearer token, also from ``tokenFile``,
  an exec plugin or an auth-provider; basic-auth password; the client key), to redact wherever text is written.

Nothing here contacts the cluster; reading the token and key files is the only I/O.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kubernetes_asyncio import client

__all__ = ["auth_kind", "cluster_tls", "kubeconfig_secrets", "loaded_secrets", "token_file_secrets"]

_MIN_SECRET = 4
"""Shorter values are not redacted (see :func:`observatory.model.transcript.redact`)."""

_SECRET_KEYS = ("token", "password", "client-key-data", "client-certificate-data", "id-token", "refresh-token",
                "access-token", "client-secret")


def auth_kind(user: Mapping[str, Any] | None) -> str:
    """The kind of authentication of a kubeconfig ``users[].user`` mapping (None: no user), in this order:

    ``exec`` (an exec credential plugin), ``client-certificate`` (``client-certificate[-data]`` with
    ``client-key[-data]``; kube-apiserver tries x509 before bearer tokens, so a certificate is who the server sees
    when a token is configured too), ``token`` (``token``, ``tokenFile`` or an ``auth-provider``, which hands out a
    bearer token), ``basic`` (``username`` and ``password``), else ``none``."""
    user = user or {}
    if user.get("exec"):
        return "exec"
    if (user.get("client-certificate") or user.get("client-certificate-data")) and (
            user.get("client-key") or user.get("client-key-data")):
        return "client-certificate"
    if user.get("token") or user.get("tokenFile") or user.get("auth-provider"):
        return "token"
    if user.get("username") and user.get("password"):
        return "basic"
    return "none"


def cluster_tls(cluster: Mapping[str, Any] | None) -> tuple[bool, bool]:
    """``(ca, insecure)`` of a kubeconfig ``clusters[].cluster`` mapping: a CA is configured
    (``certificate-authority`` or ``certificate-authority-data``), and ``insecure-skip-tls-verify`` is true."""
    cluster = cluster or {}
    ca = bool(cluster.get("certificate-authority") or cluster.get("certificate-authority-data"))
    flag = cluster.get("insecure-skip-tls-verify")
    return ca, flag is True or str(flag).lower() == "true"


def kubeconfig_secrets(docs: Iterable[Mapping[str, Any] | None]) -> set[str]:
    """Every credential value in the ``users`` of the parsed kubeconfig files ``docs`` (tokens, passwords, key and
    certificate data, auth-provider tokens and any key containing ``secret``), at least 4 characters long."""
    secrets: set[str] = set()

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, Mapping):
            for k, v in node.items():
                walk(v, str(k))
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and len(node) >= _MIN_SECRET and (key in _SECRET_KEYS or "secret" in key.lower()):
            secrets.add(node)

    for doc in docs:
        for user in (doc or {}).get("users") or []:
            walk(user)
    return secrets


def token_file_secrets(user: Mapping[str, Any] | None, base: str | None) -> set[str]:
    """The content of the user's ``tokenFile`` (relative paths from ``base``, the kubeconfig's folder), stripped;
    empty when there is none or it cannot be read."""
    path = (user or {}).get("tokenFile")
    if not isinstance(path, str) or not path:
        return set()
    full = Path(os.path.expanduser(path))
    if not full.is_absolute() and base:
        full = Path(base) / full
    try:
        text = full.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return set()
    return {text} if len(text) >= _MIN_SECRET else set()


def loaded_secrets(cfg: client.Configuration) -> set[str]:
    """Every credential value a configured client holds: the ``Authorization`` value and the token or basic-auth
    blob in it (``Bearer <token>`` -> both), the password, and the client key file's PEM text with each of its
    base64 lines (a PEM's body shows up line by line in escaped JSON). A renewed exec-plugin or in-cluster token
    is not known here, only the one loaded at connect time."""
    values: set[str] = set()
    for value in [*(cfg.api_key or {}).values(), cfg.password]:
        if isinstance(value, str) and value:
            values.add(value)
            values.add(value.split(" ", 1)[-1])
    values |= _pem_secrets(getattr(cfg, "key_file", None))
    return {v for v in values if len(v) >= _MIN_SECRET}


def _pem_secrets(path: str | None) -> set[str]:
    if not path:
        return set()
    try:
        text = Path(path).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return set()
    return {text.strip(), *_body_lines(text.splitlines())} - {""}


def _body_lines(lines: Iterable[str]) -> set[str]:
    return {line.strip() for line in lines if line.strip() and not line.startswith("-----") and len(line) >= 16}
