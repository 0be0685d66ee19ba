"""Running the lab: load a scenario or saved state, listen, write the kubeconfig, save state, stop cleanly.

:class:`LabServer` is used by ``observatory lab serve`` and, in-process, by the TUI and the tests. It listens on
127.0.0.1 by default. On any other address it serves HTTPS with a generated CA and demands a generated bearer token,
both written into the kubeconfig, so kubectl and kubernetes-asyncio connect with verification on. With
``LabSettings.token`` (``lab serve --token``) it does the same on loopback: kubectl (client-go's ``clientcmd``)
sends a kubeconfig's credentials only over TLS ("only try to read the auth information if we are secure"), so a
token over plain HTTP would never arrive. A token lab answers a request without the right token 401 Unauthorized,
except the health checks without credentials (see :func:`observatory.lab.api.authenticated`). An RBAC lab
(``LabSettings.rbac``, ``lab serve --rbac FILE``) does the same with its users' tokens, the first user's in the
kubeconfig, and answers what a user may not do 403 Forbidden (see :mod:`observatory.lab.rbac`).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import gc
import json
import logging
import os
import socket
import tempfile
from pathlib import Path
from typing import Any

from aiohttp import web

from observatory.lab import errors, gohttp, kubeconfig, priorityclass, rbac, scenarios, security
from observatory.lab.api import LabContext, build_app
from observatory.lab.registry import Registry
from observatory.lab.resources import ALL
from observatory.lab.simulation import Simulations, cancel_all
from observatory.lab.store import Change, Store, now_rfc3339
from observatory.lab.volumes import KIND_DEFAULT_CLASS
from observatory.settings import LabSettings

log = logging.getLogger(__name__)

KIND_TO_RESOURCE = {rt.kind: rt for rt in ALL.values()}

SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
"""Namespaces every cluster has; a scenario that leaves them out gets them anyway, as kube-apiserver creates them."""


class LabError(Exception):
    """A lab that cannot start: a bad scenario or state file, a taken port. The message is one readable sentence."""


def apply_manifests(registry: Registry, manifests: list[dict[str, Any]], source: str) -> None:
    """Create each manifest through the registry, as ``kubectl create`` would; node and pod status is kept as given.

    Raises LabError naming ``source`` and the object when the API refuses one.
    """
    for manifest in manifests:
        rt = KIND_TO_RESOURCE.get(manifest.get("kind", ""))
        name = (manifest.get("metadata") or {}).get("name", "?")
        if rt is None or manifest.get("apiVersion") != rt.api_version:
            raise LabError(f"{source}: {manifest.get('kind')} {name}: the lab does not serve "
                           f"apiVersion {manifest.get('apiVersion')!r} kind {manifest.get('kind')!r}")
        namespace = (manifest.get("metadata") or {}).get("namespace", "default") if rt.namespaced else ""
        try:
            created = registry.create(rt, namespace, manifest)
            # Create ignores status, as the API server does; a scenario's recorded status (a node's conditions, a
            # pod that is Running, Completed or crash-looping) is then written through /status, as its controller
            # or kubelet would have.
            if rt.name in ("nodes", "pods") and manifest.get("status"):
                status = _stamp_times(manifest["status"])
                registry.update_status(rt, namespace, created["metadata"]["name"], {"metadata": {}, "status": status})
        except errors.StatusError as exc:
            raise LabError(f"{source}: {manifest.get('kind')} {name}: {exc.message}") from None
        except Exception as exc:
            raise LabError(f"{source}: {manifest.get('kind')} {name}: cannot be loaded: "
                           f"{exc}") from None


def _stamp_times(status: dict[str, Any]) -> dict[str, Any]:
    """Conditions get the current time where a scenario leaves the heartbeat/transition times out."""
    now = now_rfc3339()
    conditions = []
    for cond in status.get("conditions") or []:
        cond = dict(cond)
        for key in ("lastHeartbeatTime", "lastTransitionTime"):
            if not cond.get(key):
                cond[key] = now
        conditions.append(cond)
    return {**status, "conditions": conditions} if conditions else dict(status)


class LabServer:
    """One running lab. ``await start()``, read :attr:`url` and :attr:`kubeconfig_path`, ``await stop()``."""

    def __init__(
        self,
        settings: LabSettings | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        scenario: str = "pair",
        state_path: Path | None = None,
        kubeconfig_path: Path | None = None,
    ) -> None:
        self.settings = settings or LabSettings()
        self.host = host
        self.port = port
        self.scenario = scenario
        self.state_path = state_path
        self.kubeconfig_path = kubeconfig_path or kubeconfig.default_kubeconfig_path()
        """The kubeconfig that reaches this lab: ``kubeconfig_path`` when given; otherwise, once :meth:`start` has
        run, the stable ``<cache>/lab/kubeconfig`` if this lab took it, else the lab's own
        ``<cache>/lab/<pid>-<port>/kubeconfig`` (see :mod:`observatory.lab.kubeconfig`)."""
        self._own_kubeconfig: Path | None = None
        """The lab's own file under the cache directory, when no ``kubeconfig_path`` was given (set by start)."""
        self._managed = kubeconfig_path is None
        self.store = Store(self.settings.history_size, self.settings.watch_queue_limit)
        self.registry = Registry(self.store)
        self.url = ""
        self.token: str | None = None
        self.rbac: rbac.Policy | None = None
        """The users and rules of an RBAC lab (``LabSettings.rbac``), read by :meth:`start`."""
        self.user_kubeconfigs: dict[str, Path] = {}
        """An RBAC lab's kubeconfig per user (user name -> path), written by :meth:`start`."""
        self.ca_pem: bytes | None = None
        self.control_plane_token: str | None = None
        """The bearer token of the lab's own control-plane clients (see :class:`~observatory.lab.api.LabContext`),
        set by :meth:`start` when the lab demands tokens."""
        self.simulations = Simulations(self.registry, self.settings)
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._dirty = False

    def load(self) -> None:
        """Fill the store from ``state_path`` when it exists, otherwise from the scenario. Raises LabError."""
        if self.state_path is not None and self.state_path.exists():
            try:
                snap = json.loads(self.state_path.read_text())
                self.store.restore(snap)
            except Exception as exc:
                raise LabError(f"{self.state_path}: not a lab state file this version can read ({exc})") from None
            return
        try:
            manifests = scenarios.load_scenario(self.scenario)
        except scenarios.ScenarioError as exc:
            raise LabError(str(exc)) from None
        declared = {(m.get("metadata") or {}).get("name") for m in manifests if m.get("kind") == "Namespace"}
        system = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
                  for name in SYSTEM_NAMESPACES if name not in declared]
        namespaces = [m for m in manifests if m.get("kind") == "Namespace"]
        others = [m for m in manifests if m.get("kind") != "Namespace"]
        classes = {(m.get("metadata") or {}).get("name") for m in manifests if m.get("kind") == "StorageClass"}
        storage = [] if KIND_DEFAULT_CLASS["metadata"]["name"] in classes else [copy.deepcopy(KIND_DEFAULT_CLASS)]
        # kind's default StorageClass exists before anything a scenario adds, so its claims get the default class.
        apply_manifests(self.registry, system + priorityclass.system_priority_classes() + namespaces + storage +
                        others, f"scenario {self.scenario}")

    async def start(self) -> None:
        """Load, listen and write the kubeconfig. Raises LabError when the address cannot be used."""
        try:
            self.rbac = rbac.load_policy(self.settings.rbac) if self.settings.rbac else None
        except rbac.RbacError as exc:
            raise LabError(str(exc)) from None
        self.load()
        # The loaded objects live as long as the lab: move them out of the collector's way, so full collections
        # stop pausing a large lab for hundreds of milliseconds.
        gc.collect()
        gc.freeze()
        self.store.listeners.append(self._mark_dirty)
        try:
            sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.port))
        except OSError as exc:
            raise LabError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from None
        port = sock.getsockname()[1]
        try:
            await self._serve(sock, port)
        except BaseException:
            sock.close()
            with contextlib.suppress(Exception):
                await self._close_listener()
            raise

    async def _serve(self, sock: socket.socket, port: int) -> None:
        """Serve on the bound ``sock`` (TLS and a token unless plain loopback) and write the kubeconfig."""
        if self._managed:
            kubeconfig.remove_stale_labs()
            own = self._own_kubeconfig = kubeconfig.lab_kubeconfig_path(port)
            own.parent.mkdir(mode=0o700, exist_ok=True)
        else:
            own = self.kubeconfig_path
        ssl_context = None
        loopback = security.is_loopback(self.host)
        if not loopback or self.settings.token or self.rbac is not None:
            hosts = security.advertised_hosts(self.host)
            tls = security.make_tls(hosts, own.parent / "pki")
            ssl_context = tls.ssl_context()
            self.ca_pem = tls.ca_pem
            self.token = self.rbac.kubeconfig_user.token if self.rbac else security.generate_token()
            self.control_plane_token = security.generate_token()
        wildcard = self.host in ("0.0.0.0", "::")
        advertised = security.advertised_hosts(self.host)[0] if wildcard and not loopback else self.host
        scheme = "https" if ssl_context else "http"
        host_part = f"[{advertised}]" if ":" in advertised else advertised
        self.url = f"{scheme}://{host_part}:{port}"
        context = LabContext(self.store, self.registry, self.settings, self.token, f"{host_part}:{port}",
                             rbac=self.rbac, control_plane_token=self.control_plane_token)
        # Go's net/http limits and timeouts, as kube-apiserver serves (lab/gohttp.py)
        self._runner = gohttp.GoLikeAppRunner(build_app(context), access_log=None, shutdown_timeout=1.0,
                                              handler_cancellation=True)
        await self._runner.setup()
        await web.SockSite(self._runner, sock, ssl_context=ssl_context).start()
        kubeconfig.write_kubeconfig(own, self.url, ca_pem=self.ca_pem, token=self.token,
                                    namespace=self.rbac.kubeconfig_user.home_namespace if self.rbac else "default")
        if self.rbac is not None:
            self.user_kubeconfigs = rbac.write_user_kubeconfigs(self.rbac, own, self.url, self.ca_pem)
        if self._managed:
            self.kubeconfig_path = kubeconfig.claim_default(own, self.url)
        self.simulations.start()
        if self.state_path is not None:
            self._tasks.append(asyncio.create_task(self._save_periodically()))

    def _mark_dirty(self, change: Change) -> None:
        self._dirty = True

    def save_state(self) -> None:
        """Write the store to ``state_path``; see :meth:`_save`. Raises OSError or LabError."""
        try:
            self._save()
        except (TypeError, ValueError) as exc:
            raise LabError(f"cannot save the lab state to {self.state_path}: {exc}") from None

    def _save(self) -> None:
        """Write the store to ``state_path`` atomically (temp file in the same folder, then rename)."""
        if self.state_path is None:
            return
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.state_path.parent, prefix=".lab-state-")
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump(self.store.snapshot(), fh, separators=(",", ":"))
            os.replace(tmp, self.state_path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._dirty = False

    async def _save_periodically(self) -> None:
        while True:
            await asyncio.sleep(self.settings.state_save_interval)
            if self._dirty:
                try:
                    self.save_state()
                except (OSError, LabError) as exc:
                    log.warning("could not save lab state to %s: %s", self.state_path, exc)

    async def stop(self) -> None:
        """End every watch, stop listening, give up the lab's kubeconfig under the cache directory (see
        :mod:`observatory.lab.kubeconfig`) and save the state."""
        await cancel_all(self._tasks)
        await self.simulations.stop()
        self.store.close_all_watches()
        await self._close_listener()
        self.save_state()

    async def _close_listener(self) -> None:
        """Stop serving HTTP and give up the lab's own kubeconfig under the cache directory, if it has one."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._own_kubeconfig is not None:
            kubeconfig.release_default(self._own_kubeconfig, self.url)
            self._own_kubeconfig = None
