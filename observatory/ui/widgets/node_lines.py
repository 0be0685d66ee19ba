"""The nodes pane for big clusters: one line-API widget instead of a Static per node, so only the lines on screen
are rendered and a change to one node costs one node's text, not a layout of every node.

A Static per node (:class:`~observatory.ui.widgets.nodes_pane.NodesPane`'s own way) is simple and fine for a
classroom cluster, but Textual lays out every child on each layout, measuring each one's wrapped text: at 1,000
nodes that took most of the app's time (see bench/results/scale.md). Past :data:`LINES_ABOVE` blocks the pane hands
its content to one :class:`NodeLines` child. The text is the same (:func:`render_node`, :func:`render_orphans`),
wrapped to the same width and styled the same way as a Static would be, with the blank line of ``.node``'s
``margin-bottom: 1`` after each block.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.content import Content
from textual.geometry import Region
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget

from observatory.model.records import PodView
from observatory.model.state import NodePlacement

if TYPE_CHECKING:
    from observatory.ui.widgets.nodes_pane import NodesPane

LINES_ABOVE = 100
"""Blocks (nodes, plus nodes that are missing but have pods) beyond which the pane switches to :class:`NodeLines`."""
MARGIN = 1
"""Blank lines after each block (``.node { margin-bottom: 1; }`` in styles/app.tcss)."""


class _Block:
    """One node's text, what it was made from (to skip unchanged nodes), and its lines at one width."""

    __slots__ = ("key", "source", "text", "width", "strips", "height")

    def __init__(self, key: str, source: tuple, text: Text) -> None:
        self.key, self.source, self.text = key, source, text
        self.width = -1
        self.strips: list[Strip] | None = None
        self.height = 0

    def measure(self, width: int) -> int:
        """The block's height in lines at ``width`` (without the margin); exact without rendering when no line is
        wider than ``width``."""
        if width != self.width:
            self.width, self.strips = width, None
            lines = self.text.plain.split("\n")
            if all(cell_len(line) <= width for line in lines):
                self.height = len(lines)
            else:
                self.height = -1  # wraps: only rendering tells
        return self.height

    def render(self, widget: Widget, width: int) -> list[Strip]:
        if self.strips is None or self.width != width:
            content = Content.from_rich_text(self.text, console=widget.app.console)
            self.strips = Visual.to_strips(widget, content, width, None, widget.visual_style)
            self.width, self.height = width, len(self.strips)
        return self.strips


class NodeLines(Widget):
    """Every node block as lines; its height is the total, so the pane (a VerticalScroll) scrolls it and Textual
    asks only for the lines in view (:meth:`render_line`)."""

    DEFAULT_CSS = "NodeLines { height: auto; width: 1fr; }"

    def __init__(self) -> None:
        super().__init__()
        self._blocks: list[_Block] = []
        self._by_key: dict[str, _Block] = {}
        self._offsets: list[int] = []
        self._width = -1
        self.pod_keys: dict[str, tuple[tuple[PodView, ...], frozenset[str]]] = {}
        """Node name -> (its pods tuple, their keys), to find the selected pod's node without a scan."""

    def set_blocks(self, wanted: Sequence[tuple[str, tuple, object]]) -> None:
        """``wanted``: (key, source, make) per block in order; ``make()`` gives the Text, called only when the source
        (compared by identity and equality) changed. Repaints only blocks whose text changed."""
        blocks, changed = [], []
        for key, source, make in wanted:
            block = self._by_key.get(key)
            if block is None or not _same(block.source, source):
                text = make()
                if block is None or block.text != text:
                    block = _Block(key, source, text)
                    changed.append(block)
                else:
                    block.source = source
            blocks.append(block)
        if [b.key for b in blocks] != [b.key for b in self._blocks]:
            self._blocks, self._by_key = blocks, {b.key: b for b in blocks}
            self._relayout()
            self.refresh()
            return
        self._blocks, self._by_key = blocks, {b.key: b for b in blocks}
        if changed:
            old_offsets = self._offsets
            self._relayout()
            if self._offsets != old_offsets:
                self.refresh()
                return
            position = {b.key: n for n, b in enumerate(self._blocks)}
            for block in changed:
                y = self._offsets[position[block.key]]
                self.refresh(Region(0, y, self.size.width, block.height + MARGIN))

    def _relayout(self) -> None:
        width = max(self.size.width, 1) if self.size.width else max(self.parent.size.width if self.parent else 1, 1)
        offsets, y = [], 0
        for block in self._blocks:
            offsets.append(y)
            height = block.measure(width)
            if height < 0:
                height = len(block.render(self, width))
            y += height + MARGIN
        self._offsets, self._width = offsets, width
        if self.styles.height is None or self.styles.height.value != y:
            self.styles.height = y

    def on_resize(self) -> None:
        if self.size.width != self._width:
            self._relayout()
            self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        style = self.visual_style
        if width != self._width and width > 0:  # the first layout, or a resize not yet handled
            self._relayout()
        i = bisect_right(self._offsets, y) - 1
        if i < 0:
            return Strip.blank(width, Style(bgcolor=style.rich_style.bgcolor))
        block = self._blocks[i]
        local = y - self._offsets[i]
        strips = block.render(self, width) if local < block.height else ()
        pad = Style(bgcolor=style.rich_style.bgcolor)  # what a Static pads its lines with
        if local >= len(strips):
            return Strip.blank(width, pad)
        return strips[local].adjust_cell_length(width, pad)

    def plain_lines(self) -> list[str]:
        """Every block's text, as a Static per node would hold it (for tests and the transcript)."""
        return [block.text.plain for block in self._blocks]


def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y or x == y for x, y in zip(a, b))


def show_as_lines(pane: NodesPane, placement: list[NodePlacement], selected: str | None,
                  orphans: Sequence[PodView], render_missing: Callable[[str, list[PodView], str | None], Text]) -> bool:
    """For :meth:`NodesPane.show`: past :data:`LINES_ABOVE` blocks, show them in one :class:`NodeLines` child and
    return True; otherwise remove that child if there is one and return False (the pane mounts a Static per node).
    ``render_missing`` draws the pods of a node not in ``placement``, as for the pane."""
    from observatory.ui.widgets.nodes_pane import render_node

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
    wanted: list[tuple[str, tuple, object]] = []
    keys = lines.pod_keys
    for place in placement:
        name = place.node.name
        known = keys.get(name)
        if known is None or known[0] is not place.pods:
            known = keys[name] = (place.pods, frozenset(p.key for p in place.pods))
        here = selected if selected is not None and selected in known[1] else None
        source = (place.node, place.pods, place.cpu_requested_milli, place.memory_requested_bytes, place.pods_count,
                  place.recently_bound, here)
        wanted.append((name, source, lambda place=place, here=here: render_node(place, here)))
    for name, pods in sorted(missing.items()):
        here = selected if any(p.key == selected for p in pods) else None
        wanted.append((f"\0missing {name}", (tuple(pods), here),
                       lambda name=name, pods=pods, here=here: render_missing(name, pods, here)))
    lines.set_blocks(wanted)
    return True
