"""The cluster as the UI consumes it: deltas per resource, the Binding POST, Lease reads; over one :class:`Connection`.

:class:`ClusterSource` implements :class:`observatory.model.source.Source` with the access-review capability; the
UI holds one and never imports kubernetes-asyncio. Running a scheduler over the same connection is
:class:`observatory.scheduler.host.InProcessScheduler`'s. It works the same for a real cluster and for the embedded
lab (reached over HTTP like any cluster); ``lab`` only drives the header badge.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from observatory.model.access import AccessReview
from observatory.model.commands import CommandsContext
from observatory.model.deltas import BOUND_PODS, Delta
from observatory.model.records import BindingExchange, LeaseView
from observatory.model.source import AuditFeed, Capabilities

if TYPE_CHECKING:
    from observatory.kube.connect import Connection

__all__ = ["ClusterSource"]


class ClusterSource:
    """One connected cluster, scoped to ``namespace`` (None: all namespaces).

    Attributes for the header: ``context``, ``server`` (the API server URL), ``namespace``, ``lab`` (the embedded
    lab) and ``read_only`` (binding disabled). ``connection`` is the underlying :class:`Connection`, shared by every
    source made with :meth:`with_namespace`. ``reflector_options`` are keyword arguments for each
    :class:`~observatory.kube.reflector.Reflector` (``page_size``, ``watch_timeout``, ``read_timeout``,
    ``backoff_initial``, ``backoff_max``). ``audit`` is the cluster's audit events (an
    :class:`~observatory.kube.audit_feed.AuditHub`: the lab's, a webhook's or a log file's), shared like the
    connection and started and stopped by whoever made it; None when there is none.
    """

    def __init__(self, conn: Connection, *, namespace: str | None = None, lab: bool = False, read_only: bool = False,
                 reflector_options: Mapping[str, Any] | None = None, audit: AuditFeed | None = None) -> None:
        self.connection = conn
        self.context = conn.context
        self.server = conn.server
        self.namespace = namespace
        self.lab = lab
        self.read_only = read_only
        self.reflector_options = dict(reflector_options or {})
        self.audit = audit

    def __repr__(self) -> str:
        scope = self.namespace or "all namespaces"
        return f"ClusterSource(context={self.context!r}, server={self.server!r}, scope={scope!r})"

    def commands_context(self) -> CommandsContext:
        """The facts for the equivalent kubectl and curl commands of a Binding
        (``source.commands_context().commands(exchange)``): this connection's server, context, auth kind, CA and
        insecure flag, and ``--kubeconfig`` when one file was loaded (None in-cluster or when several files were
        merged from ``KUBECONFIG``). No credential."""
        conn = self.connection
        kubeconfig = conn.kubeconfig if len(conn.kubeconfig_files) == 1 else None
        return CommandsContext(server=conn.server, context=conn.context if conn.source == "kubeconfig" else "",
                               kubeconfig=kubeconfig, auth=conn.auth, ca=conn.ca, insecure=conn.insecure)

    @property
    def secrets(self) -> frozenset[str]:
        """Every credential value of the connection (:attr:`Connection.secrets`), for
        :func:`observatory.model.transcript.redact` before anything is written to a file."""
        return self.connection.secrets

    def stream(self, kind: str) -> AsyncIterator[Delta]:
        """List-then-watch deltas of ``kind`` (``"pods"``, ``"events"``, ``"nodes"``, ``"namespaces"``) in this
        source's namespace (cluster-scoped kinds such as nodes: always cluster-wide), until cancelled. Each call
        starts a new reflector. Raises ValueError for any other kind."""
        from observatory.kube.reflector import Reflector

        return Reflector(self.connection.api, kind, self.namespace, **self.reflector_options).run()

    async def stream_bound_pods(self) -> AsyncIterator[Delta]:
        """List-then-watch deltas of the pods of every namespace that have a node
        (``GET /api/v1/pods?fieldSelector=spec.nodeName!=``, as ``observatory schedule`` and kube-scheduler watch
        them), with kind ``"bound pods"``, until cancelled. A 403 is a ``WatchState`` with state ``forbidden``."""
        from observatory.kube.reflector import Reflector

        reflector = Reflector(self.connection.api, "pods", None, field_selector="spec.nodeName!=",
                              **self.reflector_options)
        async for delta in reflector.run():
            yield dataclasses.replace(delta, kind=BOUND_PODS)

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

    async def read_lease(self, namespace: str, name: str) -> LeaseView:
        """``GET /apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}`` as a LeaseView (kube-scheduler's
        ``kube-system/kube-scheduler`` for the diagnosis). Never raises: 404, 403, other HTTP answers and transport
        failures come back as ``LeaseView.unreadable`` (see :func:`observatory.kube.lease.read_lease`)."""
        from observatory.kube.lease import read_lease

        return await read_lease(self.connection.api, namespace, name)

    @property
    def home_namespace(self) -> str:
        """The context's namespace (``-n``, else the kubeconfig context's, else ``default``; in a pod, its own):
        where the screen falls back when listing every namespace is forbidden."""
        return self.connection.namespace or "default"

    async def access_review(self, verb: str, resource: str, subresource: str = "",
                            namespace: str = "") -> AccessReview:
        """``POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews``: may this connection's user ``verb``
        ``resource``[/``subresource``] in ``namespace``? Never raises: no answer is ``allowed=None`` with the
        ``problem`` (see :func:`observatory.kube.access.review_access`)."""
        from observatory.kube.access import review_access

        return await review_access(self.connection.api, verb, resource, subresource=subresource, namespace=namespace)

    def capabilities(self) -> Capabilities:
        """Access reviews (:meth:`access_review`, :attr:`home_namespace`), the bound pods of every namespace
        (:meth:`stream_bound_pods`) and the audit feed when there is one."""
        return Capabilities(access=self, bound_pods=self, audit=self.audit)

    def with_namespace(self, namespace: str | None) -> ClusterSource:
        """The same cluster and connection scoped to ``namespace`` (None: all namespaces)."""
        return ClusterSource(self.connection, namespace=namespace, lab=self.lab, read_only=self.read_only,
                             reflector_options=self.reflector_options, audit=self.audit)

    async def close(self) -> None:
        """Close the shared connection (every source made with :meth:`with_namespace` stops working); idempotent."""
        await self.connection.close()
