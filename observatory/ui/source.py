"""What the UI needs from a cluster: a small protocol, so ``ui/`` never imports kubernetes_asyncio.

:class:`observatory.kube.source.ClusterSource` implements it over a real connection (a cluster or the lab, both over
HTTP); tests and snapshots implement it with recorded deltas.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from observatory.model.deltas import Delta
from observatory.model.records import BindingExchange


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

    def with_namespace(self, namespace: str | None) -> Source:
        """The same cluster scoped to another namespace (None: all)."""
        ...
