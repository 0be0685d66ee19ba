"""One line-API widget for a long list of text blocks (a node and its pods, a node's fit verdict): only the lines
on screen are rendered, and a change to one block costs that block's text, not a layout of every block.

A Static per block is simple and fine for a classroom cluster, but Textual lays out every child on each layout,
measuring each one's wrapped text: at 1,000 nodes the nodes pane and the Why pane's fit list took most of the app's
time (see bench/results/scale.md). :class:`BlockLines` shows the same blocks as those Statics would: each part of a
block wrapped to the same width (less its indent, for a ``padding-left``) and styled the same way, with ``margin``
blank lines after each block (a ``margin-bottom``). It sits inside the pane (a VerticalScroll) with its height set to
the total, so the pane scrolls it and Textual asks only for the lines in view (:meth:`BlockLines.render_line`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.content import Content
from textual.geometry import Region
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget

Parts = tuple[tuple[Text, int], ...]
"""A block's parts: (text, indent in cells) each, shown one after the other."""
Wanted = Sequence[tuple[str, tuple, Callable[[], Parts]]]
"""(key, source, make) per block in order: ``make()`` gives the parts, called only when the source changed."""


class _Block:
    """One block's parts, what they were made from (to skip unchanged blocks), and its lines at one width."""

    __slots__ = ("height", "key", "parts", "source", "strips", "width")

    def __init__(self, key: str, source: tuple, parts: Parts) -> None:
        self.key, self.source, self.parts = key, source, parts
        self.width = -1
        self.strips: list[Strip] | None = None
        self.height = 0

    def measure(self, width: int) -> int:
        """The block's height in lines at ``width`` (without the margin); exact without rendering when no line is
        wider than its part's room."""
        if width != self.width:
            self.width, self.strips = width, None
            height = 0
            for text, indent in self.parts:
                lines = text.plain.split("\n")
                if any(cell_len(line) > width - indent for line in lines):
                    height = -1  # wraps: only rendering tells
                    break
                height += len(lines)
            self.height = height
        return self.height

    def render(self, widget: Widget, width: int) -> list[Strip]:
        if self.strips is None or self.width != width:
            style = widget.visual_style
            strips: list[Strip] = []
            for text, indent in self.parts:
                content = Content.from_rich_text(text, console=widget.app.console)
                lines = Visual.to_strips(widget, content, max(width - indent, 1), None, style)
                if indent:
                    margin = Strip.blank(indent, Style(bgcolor=style.rich_style.bgcolor))
                    lines = [Strip.join([margin, line]) for line in lines]
                strips.extend(lines)
            self.strips, self.width, self.height = strips, width, len(strips)
        return self.strips


class BlockLines(Widget):
    """Every block as lines, ``margin`` blank lines after each; its height is the total."""

    DEFAULT_CSS = "BlockLines { height: auto; width: 1fr; }"

    def __init__(self, margin: int = 0) -> None:
        super().__init__()
        self.margin = margin
        self._blocks: list[_Block] = []
        self._by_key: dict[str, _Block] = {}
        self._offsets: list[int] = []
        self._width = -1

    def set_blocks(self, wanted: Wanted) -> None:
        """Show ``wanted`` (see :data:`Wanted`); a source is compared item by item, by identity, then equality.
        Repaints only the blocks whose parts changed, or everything when the lines moved."""
        blocks, changed = [], []
        for key, source, make in wanted:
            block = self._by_key.get(key)
            if block is None or not _same(block.source, source):
                parts = make()
                if block is None or block.parts != parts:
                    block = _Block(key, source, parts)
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
                self.refresh(Region(0, y, self.size.width, block.height + self.margin))

    def _relayout(self) -> None:
        parent = self.parent
        parent_width = parent.size.width if isinstance(parent, Widget) else 1
        width = max(self.size.width, 1) if self.size.width else max(parent_width, 1)
        offsets, y = [], 0
        for block in self._blocks:
            offsets.append(y)
            height = block.measure(width)
            if height < 0:
                height = len(block.render(self, width))
            y += height + self.margin
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
        """Every block's text, its parts joined by newlines (what its Statics would hold)."""
        return ["\n".join(text.plain for text, _ in block.parts) for block in self._blocks]


def _same(a: tuple, b: tuple) -> bool:
    return a is b or (len(a) == len(b) and all(x is y or x == y for x, y in zip(a, b, strict=True)))


def same_wrap(old: object, new: Text) -> bool:
    """Whether ``new`` wraps exactly as ``old`` (a Static's current content) at any width: the same characters
    wide in the same places, the same spaces and line breaks ("reported 12 times" after "reported 11 times"), so a
    Static can take it without a layout of the screen (``update(new, layout=False)``)."""
    if not isinstance(old, Text):
        return False
    a, b = old.plain, new.plain
    return len(a) == len(b) and all(x == y or (not x.isspace() and not y.isspace() and cell_len(x) == cell_len(y))
                                    for x, y in zip(a, b, strict=True))
