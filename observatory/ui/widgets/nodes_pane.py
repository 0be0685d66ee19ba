"""Node placement: each node's readiness, taints, requested versus allocatable resources, and its pods."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from observatory.model.state import NodePlacement
from observatory.ui.text import cpu, memory

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


class NodesPane(VerticalScroll):
    """A block per node, updated in place by node name."""

    BORDER_TITLE = "Nodes"

    def show(self, placement: list[NodePlacement], selected: str | None) -> None:
        existing = {child.id: child for child in self.query(Static)}
        wanted = {f"node-{p.node.name}": p for p in placement}
        for widget_id, widget in existing.items():
            if widget_id not in wanted:
                widget.remove()
        for widget_id, place in wanted.items():
            content = render_node(place, selected)
            if widget_id in existing:
                existing[widget_id].update(content)
            else:
                self.mount(Static(content, id=widget_id, classes="node"))
