"""The kubeconfig that points kubectl and observatory at a running lab.

The lab writes its own file, by default under the user cache directory (``default_kubeconfig_path()``), and never
touches ``~/.kube/config``: users opt in with ``kubectl --kubeconfig <file>`` or ``KUBECONFIG=<file>``.

The file is a standard ``kind: Config`` (the shape client-go's ``clientcmd/api/v1`` types define and
``kubectl config view`` prints) with one cluster, one user and one context::

    apiVersion: v1
    kind: Config
    clusters:
    - name: observatory-lab
      cluster: {server: https://127.0.0.1:6443, certificate-authority-data: <base64 PEM>}
    contexts:
    - name: observatory-lab
      context: {cluster: observatory-lab, user: observatory-lab, namespace: default}
    current-context: observatory-lab
    preferences: {}
    users:
    - name: observatory-lab
      user: {token: <bearer token>}
"""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import platformdirs
import yaml

__all__ = ["LAB_NAME", "default_kubeconfig_path", "kubeconfig_dict", "write_kubeconfig"]

LAB_NAME = "observatory-lab"
"""The cluster and user name in the lab's kubeconfig, and the default context name."""


def default_kubeconfig_path() -> Path:
    """``<user cache dir>/lab/kubeconfig``, e.g. ``~/.cache/observatory/lab/kubeconfig`` on Linux."""
    return Path(platformdirs.user_cache_dir("observatory")) / "lab" / "kubeconfig"


def kubeconfig_dict(
    server: str,
    *,
    ca_pem: bytes | None = None,
    token: str | None = None,
    context: str = LAB_NAME,
    namespace: str = "default",
) -> dict[str, Any]:
    """The kubeconfig as a dict (what :func:`write_kubeconfig` writes); ValueError for a server that is no URL."""
    url = urlsplit(server) if isinstance(server, str) else None
    if url is None or url.scheme not in ("http", "https") or not url.netloc:
        raise ValueError(f"the lab server must be an http:// or https:// URL, not {server!r}")
    if not context:
        raise ValueError("the context name must not be empty")
    cluster: dict[str, Any] = {"server": server}
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode("ascii")
    user: dict[str, Any] = {"token": token} if token else {}
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": LAB_NAME, "cluster": cluster}],
        "contexts": [
            {"name": context, "context": {"cluster": LAB_NAME, "user": LAB_NAME, "namespace": namespace}},
        ],
        "current-context": context,
        "preferences": {},
        "users": [{"name": LAB_NAME, "user": user}],
    }


def write_kubeconfig(
    path: Path,
    server: str,
    *,
    ca_pem: bytes | None = None,
    token: str | None = None,
    context: str = LAB_NAME,
    namespace: str = "default",
) -> Path:
    """Write the lab's kubeconfig to ``path`` and return the path written.

    ``server`` is the lab's URL; ``ca_pem`` (PEM bytes) becomes ``certificate-authority-data``; ``token`` becomes
    the user's bearer token. Parent directories are created (mode 0700); the file is written to a temporary file in
    the same directory, given mode 0600 and renamed over ``path``, so a reader never sees half a file and an older
    file is replaced whole.

    Raises ValueError if ``path`` resolves to ``~/.kube/config`` (the user's own kubeconfig is never overwritten)
    or ``server`` is not an http(s) URL; OSError if the directory cannot be written.
    """
    path = Path(path).expanduser()
    if _is_users_kubeconfig(path):
        raise ValueError(
            f"refusing to write the lab kubeconfig to {path}: that is your own ~/.kube/config; "
            f"use a separate file such as {default_kubeconfig_path()}"
        )
    text = yaml.safe_dump(
        kubeconfig_dict(server, ca_pem=ca_pem, token=token, context=context, namespace=namespace),
        sort_keys=False,
        default_flow_style=False,
    )
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _is_users_kubeconfig(path: Path) -> bool:
    users = Path.home() / ".kube" / "config"
    try:
        return path.resolve() == users.resolve()
    except (OSError, RuntimeError):  # unresolvable (symlink loop): compare the plain absolute paths
        return path.absolute() == users.absolute()
