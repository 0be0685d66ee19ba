"""Reaching the cluster a command works on: the kubeconfig's, the pod's own, or an embedded lab started for it.

One async context manager, :func:`connected`, for the screen (``observatory``), ``observatory why`` and
``observatory schedule``:

1. **The lab when there is nothing else.** With ``--lab``, or with no ``--kubeconfig``, no kubeconfig file
   (``KUBECONFIG``, ``~/.kube/config``) and not inside a pod (:func:`wants_lab`), it starts an
   :class:`~observatory.embedded.EmbeddedLab`. The lab writes its own kubeconfig and never one that a running lab
   still serves (:mod:`observatory.lab.kubeconfig`), so the screen's lab and ``schedule``'s lab can run together;
   a one-shot command (``why``) keeps its lab's kubeconfig in a temporary directory instead.
2. **Connect** (:func:`observatory.kube.connect.connect`), then **check reachability** (``GET /version``,
   :func:`~observatory.kube.connect.check_reachable`), then hand over a :class:`Connected`.
3. **Close** the connection and stop the lab when the block ends, however it ends.

Every failure is one message on ``err`` and a :class:`NotConnected` carrying the exit code: 1 when the embedded lab
cannot start, 2 when the kubeconfig cannot be used or the cluster cannot be reached.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from observatory.embedded import EmbeddedLab
from observatory.kube.connect import ConnectError, Connection, check_reachable, connect, find_kubeconfig, in_cluster
from observatory.lab.kubeconfig import LAB_NAME
from observatory.lab.server import LabError
from observatory.model.text import safe
from observatory.settings import LabSettings

__all__ = ["EXIT_CONNECT_FAILED", "EXIT_LAB_FAILED", "Connected", "NotConnected", "connected", "wants_lab"]

EXIT_LAB_FAILED = 1
"""The exit code when the embedded lab cannot start (a bad scenario, a port in use)."""
EXIT_CONNECT_FAILED = 2
"""The exit code when the kubeconfig cannot be used or the cluster does not answer."""
DEFAULT_SCENARIO = "manual-binding"


class NotConnected(Exception):
    """No connection; the reason has been written to ``err``. ``exit_code`` is what the command exits with."""

    def __init__(self, exit_code: int) -> None:
        super().__init__(f"not connected (exit code {exit_code})")
        self.exit_code = exit_code


@dataclass(frozen=True)
class Connected:
    """A reachable cluster: ``connection``, and ``lab`` when it is an embedded lab started for this command."""

    connection: Connection
    lab: EmbeddedLab | None = None

    @property
    def kubeconfig(self) -> str | None:
        """The kubeconfig that reaches the cluster (for ``export KUBECONFIG=...``), as the connection loaded it."""
        return self.connection.kubeconfig


def wants_lab(lab: bool, kubeconfig: str | None) -> bool:
    """Whether to start the embedded lab: ``--lab``, or no ``--kubeconfig``, no kubeconfig file and not in a pod."""
    return lab or (not kubeconfig and find_kubeconfig(None) is None and not in_cluster())


@contextlib.asynccontextmanager
async def connected(lab_settings: LabSettings, *, kubeconfig: str | None = None, context: str | None = None,
                    namespace: str | None = None, lab: bool = False, scenario: str | None = None,
                    err: TextIO | None = None, announce: bool = False, one_shot: bool = False,
                    timeout: float = 5.0) -> AsyncIterator[Connected]:
    """Connect as the module docstring says and yield a :class:`Connected`; close everything on exit.

    ``kubeconfig``, ``context`` and ``namespace`` are the ``--kubeconfig``, ``--context`` and ``-n`` flags (for the
    lab, ``context`` is its own, ``observatory-lab``). ``lab`` is ``--lab``; ``scenario`` the lab's scenario
    (default ``manual-binding``). ``announce`` writes the lab's URL and kubeconfig path to ``err`` (``Lab API
    server: URL`` and ``Kubeconfig: PATH``, the lines ``lab serve`` prints) for a command whose output is not a
    screen. ``one_shot`` puts the lab's kubeconfig in a temporary directory removed at the end. ``timeout``: seconds
    for the reachability check. Raises :class:`NotConnected` after writing one message to ``err`` (default stderr).
    """
    err = err or sys.stderr
    async with contextlib.AsyncExitStack() as stack:
        started: EmbeddedLab | None = None
        if wants_lab(lab, kubeconfig):
            path = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="observatory-"))) / "kubeconfig" \
                if one_shot else None
            started = EmbeddedLab(lab_settings, scenario=scenario or DEFAULT_SCENARIO, kubeconfig_path=path)
            try:
                await started.start()
            except (LabError, OSError, ValueError) as exc:
                _say(err, f"the embedded lab could not start: {exc}")
                raise NotConnected(EXIT_LAB_FAILED) from None
            stack.push_async_callback(started.stop)
            if announce:
                print(f"Lab API server: {started.url}\nKubeconfig: {started.kubeconfig_path}", file=err, flush=True)
            kubeconfig, context = str(started.kubeconfig_path), LAB_NAME
        try:
            connection = await connect(kubeconfig, context, namespace)
        except ConnectError as exc:
            _say(err, str(exc))
            raise NotConnected(EXIT_CONNECT_FAILED) from None
        stack.push_async_callback(connection.close)
        try:
            await check_reachable(connection, timeout)
        except ConnectError as exc:
            _say(err, str(exc))
            raise NotConnected(EXIT_CONNECT_FAILED) from None
        yield Connected(connection, started)


def _say(err: TextIO, message: str) -> None:
    """One message on ``err``, control characters shown as escapes (a kubeconfig's context or cluster name, or a
    server's answer, is quoted in it)."""
    print(safe(f"observatory: {message}"), file=err, flush=True)
