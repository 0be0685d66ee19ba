"""Keeping a DataTable in step with wanted rows by key: add, update changed cells, remove; never clear per event."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual.geometry import Size
from textual.widgets import DataTable


def sync_rows(table: DataTable, wanted: Mapping[str, Sequence[object]], columns: Sequence[str]) -> None:
    """Make ``table`` show ``wanted`` (row key -> cells, in display order; ``columns`` are the column keys).

    Rows whose relative order changed force one rebuild, so rows never show out of order; otherwise only the
    difference is applied, and a cell that grows widens its column."""
    current = [k.value for k in table.rows]
    if [k for k in current if k in wanted] != [k for k in wanted if k in current]:
        table.clear()
        current = []
    for key in current:
        if key not in wanted:
            table.remove_row(key)
    for key, cells in wanted.items():
        if key in table.rows:
            for column, value in zip(columns, cells, strict=True):
                if table.get_cell(key, column) != value:
                    table.update_cell(key, column, value, update_width=True)
        else:
            table.add_row(*cells, key=key)


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
