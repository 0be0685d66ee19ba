"""The cluster as the UI consumes it: deltas per resource and the Binding POST, over one :class:`Connection`.

:class:`ClusterSource` implements ``observatory.ui.source.Source``; the UI holds one and never imports
kubernetes-asyncio. It works the same for a real cluster and for the embedded lab (reached over HTTP like any
cluster); ``lab`` only drives the header badge.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from observatory.model.deltas import Delta
from observatory.model.records import BindingExchange

if TYPE_CHECKING:
    from observatory.kube.connect import Connection

__all__ = ["ClusterSource"]


class ClusterSource:
    """One connected cluster, scoped to ``namespace`` (None: all namespaces).

    Attributes for the header: ``context``, ``server`` (the API server URL), ``namespace``, ``lab`` (the embedded
    lab) and ``read_only`` (binding disabled). ``connection`` is the underlying :class:`Connection`, shared by every
    source made with :meth:`with_namespace`. ``reflector_options`` are keyword arguments for each
    :class:`~observatory.kube.reflector.Reflector` (``page_size``, ``watch_timeout``, ``read_timeout``,
    ``backoff_initial``, ``backoff_max``).
    """

    def __init__(self, conn: Connection, *, namespace: str | None = None, lab: bool = False, read_only: bool = False,
                 reflector_options: Mapping[str, Any] | None = None) -> None:
        self.connection = conn
        self.context = conn.context
        self.server = conn.server
        self.namespace = namespace
        self.lab = lab
        self.read_only = read_only
        self.reflector_options = dict(reflector_options or {})

    def __repr__(self) -> str:
        scope = self.namespace or "all namespaces"
        return f"ClusterSource(context={self.context!r}, server={self.server!r}, scope={scope!r})"

    def stream(self, kind: str) -> AsyncIterator[Delta]:
        """List-then-watch deltas of ``kind`` (``"pods"``, ``"events"``, ``"nodes"``, ``"namespaces"``) in this
        source's namespace (cluster-scoped kinds such as nodes: always cluster-wide), until cancelled. Each call
        starts a new reflector. Raises ValueError for any other kind."""
        from observatory.kube.reflector import Reflector

        return Reflector(self.connection.api, kind, self.namespace, **self.reflector_options).run()

    async def bind(self, namespace: str, name: str, node: str, uid: str | None = None) -> BindingExchange:
        """POST the Binding of pod ``namespace/name`` to ``node`` (``uid``: the pod's, as a precondition) and return
        the exchange: 2xx, 4xx, 5xx and transport failures (``status == 0``) are all data. In read-only mode nothing
        is sent and the exchange has ``status == 0`` and ``error`` saying so."""
        from observatory.kube.binding import binding_path, post_binding

        if self.read_only:
            return BindingExchange(
                pod=f"{namespace}/{name}", node=node, method="POST", path=binding_path(namespace, name),
                request_headers=(), request_body=b"", http_version="HTTP/1.1", status=0, reason="",
                response_headers=(), response_body=b"", sent_at=datetime.now(UTC), elapsed_ms=0.0,
                error="Read-only mode: the Binding was not sent.")
        return await post_binding(self.connection.api, namespace, name, node, uid=uid)

    def with_namespace(self, namespace: str | None) -> ClusterSource:
        """The same cluster and connection scoped to ``namespace`` (None: all namespaces)."""
        return ClusterSource(self.connection, namespace=namespace, lab=self.lab, read_only=self.read_only,
                             reflector_options=self.reflector_options)

    async def close(self) -> None:
        """Close the shared connection (every source made with :meth:`with_namespace` stops working); idempotent."""
        await self.connection.close()
