"""Which HTTP proxy a request to the API server goes through, decided the way kubectl decides it.

client-go (``transport/cache.go``) uses the cluster's ``proxy-url`` when the kubeconfig sets one, for every host,
loopback included; otherwise ``http.ProxyFromEnvironment``, whose rules (``golang.org/x/net/http/httpproxy``) are:

* ``HTTPS_PROXY`` for ``https://`` servers and ``HTTP_PROXY`` for ``http://`` ones, never the other as a
  fallback; each name upper case first, then lower case (the first non-empty value wins; Python's ``urllib``
  prefers the lower case one, which is why observatory does not leave this to aiohttp's ``trust_env``);
* a value without a scheme means ``http://``;
* ``HTTP_PROXY`` is refused when ``REQUEST_METHOD`` is set (a CGI environment);
* never a proxy for ``localhost`` or a loopback address;
* ``NO_PROXY`` (then ``no_proxy``): comma-separated; ``*`` matches everything; an IP address or CIDR block matches
  addresses; ``name`` matches ``name`` and its subdomains, ``.name`` and ``*.name`` only the subdomains; any entry
  may carry ``:port``, which must then equal the server's port (80 or 443 when the URL has none).

Pure functions of the URL and an environment mapping; nothing here opens a connection.
:func:`describe_proxy_error` turns aiohttp's proxy failures into one sentence (used by
:func:`~observatory.kube.transport.describe_transport_error`).
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

import aiohttp

__all__ = [
    "SUPPORTED_SCHEMES",
    "ProxyError",
    "choose_proxy",
    "describe_proxy_error",
    "env_proxy",
    "proxy_secrets",
    "safe_proxy",
]

SUPPORTED_SCHEMES = ("http", "https")
"""Proxy URL schemes observatory's HTTP client (aiohttp) can use; kubectl also takes ``socks5``."""


class ProxyError(ValueError):
    """A proxy setting that cannot be used; ``str()`` is one sentence naming the setting (without credentials)."""


def choose_proxy(server: str, proxy_url: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """The proxy URL for requests to ``server``, or None to connect directly.

    ``proxy_url`` is the cluster's ``proxy-url`` (wins when set, for any host); else :func:`env_proxy`. Raises
    :class:`ProxyError` for a proxy URL that is not ``http://`` or ``https://`` with a host, or an ``HTTP_PROXY``
    in a CGI environment, as kubectl refuses it."""
    if proxy_url:
        return _checked(str(proxy_url), "the cluster's proxy-url")
    return env_proxy(server, os.environ if env is None else env)


def env_proxy(server: str, env: Mapping[str, str]) -> str | None:
    """The proxy the environment variables give for ``server`` (module docstring), or None."""
    parts = urlsplit(server)
    scheme = parts.scheme.lower()
    if scheme == "https":
        name, value = _first(env, "HTTPS_PROXY", "https_proxy")
    elif scheme == "http":
        name, value = _first(env, "HTTP_PROXY", "http_proxy")
        if value and env.get("REQUEST_METHOD"):
            raise ProxyError(f"{name} is set in a CGI environment (REQUEST_METHOD is set), where kubectl refuses to "
                             "use it (see golang.org/s/cgihttpproxy)")
    else:
        return None
    if not value:
        return None
    host = (parts.hostname or "").lower()
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        return None
    if not _use_proxy(host, port, _first(env, "NO_PROXY", "no_proxy")[1]):
        return None
    if "://" not in value:
        value = "http://" + value
    return _checked(value, name)


def safe_proxy(proxy: str) -> str:
    """The proxy URL without its ``user:password@`` part."""
    parts = urlsplit(proxy)
    if not (parts.username or parts.password):
        return proxy
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:
        port = None
    return urlunsplit((parts.scheme, host + (f":{port}" if port else ""), parts.path, parts.query, parts.fragment))


def proxy_secrets(proxy: str | None) -> set[str]:
    """The password of a proxy URL (and the ``user:password`` pair), for redaction; empty without one."""
    if not proxy:
        return set()
    parts = urlsplit(proxy)
    if not parts.password:
        return set()
    return {parts.password, f"{parts.username or ''}:{parts.password}"}


def describe_proxy_error(exc: BaseException, server: str) -> tuple[str, str] | None:
    """``("proxy", sentence)`` when ``exc`` is aiohttp's report that the proxy could not be reached
    (``ClientProxyConnectionError``: refused, unknown host) or refused to open a tunnel (``ClientHttpProxyError``:
    the proxy's answer to ``CONNECT``, e.g. 403, or 407 when it wants credentials); None for any other error."""
    if isinstance(exc, aiohttp.ClientProxyConnectionError):
        proxy = f"{exc.host}:{exc.port}"
        os_error = exc.os_error
        if isinstance(os_error, ConnectionRefusedError):
            why = f"refused the connection (nothing is listening on {proxy})"
        elif isinstance(os_error, socket.gaierror):
            why = "cannot be found (its host name could not be resolved)"
        else:
            why = f"cannot be reached ({os_error.strerror or type(os_error).__name__})"
        return "proxy", f"The proxy {proxy} {why}, so {server} cannot be reached through it."
    if isinstance(exc, aiohttp.ClientHttpProxyError):
        info = getattr(exc, "request_info", None)
        proxy = safe_proxy(str(info.real_url)) if info is not None else "in use"
        answer = f"{exc.status} {exc.message or ''}".strip()
        hint = (" It wants credentials: put them in the proxy URL (http://USER:PASSWORD@HOST:PORT)."
                if exc.status == 407 else "")
        return "proxy", (f"The proxy {proxy} refused to open a tunnel to {server}: it answered CONNECT with "
                         f"{answer}.{hint}")
    return None


def _first(env: Mapping[str, str], upper: str, lower: str) -> tuple[str, str]:
    for name in (upper, lower):
        value = env.get(name, "")
        if value:
            return name, value
    return upper, ""


def _checked(value: str, setting: str) -> str:
    parts = urlsplit(value)
    scheme = parts.scheme.lower()
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise ProxyError(f"{setting} ({safe_proxy(value)}) has a port that is not a number") from None
    if scheme == "socks5":
        raise ProxyError(f"{setting} is a socks5 proxy ({safe_proxy(value)}), which kubectl can use but observatory "
                         "cannot: it supports http:// and https:// proxies")
    if scheme not in SUPPORTED_SCHEMES or not parts.hostname:
        raise ProxyError(f"{setting} ({safe_proxy(value)}) is not an http:// or https:// proxy URL with a host")
    return value


def _use_proxy(host: str, port: int, no_proxy: str) -> bool:
    """httpproxy's ``useProxy``: False for localhost, loopback addresses and any ``NO_PROXY`` match."""
    if not host or host == "localhost":
        return False
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is not None and ip.is_loopback:
        return False
    for entry in no_proxy.split(","):
        entry = entry.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return False
        if _matches(entry, host, port, ip):
            return False
    return True


def _matches(entry: str, host: str, port: int, ip: ipaddress._BaseAddress | None) -> bool:
    if "/" in entry:
        try:
            return ip is not None and ip in ipaddress.ip_network(entry, strict=False)
        except ValueError:
            return False
    entry_host, entry_port = _split_host_port(entry)
    if entry_port and entry_port != str(port):
        return False
    try:
        entry_ip = ipaddress.ip_address(entry_host)
    except ValueError:
        entry_ip = None
    if entry_ip is not None:
        return ip is not None and ip == entry_ip
    if not entry_host:
        return False
    if entry_host.startswith("*."):
        entry_host = entry_host[1:]
    if entry_host.startswith("."):
        return host.endswith(entry_host)
    return host == entry_host or host.endswith("." + entry_host)


def _split_host_port(entry: str) -> tuple[str, str]:
    """``host:port`` / ``[v6]:port`` -> (host, port); a bare host or IPv6 address -> (host, "")."""
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        return host, rest[1:] if rest.startswith(":") else ""
    if entry.count(":") == 1:
        host, _, port = entry.partition(":")
        return host, port
    return entry, ""
