"""The embedded lab as a cluster: the lab's API server with its simulated control plane.

:class:`EmbeddedLab` is what ``observatory --lab``, ``observatory lab serve``, ``why`` and ``schedule`` without a
kubeconfig, the tests and the benchmarks start. It is a :class:`~observatory.lab.server.LabServer` (the API server,
kubelets, pod GC and node lifecycle) whose default-scheduler is observatory's one scheduler,
:class:`observatory.scheduler.loop.Scheduler`, connected to the lab over HTTP as kube-scheduler connects to
kube-apiserver:

* it reads a kubeconfig of its own (kind's ``/etc/kubernetes/scheduler.conf``), written to a private temporary
  folder and removed once read, with the lab's control-plane token (every lab has one, so the lab tells its
  scheduler's requests from anyone else's even when it demands no token of others);
* it sends kube-scheduler's user agents (:mod:`observatory.lab.audit.identity`): ``.../scheduler`` on its
  informers, Bindings, status patches and events, ``.../leader-election`` on its Lease, each from a client of its
  own as ``cmd/kube-scheduler/app/options/options.go`` makes them;
* one instance serves every name in ``LabSettings.scheduler_names`` as a profile, on the host kube-scheduler runs
  on (the control-plane node, as in kind), so its events say ``default-scheduler-<node>``;
* it holds the ``kube-system/kube-scheduler`` Lease by leader election (15 s, renewed every 2 s) and releases it
  when the lab stops cleanly; after a crash, a new lab on the saved state waits out the old holder's 15 s, as a
  restarted kube-scheduler does;
* it waits ``LabSettings.bind_delay`` between a decision and its Binding, so watchers see the Pending frame first;
* should it stop (a lost Lease, an unexpected error), it is started again after a second, as the kubelet restarts
  kube-scheduler's static pod.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

from observatory.kube.connect import Connection, connect
from observatory.lab.audit.identity import SCHEDULER_AGENT, SCHEDULER_LEADER_ELECTION_AGENT
from observatory.lab.kubeconfig import write_kubeconfig
from observatory.lab.server import LabServer
from observatory.lab.simulation import scheduler_host
from observatory.scheduler.loop import Scheduler
from observatory.scheduler.options import SchedulerOptions
from observatory.scheduling import DEFAULT_SCHEDULER_NAME

__all__ = ["LAB_BIND_CONCURRENCY", "LEASE_NAME", "LEASE_NAMESPACE", "EmbeddedLab"]

log = logging.getLogger("observatory.lab.scheduler")

LEASE_NAMESPACE, LEASE_NAME = "kube-system", "kube-scheduler"
"""kube-scheduler's leader-election Lease (``--leader-elect-resource-namespace``/``-name`` defaults)."""
LAB_BIND_CONCURRENCY = 64
"""Bindings the lab's scheduler has in flight at once, each waiting out the bind delay first."""
RESTART_SECONDS = 1.0
"""How long after stopping the lab's scheduler is started again."""


class EmbeddedLab(LabServer):
    """One running lab cluster. ``await start()``, read :attr:`url` and :attr:`kubeconfig_path`, ``await stop()``.

    :attr:`scheduler` is the running default-scheduler (None while ``LabSettings.scheduler`` is off or between
    restarts)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scheduler: Scheduler | None = None
        self._connection: Connection | None = None
        self._lease_connection: Connection | None = None
        self._scheduler_task: asyncio.Task[None] | None = None

    def scheduler_options(self) -> SchedulerOptions:
        """The lab's default-scheduler: every configured name a profile, leader-elected on kube-scheduler's Lease."""
        names = list(dict.fromkeys(self.settings.scheduler_names)) or [DEFAULT_SCHEDULER_NAME]
        return SchedulerOptions(names[0], profiles=tuple(names[1:]), leader_elect=True,
                                lease_namespace=LEASE_NAMESPACE, lease_name=LEASE_NAME,
                                hostname=scheduler_host(self.registry), bind_delay=self.settings.bind_delay,
                                bind_concurrency=LAB_BIND_CONCURRENCY,
                                percentage_of_nodes_to_score=self.settings.percentage_of_nodes_to_score,
                                profile_percentages=tuple(self.settings.profile_percentage_of_nodes_to_score.items()))

    async def start(self) -> None:
        """Start the API server and its simulated components, then the default-scheduler. Raises LabError."""
        await super().start()
        if not self.settings.scheduler:
            return
        try:
            self._connection, self._lease_connection = await self._connect()
        except BaseException:
            await super().stop()
            raise
        self._scheduler_task = asyncio.get_running_loop().create_task(self._run_scheduler(),
                                                                      name="lab-default-scheduler")

    async def _connect(self) -> tuple[Connection, Connection]:
        """The scheduler's client and its leader election's, with the control plane's credentials, through a
        kubeconfig read once."""
        folder = Path(tempfile.mkdtemp(prefix="observatory-scheduler-"))
        try:
            conf = write_kubeconfig(folder / "scheduler.conf", self.url, ca_pem=self.ca_pem,
                                    token=self.control_plane_token, context="kube-scheduler")
            main = await connect(str(conf), agent=SCHEDULER_AGENT)
            try:
                return main, await connect(str(conf), agent=SCHEDULER_LEADER_ELECTION_AGENT)
            except BaseException:
                await main.close()
                raise
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    async def _run_scheduler(self) -> None:
        assert self._connection is not None
        options = self.scheduler_options()
        while True:
            lease_api = self._lease_connection.api if self._lease_connection is not None else None
            self.scheduler = Scheduler(self._connection.api, options, log=log.info, lease_api=lease_api)
            try:
                async with contextlib.aclosing(self.scheduler.decisions()) as decisions:
                    async for _decision in decisions:
                        pass  # the decisions reach clients as events, conditions and Bindings
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("the lab's default-scheduler stopped (%s); starting it again", exc)
            self.scheduler = None
            await asyncio.sleep(RESTART_SECONDS)

    async def stop(self) -> None:
        """Stop the default-scheduler first (its Bindings in flight get two seconds, then it releases its Lease),
        then the API server and its components, saving the state."""
        if self._scheduler_task is not None:
            self._scheduler_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._scheduler_task
            self._scheduler_task = None
            self.scheduler = None
        for connection in (self._connection, self._lease_connection):
            if connection is not None:
                await connection.close()
        self._connection = self._lease_connection = None
        await super().stop()
