"""Exec credential plugins (``users[].user.exec``), run the way kubectl runs them.

What client-go does (``plugin/pkg/client/auth/exec/exec.go``) and observatory reproduces:

* the command runs with the caller's environment plus the entries of ``exec.env``, and ``KUBERNETES_EXEC_INFO`` set
  to ``{"apiVersion": <exec.apiVersion>, "kind": "ExecCredential", "spec": {"interactive": BOOL}}`` (plus
  ``spec.cluster`` when ``provideClusterInfo`` is true);
* ``interactive`` is true when standard input is a terminal, unless ``interactiveMode`` is ``Never``; with
  ``Always`` and no terminal the plugin is not run. An interactive plugin inherits standard input;
* the plugin's standard error goes to the terminal as it is written (login prompts, "open this URL" hints);
* its standard output must be an ``ExecCredential`` of the same apiVersion whose ``status`` has a ``token`` or a
  ``clientCertificateData`` / ``clientKeyData`` pair, and optionally an RFC 3339 ``expirationTimestamp``;
* the credential is cached and the plugin runs again only once ``expirationTimestamp`` has passed, before the
  next request (client-go compares with ``now.After(expiry)``; kubernetes-asyncio's own loader refreshes five
  minutes early, which for short-lived tokens means a run per request).

:class:`ExecPlugin` runs the first time from :func:`~observatory.kube.connect.connect`, before any UI takes the
terminal; later runs (token refreshes) happen while the UI owns the terminal, so from then on standard input is
``/dev/null`` and standard error is captured, never written to the screen. A failure is a
:class:`CredentialError` whose text quotes the plugin's standard error.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import contextlib
import json
import os
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

__all__ = ["STDERR_LIMIT", "CredentialError", "ExecPlugin"]

STDERR_LIMIT = 2000
"""At most this many characters of a failing plugin's standard error are quoted in the message."""


class CredentialError(OSError):
    """An exec credential plugin that cannot give a credential. ``str()`` is one paragraph: which plugin of which
    user, what went wrong, and its standard error. An ``OSError`` so that every place that turns a failed request
    into a sentence (:func:`~observatory.kube.transport.describe_transport_error`) handles it as it is."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "the exec credential plugin failed"


class ExecPlugin:
    """One user's exec plugin. ``config`` is the ``exec`` mapping (its relative ``command`` already resolved);
    ``user`` the kubeconfig user name (for messages); ``cluster`` the cluster mapping (for ``provideClusterInfo``).

    ``runs`` counts the plugin's runs; ``token`` is the current bearer token (None when the plugin gave a client
    certificate: ``cert_pem`` / ``key_pem``); ``expiry`` its expiry (None: never expires)."""

    def __init__(self, config: Mapping[str, Any], user: str, cluster: Mapping[str, Any] | None = None, *,
                 stdin_isatty: Callable[[], bool] | None = None) -> None:
        self.command = str(config.get("command") or "")
        self.args = [str(a) for a in (config.get("args") or [])]
        self.api_version = str(config.get("apiVersion") or "")
        self.env = {str(e.get("name")): str(e.get("value", "")) for e in (config.get("env") or [])
                    if isinstance(e, Mapping)}
        self.mode = str(config.get("interactiveMode") or "IfAvailable")
        self.hint = str(config.get("installHint") or "")
        self.cluster_info = _cluster_info(cluster) if config.get("provideClusterInfo") else None
        self.user = user
        self.runs = 0
        self.token: str | None = None
        self.cert_pem: bytes | None = None
        self.key_pem: bytes | None = None
        self.expiry: datetime | None = None
        self.terminal = True
        """True until the first credential is in hand: the plugin may use the terminal (module docstring)."""
        self._isatty = stdin_isatty or (lambda: sys.stdin is not None and sys.stdin.isatty())
        self._lock = asyncio.Lock()

    @property
    def what(self) -> str:
        return f'the exec credential plugin "{self.command}" of user "{self.user}"'

    def expired(self, now: datetime | None = None) -> bool:
        """True when there is no credential yet, or its expiry has passed."""
        if self.token is None and self.cert_pem is None:
            return True
        return self.expiry is not None and (now or datetime.now(UTC)) > self.expiry

    async def bearer(self) -> str | None:
        """The current token, running the plugin first when it has expired (one run for concurrent callers)."""
        async with self._lock:
            if self.expired():
                await self.run()
        return self.token

    async def run(self) -> None:
        """Run the plugin once and keep its credential. Raises :class:`CredentialError`."""
        if not self.command:
            raise CredentialError(f'The exec credential plugin of user "{self.user}" names no command.')
        interactive = self.terminal and self.mode != "Never" and self._isatty()
        if self.mode == "Always" and not interactive:
            raise CredentialError(f"{self.what} needs a terminal (interactiveMode: Always), and standard input is "
                                  "not one.")
        spec: dict[str, Any] = {"interactive": interactive}
        if self.cluster_info is not None:
            spec["cluster"] = self.cluster_info
        env = {**os.environ, **self.env, "KUBERNETES_EXEC_INFO": json.dumps(
            {"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec})}
        self.runs += 1
        try:
            proc = await asyncio.create_subprocess_exec(
                self.command, *self.args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                stdin=None if interactive else asyncio.subprocess.DEVNULL)
        except FileNotFoundError:
            hint = f" {' '.join(self.hint.split())}" if self.hint else ""
            raise CredentialError(f"{self.what} was not found: no such file, or not on PATH.{hint}") from None
        except OSError as exc:
            raise CredentialError(f"{self.what} could not be started ({exc.strerror or exc}).") from None
        echo = self.terminal
        stderr_task = asyncio.create_task(_read_stderr(proc.stderr, echo))
        stdout = await proc.stdout.read() if proc.stdout else b""
        stderr = await stderr_task
        code = await proc.wait()
        said = " ".join(stderr.decode("utf-8", "replace").split())
        if len(said) > STDERR_LIMIT:
            said = said[:STDERR_LIMIT] + " …"
        if code != 0:
            tail = f' It wrote on standard error: "{said}".' if said else " It wrote nothing on standard error."
            raise CredentialError(f"{self.what} failed with exit code {code}.{tail}")
        self._accept(stdout)
        self.terminal = False

    def _accept(self, stdout: bytes) -> None:
        try:
            doc = json.loads(stdout)
        except ValueError:
            raise CredentialError(f"{self.what} did not print an ExecCredential as JSON on standard output.") from None
        if not isinstance(doc, dict) or doc.get("kind") != "ExecCredential":
            raise CredentialError(f"{self.what} printed JSON that is not an ExecCredential.")
        if doc.get("apiVersion") != self.api_version:
            raise CredentialError(f"{self.what} is configured for apiVersion {self.api_version}, and it answered "
                                  f"with {doc.get('apiVersion')}.")
        status = doc.get("status")
        status = status if isinstance(status, dict) else {}
        token = status.get("token")
        cert, key = status.get("clientCertificateData"), status.get("clientKeyData")
        if not token and not (cert and key):
            raise CredentialError(f"{self.what} returned neither a token nor a client certificate and key.")
        expiry = None
        stamp = status.get("expirationTimestamp")
        if stamp:
            try:
                expiry = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
            except ValueError:
                raise CredentialError(f"{self.what} returned an expirationTimestamp that is not RFC 3339 "
                                      f"({stamp}).") from None
            if expiry.tzinfo is None:
                expiry = expiry.replace(tzinfo=UTC)
        self.token = str(token) if token else None
        self.cert_pem = str(cert).encode() if cert and not token else None
        self.key_pem = str(key).encode() if key and not token else None
        self.expiry = expiry


async def _read_stderr(stream: asyncio.StreamReader | None, echo: bool) -> bytes:
    """All of ``stream``; with ``echo``, each chunk is also written to our standard error as it arrives."""
    if stream is None:
        return b""
    chunks = []
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    while chunk := await stream.read(4096):
        chunks.append(chunk)
        if echo and sys.stderr is not None:
            try:
                sys.stderr.write(decoder.decode(chunk))
                sys.stderr.flush()
            except (OSError, ValueError):
                echo = False
    return b"".join(chunks)


def _cluster_info(cluster: Mapping[str, Any] | None) -> dict[str, Any]:
    """``spec.cluster`` of the ExecCredential (client.authentication.k8s.io ``Cluster``) from a kubeconfig cluster."""
    cluster = cluster or {}
    info: dict[str, Any] = {"server": cluster.get("server", "")}
    if cluster.get("tls-server-name"):
        info["tls-server-name"] = cluster["tls-server-name"]
    if cluster.get("insecure-skip-tls-verify"):
        info["insecure-skip-tls-verify"] = True
    if cluster.get("certificate-authority-data"):
        info["certificate-authority-data"] = cluster["certificate-authority-data"]
    elif cluster.get("certificate-authority"):  # client-go sends the CA file's content (base64, as JSON []byte)
        with contextlib.suppress(OSError):
            with open(str(cluster["certificate-authority"]), "rb") as handle:
                info["certificate-authority-data"] = base64.b64encode(handle.read()).decode("ascii")
    if cluster.get("proxy-url"):
        info["proxy-url"] = cluster["proxy-url"]
    for ext in cluster.get("extensions") or []:
        if isinstance(ext, Mapping) and ext.get("name") == "client.authentication.k8s.io/exec":
            info["config"] = ext.get("extension")
    return info
