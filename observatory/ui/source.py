"""What the UI needs from a cluster: a small protocol, so ``ui/`` never imports kubernetes_asyncio.

:class:`observatory.kube.source.ClusterSource` implements it over a real connection (a cluster or the lab, both over
HTTP); tests and snapshots implement it with recorded deltas.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from observatory.model.commands import CommandsContext
from observatory.model.deltas import Delta
from observatory.model.records import BindingExchange, LeaseView


class Source(Protocol):
    """A connected cluster as the app sees it.

    ``context`` and ``server`` name it in the header; ``namespace`` is the scope (None: all namespaces); ``lab`` and
    ``read_only`` drive the badges and whether binding is offered.
    """

    context: str
    server: str
    namespace: str | None
    lab: bool
    read_only: bool

    def stream(self, kind: str) -> AsyncIterator[Delta]:
        """List-then-watch deltas for ``kind`` ("pods", "nodes", "events") until cancelled."""
        ...

    async def bind(self, namespace: str, name: str, node: str, uid: str | None = None) -> BindingExchange:
        """POST a Binding for the pod; every HTTP outcome (2xx, 4xx, 5xx, no answer) is returned as data."""
        ...

    async def read_lease(self, namespace: str, name: str) -> LeaseView:
        """GET one coordination.k8s.io/v1 Lease (kube-scheduler's leader Lease for the diagnosis). Never raises:
        a 403, 404 or connection failure comes back as ``LeaseView.unreadable(namespace, name, problem)``."""
        ...

    def with_namespace(self, namespace: str | None) -> Source:
        """The same cluster scoped to another namespace (None: all)."""
        ...

    # -- added for issue 6 (teaching and recording) -------------------------------------------------------------

    def commands_context(self) -> CommandsContext:
        """The connection facts (server, context, kubeconfig, auth kind, CA, insecure; never a credential) for the
        equivalent kubectl and curl commands of a Binding: ``source.commands_context().commands(exchange)`` gives
        :class:`~observatory.model.commands.EquivalentCommands`."""
        ...

    @property
    def secrets(self) -> frozenset[str]:
        """Every credential value known, for :func:`observatory.model.transcript.redact` before any text (a
        transcript, a recording) is written to a file. Empty when there is none (the lab without a token, a
        replay)."""
        ...
