"""Running the lab: load a scenario or the durable state, listen, write the kubeconfig, stop cleanly.

:class:`LabServer` is used by ``observatory lab serve`` and, in-process, by the TUI and the tests. It listens on
127.0.0.1 by default. On any other address it serves HTTPS with a generated CA and demands a generated bearer token,
both written into the kubeconfig, so kubectl and kubernetes-asyncio connect with verification on. With
``LabSettings.token`` (``lab serve --token``) it does the same on loopback: kubectl (client-go's ``clientcmd``)
sends a kubeconfig's credentials only over TLS ("only try to read the auth information if we are secure"), so a
token over plain HTTP would never arrive. A token lab answers a request without the right token 401 Unauthorized,
except the health checks without credentials (see :func:`observatory.lab.api.authenticated`). An RBAC lab
(``LabSettings.rbac``, ``lab serve --rbac FILE``) does the same with its users' tokens, the first user's in the
kubeconfig, and answers what a user may not do 403 Forbidden (see :mod:`observatory.lab.rbac`). With
``state_path`` (``lab serve --state PATH``) every write is committed to an SQLite database before it is answered
(see :mod:`observatory.lab.persistence`).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import gc
import logging
import socket
from pathlib import Path
from typing import Any

from aiohttp import web

from observatory.lab import errors, gohttp, kubeconfig, persistence, priorityclass, rbac, scenarios, security
from observatory.lab.api import LabContext, build_app
from observatory.lab.audit.auditor import AuditConfigError, LabAuditor, auditor_from_settings
from observatory.lab.eventttl import EventTTL
from observatory.lab.registry import Registry
from observatory.lab.resources import ALL
from observatory.lab.simulation import Simulations, cancel_all
from observatory.lab.store import Store, now_rfc3339
from observatory.lab.volumes import KIND_DEFAULT_CLASS
from observatory.settings import LabSettings

log = logging.getLogger(__name__)

KIND_TO_RESOURCE = {rt.kind: rt for rt in ALL.values()}

SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
"""Namespaces every cluster has; a scenario that leaves them out gets them anyway, as kube-apiserver creates them."""


class LabError(Exception):
    """A lab that cannot start: a bad scenario or state file, a taken port. The message is one readable sentence."""


class StateFileError(LabError):
    """The ``--state`` database cannot be used (see :class:`observatory.lab.persistence.StateError`); the command
    line exits 2 with its one-paragraph message."""


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
        set by :meth:`start` on every lab, so the lab knows its scheduler's requests even when it demands no token of
        anyone else."""
        self._audit_problem = ""
        try:
            self.auditor = auditor_from_settings(self.settings)
            """The lab's audit pipeline (:mod:`observatory.lab.audit`): every request, as kube-apiserver audits it;
            ``auditor.subscribe(listener)`` sees each event. Bad audit settings make :meth:`start` raise LabError."""
        except AuditConfigError as exc:
            self.auditor, self._audit_problem = LabAuditor(), str(exc)
        self.simulations = Simulations(self.registry, self.settings, self.auditor)
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.state: persistence.StateDatabase | None = None
        """The open ``state_path`` database (set by :meth:`load`), the store's journal from then on."""

    def load(self) -> None:
        """Fill the store from the ``state_path`` database when it holds a state, otherwise from the scenario (and
        then store that in the database). Raises StateFileError or LabError."""
        if self.state_path is None:
            self._load_scenario()
            return
        try:
            self.state = persistence.StateDatabase.open(self.state_path, self.settings.state_synchronous)
            snapshot = self.state.load()
            if snapshot is not None:
                self.store.restore(snapshot)
            else:
                self._load_scenario()
                self.state.initialize(self.store.snapshot())
        except persistence.StateError as exc:
            self.close_state()
            raise StateFileError(str(exc)) from None
        except BaseException:
            self.close_state()
            raise
        self.state.attach(self.store)

    def close_state(self) -> None:
        """Close the ``state_path`` database (every write is already in it); later writes are not kept."""
        if self.state is not None:
            self.store.journal = None
            self.state.close()
            self.state = None

    def _load_scenario(self) -> None:
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
        if self._audit_problem:
            raise LabError(self._audit_problem)
        try:
            self.rbac = rbac.load_policy(self.settings.rbac) if self.settings.rbac else None
        except rbac.RbacError as exc:
            raise LabError(str(exc)) from None
        self.load()
        try:
            await self._listen()
        except BaseException:
            self.close_state()
            raise

    async def _listen(self) -> None:
        # The loaded objects live as long as the lab: move them out of the collector's way, so full collections
        # stop pausing a large lab for hundreds of milliseconds.
        gc.collect()
        gc.freeze()
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
                             rbac=self.rbac, control_plane_token=self.control_plane_token, auditor=self.auditor)
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
        if self.settings.event_ttl:  # Events expire as their etcd lease would (lab/eventttl.py)
            self._tasks.append(asyncio.create_task(EventTTL(self.store, self.settings.event_ttl).run()))

    async def stop(self) -> None:
        """End every watch, stop listening, give up the lab's kubeconfig under the cache directory (see
        :mod:`observatory.lab.kubeconfig`) and close the state database."""
        await cancel_all(self._tasks)
        await self.simulations.stop()
        self.store.close_all_watches()
        await self._close_listener()
        self.close_state()
        await self.auditor.close()

    async def _close_listener(self) -> None:
        """Stop serving HTTP and give up the lab's own kubeconfig under the cache directory, if it has one."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._own_kubeconfig is not None:
            kubeconfig.release_default(self._own_kubeconfig, self.url)
            self._own_kubeconfig = None
