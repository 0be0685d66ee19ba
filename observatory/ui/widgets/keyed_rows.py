"""Keeping a DataTable in step with wanted rows by key: add, update changed cells, remove; never clear per event."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
