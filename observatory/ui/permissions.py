"""What the screen does when the API server says no: :class:`PermissionsController`, held by the main screen.

* **Namespace fallback.** A 403 on the list or watch of pods or events across every namespace (``-A``, or the lab's
  default) rescopes the screen to the context's namespace (the access-review capability's ``home_namespace``, else
  ``default``), with a notification and a banner: ``pods: listing all namespaces is forbidden; showing namespace
  team-a``. A 403 in the one namespace shown is a banner line with the API server's message.
* **Nodes forbidden.** The nodes pane is built from the pods' ``spec.nodeName`` (nodes known only by name), titled
  and marked ``node details forbidden``; the diagnosis, the fit preview, the bind chooser and its warnings say the
  same instead of calling such nodes missing (:mod:`observatory.model.access`, ``ClusterState.nodes_forbidden``).
* **Bind and RBAC.** Before Bind is offered, a SelfSubjectAccessReview asks whether the user may ``create
  pods/binding`` in the selected pod's namespace (else in the watched one); answers are cached per namespace and
  asked again after a rescope. A refusal disables Bind (``check_action``: the footer dims it and ``b`` sends nothing)
  and the banner says why: ``Bind disabled: not allowed to create pods/binding in team-a (RBAC)``. When the review
  cannot be made (no such endpoint, refused, unreachable) Bind stays enabled and the banner says ``Bind: access
  unknown in team-a (...)``. A source without the access-review capability (a recording, a replay) is not asked.
"""

from __future__ import annotations

from typing import Protocol

from rich.text import Text

from observatory.model.access import NODE_DETAILS_FORBIDDEN, AccessReview, scope_fallback_notice
from observatory.model.deltas import FORBIDDEN
from observatory.model.source import AccessReviewer, Source
from observatory.model.state import ClusterState
from observatory.ui.host import Notifier, ScreenFacts
from observatory.ui.widgets.exchange_pane import EMPTY_HINT

__all__ = ["BIND", "FALLBACK_KINDS", "PermissionsController", "PermissionsHost", "bound_pods_notice",
           "named_node_options"]

FALLBACK_KINDS = ("pods", "events")
"""Namespaced kinds whose 403 across every namespace makes the screen fall back to one namespace."""
BIND = ("create", "pods", "binding")
"""What a Binding needs: ``create`` on ``pods/binding``."""


def bound_pods_notice(namespace: str) -> str:
    """The banner line when the cluster-wide list of bound pods is refused (403)."""
    return (f"bound pods: listing the pods of every namespace is forbidden; node counts see only namespace "
            f"{namespace}'s pods")


def named_node_options(state: ClusterState) -> list[tuple[str, Text]]:
    """The bind chooser's options when nodes are forbidden: every node name the pods are bound to, marked."""
    options = []
    for name in sorted({pod.node_name for pod in state.orphans()}):
        label = Text(name, style="bold")
        label.append(f"  {NODE_DETAILS_FORBIDDEN}", style="magenta")
        options.append((name, label))
    return options


class PermissionsHost(ScreenFacts, Notifier, Protocol):
    """What the permissions need from the screen."""

    @property
    def selected(self) -> str | None: ...

    @property
    def replaying(self) -> bool: ...

    def rescope(self, namespace: str | None) -> None: ...

    def review_access(self, source: Source, access: AccessReviewer, namespace: str) -> None:
        """Run :meth:`PermissionsController.review` in a worker."""
        ...

    def refresh_bind_key(self) -> None:
        """Bind's state may have changed: redraw the footer if it did."""
        ...


class PermissionsController:
    """Namespace fallback, and Bind gated by a SelfSubjectAccessReview; the banner's lines."""

    def __init__(self, host: PermissionsHost) -> None:
        self.host = host
        self.access: dict[str, AccessReview] = {}
        """``create pods/binding`` answers by namespace, for :attr:`access_source`."""
        self.access_source: Source | None = None
        self.asking: set[str] = set()
        self.fallback: tuple[str, str] | None = None
        """(namespace fallen back to, the banner's notice)."""

    def update(self) -> None:
        """On every repaint: fall back from a forbidden all-namespaces scope, and ask for Bind's access review where
        none is cached."""
        self._fall_back_when_forbidden()
        self._review_bind_access()

    def bind_hint(self) -> str:
        """The exchange pane's text before the first Binding: how to send one, or why ``b`` does nothing now."""
        if self.host.source.read_only:
            return "Read-only (--read-only): b sends no Binding."
        refusal = self.bind_refusal()
        if refusal is not None:
            return f"No Binding sent yet. {refusal.notice('Bind')}: b does nothing here."
        return EMPTY_HINT

    def bind_refusal(self) -> AccessReview | None:
        """The access review that refuses Bind where it would go now, None when Bind is not refused."""
        review = self._review_here()
        return review if review is not None and review.refused else None

    def _review_here(self) -> AccessReview | None:
        namespace = self._bind_namespace()
        return self.access.get(namespace) if namespace and self.access_source is self.host.source else None

    # -- namespace fallback ------------------------------------------------------------------------------------------

    def _fall_back_when_forbidden(self) -> None:
        host = self.host
        if host.source.namespace is not None or host.replaying:
            return
        watches = host.state.watch_states
        refused = [kind for kind in FALLBACK_KINDS if kind in watches and watches[kind].state == FORBIDDEN]
        if not refused:
            return
        access = host.source.capabilities().access
        home = (access.home_namespace if access is not None else None) or "default"
        notice = scope_fallback_notice(refused, home)
        self.fallback = (home, notice)
        host.rescope(home)
        host.notify(f"{notice}.\n{watches[refused[0]].detail}", title="Permissions", severity="warning", timeout=10)

    # -- Bind and the access review ----------------------------------------------------------------------------------

    def _bind_namespace(self) -> str | None:
        selected = self.host.selected
        if selected and "/" in selected:
            return selected.split("/", 1)[0]
        return self.host.source.namespace

    def _review_bind_access(self) -> None:
        source = self.host.source
        if self.access_source is not source:  # a new scope (or a new source): ask again
            self.access_source, self.access, self.asking = source, {}, set()
        namespace = self._bind_namespace()
        access = source.capabilities().access
        if (not namespace or namespace in self.access or namespace in self.asking or source.read_only
                or access is None):
            return
        self.asking.add(namespace)
        self.host.review_access(source, access, namespace)

    async def review(self, source: Source, access: AccessReviewer, namespace: str) -> None:
        """POST the SelfSubjectAccessReview for ``create pods/binding`` in ``namespace``; keep the answer while
        ``source`` is still the one shown, and re-evaluate Bind."""
        verb, resource, subresource = BIND
        try:
            review = await access.access_review(verb, resource, subresource, namespace)
        except Exception as exc:
            review = AccessReview(verb, resource, subresource, namespace, problem=f"{type(exc).__name__}: {exc}")
        if source is not self.access_source:
            return
        self.access[namespace] = review
        self.asking.discard(namespace)
        self.host.refresh_bind_key()

    # -- banner ----------------------------------------------------------------------------------------------------

    def banner_lines(self) -> tuple[str, ...]:
        """The permissions banner: the fallback notice, the server's 403s in the one namespace shown, Bind's
        access."""
        source, lines = self.host.source, []
        if self.fallback is not None and source.namespace == self.fallback[0]:
            lines.append(self.fallback[1])
        if source.namespace is not None:  # refused in the one namespace shown, too: the server's words
            watches = self.host.state.watch_states
            lines.extend(f"{kind}: {watches[kind].detail}" for kind in FALLBACK_KINDS
                         if kind in watches and watches[kind].state == FORBIDDEN and watches[kind].detail)
        if source.namespace is not None and self.host.state.bound_pods_forbidden:
            lines.append(bound_pods_notice(source.namespace))
        review = self._review_here()
        if review is not None and review.notice("Bind"):
            lines.append(review.notice("Bind"))
        return tuple(lines)
