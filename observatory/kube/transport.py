"""Turning a failure to get an HTTP answer into one readable sentence (for :mod:`observatory.kube.rawhttp`, through
which every request goes)."""

from __future__ import annotations

import asyncio
import ssl
from urllib.parse import urlsplit

import aiohttp

from observatory.kube.exec_plugin import CredentialError
from observatory.kube.proxy import describe_proxy_error

__all__ = ["describe_transport_error", "safe_server"]


def _port(server: str) -> int | None:
    """The URL's port, or None when it has none or it is not a valid port number."""
    try:
        return urlsplit(server).port
    except ValueError:
        return None


def safe_server(server: str) -> str:
    """The server URL without any user:password part."""
    parts = urlsplit(server)
    if parts.username or parts.password:
        port = _port(server)
        return server.replace(parts.netloc, (parts.hostname or "") + (f":{port}" if port else ""), 1)
    return server


def describe_transport_error(exc: BaseException, server: str, timeout: float | None = None) -> tuple[str, str]:
    """``(reason, sentence)`` for a failure to get an HTTP answer from ``server``: connection refused, DNS, TLS
    verification, timeout, a dropped connection. :func:`observatory.kube.rawhttp.unreachable` puts it in the
    :class:`~observatory.kube.rawhttp.Unreachable` every request raises."""
    server = safe_server(server)
    if isinstance(exc, CredentialError):  # an exec plugin that failed to renew the token
        return "credentials", str(exc)
    if (proxied := describe_proxy_error(exc, server)) is not None:
        return proxied
    parts = urlsplit(server)
    hostport = f"{parts.hostname}:{_port(server) or (443 if parts.scheme == 'https' else 80)}"
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        why = getattr(exc.certificate_error, "verify_message", None) or "certificate verify failed"
        return "tls", (f"The TLS certificate of {server} could not be verified ({why}): the kubeconfig's "
                       "certificate authority does not vouch for it, or the name in it does not match the host.")
    if isinstance(exc, (aiohttp.ClientSSLError, ssl.SSLError)):
        return "tls", f"The TLS handshake with {server} failed ({getattr(exc, 'reason', None) or 'SSL error'})."
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return "dns", f"The host name {parts.hostname} of {server} could not be resolved (DNS lookup failed)."
    if isinstance(exc, aiohttp.ClientConnectorError):
        os_error = exc.os_error
        if isinstance(os_error, ConnectionRefusedError):
            return "refused", f"The connection to {server} was refused: nothing is listening on {hostport}."
        return "unreachable", f"Cannot connect to {server}: {os_error.strerror or type(os_error).__name__}."
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        within = f" within {timeout:g} s" if timeout else " in time"
        return "timeout", f"{server} did not answer{within}."
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "unreachable", f"{server} closed the connection without answering."
    if isinstance(exc, (aiohttp.ClientError, OSError)):
        detail = getattr(exc, "strerror", None) or type(exc).__name__
        return "unreachable", f"The connection to {server} failed ({detail})."
    return "unreachable", f"The request to {server} failed ({type(exc).__name__})."
