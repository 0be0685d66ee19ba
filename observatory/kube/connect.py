"""Kubeconfig or in-cluster configuration -> a kubernetes-asyncio ApiClient, its context and default namespace.

Where the configuration comes from, in kubectl's order (``clientcmd``'s loading rules):

1. ``--kubeconfig PATH``: that one file, which must exist;
2. else ``KUBECONFIG``: an ``os.pathsep``-separated list; empty entries and files that do not exist are skipped,
   duplicates are dropped, and ``~/.kube/config`` is not consulted while the variable is set;
3. else ``~/.kube/config`` if it exists;
4. else, inside a pod, the service account (``KUBERNETES_SERVICE_HOST``/``_PORT`` and the token file);
5. else nothing: the command line starts the embedded lab.

Several files are merged with kubernetes-asyncio's ``KubeConfigMerger``, which keeps the first definition of each
cluster, user and context as kubectl does. It lets a later file's ``current-context`` override an earlier one, where
kubectl keeps the first non-empty one, so :func:`connect` puts kubectl's choice back before selecting the context.

Every failure is a :class:`ConnectError` whose text is one paragraph for a person: what failed, the files, context
or server involved, and the hint to run ``observatory --lab``. Tokens, passwords and key material never appear in it.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import os
import re
import ssl
from urllib.parse import urlsplit
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from kubernetes_asyncio import client
from kubernetes_asyncio.config import ConfigException, load_incluster_config
from kubernetes_asyncio.config.kube_config import KubeConfigLoader, KubeConfigMerger

from observatory.kube.credentials import auth_kind, cluster_tls, loaded_secrets, token_file_secrets
from observatory.kube.transport import describe_transport_error, safe_server

__all__ = ["Connection", "ConnectError", "LAB_HINT", "check_reachable", "connect", "find_kubeconfig",
           "in_cluster"]

# kubernetes-asyncio logs exec-plugin and merge failures itself; with no handler configured Python would print them
# to stderr next to the ConnectError paragraph that already says it. An application that configures logging still
# gets the records (they propagate).
logging.getLogger("kubernetes_asyncio").addHandler(logging.NullHandler())

LAB_HINT = "Run `observatory --lab` to use the embedded lab instead."
SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
"""Where Kubernetes mounts a pod's service account: ``token``, ``ca.crt`` and ``namespace`` (patched in tests)."""

_SECRET_KEYS = ("token", "password", "client-key-data", "client-certificate-data", "id-token", "refresh-token",
                "access-token", "client-secret")


@dataclass(frozen=True)
class Connection:
    """A configured client for one cluster. ``source`` is ``"kubeconfig"`` or ``"in-cluster"``; ``server`` is the
    API server URL (no trailing slash); ``namespace`` is the default namespace (``--namespace``, else the context's,
    else ``"default"``). The client holds the credentials, so it is left out of the repr.

    Facts for the equivalent commands (:mod:`observatory.model.commands`), none a credential: ``kubeconfig_files``
    (merge order; empty in-cluster); ``kubeconfig``, the one file or the ``os.pathsep``-joined list, None
    in-cluster; ``auth``, one of ``AUTH_KINDS`` (:func:`~observatory.kube.credentials.auth_kind`; in-cluster
    ``"token"``); ``ca``, a CA is configured; ``insecure``, ``insecure-skip-tls-verify``. ``secrets`` (not in the
    repr): every credential value known at connect time, for redaction: the users' tokens, passwords, key data and
    auth-provider secrets, the ``tokenFile`` content, and what the client loaded (bearer token, client key)."""

    api: client.ApiClient = field(repr=False)
    context: str
    server: str
    namespace: str
    source: str
    kubeconfig: str | None = None
    auth: str = "none"
    ca: bool = False
    insecure: bool = False
    kubeconfig_files: tuple[str, ...] = ()
    secrets: frozenset[str] = field(default=frozenset(), repr=False)

    async def close(self) -> None:
        """Close the client's HTTP session (idempotent)."""
        await self.api.close()


class ConnectError(Exception):
    """The kubeconfig cannot be used or the cluster cannot be reached. ``str()`` is one readable paragraph ending
    with :data:`LAB_HINT`; ``reason`` is a short machine-readable code (``"missing-file"``, ``"unparsable"``,
    ``"empty"``, ``"unknown-context"``, ``"no-current-context"``, ``"missing-cluster"``, ``"missing-user"``, ``"bad-certificate"``,
    ``"no-kubeconfig"``, ``"invalid"``, ``"in-cluster"``, ``"refused"``, ``"dns"``, ``"tls"``, ``"timeout"``,
    ``"unauthorized"``, ``"http"``, ``"unreachable"``); ``contexts`` lists the context names when choosing another
    one with ``--context`` would help."""

    def __init__(self, message: str, reason: str, contexts: tuple[str, ...] = ()) -> None:
        text = " ".join(message.split())
        if LAB_HINT not in text:
            text = f"{text} {LAB_HINT}"
        super().__init__(text)
        self.reason = reason
        self.contexts = contexts

    def __repr__(self) -> str:
        return f"ConnectError({self.reason}: {self})"


def find_kubeconfig(explicit: str | None) -> list[str] | None:
    """The kubeconfig files to load, in merge order, or None when there is none at all.

    ``explicit`` (``--kubeconfig``) is returned as given, existing or not (:func:`connect` reports a missing one).
    ``KUBECONFIG``, when set and not empty, is split on ``os.pathsep``; empty entries and missing files are skipped
    and duplicates dropped, as kubectl does; if none of its files exist the answer is None (kubectl treats that as an
    empty configuration and does not fall back to ``~/.kube/config``). Otherwise ``~/.kube/config`` when it exists.
    """
    if explicit:
        return [os.path.expanduser(explicit)]
    env = os.environ.get("KUBECONFIG", "")
    if env:
        files: list[str] = []
        for entry in env.split(os.pathsep):
            path = os.path.expanduser(entry) if entry else ""
            if path and path not in files and os.path.exists(path):
                files.append(path)
        return files or None
    home = Path.home() / ".kube" / "config"
    return [str(home)] if home.exists() else None


def in_cluster() -> bool:
    """True inside a pod: ``KUBERNETES_SERVICE_HOST`` and ``KUBERNETES_SERVICE_PORT`` are set and not empty, and the
    service account token file exists."""
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST") and os.environ.get("KUBERNETES_SERVICE_PORT")
                and (SERVICE_ACCOUNT_DIR / "token").is_file())


async def connect(kubeconfig: str | None = None, context: str | None = None,
                  namespace: str | None = None) -> Connection:
    """Build a :class:`Connection` from the kubeconfig (see the module docstring) or the in-cluster configuration.

    ``context`` overrides the current-context; ``namespace`` overrides the context's namespace. Nothing is sent to
    the server (see :func:`check_reachable`); an exec credential plugin, if configured, runs here.
    Raises :class:`ConnectError` for a missing file, unparsable YAML, an unknown or unset context, a context whose
    cluster or user is not defined, a cluster without a server, unusable certificate data, and no configuration at
    all.
    """
    files = find_kubeconfig(kubeconfig)
    if files is None:
        if in_cluster():
            return await _connect_in_cluster(namespace)
        env = os.environ.get("KUBECONFIG", "")
        looked = (f"none of the files KUBECONFIG names ({env}) exists" if env
                  else "KUBECONFIG is not set and ~/.kube/config does not exist")
        raise ConnectError(f"No kubeconfig was found: {looked}, and this is not running inside a pod. Pass a file "
                           "with --kubeconfig PATH.", "no-kubeconfig")
    docs = [(path, _read_kubeconfig(path)) for path in files]
    usable = [path for path, doc in docs if doc]
    where = _files(files)
    if not usable:
        raise ConnectError(f"The kubeconfig {where} is empty: it defines no clusters, users or contexts.", "empty")
    secrets = _collect_secrets(doc for _, doc in docs)
    try:
        merged = _merge(usable)
    except (ConfigException, KeyError, TypeError, ValueError, OSError, yaml.YAMLError) as exc:
        raise ConnectError(f"The kubeconfig {where} cannot be merged: {_redact(str(exc), secrets)}.",
                           "invalid") from None
    # kubectl: the first file that sets a non-empty current-context wins (KubeConfigMerger keeps the last one).
    current = next((doc.get("current-context") for _, doc in docs if doc and doc.get("current-context")), "")
    merged.value["current-context"] = current
    names = tuple(str(c.get("name")) for c in _entries(merged, "contexts"))
    name = context or current
    if not name:
        listed = f"Contexts defined: {', '.join(names)}." if names else "It defines no contexts."
        raise ConnectError(f"The kubeconfig {where} sets no current-context, so there is no cluster to connect to. "
                           f"{listed} Choose one with --context NAME.", "no-current-context", names)
    ctx = _named(merged, "contexts", name)
    if ctx is None:
        origin = "--context" if context else "its current-context"
        listed = f"the contexts it defines are {', '.join(names)}" if names else "it defines no contexts"
        raise ConnectError(f'The kubeconfig {where} has no context named "{name}" (asked for by {origin}); '
                           f"{listed}. Choose one with --context NAME.", "unknown-context", names)
    body = ctx.get("context") or {}
    cluster_name, user_name = str(body.get("cluster") or ""), str(body.get("user") or "")
    cluster = _named(merged, "clusters", cluster_name)
    if cluster is None or not isinstance(cluster.get("cluster"), dict):
        raise ConnectError(f'Context "{name}" in the kubeconfig {where} refers to cluster "{cluster_name}", which '
                           "is not defined there.", "missing-cluster", names)
    server = str(cluster["cluster"].get("server") or "")
    if not server:
        raise ConnectError(f'Cluster "{cluster_name}" of context "{name}" in the kubeconfig {where} has no server '
                           "address.", "missing-cluster", names)
    try:
        parts = urlsplit(server)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number from 0 to 65535
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("needs http:// or https:// and a host")
    except ValueError as exc:
        raise ConnectError(f'The server address "{server}" of cluster "{cluster_name}" in the kubeconfig {where} is '
                           f"not a valid URL ({exc}).", "invalid", names) from None
    user = _named(merged, "users", user_name) if user_name else None
    if user_name and (user is None or not isinstance(user.get("user") or {}, dict)):
        raise ConnectError(f'Context "{name}" in the kubeconfig {where} refers to user "{user_name}", which is not '
                           "defined there.", "missing-user", names)
    _check_base64(cluster["cluster"], ("certificate-authority-data",), f'cluster "{cluster_name}"', name, where)
    _check_base64((user or {}).get("user") or {}, ("client-certificate-data", "client-key-data"),
                  f'user "{user_name}"', name, where)
    cfg = client.Configuration()
    try:
        loader = KubeConfigLoader(config_dict=merged, config_base_path=None, active_context=name)
        await loader.load_and_set(cfg)
    except (ConfigException, OSError, ValueError, KeyError, TypeError, AssertionError) as exc:
        detail = _redact(str(exc), secrets) or type(exc).__name__
        if isinstance(exc, OSError) and exc.strerror:  # e.g. an exec plugin command that does not exist
            detail = f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
        reason = "bad-certificate" if "File does not exist" in detail else "invalid"
        raise ConnectError(f'Context "{name}" in the kubeconfig {where} cannot be used: {detail}.',
                           reason, names) from None
    api = _api_client(cfg, f'context "{name}" in the kubeconfig {where}')
    _refresh_exec_tokens(loader, cfg)
    ns = namespace or str(body.get("namespace") or "") or "default"
    user_body = (user or {}).get("user") or {}
    defined_in = next((path for path, doc in docs if any(u.get("name") == user_name
                                                          for u in (doc or {}).get("users") or [])), files[0])
    secrets |= token_file_secrets(user_body, os.path.dirname(os.path.abspath(defined_in))) | loaded_secrets(cfg)
    ca, insecure = cluster_tls(cluster["cluster"])
    return Connection(api=api, context=name, server=cfg.host.rstrip("/"), namespace=ns, source="kubeconfig",
                      kubeconfig=os.pathsep.join(files), auth=auth_kind(user_body), ca=ca, insecure=insecure,
                      kubeconfig_files=tuple(files), secrets=frozenset(secrets))


async def _connect_in_cluster(namespace: str | None) -> Connection:
    cfg = client.Configuration()
    try:
        load_incluster_config(client_configuration=cfg, token_filename=str(SERVICE_ACCOUNT_DIR / "token"),
                              cert_filename=str(SERVICE_ACCOUNT_DIR / "ca.crt"))
    except (ConfigException, OSError) as exc:
        raise ConnectError(f"The in-cluster configuration (service account in {SERVICE_ACCOUNT_DIR}) cannot be "
                           f"used: {exc}", "in-cluster") from None
    api = _api_client(cfg, f"the in-cluster service account ({SERVICE_ACCOUNT_DIR})")
    ns = namespace
    if not ns:
        try:
            ns = (SERVICE_ACCOUNT_DIR / "namespace").read_text().strip()
        except OSError:
            ns = ""
    secrets = token_file_secrets({"tokenFile": str(SERVICE_ACCOUNT_DIR / "token")}, None) | loaded_secrets(cfg)
    return Connection(api=api, context="in-cluster", server=cfg.host.rstrip("/"), namespace=ns or "default",
                      source="in-cluster", auth="token", ca=bool(cfg.ssl_ca_cert), secrets=frozenset(secrets))


def _api_client(cfg: client.Configuration, what: str) -> client.ApiClient:
    """The ApiClient for ``cfg``; unusable CA or client certificate files become a ConnectError naming ``what``."""
    try:
        ssl.create_default_context(cafile=cfg.ssl_ca_cert)
    except (ssl.SSLError, OSError, ValueError) as exc:
        detail = str(getattr(exc, "reason", None) or getattr(exc, "strerror", None) or "unreadable")
        detail = detail.replace("_", " ").lower() if detail.isupper() else detail
        raise ConnectError(f"The certificate authority of {what} is not a usable PEM certificate ({detail}).",
                           "bad-certificate") from None
    if cfg.cert_file:
        try:
            ssl.create_default_context().load_cert_chain(cfg.cert_file, keyfile=cfg.key_file)
        except (ssl.SSLError, OSError, ValueError):
            raise ConnectError(f"The client certificate and key of {what} cannot be used: they are not PEM, or the "
                               "key does not belong to the certificate.", "bad-certificate") from None
    return client.ApiClient(cfg)


def _refresh_exec_tokens(loader: KubeConfigLoader, cfg: client.Configuration) -> None:
    """Exec-plugin tokens that carry an expirationTimestamp are renewed before a request once they expire."""
    if not hasattr(loader, "exec_plugin_expiry"):
        return

    async def refresh(configuration: client.Configuration) -> None:
        await loader.load_from_exec_plugin()  # a no-op until the token is about to expire
        configuration.api_key["BearerToken"] = loader.token

    cfg.refresh_api_key_hook = refresh


def _read_kubeconfig(path: str) -> dict[str, Any] | None:
    """One file parsed as YAML: a mapping, or None for an empty file. Raises ConnectError naming the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConnectError(f"Cannot load the kubeconfig: the file {path} does not exist.", "missing-file") from None
    except IsADirectoryError:
        raise ConnectError(f"Cannot load the kubeconfig: {path} is a directory, not a file.", "missing-file") from None
    except (OSError, UnicodeDecodeError) as exc:
        detail = getattr(exc, "strerror", None) or "it is not UTF-8 text"
        raise ConnectError(f"Cannot read the kubeconfig {path}: {detail}.", "missing-file") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "unreadable"
        raise ConnectError(f"Cannot load the kubeconfig {path}: it is not valid YAML ({problem}{where}).",
                           "unparsable") from None
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise ConnectError(f"Cannot load the kubeconfig {path}: it is YAML but not a kubeconfig (a mapping with "
                           f"clusters, contexts and users was expected, not a {type(doc).__name__}).", "unparsable")
    for section in ("clusters", "contexts", "users"):
        entries = doc.get(section)
        if entries is None:
            continue
        if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("name"), str)
                                                    for e in entries):
            raise ConnectError(f"Cannot load the kubeconfig {path}: its {section} must be a list of entries, each "
                               "with a name.", "unparsable")
    return doc


def _merge(paths: list[str]) -> Any:
    """kubernetes-asyncio's merge of the files (first definition of a name wins) as its ConfigNode."""
    if len(paths) == 1 and os.pathsep in paths[0]:  # the merger splits on the separator: load such a file alone
        from kubernetes_asyncio.config.kube_config import ConfigNode
        with open(paths[0], encoding="utf-8") as handle:
            return ConfigNode(paths[0], yaml.safe_load(handle), paths[0])
    merged = KubeConfigMerger(os.pathsep.join(paths)).config
    if merged is None:
        raise ValueError("no file could be loaded")
    return merged


def _entries(merged: Any, section: str) -> list[dict[str, Any]]:
    out = []
    for entry in merged.value.get(section) or []:
        value = getattr(entry, "value", entry)
        if isinstance(value, dict):
            out.append(value)
    return out


def _named(merged: Any, section: str, name: str) -> dict[str, Any] | None:
    return next((e for e in _entries(merged, section) if e.get("name") == name), None)


def _check_base64(obj: dict[str, Any], keys: tuple[str, ...], owner: str, context: str, where: str) -> None:
    for key in keys:
        value = obj.get(key)
        if value is None:
            continue
        try:
            base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError):
            raise ConnectError(f"The {key} of {owner} (context \"{context}\", kubeconfig {where}) is not valid "
                               "base64.", "bad-certificate") from None


def _collect_secrets(docs: Any) -> set[str]:
    """Every credential value in the files (user tokens, passwords, key data, auth-provider config) for redaction."""
    secrets: set[str] = set()

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, str(k))
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and len(node) >= 4 and (key in _SECRET_KEYS or "secret" in key.lower()):
            secrets.add(node)

    for doc in docs:
        for user in (doc or {}).get("users") or []:
            walk(user)
    return secrets


def _redact(text: str, secrets: set[str]) -> str:
    """``text`` without credential values and without the Python dict reprs kubernetes-asyncio puts in names."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "<redacted>")
    text = re.sub(r"/?\{[^{}]*(\{[^{}]*\}[^{}]*)*\}", "", text)
    return " ".join(text.split()).rstrip(".")


def _files(files: list[str]) -> str:
    return files[0] if len(files) == 1 else "(" + ", ".join(files) + ")"


async def check_reachable(conn: Connection, timeout: float = 5.0) -> None:
    """GET ``/version`` within ``timeout`` seconds. Returns when the server answers 2xx (or 403: reachable, the
    credentials were accepted, and the watches will report what is forbidden). Raises :class:`ConnectError` for
    connection refused, DNS failure, TLS verification failure, timeout, 401 (credentials rejected) and any other
    answer that is not from a working API server."""
    where = f'context "{conn.context}"'
    try:
        async with asyncio.timeout(timeout):
            resp = await conn.api.call_api("/version", "GET", header_params={"Accept": "application/json"},
                                           auth_settings=["BearerToken"], _preload_content=False,
                                           _request_timeout=timeout)
            try:
                await resp.read()
            finally:
                resp.release()
    except (aiohttp.ClientError, OSError, asyncio.TimeoutError, ssl.SSLError) as exc:
        reason, sentence = describe_transport_error(exc, conn.server, timeout)
        raise ConnectError(f"Cannot reach the cluster of {where}. {sentence}", reason) from None
    server = safe_server(conn.server)
    if resp.status == 401:
        raise ConnectError(f"{server} rejected the credentials of {where} (401 Unauthorized): the token or client "
                           "certificate is wrong or has expired.", "unauthorized")
    if resp.status >= 300 and resp.status != 403:
        raise ConnectError(f"{server} ({where}) answered GET /version with {resp.status} {resp.reason or ''}, so it "
                           "is not a working Kubernetes API server.", "http")
