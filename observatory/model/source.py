"""What the screen needs from a cluster, as small capabilities: pure protocols, so ``ui/`` never imports
kubernetes_asyncio and every implementer (``kube.source.ClusterSource``, ``recorder.RecordingSource``,
``replay.ReplaySource``, the tests' recorded sources) is checked against the same types.

A :class:`Source` is what every implementer has: the facts the header shows, a :class:`Feed` of deltas, a
:class:`Binder`, a :class:`LeaseReader` and the :class:`TeachingFacts`. What only some have is said by
:meth:`Source.capabilities` (a :class:`Capabilities` value, None where the source has none), never found by looking
for attributes. Running a scheduler over the connection is not a source's: see ``observatory.scheduler.host``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from observatory.model.access import AccessReview
from observatory.model.audit import AuditEvent
from observatory.model.commands import CommandsContext
from observatory.model.deltas import Delta
from observatory.model.records import BindingExchange, LeaseView

__all__ = ["AccessReviewer", "AuditFeed", "AuditUpdate", "Binder",
           "BoundPodsFeed", "Capabilities", "ClusterFacts", "Feed", "KeyRecorder",
           "LeaseReader", "ReplayProgress", "Source", "TeachingFacts"]


class ClusterFacts(Protocol):
    """Which cluster and scope: ``context`` and ``server`` name it in the header; ``namespace`` is the scope (None:
    all namespaces); ``lab`` and ``read_only`` drive the badges and whether binding is offered."""

    @property
    def context(self) -> str: ...

    @property
    def server(self) -> str: ...

    @property
    def namespace(self) -> str | None: ...

    @property
    def lab(self) -> bool: ...

    @property
    def read_only(self) -> bool: ...


class Feed(Protocol):
    """List-then-watch deltas."""

    def stream(self, kind: str) -> AsyncIterator[Delta]:
        """Deltas for ``kind`` ("pods", "nodes", "events") until cancelled."""
        ...


class Binder(Protocol):
    """The Binding POST."""

    async def bind(self, namespace: str, name: str, node: str, uid: str | None = None) -> BindingExchange:
        """POST a Binding for the pod; every HTTP outcome (2xx, 4xx, 5xx, no answer) is returned as data."""
        ...


class LeaseReader(Protocol):
    """Lease reads (kube-scheduler's leader Lease, for the diagnosis)."""

    async def read_lease(self, namespace: str, name: str) -> LeaseView:
        """GET one coordination.k8s.io/v1 Lease. Never raises: a 403, 404 or connection failure comes back as
        ``LeaseView.unreadable(namespace, name, problem)``."""
        ...


class TeachingFacts(Protocol):
    """The connection facts for equivalent commands, and the credentials to keep out of files."""

    def commands_context(self) -> CommandsContext:
        """Server, context, kubeconfig, auth kind, CA, insecure (never a credential):
        ``source.commands_context().commands(exchange)`` gives the kubectl and curl of a Binding."""
        ...

    @property
    def secrets(self) -> frozenset[str]:
        """Every credential value known, for :func:`observatory.model.transcript.redact` before any text is written
        to a file. Empty when there is none."""
        ...


class AccessReviewer(Protocol):
    """Permissions: where to fall back when listing every namespace is forbidden, and SelfSubjectAccessReviews."""

    @property
    def home_namespace(self) -> str:
        """The context's namespace."""
        ...

    async def access_review(self, verb: str, resource: str, subresource: str = "",
                            namespace: str = "") -> AccessReview:
        """May the user ``verb`` ``resource``[/``subresource``] in ``namespace``? Never raises: no answer is
        ``AccessReview.allowed is None`` with its ``problem``."""
        ...


class BoundPodsFeed(Protocol):
    """The bound pods of every namespace, for node accounting when the screen shows one namespace."""

    def stream_bound_pods(self) -> AsyncIterator[Delta]:
        """List-then-watch deltas (kind ``"bound pods"``) of pods with ``fieldSelector=spec.nodeName!=`` across every
        namespace, until cancelled; a 403 comes as ``WatchState("bound pods", "forbidden", ...)``."""
        ...


@dataclass(frozen=True, slots=True)
class AuditUpdate:
    """What an audit feed read since its last update: the events, in the order they arrived, and its running count
    of input it could not read (a malformed log line or webhook batch) with the last such problem in one sentence."""

    events: tuple[AuditEvent, ...] = ()
    malformed: int = 0
    problem: str = ""


class AuditFeed(Protocol):
    """The API server's audit events, from the lab observatory started, a webhook it listens on, or a log file."""

    @property
    def origin(self) -> str:
        """Where the events come from, for the screen: ``lab``, ``webhook 127.0.0.1:9444``, ``log PATH``."""
        ...

    def audit_stream(self) -> AsyncIterator[AuditUpdate]:
        """Updates until cancelled; never raises for bad input (it is counted in ``malformed``)."""
        ...


class KeyRecorder(Protocol):
    """A recording: each key press the screen handles is written down."""

    def record_key(self, key: str) -> None: ...


class ReplayProgress(Protocol):
    """A replay: it can finish delivering what was recorded (a live cluster never does)."""

    @property
    def finished(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a source offers beyond :class:`Source`; None: not this one. Without ``access`` Bind's access is unknown
    and the namespace fallback goes to ``default``; ``keys`` records key presses; ``replay`` makes the screen keep the
    recorded scope; ``bound_pods`` lets a screen scoped to one namespace count every namespace's pods on the nodes;
    ``audit`` says who wrote each change (the API server's audit events)."""

    access: AccessReviewer | None = None
    audit: AuditFeed | None = None
    bound_pods: BoundPodsFeed | None = None
    keys: KeyRecorder | None = None
    replay: ReplayProgress | None = None


class Source(ClusterFacts, Feed, Binder, LeaseReader, TeachingFacts, Protocol):
    """A connected cluster (or a recording of one) as the screen sees it."""

    def with_namespace(self, namespace: str | None) -> Source:
        """The same cluster scoped to another namespace (None: all)."""
        ...

    def capabilities(self) -> Capabilities:
        """The optional capabilities this source has."""
        ...

    async def close(self) -> None:
        """Release the connection (or the recording); idempotent."""
        ...
