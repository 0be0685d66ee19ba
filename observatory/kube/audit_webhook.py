"""``observatory --audit-webhook-listen HOST:PORT``: receive kube-apiserver's audit webhook batches into an
:class:`~observatory.kube.audit_feed.AuditHub`.

kube-apiserver's webhook backend (``staging/src/k8s.io/apiserver/plugin/pkg/audit/webhook/webhook.go``) POSTs each
batch as one ``audit.k8s.io/v1`` ``EventList`` (``Content-Type: application/json``) to the server its
``--audit-webhook-config-file`` names, a kubeconfig-format file; any non-2xx answer is an error it retries with
exponential backoff (``retryOnError`` retries every error, from ``--audit-webhook-initial-backoff``, 10 s). In batch
mode it sends a batch when ``--audit-webhook-batch-max-size`` (400) events are buffered or
``--audit-webhook-batch-max-wait`` (30 s) has passed, so the screen is live only with a short wait.

The receiver answers as upstream's own test receiver does (``webhook_test.go``: ``{}`` on success):

* a ``POST`` (any path) of an EventList: ``200`` with ``{}``, its events delivered;
* a body that is not JSON or not an EventList: ``400`` with the problem in one sentence, counted as malformed;
* a ``Content-Type`` other than ``application/json``: ``415``, counted; a body over :data:`MAX_BODY`: ``413``,
  counted;
* another method: ``405`` with ``Allow: POST`` (not audit input, not counted).

At :meth:`AuditWebhookFeed.start` it binds the address (a bad or busy one raises
:class:`~observatory.kube.audit_feed.AuditOriginError`), then writes the webhook kubeconfig
(:func:`webhook_kubeconfig`) to :attr:`AuditWebhookFeed.config_path` (default
``<cache>/observatory/audit/webhook-<port>.kubeconfig``, kept after exit: the API server reads it when it starts).
"""

from __future__ import annotations

import contextlib
import socket
from pathlib import Path
from typing import Any

import platformdirs
import yaml
from aiohttp import web

from observatory.kube.audit_feed import AuditHub, AuditOriginError
from observatory.model.text import safe

__all__ = ["BATCH_MAX_WAIT", "MAX_BODY", "WEBHOOK_NAME", "WEBHOOK_PATH", "AuditWebhookFeed", "default_config_path",
           "parse_listen_address", "webhook_kubeconfig"]

BATCH_MAX_WAIT = "1s"
"""The ``--audit-webhook-batch-max-wait`` suggested to the API server: a batch a second, instead of every 30 s."""
MAX_BODY = 256 * 1024 * 1024
"""The largest batch accepted: 400 ``RequestResponse`` events of large objects (kube-apiserver truncates batches
only with ``--audit-webhook-truncate-enabled``, to 10 MiB by default)."""
WEBHOOK_PATH = "/audit"
"""The path the kubeconfig's server URL names (any path is accepted)."""
WEBHOOK_NAME = "observatory-audit"
"""The cluster, user and context name in the webhook kubeconfig."""
WILDCARDS = ("", "0.0.0.0", "::")


def parse_listen_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``127.0.0.1:9444``, ``localhost:0``, ``[::1]:9444``; ``:9444`` is every address, as Go's
    ``net.Listen`` reads it) as ``(host, port)``. Raises :class:`AuditOriginError` with the reason."""
    value = text.strip()
    if value.startswith("["):
        host, sep, port = value[1:].partition("]:")
    else:
        host, sep, port = value.rpartition(":")
        if ":" in host:
            raise AuditOriginError(f"--audit-webhook-listen {safe(text)}: write an IPv6 address in brackets, "
                                   "as [::1]:9444")
    if not sep:
        raise AuditOriginError(f"--audit-webhook-listen {safe(text)}: expected HOST:PORT, such as 127.0.0.1:9444")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise AuditOriginError(f"--audit-webhook-listen {safe(text)}: {safe(port) or 'the port'} is not a port "
                               "number (0-65535)")
    return host, int(port)


def default_config_path(port: int) -> Path:
    """``<cache>/observatory/audit/webhook-<port>.kubeconfig``."""
    return Path(platformdirs.user_cache_dir("observatory")) / "audit" / f"webhook-{port}.kubeconfig"


def webhook_kubeconfig(server: str) -> dict[str, Any]:
    """The webhook configuration kube-apiserver's ``--audit-webhook-config-file`` reads: a kubeconfig (client-go's
    ``clientcmd/api/v1`` Config) whose current context's cluster ``server`` is the receiver's URL; plain HTTP, no
    credentials (the receiver asks for none)."""
    return {"apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": WEBHOOK_NAME, "cluster": {"server": server}}],
            "contexts": [{"name": WEBHOOK_NAME, "context": {"cluster": WEBHOOK_NAME, "user": WEBHOOK_NAME}}],
            "current-context": WEBHOOK_NAME, "preferences": {},
            "users": [{"name": WEBHOOK_NAME, "user": {}}]}


class AuditWebhookFeed(AuditHub):
    """The audit events POSTed to ``host:port`` (see the module docstring). After :meth:`start`, :attr:`port` is the
    port bound (``0`` asks for a free one), :attr:`url` the receiver's URL and :attr:`config_path` its kubeconfig."""

    def __init__(self, host: str, port: int, *, config_path: Path | None = None, **options: Any) -> None:
        super().__init__(f"webhook {self._show(host, port)} (not listening yet)", **options)
        self.host, self.port = host, port
        self.url = ""
        self.config_path = config_path
        self._runner: web.AppRunner | None = None

    @staticmethod
    def _show(host: str, port: int) -> str:
        shown = host if host not in ("",) else "*"
        return f"[{shown}]:{port}" if ":" in shown else f"{shown}:{port}"

    def flags(self) -> str:
        """The API server flags that point it here."""
        return f"--audit-webhook-config-file={self.config_path} --audit-webhook-batch-max-wait={BATCH_MAX_WAIT}"

    def announcement(self) -> list[str]:
        lines = [f"Audit webhook: listening on {self.url}",
                 f"Audit webhook kubeconfig: {self.config_path}",
                 f"Start kube-apiserver (with an --audit-policy-file) or 'observatory lab serve' with: {self.flags()}"]
        if self.host in WILDCARDS:
            lines.append("It listens on every address, and the kubeconfig names 127.0.0.1: for an API server in a "
                         "container or on another machine, put an address of this machine it can reach in its "
                         "server: line.")
        return [safe(line) for line in lines]

    async def start(self) -> None:
        if self._runner is not None:
            return
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host or ("::" if family == socket.AF_INET6 else "0.0.0.0"), self.port))
        except (OSError, OverflowError) as exc:
            sock.close()
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise AuditOriginError(f"--audit-webhook-listen {self._show(self.host, self.port)}: cannot listen "
                                   f"there: {safe(reason)}") from None
        self.port = sock.getsockname()[1]
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_route("*", "/{tail:.*}", self._receive)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        try:
            await runner.setup()
            await web.SockSite(runner, sock).start()
        except BaseException:
            sock.close()
            await runner.cleanup()
            raise
        self._runner = runner
        advertised = "127.0.0.1" if self.host in WILDCARDS else self.host
        host_part = f"[{advertised}]" if ":" in advertised else advertised
        self.url = f"http://{host_part}:{self.port}{WEBHOOK_PATH}"
        path = self.config_path or default_config_path(self.port)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(yaml.safe_dump(webhook_kubeconfig(self.url), sort_keys=False))
        except OSError as exc:
            await self.aclose()
            raise AuditOriginError(f"cannot write the audit webhook kubeconfig {safe(str(path))}: "
                                   f"{exc.strerror or exc}") from None
        self.config_path = path
        self.set_origin(f"webhook {self._show(self.host, self.port)} · {safe(self.flags())}")

    async def aclose(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            with contextlib.suppress(Exception):
                await runner.cleanup()

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        if request.method != "POST":
            return web.Response(status=405, text="only POST: an audit.k8s.io/v1 EventList\n",
                                headers={"Allow": "POST"})
        if request.content_type != "application/json":
            problem = (f"a webhook POST had Content-Type {safe(request.content_type)}, not application/json "
                       "(an audit.k8s.io/v1 EventList)")
            self.count_malformed(problem)
            return web.Response(status=415, text=problem + "\n")
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            problem = f"a webhook batch is larger than {MAX_BODY} bytes"
            self.count_malformed(problem)
            return web.Response(status=413, text=problem + "\n")
        problem = self.add_batch(body)
        if problem:
            return web.Response(status=400, text=problem + "\n")
        return web.Response(status=200, text="{}", content_type="application/json")
