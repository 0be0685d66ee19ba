"""Kubeconfig or in-cluster configuration -> a kubernetes-asyncio ApiClient, its context and default namespace.

Where the configuration comes from, in kubectl's order (``clientcmd``'s loading rules):

1. ``--kubeconfig PATH``: that one file, which must exist;
2. else ``KUBECONFIG``: an ``os.pathsep``-separated list; empty entries and files that do not exist are skipped,
   duplicates are dropped, and ``~/.kube/config`` is not consulted while the variable is set;
3. else ``~/.kube/config`` if it exists;
4. else, inside a pod, the service account (``KUBERNETES_SERVICE_HOST``/``_PORT`` and the token file);
5. else nothing: the command line starts the embedded lab.

Several files are merged as kubectl merges them (:mod:`observatory.kube.kubeconfig`: first definition of each
cluster, user and context wins, the first non-empty ``current-context`` wins, relative paths are resolved against the
file that names them). Requests go through the proxy kubectl would use (:mod:`observatory.kube.proxy`: the cluster's
``proxy-url``, else ``HTTPS_PROXY``/``HTTP_PROXY``/``NO_PROXY`` with Go's rules). An exec credential plugin
(:mod:`observatory.kube.exec_plugin`) runs here, before any UI takes the terminal, and again before a request once
its token has expired.

Every request carries the ``User-Agent`` a client-go program would, in client-go's format
(:mod:`observatory.model.useragent`): observatory's own, ``observatory/v<version> (<os>/<arch>) kubernetes/unknown``
(:func:`observatory_agent`; ``unknown`` is client-go's ``adjustCommit`` of an empty commit, as observatory is built
from no Kubernetes commit), unless the caller names another (the lab's kube-scheduler, :mod:`observatory.embedded`).

A server URL with ``user:password@`` authenticates as kubectl does (:mod:`observatory.kube.server_url`: those
credentials, not the user's, in a ``Basic`` header).

Every failure is a :class:`ConnectError` whose text is one paragraph for a person: what failed, the files, context
or server involved, the contexts to choose from when choosing another would help, and the hint to run
``observatory --lab``. Tokens, passwords and key material never appear in it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import platform
import re
import ssl
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from kubernetes_asyncio import client
from kubernetes_asyncio.config import ConfigException, load_incluster_config
from kubernetes_asyncio.config.kube_config import KubeConfigLoader

from observatory import __version__
from observatory.kube.credentials import auth_kind, cluster_tls, kubeconfig_secrets, loaded_secrets, token_file_secrets
from observatory.kube.exec_plugin import CredentialError, ExecPlugin
from observatory.kube.kubeconfig import KubeconfigError, MergedKubeconfig, check_credential_sources, load_kubeconfig
from observatory.kube.proxy import ProxyError, choose_proxy, proxy_secrets, safe_proxy
from observatory.kube.rawhttp import Unreachable, request, scrub
from observatory.kube.server_url import split_userinfo, without_userinfo
from observatory.kube.transport import safe_server
from observatory.model.useragent import go_platform, user_agent

__all__ = [
    "LAB_HINT",
    "ConnectError",
    "Connection",
    "check_reachable",
    "connect",
    "find_kubeconfig",
    "in_cluster",
    "observatory_agent",
]

# kubernetes-asyncio logs exec-plugin and merge failures itself; with no handler configured Python would print them
# to stderr next to the ConnectError paragraph that already says it. An application that configures logging still
# gets the records (they propagate).
logging.getLogger("kubernetes_asyncio").addHandler(logging.NullHandler())

LAB_HINT = "Run `observatory --lab` to use the embedded lab instead."


def observatory_agent(suffix: str = "") -> str:
    """observatory's ``User-Agent``: ``observatory/v0.1.0 (linux/amd64) kubernetes/unknown`` (plus ``/suffix``),
    which :func:`observatory.model.audit.short_agent` reads as ``observatory``."""
    goos, goarch = go_platform(sys.platform, platform.machine())
    return user_agent("observatory", f"v{__version__}", "", goos=goos, goarch=goarch, suffix=suffix)
SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
"""Where Kubernetes mounts a pod's service account: ``token``, ``ca.crt`` and ``namespace`` (patched in tests)."""


@dataclass(frozen=True)
class Connection:
    """A configured client for one cluster. ``source`` is ``"kubeconfig"`` or ``"in-cluster"``; ``server`` is the
    API server URL (no trailing slash); ``namespace`` is the default namespace (``--namespace``, else the context's,
    else ``"default"``). The client holds the credentials, so it is left out of the repr.

    Facts for the equivalent commands (:mod:`observatory.model.commands`), none a credential: ``kubeconfig_files``
    (merge order; empty in-cluster); ``kubeconfig``, the one file or the ``os.pathsep``-joined list, None
    in-cluster; ``auth``, one of ``AUTH_KINDS`` (:func:`~observatory.kube.credentials.auth_kind`; in-cluster
    ``"token"``); ``ca``, a CA is configured; ``insecure``, ``insecure-skip-tls-verify``; ``proxy``, the proxy
    requests go through (without its password), or None. ``secrets`` (not in the repr): every credential value
    known at connect time, for redaction: the users' tokens, passwords, key data and auth-provider secrets, the
    ``tokenFile`` content, what the client loaded (bearer token, client key) and a proxy password."""

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
    proxy: str | None = None

    async def close(self) -> None:
        """Close the client's HTTP session (idempotent)."""
        await self.api.close()


class ConnectError(Exception):
    """The kubeconfig cannot be used or the cluster cannot be reached. ``str()`` is one readable paragraph ending
    with :data:`LAB_HINT`; ``reason`` is a short machine-readable code (``"missing-file"``, ``"unparsable"``,
    ``"empty"``, ``"unknown-context"``, ``"no-current-context"``, ``"missing-cluster"``, ``"missing-user"``,
    ``"bad-certificate"``, ``"no-kubeconfig"``, ``"invalid"``, ``"in-cluster"``, ``"exec"`` (a credential plugin
    failed), ``"proxy"`` (a proxy setting is unusable, or the proxy refused), ``"refused"``, ``"dns"``, ``"tls"``,
    ``"timeout"``, ``"unauthorized"``, ``"http"``, ``"unreachable"``, ``"credentials"``); ``contexts`` lists the
    context names when choosing another one with ``--context`` would help."""

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
                  namespace: str | None = None, *, agent: str | None = None) -> Connection:
    """Build a :class:`Connection` from the kubeconfig (see the module docstring) or the in-cluster configuration.

    ``context`` overrides the current-context; ``namespace`` overrides the context's namespace. Nothing is sent to
    the server (see :func:`check_reachable`); an exec credential plugin, if configured, runs here (its standard
    error goes to the terminal, as with kubectl). Raises :class:`ConnectError` for a missing file, unparsable YAML,
    an unknown or unset context (listing the contexts), a context whose cluster or user is not defined, a cluster
    without a server, unusable or unreadable certificate data or files, an unusable proxy setting, a failing exec
    plugin (quoting its standard error), and no configuration at all. ``agent`` is the ``User-Agent`` to send
    (default :func:`observatory_agent`).
    """
    files = find_kubeconfig(kubeconfig)
    if files is None:
        if in_cluster():
            return await _connect_in_cluster(namespace, agent)
        env = os.environ.get("KUBECONFIG", "")
        looked = (f"none of the files KUBECONFIG names ({env}) exists" if env
                  else "KUBECONFIG is not set and ~/.kube/config does not exist")
        raise ConnectError(f"No kubeconfig was found: {looked}, and this is not running inside a pod. Pass a file "
                           "with --kubeconfig PATH.", "no-kubeconfig")
    try:
        merged = load_kubeconfig(files)
    except KubeconfigError as exc:
        raise ConnectError(str(exc), exc.reason) from None
    where = _files(files)
    if merged.empty:
        raise ConnectError(f"The kubeconfig {where} is empty: it defines no clusters, users or contexts.", "empty")
    secrets = kubeconfig_secrets(merged.documents)
    name, body, names = _choose_context(merged, context, where)
    cluster_name, user_name = str(body.get("cluster") or ""), str(body.get("user") or "")
    others = _pick_another(names, name)
    cluster = merged.resolved("clusters", cluster_name)
    if cluster is None:
        raise ConnectError(f'Context "{name}" in the kubeconfig {where} refers to cluster "{cluster_name}", which '
                           f"is not defined there.{others}", "missing-cluster", names)
    server = _check_server(cluster, cluster_name, name, where, names, others)
    server, url_authorization, url_secrets = split_userinfo(server)
    secrets |= url_secrets
    if url_authorization is not None:  # kubectl sends these credentials instead of the user's (server_url.py)
        cluster = {**cluster, "server": server}
    user = merged.resolved("users", user_name) if user_name else None
    if user_name and user is None:
        raise ConnectError(f'Context "{name}" in the kubeconfig {where} refers to user "{user_name}", which is not '
                           f"defined there.{others}", "missing-user", names)
    try:
        check_credential_sources(cluster_name, cluster, user_name, user, f'context "{name}", kubeconfig {where}')
    except KubeconfigError as exc:
        raise ConnectError(str(exc), exc.reason, names) from None
    try:
        proxy = choose_proxy(server, cluster.get("proxy-url"))
    except ProxyError as exc:
        raise ConnectError(f'The proxy for context "{name}" (kubeconfig {where}) cannot be used: {exc}.', "proxy",
                           names) from None
    plugin = None
    if user and isinstance(user.get("exec"), dict) and url_authorization is None:
        plugin = ExecPlugin(user["exec"], user_name, cluster)
        try:
            await plugin.run()
        except CredentialError as exc:
            raise ConnectError(f'Context "{name}" in the kubeconfig {where} cannot be used: {exc}', "exec",
                               names) from None
    cfg = client.Configuration()
    try:
        loader = KubeConfigLoader(config_dict=_minified(name, body, cluster_name, cluster, user_name, user),
                                  config_base_path="", active_context=name)
        await loader.load_and_set(cfg)
    except (ConfigException, OSError, ValueError, KeyError, TypeError, AssertionError) as exc:
        detail = _redact(str(exc), secrets) or type(exc).__name__
        raise ConnectError(f'Context "{name}" in the kubeconfig {where} cannot be used: {detail}.',
                           "invalid", names) from None
    cfg.proxy = proxy
    if plugin is not None:
        _use_plugin(cfg, plugin)
    if url_authorization is not None:
        cfg.api_key, cfg.api_key_prefix, cfg.refresh_api_key_hook = {"BearerToken": url_authorization}, {}, None
    api = _api_client(cfg, f'context "{name}" in the kubeconfig {where}', agent)
    ns = namespace or str(body.get("namespace") or "") or "default"
    user_body = user or {}
    secrets |= token_file_secrets(user_body, None) | loaded_secrets(cfg) | proxy_secrets(proxy)
    ca, insecure = cluster_tls(cluster)
    return Connection(api=api, context=name, server=(cfg.host or "").rstrip("/"), namespace=ns, source="kubeconfig",
                      kubeconfig=os.pathsep.join(files),
                      auth="basic" if url_authorization else auth_kind(user_body), ca=ca, insecure=insecure,
                      kubeconfig_files=tuple(files), secrets=frozenset(secrets),
                      proxy=safe_proxy(proxy) if proxy else None)


def _pick_another(names: tuple[str, ...], exclude: str | None = None) -> str:
    """`` It defines the contexts a, b: use --context NAME to pick one.`` (empty when there is nothing to pick)."""
    choices = [n for n in names if n != exclude]
    if not choices:
        return "" if exclude else " It defines no contexts."
    which = ("the context" if len(choices) == 1 else "the contexts") if exclude is None else \
        ("one other context," if len(choices) == 1 else "other contexts,")
    return f" It defines {which} {', '.join(choices)}: use --context NAME to pick one."


def _choose_context(merged: MergedKubeconfig, context: str | None,
                    where: str) -> tuple[str, dict[str, Any], tuple[str, ...]]:
    """``(name, context body, every context name)``: ``--context``, else the merged current-context."""
    names = merged.names("contexts")
    name = context or merged.current_context
    if not name:
        raise ConnectError(f"The kubeconfig {where} sets no current-context, so there is no cluster to connect to."
                           f"{_pick_another(names)}", "no-current-context", names)
    body = merged.get("contexts", name)
    if body is None:
        origin = "--context" if context else "its current-context"
        raise ConnectError(f'The kubeconfig {where} has no context named "{name}" (asked for by {origin}).'
                           f"{_pick_another(names)}", "unknown-context", names)
    return name, body, names


def _check_server(cluster: dict[str, Any], cluster_name: str, name: str, where: str, names: tuple[str, ...],
                  others: str) -> str:
    server = str(cluster.get("server") or "")
    if not server:
        raise ConnectError(f'Cluster "{cluster_name}" of context "{name}" in the kubeconfig {where} has no server '
                           f"address.{others}", "missing-cluster", names)
    try:
        parts = urlsplit(server)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number from 0 to 65535
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("needs http:// or https:// and a host")
    except ValueError as exc:
        shown = without_userinfo(server)  # never the password
        raise ConnectError(f'The server address "{shown}" of cluster "{cluster_name}" in the kubeconfig {where} is '
                           f"not a valid URL ({exc}).", "invalid", names) from None
    return server


def _minified(name: str, body: dict[str, Any], cluster_name: str, cluster: dict[str, Any], user_name: str,
              user: dict[str, Any] | None) -> dict[str, Any]:
    """The one context, its cluster and its user (paths absolute, no exec: :class:`ExecPlugin` runs it) for
    kubernetes-asyncio's loader."""
    users = [{"name": user_name, "user": {k: v for k, v in user.items() if k != "exec"}}] if user else []
    return {"apiVersion": "v1", "kind": "Config", "current-context": name,
            "contexts": [{"name": name, "context": body}],
            "clusters": [{"name": cluster_name, "cluster": cluster}], "users": users}


def _use_plugin(cfg: client.Configuration, plugin: ExecPlugin) -> None:
    """Send the plugin's credential: a token through a refresh hook that runs the plugin again once it expires
    (kubernetes-asyncio awaits ``refresh_api_key_hook`` before every request), or a client certificate."""
    if plugin.token is not None:
        cfg.api_key["BearerToken"] = f"Bearer {plugin.token}"

        async def refresh(configuration: client.Configuration) -> None:
            configuration.api_key["BearerToken"] = f"Bearer {await plugin.bearer()}"

        cfg.refresh_api_key_hook = refresh
        return
    cfg.cert_file = _private_file(plugin.cert_pem or b"")
    cfg.key_file = _private_file(plugin.key_pem or b"")


def _private_file(data: bytes) -> str:
    """A temporary file only the user can read, holding ``data``; removed when the interpreter exits."""
    fd, path = tempfile.mkstemp(prefix="observatory-exec-")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    def remove() -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    atexit.register(remove)
    return path


async def _connect_in_cluster(namespace: str | None, agent: str | None) -> Connection:
    cfg = client.Configuration()
    try:
        load_incluster_config(client_configuration=cfg, token_filename=str(SERVICE_ACCOUNT_DIR / "token"),
                              cert_filename=str(SERVICE_ACCOUNT_DIR / "ca.crt"))
        cfg.proxy = choose_proxy(cfg.host or "", None)
    except (ConfigException, OSError, ProxyError) as exc:
        raise ConnectError(f"The in-cluster configuration (service account in {SERVICE_ACCOUNT_DIR}) cannot be "
                           f"used: {exc}", "in-cluster") from None
    api = _api_client(cfg, f"the in-cluster service account ({SERVICE_ACCOUNT_DIR})", agent)
    ns = namespace
    if not ns:
        try:
            ns = (SERVICE_ACCOUNT_DIR / "namespace").read_text().strip()
        except OSError:
            ns = ""
    secrets = token_file_secrets({"tokenFile": str(SERVICE_ACCOUNT_DIR / "token")}, None) | loaded_secrets(cfg)
    return Connection(api=api, context="in-cluster", server=(cfg.host or "").rstrip("/"), namespace=ns or "default",
                      source="in-cluster", auth="token", ca=bool(cfg.ssl_ca_cert), secrets=frozenset(secrets),
                      proxy=safe_proxy(cfg.proxy) if cfg.proxy else None)


def _api_client(cfg: client.Configuration, what: str, agent: str | None = None) -> client.ApiClient:
    """The ApiClient for ``cfg``; unusable CA or client certificate files become a ConnectError naming ``what``.

    The proxy is ``cfg.proxy`` alone (chosen with kubectl's rules): aiohttp's ``trust_env``, which kubernetes-asyncio
    turns on, would apply Python's different environment rules (and read ``~/.netrc``), so it is turned off."""
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
    api = client.ApiClient(cfg)
    api.user_agent = agent or observatory_agent()
    session = getattr(api.rest_client, "pool_manager", None)
    if session is not None and hasattr(session, "_trust_env"):
        session._trust_env = False
    return api


def _redact(text: str, secrets: set[str]) -> str:
    """``text`` without credential values and without the Python dict reprs kubernetes-asyncio puts in names."""
    text = re.sub(r"/?\{[^{}]*(\{[^{}]*\}[^{}]*)*\}", "", scrub(text, secrets))
    return " ".join(text.split()).rstrip(".")


def _files(files: list[str]) -> str:
    return files[0] if len(files) == 1 else "(" + ", ".join(files) + ")"


async def check_reachable(conn: Connection, timeout: float = 5.0) -> None:
    """GET ``/version`` within ``timeout`` seconds. Returns when the server answers 2xx (or a 403 Status:
    reachable, the credentials were accepted, and the watches will report what is forbidden). Raises
    :class:`ConnectError` for connection refused, DNS failure, TLS verification failure, timeout, a proxy that
    refuses or answers in the API server's stead, a failing exec plugin, 401 (credentials rejected) and any other
    answer that is not from a working API server."""
    where = f'context "{conn.context}"'
    via = f" through the proxy {conn.proxy}" if conn.proxy else ""
    try:
        answer = await request(conn.api, "GET", "/version", timeout=timeout)
    except Unreachable as exc:
        raise ConnectError(f"Cannot reach the cluster of {where}{via}. {exc}", exc.reason) from None
    server = safe_server(conn.server)
    if conn.proxy and answer.status >= 300 and not _is_status(answer.body):
        raise ConnectError(f"The proxy {conn.proxy} answered GET {server}/version for {where} itself, with "
                           f"{answer.status} {answer.reason}, instead of passing the request on to the API "
                           "server.", "proxy")
    if answer.status == 401:
        raise ConnectError(f"{server} rejected the credentials of {where} (401 Unauthorized): the token or client "
                           "certificate is wrong or has expired.", "unauthorized")
    if answer.status >= 300 and answer.status != 403:
        raise ConnectError(f"{server} ({where}{via}) answered GET /version with {answer.status} {answer.reason}, "
                           "so it is not a working Kubernetes API server.", "http")


def _is_status(data: bytes) -> bool:
    """The body is a Kubernetes ``Status`` object (what an API server sends with an error)."""
    with contextlib.suppress(ValueError, UnicodeDecodeError):
        doc = json.loads(data)
        return isinstance(doc, dict) and doc.get("kind") == "Status"
    return False
