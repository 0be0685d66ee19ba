"""Node placement: each node's readiness, taints, requested versus allocatable resources, and its pods."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from observatory.model.access import NODE_DETAILS_FORBIDDEN
from observatory.model.records import PodView
from observatory.model.state import ClusterState, NodePlacement
from observatory.ui.text import cpu, memory
from observatory.ui.widgets.node_lines import show_as_lines

_POD_STYLE = {"Running": "green", "Pending": "yellow", "ContainerCreating": "yellow", "Terminating": "magenta",
              "Completed": "dim", "Error": "red", "CrashLoopBackOff": "red"}


def render_node(place: NodePlacement, selected: str | None) -> Text:
    """One node as a few lines of text."""
    node = place.node
    out = Text()
    out.append(node.name, style="bold")
    out.append("  ")
    out.append(node.state, style="green" if node.state == "Ready" else "bold red")
    out.append(f"  cpu {cpu(place.cpu_requested_milli)}/{cpu(node.allocatable_cpu_milli)}")
    out.append(f"  mem {memory(place.memory_requested_bytes)}/{memory(node.allocatable_memory_bytes)}")
    out.append(f"  pods {place.pods_count}/{node.allocatable_pods}")
    for taint in node.taints:
        out.append("\n  taint ", style="dim")
        out.append(str(taint), style="magenta")
    for pod in place.pods:
        fresh = pod.key in place.recently_bound
        mark = "▶ " if pod.key == selected else "  "
        out.append(f"\n{mark}")
        out.append(pod.key, style="bold reverse green" if fresh else ("bold" if pod.key == selected else ""))
        out.append("  ")
        out.append(pod.status, style=_POD_STYLE.get(pod.status, ""))
    return out


def render_orphans(node: str, pods: list[PodView], selected: str | None) -> Text:
    """Pods bound to a node that does not exist: the API server accepted the Binding; pod GC will delete them."""
    out = Text()
    out.append(node, style="bold")
    out.append("  missing: no such node; pod GC deletes these pods", style="bold red")
    for pod in pods:
        out.append(f"\n{'▶ ' if pod.key == selected else '  '}")
        out.append(pod.key, style="bold" if pod.key == selected else "")
        out.append("  ")
        out.append(pod.status, style=_POD_STYLE.get(pod.status, ""))
    return out


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


class NodesPane(VerticalScroll):
    """A block per node, updated in place; widgets are found by node name, never by an id made from it (node
    names may contain dots, which widget ids may not)."""

    BORDER_TITLE = "Nodes"
    ALLOW_MAXIMIZE = True  # ctrl+p, Maximize: the way to read a pane in full on a small screen

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._blocks: dict[str, Static] = {}

    def show(self, placement: list[NodePlacement], selected: str | None, orphans: Sequence[PodView] = (),
             render_missing: Callable[[str, list[PodView], str | None], Text] = render_orphans) -> None:
        """``render_missing`` draws the pods of a node not in ``placement`` (default: a missing node; with nodes
        forbidden, a node known only by name: :func:`render_named_node`)."""
        if show_as_lines(self, placement, selected, orphans, render_missing):  # past 100 blocks: node_lines.py
            return
        wanted: dict[str, Text] = {p.node.name: render_node(p, selected) for p in placement}
        missing: dict[str, list[PodView]] = {}
        for pod in orphans:
            missing.setdefault(pod.node_name, []).append(pod)
        for name, pods in sorted(missing.items()):
            wanted[f"\0missing {name}"] = render_missing(name, pods, selected)
        for name in [n for n in self._blocks if n not in wanted]:
            self._blocks.pop(name).remove()
        for name, content in wanted.items():
            block = self._blocks.get(name)
            if block is None:
                block = self._blocks[name] = Static(content, classes="node")
                self.mount(block)
            else:
                block.update(content)

    def show_state(self, state: ClusterState, selected: str | None, namespace: str | None) -> None:
        """The nodes of ``state`` with their pods (requests of ``namespace``'s pods only, when given); with nodes
        forbidden, the nodes known from the pods' ``spec.nodeName``."""
        title = f"Nodes (requests of {namespace} pods only)" if namespace else "Nodes"
        if not state.nodes_forbidden:
            self.border_title = title
            self.show(state.placement(), selected, state.orphans())
            return
        self.border_title = f"{title} · {NODE_DETAILS_FORBIDDEN}"
        self.show([], selected, state.orphans(), render_missing=render_named_node)
