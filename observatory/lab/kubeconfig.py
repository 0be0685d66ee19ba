"""The kubeconfig that points kubectl and observatory at a running lab.

The lab writes its own file and never touches ``~/.kube/config``: users opt in with ``kubectl --kubeconfig <file>``
or ``KUBECONFIG=<file>``. Given a path (``lab serve --kubeconfig-out PATH``, the tests), a lab writes exactly there.
Otherwise several labs may run at once (the screen's, ``observatory schedule``'s, ``lab serve``) and each keeps its
own file under the user cache directory, so that no lab ever overwrites the kubeconfig of one that still serves:

* every lab writes ``<cache>/lab/<pid>-<port>/kubeconfig`` (:func:`lab_kubeconfig_path`; its TLS material and an
  RBAC lab's per-user kubeconfigs go beside it) and removes that directory when it stops;
* the stable path ``<cache>/lab/kubeconfig`` (:func:`default_kubeconfig_path`) is a copy of one running lab's file.
  A starting lab takes it only when it is missing or its server no longer accepts connections
  (:func:`claim_default`); while its lab serves, it is never overwritten. When the lab it names stops, it moves to
  another lab that still serves, or is removed (:func:`release_default`). A lab that holds it reports it as its
  kubeconfig, else its own file;
* directories of processes that are gone (a lab killed with ``kill -9``) are removed by the next lab that starts.

Each decision is taken under an exclusive ``flock`` of ``<cache>/lab/.lock``, so two labs starting together cannot
both take the stable path.

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
import contextlib
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import platformdirs
import yaml

__all__ = [
    "LAB_NAME",
    "claim_default",
    "default_kubeconfig_path",
    "kubeconfig_dict",
    "lab_kubeconfig_path",
    "release_default",
    "remove_stale_labs",
    "serves",
    "write_kubeconfig",
]

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


# -- several labs at once ----------------------------------------------------------------------------------------

_LAB_DIR = re.compile(r"(\d+)-(\d+)")
"""The name of a lab's own directory under the cache: ``<pid>-<port>``."""
PROBE_SECONDS = 0.5
"""How long :func:`serves` waits for a lab's server to accept a connection."""


def lab_kubeconfig_path(port: int, pid: int | None = None) -> Path:
    """``<cache>/lab/<pid>-<port>/kubeconfig``: the own kubeconfig of the lab of process ``pid`` (default: this
    one) listening on ``port``."""
    return default_kubeconfig_path().parent / f"{os.getpid() if pid is None else pid}-{port}" / "kubeconfig"


def serves(path: Path) -> bool:
    """Whether the server the kubeconfig at ``path`` names accepts a TCP connection within :data:`PROBE_SECONDS`
    (False for a missing or unreadable file, or one without a usable server URL)."""
    server = _server_of(path)
    if not server:
        return False
    try:
        url = urlsplit(server)
        host, port = url.hostname, url.port or (443 if url.scheme == "https" else 80)
    except ValueError:
        return False
    if not host:
        return False
    try:
        with socket.create_connection((host, port), timeout=PROBE_SECONDS):
            return True
    except OSError:
        return False


def claim_default(own: Path, server: str) -> Path:
    """The kubeconfig path a lab serving ``server`` reports, given its own file ``own``: the stable
    :func:`default_kubeconfig_path`, when that was missing or named a lab that no longer serves (``own`` is then
    copied there), else ``own``."""
    stable = default_kubeconfig_path()
    with _locked(stable.parent):
        if _server_of(stable) == server or not serves(stable):
            _copy(own, stable)
            return stable
    return own


def release_default(own: Path, server: str) -> None:
    """For a lab that serves ``server`` and is stopping: when the stable path names it (or a lab that no longer
    serves), hand the path to the longest-running other lab that still serves, or remove it; then remove the lab's
    own directory (``own``'s parent, when it is a ``<pid>-<port>`` directory under the cache)."""
    stable = default_kubeconfig_path()
    with _locked(stable.parent):
        named = _server_of(stable)
        if named is not None and (named == server or not serves(stable)):
            successor = next((path for path in _live_labs(stable.parent) if path != own), None)
            if successor is not None:
                _copy(successor, stable)
            else:
                stable.unlink(missing_ok=True)
        if own.parent.parent == stable.parent and _LAB_DIR.fullmatch(own.parent.name):
            shutil.rmtree(own.parent, ignore_errors=True)


def remove_stale_labs() -> None:
    """Remove the ``<pid>-<port>`` directories under the cache whose process is gone (creating the cache's lab
    directory, mode 0700, when there is none yet)."""
    base = default_kubeconfig_path().parent
    with _locked(base):
        for entry in base.iterdir():
            match = _LAB_DIR.fullmatch(entry.name)
            if match and entry.is_dir() and not _alive(int(match.group(1))):
                shutil.rmtree(entry, ignore_errors=True)


def _live_labs(base: Path) -> list[Path]:
    """The own kubeconfigs of labs that still serve, longest-running (oldest file) first."""
    found = []
    for entry in base.iterdir() if base.is_dir() else ():
        match = _LAB_DIR.fullmatch(entry.name)
        path = entry / "kubeconfig"
        if match and _alive(int(match.group(1))) and serves(path):
            with contextlib.suppress(OSError):
                found.append((path.stat().st_mtime, path))
    return [path for _, path in sorted(found)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    except OSError:
        return False
    return True


def _server_of(path: Path) -> str | None:
    """The first cluster's server URL in the kubeconfig at ``path``; None when there is no readable one."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        server = doc["clusters"][0]["cluster"]["server"]
    except (OSError, ValueError, yaml.YAMLError, KeyError, IndexError, TypeError):
        return None
    return server if isinstance(server, str) else None


def _copy(source: Path, target: Path) -> None:
    """Replace ``target`` with the bytes of ``source`` at once (temporary file, mode 0600, rename)."""
    data = source.read_bytes()
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """An exclusive ``flock`` of ``directory/.lock`` (created, mode 0700 for the directory) while the block runs;
    without ``fcntl`` (not POSIX) the block runs unlocked."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    fd = os.open(directory / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
