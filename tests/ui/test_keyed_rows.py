"""sync_rows: a DataTable kept in step by key, with rows moved into place rather than rebuilt and column widths
as DataTable's own update_width gives them (issue 8)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import DataTable

from observatory.ui.widgets.keyed_rows import sync_rows

COLUMNS = ("name", "state")


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield DataTable()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for column in COLUMNS:
            table.add_column(column.upper(), key=column)


def shown(table: DataTable) -> list[tuple[str, ...]]:
    return [tuple(str(cell) for cell in table.get_row(row.key)) for row in table.ordered_rows]


async def test_a_new_row_lands_in_its_place_and_the_others_are_not_rebuilt():
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(DataTable)
        sync_rows(table, {"b": ("b", "Pending"), "d": ("d", "Pending")}, COLUMNS)
        await pilot.pause()
        row_b = table.rows["b"]
        sync_rows(table, {"a": ("a", "new"), "b": ("b", "Pending"), "c": ("c", "new"), "d": ("d", "Pending")},
                  COLUMNS)
        await pilot.pause()
        assert shown(table) == [("a", "new"), ("b", "Pending"), ("c", "new"), ("d", "Pending")]
        assert table.rows["b"] is row_b  # moved, not rebuilt
        sync_rows(table, {"d": ("d", "Pending"), "a": ("a", "new")}, COLUMNS)
        await pilot.pause()
        assert shown(table) == [("d", "Pending"), ("a", "new")]
        assert [table.get_row_index(key) for key in ("d", "a")] == [0, 1]


async def test_columns_widen_at_once_and_narrow_when_their_widest_cell_narrows():
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(DataTable)
        state = table.columns["state"]
        sync_rows(table, {"a": ("a", "short"), "b": ("b", "short")}, COLUMNS)
        await pilot.pause()
        assert state.content_width == len("short")
        sync_rows(table, {"a": ("a", "a much longer state"), "b": ("b", "short")}, COLUMNS)
        await pilot.pause()
        assert state.content_width == len("a much longer state")
        sync_rows(table, {"a": ("a", "mid state"), "b": ("b", "short")}, COLUMNS)
        await pilot.pause()
        assert state.content_width == len("mid state")
        sync_rows(table, {"b": ("b", "short")}, COLUMNS)  # a removed row leaves the width, as in DataTable
        await pilot.pause()
        assert state.content_width == len("mid state")
