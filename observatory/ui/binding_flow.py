"""Binding a pod by hand: pick a node (each shown with its fit verdict), confirm what stands in the way, send it in
an exclusive worker, show the exchange. A mixin of :class:`~observatory.ui.app.ObservatoryApp`, kept apart so the
app module stays small.

Nothing is ever refused silently: a bind the API server or the cluster will refuse asks first, and ``y`` sends it
anyway, because seeing the refusal is part of the lesson.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.message import Message

from observatory.model.commands import EquivalentCommands
from observatory.model.fit import FitPreview, NodeFit
from observatory.model.records import BindingExchange
from observatory.model.state import ClusterState
from observatory.model.transcript import PodSnapshot
from observatory.ui.permissions_flow import named_node_options
from observatory.ui.screens.chooser import ChooserScreen
from observatory.ui.screens.confirm import ConfirmScreen
from observatory.ui.widgets.exchange_pane import ExchangePane
from observatory.ui.widgets.pending_pods import PendingPodsPane

if TYPE_CHECKING:
    from observatory.ui.source import Source

_SHOWN_BY_STATE = frozenset({"NotReady", "cordoned", "no Ready condition"})
"""Notes the node's state column already says."""


class BindingResponded(Message):
    """A Binding exchange finished (any status, or none). ``before`` is the pod as it was when the Binding was sent
    (for the transcript); ``commands`` the kubectl and curl that send the same Binding."""

    def __init__(self, exchange: BindingExchange, before: PodSnapshot | None = None,
                 commands: EquivalentCommands | None = None) -> None:
        super().__init__()
        self.exchange = exchange
        self.before = before
        self.commands = commands


def verdict(fit: NodeFit | None) -> Text:
    """``✓ fits``, or ``✗ <filter>: <why>`` with the numbers; empty when the preview has no verdict for the node."""
    if fit is None:
        return Text()
    notes = [n for n in fit.notes if n not in _SHOWN_BY_STATE]
    if fit.fits:
        out = Text("✓ fits", style="green")
    else:
        out = Text(f"✗ {fit.filter}", style="red")
        if fit.why:
            out.append(": " + "; ".join(fit.why), style="red")
    if notes:
        out.append(f" ({'; '.join(notes)})", style="dim")
    return out


def node_options(state: ClusterState, preview: FitPreview | None) -> list[tuple[str, Text]]:
    """One chooser option per known node, in name order: name, state, and the preview's verdict."""
    if state.nodes_forbidden:  # nodes known only by the pods' spec.nodeName (permissions_flow.py)
        return named_node_options(state)
    options = []
    for name, node in sorted(state.nodes.items()):
        label = Text(name, style="bold")
        label.append("  ")
        label.append(node.state, style="green" if node.state == "Ready" else "yellow")
        label.append("  ")
        label.append_text(verdict(preview.get(name) if preview is not None else None))
        options.append((name, label))
    return options


def preview_label(preview: FitPreview | None) -> Text:
    """The chooser's subtitle: where the verdicts come from."""
    if preview is None:
        return Text("no fit preview: the pod is not in the cache", style="dim")
    out = Text("Fit: ", style="bold")
    out.append(preview.label, style="italic")
    if preview.scope:
        out.append(f" (only {preview.scope}'s pods counted on the nodes)", style="dim")
    return out


class BindingFlow:
    """``b``: choose a node, confirm the warnings, send the Binding, show the exchange."""

    state: ClusterState
    source: Source
    selected: str | None
    exchanges: list[BindingExchange]
    clock: Callable[[], datetime]

    def action_bind(self) -> None:
        pod_key = self.selected
        if self.source.read_only:
            return
        if pod_key is None:
            self.notify("Select a pod in the pending pods pane first.", title="Bind")
            return
        preview = self.state.fit(pod_key, self.source.namespace)

        def chosen(node: str | None) -> None:
            if node:
                self.confirm_and_bind(pod_key, node)

        self.push_screen(ChooserScreen(f"Bind {pod_key} to which node?", node_options(self.state, preview),
                                       "type part of a node name, or any name", free_text=True,
                                       subtitle=preview_label(preview),
                                       free_text_hint="(no such node: bind to it anyway)"), chosen)

    def confirm_and_bind(self, pod_key: str, node: str) -> None:
        """Send at once when nothing stands in the way; else list the warnings and let ``y`` send anyway."""
        warnings = self.state.bind_warnings(pod_key, node, self.source.namespace)
        if not warnings:
            self.send_binding(pod_key, node)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.send_binding(pod_key, node)

        self.push_screen(ConfirmScreen(f"Bind {pod_key} to {node}?", warnings), answered)

    @work(group="bind", exit_on_error=False)
    async def send_binding(self, pod_key: str, node: str) -> None:
        namespace, name = pod_key.split("/", 1)
        pod = self.state.pods.get(pod_key)
        before = PodSnapshot.take(self.state, pod_key, self.clock(), scope=self.source.namespace)
        exchange = await self.source.bind(namespace, name, node, pod.uid if pod else None)
        self.post_message(BindingResponded(exchange, before, self.source.commands_context().commands(exchange)))

    def on_binding_responded(self, message: BindingResponded) -> None:
        self.exchanges.append(message.exchange)
        pane = self.query_one(ExchangePane)
        pane.add(message.exchange, message.commands)
        pane.scroll_visible(animate=False)  # below the fold when the panes stack (narrow terminals)
        self.selected = message.exchange.pod  # the selection stays on the pod and follows it to its node
        self.query_one(PendingPodsPane).select(message.exchange.pod)
