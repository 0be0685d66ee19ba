"""What the screen does when the API server says no. A mixin of :class:`~observatory.ui.app.ObservatoryApp`, kept
apart so the app module stays small.

* **Namespace fallback.** A 403 on the list or watch of pods or events across every namespace (``-A``, or the lab's
  default) rescopes the screen to the context's namespace (``source.home_namespace``, else ``default``), with a
  notification and a banner: ``pods: listing all namespaces is forbidden; showing namespace team-a``. A 403 in the
  one namespace shown is a banner line with the API server's message.
* **Nodes forbidden.** The nodes pane is built from the pods' ``spec.nodeName`` (nodes known only by name), titled
  and marked ``node details forbidden``; the diagnosis, the fit preview, the bind chooser and its warnings say the
  same instead of calling such nodes missing (:mod:`observatory.model.access`, ``ClusterState.nodes_forbidden``).
* **Bind and RBAC.** Before Bind is offered, a SelfSubjectAccessReview asks whether the user may ``create
  pods/binding`` in the selected pod's namespace (else in the watched one); answers are cached per namespace and
  asked again after a rescope. A refusal disables Bind (``check_action``: the footer dims it and ``b`` sends
  nothing) and the banner says why: ``Bind disabled: not allowed to create pods/binding in team-a (RBAC)``. When
  the review cannot be made (no such endpoint, refused, unreachable) Bind stays enabled and the banner says
  ``Bind: access unknown in team-a (...)``. A source without ``access_review`` (a recording, a replay) is not asked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.css.query import NoMatches

from observatory.model.access import NODE_DETAILS_FORBIDDEN, AccessReview, scope_fallback_notice
from observatory.model.deltas import FORBIDDEN
from observatory.model.records import PodView
from observatory.model.state import ClusterState
from observatory.ui.widgets.exchange_pane import EMPTY_HINT, ExchangePane
from observatory.ui.widgets.header_bar import HeaderBar
from observatory.ui.widgets.nodes_pane import NodesPane
from observatory.ui.widgets.permissions_banner import PermissionsBanner

if TYPE_CHECKING:
    from observatory.ui.source import Source

FALLBACK_KINDS = ("pods", "events")
"""Namespaced kinds whose 403 across every namespace makes the screen fall back to one namespace."""
BIND = ("create", "pods", "binding")
"""What a Binding needs: ``create`` on ``pods/binding``."""


def render_named_node(name: str, pods: list[PodView], selected: str | None) -> Text:
    """A node known only from its pods' ``spec.nodeName``: its name, the mark, the requests of its pods, the pods."""
    live = [p for p in pods if not p.terminal]
    out = Text()
    out.append(name, style="bold")
    out.append(f"  {NODE_DETAILS_FORBIDDEN}", style="magenta")
    out.append(f"  pods {len(live)}, requests cpu {sum(p.cpu_request_milli for p in live)}m", style="dim")
    for pod in pods:
        out.append(f"\n{'▶ ' if pod.key == selected else '  '}")
        out.append(pod.key, style="bold" if pod.key == selected else "")
        out.append("  ")
        out.append(pod.status)
    return out


def named_node_options(state: ClusterState) -> list[tuple[str, Text]]:
    """The bind chooser's options when nodes are forbidden: every node name the pods are bound to, marked."""
    options = []
    for name in sorted({pod.node_name for pod in state.orphans()}):
        label = Text(name, style="bold")
        label.append(f"  {NODE_DETAILS_FORBIDDEN}", style="magenta")
        options.append((name, label))
    return options


class PermissionsFlow:
    """Namespace fallback, the nodes-forbidden placement, and Bind gated by a SelfSubjectAccessReview."""

    state: ClusterState
    source: Source
    selected: str | None
    _dirty: set[str]
    _access: dict[str, AccessReview] | None = None
    """``create pods/binding`` answers by namespace, for :attr:`_access_source`."""
    _access_source: object = None
    _asking: set[str] | None = None
    _fallback: tuple[str, str] | None = None
    """(namespace fallen back to, the banner's notice)."""

    # -- called by the app -----------------------------------------------------------------------------------------

    def show_permissions(self) -> None:
        """On every repaint: fall back from a forbidden all-namespaces scope, ask for Bind's access review where
        none is cached, and show the banner."""
        self._fall_back_when_forbidden()
        self._review_bind_access()
        self._show_banner()
        self.query_one(ExchangePane).hint(self.bind_hint())

    def bind_hint(self) -> str:
        """The exchange pane's text before the first Binding: how to send one, or why ``b`` does nothing now."""
        if self.source.read_only:
            return "Read-only (--read-only): b sends no Binding."
        refusal = self.bind_refusal()
        if refusal is not None:
            return f"No Binding sent yet. {refusal.notice('Bind')}: b does nothing here."
        return EMPTY_HINT

    def bind_refusal(self) -> AccessReview | None:
        """The access review that refuses Bind where it would go now, None when Bind is not refused."""
        namespace = self._bind_namespace()
        review = (self._access or {}).get(namespace) if namespace and self._access_source is self.source else None
        return review if review is not None and review.refused else None

    def show_placement(self, pane: NodesPane) -> None:
        """The nodes pane, or, with nodes forbidden, the nodes known from the pods' ``spec.nodeName``."""
        if not self.state.nodes_forbidden:
            pane.show(self.state.placement(), self.selected, self.state.orphans())
            return
        pane.border_title = f"{pane.border_title} · {NODE_DETAILS_FORBIDDEN}"
        pane.show([], self.selected, self.state.orphans(), render_missing=render_named_node)

    # -- namespace fallback ------------------------------------------------------------------------------------------

    def _fall_back_when_forbidden(self) -> None:
        if self.source.namespace is not None or getattr(self, "replaying", False):
            return
        watches = self.state.watch_states
        refused = [kind for kind in FALLBACK_KINDS if kind in watches and watches[kind].state == FORBIDDEN]
        if not refused:
            return
        home = getattr(self.source, "home_namespace", None) or "default"
        notice = scope_fallback_notice(refused, home)
        self._fallback = (home, notice)
        self.rescope(home)
        self.notify(f"{notice}.\n{watches[refused[0]].detail}", title="Permissions", severity="warning", timeout=10)

    # -- Bind and the access review ----------------------------------------------------------------------------------

    def _bind_namespace(self) -> str | None:
        if self.selected and "/" in self.selected:
            return self.selected.split("/", 1)[0]
        return self.source.namespace

    def _review_bind_access(self) -> None:
        if self._access_source is not self.source:  # a new scope (or a new source): ask again
            self._access_source, self._access, self._asking = self.source, {}, set()
        namespace = self._bind_namespace()
        if (not namespace or namespace in self._access or namespace in self._asking or self.source.read_only
                or not hasattr(self.source, "access_review")):
            return
        self._asking.add(namespace)
        self.review_bind_access(self.source, namespace)

    @work(group="access", exit_on_error=False)
    async def review_bind_access(self, source: Source, namespace: str) -> None:
        """POST the SelfSubjectAccessReview for ``create pods/binding`` in ``namespace``; keep the answer while
        ``source`` is still the one shown, and re-evaluate Bind."""
        verb, resource, subresource = BIND
        try:
            review = await source.access_review(verb, resource, subresource, namespace)
        except Exception as exc:
            review = AccessReview(verb, resource, subresource, namespace, problem=f"{type(exc).__name__}: {exc}")
        if source is not self._access_source or self._access is None:
            return
        self._access[namespace] = review
        if self._asking is not None:
            self._asking.discard(namespace)
        self.refresh_bind_key()

    # -- banner ----------------------------------------------------------------------------------------------------

    def _banner_lines(self) -> tuple[str, ...]:
        lines = []
        if self._fallback is not None and self.source.namespace == self._fallback[0]:
            lines.append(self._fallback[1])
        if self.source.namespace is not None:  # refused in the one namespace shown, too: the server's words
            watches = self.state.watch_states
            lines.extend(f"{kind}: {watches[kind].detail}" for kind in FALLBACK_KINDS
                         if kind in watches and watches[kind].state == FORBIDDEN and watches[kind].detail)
        namespace = self._bind_namespace()
        review = (self._access or {}).get(namespace) if namespace and self._access_source is self.source else None
        if review is not None and review.notice("Bind"):
            lines.append(review.notice("Bind"))
        return tuple(lines)

    def _show_banner(self) -> None:
        lines = self._banner_lines()
        try:
            banner = self.query_one(PermissionsBanner)
        except NoMatches:
            if not lines:
                return
            header = self.query_one(HeaderBar)
            banner = PermissionsBanner(id="permissions")
            header.parent.mount(banner, after=header)
        banner.show(lines)
