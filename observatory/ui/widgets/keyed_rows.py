"""Keeping a DataTable in step with wanted rows by key: add, update changed cells, remove; never clear per event."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from textual._two_way_dict import TwoWayDict
from textual.geometry import Size
from textual.render import measure
from textual.widgets import DataTable
from textual.widgets._data_table import default_cell_formatter
from textual.widgets.data_table import ColumnKey


def sync_rows(table: DataTable, wanted: Mapping[str, Sequence[object]], columns: Sequence[str]) -> None:
    """Make ``table`` show ``wanted`` (row key -> cells, in display order; ``columns`` are the column keys).

    Only the difference is applied: rows removed, changed cells updated, new rows added; when rows are not in
    ``wanted``'s order (a new row belongs above others, DataTable only appends), they are moved into place as
    ``DataTable.sort`` moves them, with no rebuild. Column widths follow the cells as DataTable's
    ``update_width=True`` would make them (a column widens for a wider cell and narrows to its widest cell when one
    gets narrower), but from a count of the cell widths per column kept here: DataTable re-measures the whole column
    for every narrower cell, which made a burst of changed rows in a 1,400-row table measure hundreds of thousands
    of cells (bench/results/scale.md)."""
    synced: dict[str, Sequence[object]] = table.__dict__.setdefault("_synced_cells", {})
    widths = _Widths.of(table, columns)
    shown: list[str] | None = table.__dict__.get("_shown_order")
    if shown is None or len(shown) != table.row_count:  # not ours (first call, or changed elsewhere): ask the table
        shown = [row.key.value for row in table.ordered_rows]
    for key in shown:
        if key not in wanted:
            table.remove_row(key)
            synced.pop(key, None)
            widths.forget(key)
    kept = [key for key in shown if key in wanted]
    for key, cells in wanted.items():
        if key in table.rows:
            if synced.get(key) is cells:  # the very tuple applied last time: nothing to compare
                continue
            for i, (column, value) in enumerate(zip(columns, cells, strict=True)):
                if table.get_cell(key, column) != value:
                    table.update_cell(key, column, value)
                    widths.set(key, i, _width(table, value))
        else:
            table.add_row(*cells, key=key)
            kept.append(key)
            widths.add(key, [_width(table, value) for value in cells])
        synced[key] = cells
    order = list(wanted)
    if kept != order:
        _move_rows(table, order)
    table.__dict__["_shown_order"] = order
    widths.apply(table)


def _move_rows(table: DataTable, order: list[str]) -> None:
    """Show the table's rows in ``order`` (every row key, once), as ``DataTable.sort`` reorders them."""
    keys = {row_key.value: row_key for row_key in table.rows}
    table._row_locations = TwoWayDict({keys[key]: index for index, key in enumerate(order)})
    table._update_count += 1
    table.refresh()


def _width(table: DataTable, value: object) -> int:
    """A one-line cell's width as DataTable measures it."""
    return measure(table.app.console, default_cell_formatter(value, wrap=False, height=1), 1)


class _Widths:
    """Cell widths per column of one table (row key -> widths, and per column a count of each width)."""

    def __init__(self, columns: Sequence[str]) -> None:
        self.columns = list(columns)
        self.rows: dict[str, list[int]] = {}
        self.counts: list[Counter[int]] = [Counter() for _ in columns]
        self.changed: set[int] = set()

    @classmethod
    def of(cls, table: DataTable, columns: Sequence[str]) -> _Widths:
        widths = table.__dict__.get("_cell_widths")
        if widths is None or widths.columns != list(columns):
            widths = table.__dict__["_cell_widths"] = cls(columns)
        return widths

    def clear(self) -> None:
        self.rows.clear()
        self.counts = [Counter() for _ in self.columns]

    def add(self, key: str, widths: list[int]) -> None:
        self.forget(key)
        self.rows[key] = widths
        for i, width in enumerate(widths):
            self.counts[i][width] += 1

    def forget(self, key: str) -> None:
        for i, width in enumerate(self.rows.pop(key, ())):
            self._drop(i, width)

    def set(self, key: str, i: int, width: int) -> None:
        row = self.rows.get(key)
        if row is None:
            return
        self._drop(i, row[i])
        row[i] = width
        self.counts[i][width] += 1
        self.changed.add(i)

    def _drop(self, i: int, width: int) -> None:
        count = self.counts[i]
        count[width] -= 1
        if count[width] <= 0:
            del count[width]

    def apply(self, table: DataTable) -> None:
        """Give each column with an updated cell the width of its widest cell (or its label), as DataTable does for
        ``update_width=True``; new rows only widen a column and removed ones leave it, as in DataTable, which
        measures new rows itself."""
        resized = False
        for i in self.changed:
            column = table.columns.get(ColumnKey(self.columns[i]))
            if column is None or not column.auto_width:
                continue
            widest = max(max(self.counts[i], default=0), measure(table.app.console, column.label, 1))
            if widest != column.content_width:
                column.content_width = widest
                resized = True
        self.changed = set()
        if resized:
            table._require_update_dimensions = True  # recompute the virtual size when idle, as update_width does
            table.check_idle()
            table.refresh()


class FreshWidths:
    """For a DataTable subclass: repaint rows that were drawn before their columns were measured.

    Textual 8.2.8's DataTable measures the columns of new rows when idle, but keeps the lines it drew before that
    with the old widths (its line caches are keyed by an update count that measuring does not change), so a row
    drawn in between stays cut short ("RELIS" for "RELISTED") until something else changes. When the measured
    width changes, drop those lines."""

    def watch_virtual_size(self, old: Size, new: Size) -> None:
        if old.width != new.width:
            self.notify_style_update()  # clears the DataTable's render caches
            self.refresh()
