"""What the UI needs from a cluster: a small protocol, so ``ui/`` never imports kubernetes_asyncio.

:class:`observatory.kube.source.ClusterSource` implements it over a real connection (a cluster or the lab, both over
HTTP); tests and snapshots implement it with recorded deltas.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Protocol

from observatory.model.access import AccessReview
from observatory.model.commands import CommandsContext
from observatory.model.deltas import Delta
from observatory.model.records import BindingExchange, LeaseView

if TYPE_CHECKING:
    from observatory.model.decisions import SchedulingDecision
    from observatory.scheduler.options import SchedulerOptions


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

    # -- added for issue 7 (permissions; optional: a source without them is "access unknown", falls back to
    # "default") ---------------------------------------------------------------------------------------------------

    home_namespace: str
    """The context's namespace, where the screen falls back when listing every namespace is forbidden."""

    async def access_review(self, verb: str, resource: str, subresource: str = "",
                            namespace: str = "") -> AccessReview:
        """A SelfSubjectAccessReview: may the user ``verb`` ``resource``[/``subresource``] in ``namespace``?
        Never raises: no answer is ``AccessReview.allowed is None`` with its ``problem``."""
        ...

    # -- added for issue 9 (the scheduler in the screen; optional: a source without it cannot run one) ------------

    def run_scheduler(self, options: SchedulerOptions, *,
                      log: Callable[[str], None] | None = None) -> AsyncIterator[SchedulingDecision]:
        """Run an in-process scheduler for ``options.scheduler_name`` in this source's namespace (None: every
        namespace), yielding one SchedulingDecision per attempt until the iteration is closed or cancelled (then its
        watches stop and a held Lease is released). Read-only mode forces a dry run. Raises ValueError for invalid
        ``options``; the iterator raises ``SchedulerStopped`` when a leader-election Lease is lost. ``log`` gets the
        lines that are not decisions (synced, a watch in trouble)."""
        ...
