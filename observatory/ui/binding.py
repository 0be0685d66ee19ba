"""Binding a pod by hand: pick a node (each shown with its fit verdict), confirm what stands in the way, then
:class:`BindRequested` goes up to the screen, which sends it in a worker (:meth:`BindController.send`) and gets
:class:`BindingResponded` back.

Nothing is ever refused silently: a bind the API server or the cluster will refuse asks first, and ``y`` sends it
anyway, because seeing the refusal is part of the lesson.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from rich.text import Text
from textual.message import Message

from observatory.model.commands import EquivalentCommands
from observatory.model.fit import FitPreview, NodeFit
from observatory.model.records import BindingExchange
from observatory.model.state import ClusterState
from observatory.model.transcript import PodSnapshot
from observatory.ui.host import Asker, ScreenFacts
from observatory.ui.permissions import named_node_options
from observatory.ui.screens.chooser import ChooserScreen
from observatory.ui.screens.confirm import ConfirmScreen

__all__ = ["BindController", "BindHost", "BindRequested", "BindingResponded", "node_options", "preview_label",
           "verdict"]

_SHOWN_BY_STATE = frozenset({"NotReady", "cordoned", "no Ready condition"})
"""Notes the node's state column already says."""


class BindRequested(Message):
    """Send a Binding of pod ``pod`` (``namespace/name``) to ``node``: the choice and the warnings are behind."""

    def __init__(self, pod: str, node: str) -> None:
        super().__init__()
        self.pod = pod
        self.node = node


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
    if state.nodes_forbidden:  # nodes known only by the pods' spec.nodeName (permissions.py)
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


class BindHost(ScreenFacts, Asker, Protocol):
    """What a hand bind needs from the screen."""

    def now(self) -> datetime: ...

    def post_message(self, message: Message) -> bool: ...


class BindController:
    """``b``: choose a node, confirm the warnings, request the Binding; :meth:`send` sends it."""

    def __init__(self, host: BindHost) -> None:
        self.host = host

    def choose(self, pod_key: str) -> None:
        host = self.host
        preview = host.state.fit(pod_key, host.state.node_scope(host.source.namespace))

        def chosen(node: str | None) -> None:
            if node:
                self.confirm(pod_key, node)

        host.ask(ChooserScreen(f"Bind {pod_key} to which node?", list(node_options(host.state, preview)),
                               "type part of a node name, or any name", free_text=True,
                               subtitle=preview_label(preview),
                               free_text_hint="(no such node: bind to it anyway)"), chosen)

    def confirm(self, pod_key: str, node: str) -> None:
        """Request at once when nothing stands in the way; else list the warnings and let ``y`` send anyway."""
        host = self.host
        warnings = host.state.bind_warnings(pod_key, node, host.state.node_scope(host.source.namespace))
        if not warnings:
            host.post_message(BindRequested(pod_key, node))
            return

        def answered(yes: bool | None) -> None:
            if yes:
                host.post_message(BindRequested(pod_key, node))

        host.ask(ConfirmScreen(f"Bind {pod_key} to {node}?", warnings), answered)

    async def send(self, pod_key: str, node: str) -> BindingResponded:
        """POST the Binding; the answer (any status, or none) with the pod as it was and the equivalent commands."""
        host = self.host
        namespace, name = pod_key.split("/", 1)
        pod = host.state.pods.get(pod_key)
        before = PodSnapshot.take(host.state, pod_key, host.now(), scope=host.state.node_scope(host.source.namespace))
        source = host.source
        exchange = await source.bind(namespace, name, node, pod.uid if pod else None)
        return BindingResponded(exchange, before, source.commands_context().commands(exchange))
