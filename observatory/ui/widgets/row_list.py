"""RowList: a keyed table drawn with Textual's line API, for lists of thousands of rows that change many times a
second (the pending pods of a 10,000-pod cluster under 1,000 watch events/s).

Textual's DataTable redoes work in proportion to the whole table for a single row: ``remove_row`` and a row moved
into place rebuild its row index, every added or removed row drops its rendered-line caches, and the new height is a
``virtual_size`` change, which lays out the whole screen. In the scale benchmark (bench/results/scale.md) a probe
pod's create or delete cost up to 150 ms in the pending pane, and a screen layout another 13 to 60 ms. RowList keeps
what it needs and nothing else:

* rows are ``key -> cells`` in display order; :meth:`RowList.set_rows` applies a new list by difference, and only
  the lines on screen whose row changed are repainted;
* it scrolls itself (a first-row offset and a column offset, with its own one-column scrollbar), so the number of
  rows never changes the widget's size and a row added or removed never lays out the screen;
* a row's line is rendered once per change of its cells, cursor or widths, and kept.

The cursor follows its row's key: rows added or removed above it do not move it to another pod. When the key under
the cursor changes (a key press, a click, the row removed, the first row arriving, the last one going)
:meth:`RowList.cursor_moved` is called with the new key (None for none), as DataTable's ``RowHighlighted`` would
be posted.

Looks: a bold header on ``$panel``, one cell of padding each side of a cell, the cursor row in Textual's block-cursor
colours (blurred when the widget is not focused), as DataTable draws them. Cells are ``rich.text.Text`` (or str,
shown as is, never as markup); a cell wider than its column is cut with an ellipsis.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

Cells = Sequence[Any]
"""One row's cells, one per column: ``Text`` or str."""
PaintProbe = Callable[[str, Strip, bool, int], None]
"""Called with (row key, the line, is the cursor row, row index) for every row line rendered: see
:attr:`RowList.paint_probe`."""

WHEEL_ROWS = 3
"""Rows one mouse-wheel step scrolls, as Textual's scrollable widgets do."""


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""Characters a terminal moves the cursor for (a tab, a newline) or acts on: measured as 0 cells wide but drawn
wider, they pushed a row past its pane into the next one. In a cell each shows as one space."""


def _text(value: Any) -> Text:
    """A cell as one line of Text with no control characters (see :data:`_CONTROL`); spans keep their places."""
    if not isinstance(value, Text):
        return Text(_CONTROL.sub(" ", str(value)), no_wrap=True, end="")
    if _CONTROL.search(value.plain) is None:
        return value
    return Text(_CONTROL.sub(" ", value.plain), style=value.style, spans=list(value.spans), no_wrap=True, end="")


class RowList(Widget, can_focus=True):
    """A table of rows keyed by str, with a header, a row cursor and its own scrolling (see the module docstring).

    ``columns`` are (key, label) pairs. Column widths follow the cells: each column is as wide as its widest cell or
    its label, counted per width so a change costs the changed cell only."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("left", "scroll_columns(-4)", "Left", show=False),
        Binding("right", "scroll_columns(4)", "Right", show=False),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {"rowlist--header", "rowlist--cursor", "rowlist--scrollbar",
                                             "rowlist--scrollbar-thumb"}

    DEFAULT_CSS = """
    RowList {
        background: $surface;
        color: $foreground;
        height: 1fr;
        &:focus {
            background-tint: $foreground 5%;
            & > .rowlist--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
            & > .rowlist--header {
                background-tint: $foreground 5%;
            }
        }
        & > .rowlist--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        &:ansi > .rowlist--header {
            background: ansi_bright_blue;
            color: ansi_default;
        }
        & > .rowlist--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        & > .rowlist--scrollbar {
            background: $scrollbar-background;
        }
        & > .rowlist--scrollbar-thumb {
            color: $scrollbar;
        }
    }
    """

    paint_probe: PaintProbe | None = None
    """Instrumentation for the scale benchmark and tests: when set, called for every row line rendered, so a row
    that was painted is known to be on screen (a row out of view is never rendered)."""

    def __init__(self, columns: Sequence[tuple[str, str]], *, cursor: bool = True, name: str | None = None,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.show_cursor = cursor
        """False: no row cursor (the keys scroll the view, nothing is announced)."""
        self.column_keys = [key for key, _ in columns]
        self.labels = [label for _, label in columns]
        self._order: list[str] = []
        self._index: dict[str, int] = {}
        self._cells: dict[str, Cells] = {}
        self._cell_widths: dict[str, list[int]] = {}
        self._width_counts: list[Counter[int]] = [Counter() for _ in columns]
        self.widths = [cell_len(label) for label in self.labels]
        self._cursor = 0
        self._announced: str | None = None
        self.scroll_row = 0
        self.scroll_column = 0
        self._lines: dict[str, tuple[Cells, bool, tuple[int, ...], int, int, Strip]] = {}
        self._header: tuple[tuple[int, ...], int, int, Strip] | None = None

    # -- reading ---------------------------------------------------------------------------------------------------

    @property
    def rows(self) -> Mapping[str, Cells]:
        """Row key -> cells (any order: :attr:`row_keys` has the display order)."""
        return self._cells

    @property
    def row_keys(self) -> list[str]:
        """The row keys in display order (a copy)."""
        return list(self._order)

    @property
    def row_count(self) -> int:
        return len(self._order)

    def get_row(self, key: str) -> Cells:
        """The cells of row ``key``; KeyError when it is not listed."""
        return self._cells[key]

    def get_cell(self, key: str, column: str) -> Any:
        """The cell of row ``key`` in column ``column`` (a column key); KeyError for an unknown row, ValueError for
        an unknown column."""
        return self._cells[key][self.column_keys.index(column)]

    def get_row_index(self, key: str) -> int:
        """Row ``key``'s index in display order; KeyError when it is not listed."""
        return self._index[key]

    @property
    def cursor_row(self) -> int:
        """The cursor's row index (0 when the list is empty)."""
        return self._cursor

    @property
    def cursor_key(self) -> str | None:
        """The key of the row under the cursor, None when the list is empty."""
        return self._order[self._cursor] if self._order else None

    # -- changing --------------------------------------------------------------------------------------------------

    def set_rows(self, wanted: Mapping[str, Cells]) -> None:
        """Show ``wanted`` (row key -> cells, in display order). Rows are compared by key; a row whose cells are the
        very object shown before costs nothing. The cursor stays on its row's key while that row is listed, else
        on the row now at its index."""
        cursor_key = self.cursor_key
        old = self._cells
        order = list(wanted)
        reordered = order != self._order
        changed: list[str] = []
        widened = False
        counts = self._width_counts
        for key in old.keys() - wanted.keys() if reordered else ():
            for i, width in enumerate(self._cell_widths.pop(key)):
                self._uncount(i, width)
            self._lines.pop(key, None)
        cells_now: dict[str, Cells] = {}
        for key, cells in wanted.items():
            cells_now[key] = cells
            before = old.get(key)
            if before is cells:
                continue
            changed.append(key)
            widths = [cell_len(_text(value).plain) for value in cells]
            previous = self._cell_widths.get(key)
            for i, width in enumerate(widths):
                if previous is not None:
                    if previous[i] == width:
                        continue
                    self._uncount(i, previous[i])
                counts[i][width] += 1
            self._cell_widths[key] = widths
        self._cells = cells_now
        new_widths = [max(max(count, default=0), cell_len(label))
                      for count, label in zip(counts, self.labels, strict=True)]
        if new_widths != self.widths:
            self.widths, widened = new_widths, True
        if reordered:
            self._order = order
            self._index = {key: i for i, key in enumerate(order)}
        if cursor_key is not None and cursor_key in self._index:
            self._cursor = self._index[cursor_key]
        else:
            self._cursor = min(self._cursor, max(len(order) - 1, 0))
        if reordered or widened:
            self._keep_cursor_in_view()
            self._scroll_columns_to(self.scroll_column)  # narrower rows: no scrolling past their end
            self.refresh()
        else:
            self._refresh_rows(changed)
        self._announce()

    def _uncount(self, i: int, width: int) -> None:
        """One cell of column ``i`` that was ``width`` wide is gone."""
        count = self._width_counts[i]
        count[width] -= 1
        if not count[width]:
            del count[width]

    def move_cursor(self, row: int) -> None:
        """Put the cursor on row index ``row`` (clamped to the list) and scroll it into view."""
        if not self._order or not self.show_cursor:
            return
        row = max(0, min(row, len(self._order) - 1))
        if row == self._cursor:
            return
        before, self._cursor = self._cursor, row
        if self._keep_cursor_in_view():
            self.refresh()
        else:
            self._refresh_rows([self._order[before], self._order[row]])
        self._announce()

    def select(self, key: str) -> None:
        """Move the cursor to row ``key`` if it is listed."""
        if key in self._index:
            self.move_cursor(self._index[key])

    def cursor_moved(self, key: str | None) -> None:
        """Called when the key under the cursor changes (subclasses post their message here); None when the last
        row went (the list is empty, or a filter hides every row)."""

    def _announce(self) -> None:
        if not self.show_cursor:
            return
        key = self.cursor_key
        if key != self._announced:
            self._announced = key
            self.cursor_moved(key)

    # -- scrolling -------------------------------------------------------------------------------------------------

    @property
    def visible_rows(self) -> int:
        """Rows that fit under the header."""
        return max(self.size.height - 1, 0)

    def _max_scroll_row(self) -> int:
        return max(len(self._order) - self.visible_rows, 0)

    def _keep_cursor_in_view(self) -> bool:
        """Scroll so the cursor row is on screen; True when the first row shown changed."""
        top = self.scroll_row
        visible = self.visible_rows
        if visible and self.show_cursor:
            if self._cursor < top:
                top = self._cursor
            elif self._cursor >= top + visible:
                top = self._cursor - visible + 1
        top = max(0, min(top, self._max_scroll_row()))
        if top != self.scroll_row:
            self.scroll_row = top
            return True
        return False

    def scroll_rows(self, delta: int) -> None:
        """Scroll the view by ``delta`` rows (the cursor stays on its row, as with a mouse wheel)."""
        top = max(0, min(self.scroll_row + delta, self._max_scroll_row()))
        if top != self.scroll_row:
            self.scroll_row = top
            self.refresh()

    def action_scroll_columns(self, delta: int) -> None:
        self._scroll_columns_to(self.scroll_column + delta)

    def _scroll_columns_to(self, column: int) -> bool:
        """Show the columns from cell ``column`` on, kept within the rows' width; True when that changed."""
        widest = sum(width + 2 for width in self.widths)
        column = max(0, min(column, max(widest - self._text_width(), 0)))
        if column == self.scroll_column:
            return False
        self.scroll_column = column
        self._lines.clear()
        self._header = None
        self.refresh()
        return True

    def _step(self, rows: int) -> None:
        """Move the cursor ``rows`` rows (scroll the view, without a cursor)."""
        if self.show_cursor:
            self.move_cursor(self._cursor + rows)
        else:
            self.scroll_rows(rows)

    def action_cursor_up(self) -> None:
        self._step(-1)

    def action_cursor_down(self) -> None:
        self._step(1)

    def action_page_up(self) -> None:
        self._step(-max(self.visible_rows - 1, 1))

    def action_page_down(self) -> None:
        self._step(max(self.visible_rows - 1, 1))

    def action_first(self) -> None:
        self._step(-len(self._order))

    def action_last(self) -> None:
        self._step(len(self._order))

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self.scroll_rows(WHEEL_ROWS)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self.scroll_rows(-WHEEL_ROWS)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y < 1:
            return
        row = self.scroll_row + offset.y - 1
        if row < len(self._order):
            self.move_cursor(row)

    def on_resize(self, event: events.Resize) -> None:
        self.scroll_row = min(self.scroll_row, self._max_scroll_row())
        self._keep_cursor_in_view()
        self._scroll_columns_to(self.scroll_column)
        self._lines.clear()
        self._header = None
        self.refresh()

    def on_focus(self, event: events.Focus) -> None:
        self._restyle()

    def on_blur(self, event: events.Blur) -> None:
        self._restyle()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines.clear()
        self._header = None

    def _restyle(self) -> None:
        self._lines.clear()
        self._header = None
        self.refresh()

    # -- painting --------------------------------------------------------------------------------------------------

    def _refresh_rows(self, keys: Sequence[str]) -> None:
        """Repaint the lines of rows ``keys`` that are on screen."""
        top, visible, width = self.scroll_row, self.visible_rows, self.size.width
        for key in keys:
            index = self._index.get(key)
            if index is not None and top <= index < top + visible:
                self.refresh(Region(0, 1 + index - top, width, 1))

    def _scrollbar(self) -> bool:
        return len(self._order) > self.visible_rows > 0

    def _text_width(self) -> int:
        return max(self.size.width - (1 if self._scrollbar() else 0), 0)

    def _row_strip(self, cells: Sequence[Any], style: Style, width: int, over: Style | None = None) -> Strip:
        """One line: each cell padded by a space each side, in ``style`` under the cells' own styles and ``over``
        (the cursor's colours) over them, from the first column in view, cut to ``width`` with an ellipsis or filled
        to it."""
        line = Text(no_wrap=True, end="")
        for value, column_width in zip(cells, self.widths, strict=False):
            text = _text(value)
            if cell_len(text.plain) != column_width:
                text = text.copy()
                text.truncate(column_width, overflow="ellipsis", pad=True)
            line.append(" ")
            line.append_text(text)
            line.append(" ")
        fill = style + over if over is not None else style
        if width <= 0:
            return Strip([])
        strip = Strip(Segment.apply_style(line.render(self.app.console, end=""), style, over))
        if self.scroll_column:
            strip = strip.crop(self.scroll_column, strip.cell_length)  # by cells: a wide character is two
        if strip.cell_length > width:  # wider than the pane: cut with an ellipsis (left/right scroll to the rest)
            strip = Strip.join([strip.crop(0, width - 1), Strip([Segment("…", fill)], 1)])
        return strip.extend_cell_length(width, fill)

    def render_line(self, y: int) -> Strip:
        width = self._text_width()
        if y == 0:
            return self._with_scrollbar(self._header_strip(width), y)
        index = self.scroll_row + y - 1
        if index >= len(self._order):
            return self._with_scrollbar(Strip.blank(width, self.rich_style), y)
        key = self._order[index]
        cells = self._cells[key]
        is_cursor = self.show_cursor and index == self._cursor
        widths = tuple(self.widths)
        cached = self._lines.get(key)
        if (cached is not None and cached[0] is cells and cached[1] == is_cursor and cached[2] == widths
                and cached[3] == width and cached[4] == self.scroll_column):
            strip = cached[5]
        else:
            over = self.get_component_rich_style("rowlist--cursor") if is_cursor else None
            strip = self._row_strip(cells, self.rich_style, width, over)
            self._lines[key] = (cells, is_cursor, widths, width, self.scroll_column, strip)
        if self.paint_probe is not None:
            self.paint_probe(key, strip, is_cursor, index)
        return self._with_scrollbar(strip, y)

    def _header_strip(self, width: int) -> Strip:
        widths = tuple(self.widths)
        if self._header is not None and self._header[:3] == (widths, width, self.scroll_column):
            return self._header[3]
        style = self.rich_style + self.get_component_rich_style("rowlist--header")
        strip = self._row_strip(self.labels, style, width)
        self._header = (widths, width, self.scroll_column, strip)
        return strip

    def _with_scrollbar(self, strip: Strip, y: int) -> Strip:
        if not self._scrollbar():
            return strip
        if y == 0:
            return Strip.join([strip, Strip.blank(1, self.rich_style + self.get_component_rich_style(
                "rowlist--header"))])
        track = self.visible_rows
        total = len(self._order)
        size = max(1, round(track * track / total))
        start = min(round(self.scroll_row * track / total), track - size)
        style = self.get_component_rich_style("rowlist--scrollbar")
        if start <= y - 1 < start + size:
            style = style + self.get_component_rich_style("rowlist--scrollbar-thumb")
            return Strip.join([strip, Strip([Segment("█", style)], 1)])
        return Strip.join([strip, Strip([Segment(" ", style)], 1)])
