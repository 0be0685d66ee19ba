"""The nodes pane for big clusters: past :data:`LINES_ABOVE` blocks, one :class:`NodeLines` child (a
:class:`~observatory.ui.widgets.block_lines.BlockLines`) instead of a Static per node, showing the same text
(:func:`render_node`, the pane's ``render_missing``) with the blank line of ``.node``'s ``margin-bottom: 1`` after
each block. See block_lines.py for why.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual.timer import Timer

from observatory.model.records import PodView
from observatory.model.state import NodePlacement
from observatory.ui.widgets.block_lines import BlockLines, Parts

if TYPE_CHECKING:
    from observatory.ui.widgets.nodes_pane import NodesPane

LINES_ABOVE = 100
"""Blocks (nodes, plus nodes that are missing but have pods) beyond which the pane switches to :class:`NodeLines`."""
SHOW_EVERY = 0.25
"""Seconds between two updates of a big nodes pane: under a stream of watch events the app repaints ten times a
second, and comparing a thousand nodes each time cost a sixth of its time at 1,000 events/s; a change waits at most
this long, and the latest placement wins."""


class NodeLines(BlockLines):
    """The node blocks, a blank line after each."""

    def __init__(self) -> None:
        super().__init__(margin=1)
        self.pod_keys: dict[str, tuple[tuple[PodView, ...], frozenset[str]]] = {}
        """Node name -> (its pods tuple, their keys), to find the selected pod's node without a scan."""
        self.entries: dict[str, tuple] = {}
        """Node name -> its entry for :meth:`set_blocks`, handed on again while the node's placement is the same."""
        self.shown_at = float("-inf")
        self.later: tuple | None = None
        self._timer: Timer | None = None

    def defer(self, args: tuple) -> None:
        """Show ``args`` (those of :func:`show_as_lines`) once :data:`SHOW_EVERY` has passed since the last show."""
        self.later = args
        if self._timer is None:
            wait = max(0.0, SHOW_EVERY - (time.monotonic() - self.shown_at))
            self._timer = self.set_timer(wait, self._catch_up)

    def _catch_up(self) -> None:
        from observatory.ui.widgets.nodes_pane import NodesPane

        self._timer, args, self.later = None, self.later, None
        if args is not None and isinstance(self.parent, NodesPane):
            show_as_lines(self.parent, *args)


def show_as_lines(pane: NodesPane, placement: list[NodePlacement], selected: str | None,
                  orphans: Sequence[PodView], render_missing: Callable[[str, list[PodView], str | None], Text]) -> bool:
    """For :meth:`NodesPane.show`: past :data:`LINES_ABOVE` blocks, show them in one :class:`NodeLines` child and
    return True; otherwise remove that child if there is one and return False (the pane mounts a Static per node).
    ``render_missing`` draws the pods of a node not in ``placement``, as for the pane."""
    missing: dict[str, list[PodView]] = {}
    for pod in orphans:
        missing.setdefault(pod.node_name, []).append(pod)
    lines = next(iter(pane.query(NodeLines)), None)
    if len(placement) + len(missing) <= LINES_ABOVE:
        if lines is not None:
            lines.remove()
        return False
    for name in list(pane._blocks):
        pane._blocks.pop(name).remove()
    if lines is None:
        lines = NodeLines()
        pane.mount(lines)
    elif time.monotonic() - lines.shown_at < SHOW_EVERY:  # under churn: at most every SHOW_EVERY, the latest wins
        lines.defer((placement, selected, orphans, render_missing))
        return True
    lines.shown_at, lines.later = time.monotonic(), None
    wanted: list[tuple[str, tuple, Callable[[], tuple]]] = []
    keys, entries = lines.pod_keys, lines.entries
    if len(entries) > 2 * len(placement) + 64:  # forget deleted nodes now and then
        entries.clear()
    for place in placement:
        name = place.node.name
        known = keys.get(name)
        if known is None or known[0] is not place.pods:
            known = keys[name] = (place.pods, frozenset(p.key for p in place.pods))
        here = selected if selected is not None and selected in known[1] else None
        # ClusterState.placement() hands back the same object for an unchanged node, so its entry of last time is
        # handed on as it is, and BlockLines finds it unchanged by identity.
        entry = entries.get(name)
        if entry is None or entry[1][0] is not place or entry[1][1] != here:
            entry = entries[name] = (name, (place, here), partial(_node_parts, place, here))
        wanted.append(entry)
    for name, pods in sorted(missing.items()):
        here = selected if any(p.key == selected for p in pods) else None
        wanted.append((f"\0missing {name}", (tuple(pods), here),
                       partial(_missing_parts, render_missing, name, pods, here)))
    lines.set_blocks(wanted)
    return True


def _node_parts(place: NodePlacement, here: str | None) -> Parts:
    from observatory.ui.widgets.nodes_pane import render_node

    return ((render_node(place, here), 0),)


def _missing_parts(render_missing: Callable[[str, list[PodView], str | None], Text], name: str, pods: list[PodView],
                   here: str | None) -> Parts:
    return ((render_missing(name, pods, here), 0),)
