"""RowList: the pending pane's line-API table. Rows by key, a cursor that stays on its row's key, its own
scrolling, and no screen layout or full repaint for a row added, removed or changed."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.screen import Screen

from observatory.ui.widgets.row_list import RowList

COLUMNS = [("pod", "POD"), ("state", "STATE")]


class ListApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.moves: list[str] = []

    def compose(self) -> ComposeResult:
        table = RowList(COLUMNS, id="list")
        table.cursor_moved = self.moves.append  # type: ignore[method-assign]
        yield table


def rows(n: int, state: str = "Pending", start: int = 0) -> dict[str, tuple[Text, Text]]:
    return {f"ns/pod-{i:04d}": (Text(f"ns/pod-{i:04d}"), Text(state)) for i in range(start, start + n)}


def screen_text(table: RowList) -> list[str]:
    return [table.render_line(y).text for y in range(table.size.height)]


async def test_rows_show_in_order_under_a_header_with_a_padded_cell_each_side():
    app = ListApp()
    async with app.run_test(size=(40, 6)) as pilot:
        table = app.query_one(RowList)
        table.set_rows({"b/two": ("b/two", "Pending"), "a/one": ("a/one", "no scheduler has looked")})
        await pilot.pause()
        lines = screen_text(table)
        assert lines[0].rstrip() == " POD    STATE"
        assert lines[1].rstrip() == " b/two  Pending"
        assert lines[2].rstrip() == " a/one  no scheduler has looked"
        assert table.row_keys == ["b/two", "a/one"] and table.get_cell("a/one", "state") == "no scheduler has looked"


async def test_the_first_row_is_announced_and_the_cursor_stays_on_its_key_when_rows_come_and_go_above():
    app = ListApp()
    async with app.run_test(size=(40, 10)) as pilot:
        table = app.query_one(RowList)
        table.set_rows(rows(3, start=1))
        assert app.moves == ["ns/pod-0001"]
        table.move_cursor(1)
        assert table.cursor_key == "ns/pod-0002" and app.moves[-1] == "ns/pod-0002"
        table.set_rows(rows(4))  # pod-0000 arrives above the cursor
        assert table.cursor_key == "ns/pod-0002" and table.cursor_row == 2
        assert app.moves[-1] == "ns/pod-0002"  # the same pod: nothing new to announce
        wanted = rows(4)
        del wanted["ns/pod-0002"]  # the row under the cursor goes: the cursor takes the row now at its index
        table.set_rows(wanted)
        assert table.cursor_key == "ns/pod-0003" and app.moves[-1] == "ns/pod-0003"
        await pilot.pause()


async def test_rows_added_and_removed_lay_out_nothing_and_a_changed_cell_repaints_its_line_only(monkeypatch):
    """DataTable changed its virtual size for each row added or removed, and Textual lays out the whole screen
    for that: 13 to 60 ms at 10,000 pods (bench/results/scale.md)."""
    layouts = []
    refresh_layout = Screen._refresh_layout
    monkeypatch.setattr(Screen, "_refresh_layout",
                        lambda self, *a, **k: (layouts.append(1), refresh_layout(self, *a, **k))[1])
    app = ListApp()
    async with app.run_test(size=(60, 20)) as pilot:
        table = app.query_one(RowList)
        table.set_rows(rows(1000))
        await pilot.pause()
        layouts.clear()
        for i in range(20):
            table.set_rows(rows(1000 + i + 1))
            await pilot.pause()
            table.set_rows(rows(1000 + i))
            await pilot.pause()
        assert layouts == []
        painted: list[str] = []
        table.paint_probe = lambda key, strip, is_cursor, index: painted.append(key)
        base = rows(1000)
        table.set_rows(base)
        await pilot.pause()
        painted.clear()
        wanted = dict(base)
        wanted["ns/pod-0005"] = (Text("ns/pod-0005"), Text("Running"))
        table.set_rows(wanted)
        await pilot.pause()
        assert painted == ["ns/pod-0005"]
        assert "Running" in screen_text(table)[6]


async def test_a_column_narrows_when_its_widest_cell_goes_and_a_wide_row_is_cut_with_an_ellipsis():
    app = ListApp()
    async with app.run_test(size=(30, 6)) as pilot:
        table = app.query_one(RowList)
        long = "0/3 nodes: 3 Insufficient cpu, 3 Insufficient memory"
        table.set_rows({"a/x": ("a/x", long), "a/longer-name": ("a/longer-name", "Pending")})
        await pilot.pause()
        assert table.widths == [len("a/longer-name"), len(long)]
        line = screen_text(table)[1]
        assert len(line) == 30 and line.endswith("…") and line.startswith(" a/x ")
        table.set_rows({"a/x": ("a/x", "Pending")})
        assert table.widths == [len("POD"), len("Pending")]
        await pilot.press("right")  # nothing to scroll: everything fits
        assert table.scroll_column == 0


async def test_keys_move_the_cursor_and_keep_it_in_view_and_the_wheel_scrolls_without_moving_it():
    app = ListApp()
    async with app.run_test(size=(40, 11)) as pilot:  # the header and 10 rows
        table = app.query_one(RowList)
        table.set_rows(rows(50))
        table.focus()
        await pilot.pause()
        assert table.visible_rows == 10
        await pilot.press("down", "down")
        assert table.cursor_row == 2 and app.moves[-1] == "ns/pod-0002"
        await pilot.press("end")
        assert (table.cursor_row, table.scroll_row) == (49, 40)
        await pilot.press("home")
        assert (table.cursor_row, table.scroll_row) == (0, 0)
        await pilot.press("pagedown")
        assert (table.cursor_row, table.scroll_row) == (9, 0)
        table.post_message(events.MouseScrollDown(table, 1, 3, 0, 1, 0, False, False, False))
        await pilot.pause()
        assert (table.cursor_row, table.scroll_row) == (9, 3)
        # 50 rows, 10 in view from the fourth: the thumb is 2 of the 10 lines, one line down
        assert [line[-1] for line in screen_text(table)[1:]] == [" ", "█", "█"] + [" "] * 7
        await pilot.click(RowList, offset=(2, 2))  # the second row on screen
        assert table.cursor_key == "ns/pod-0004"


def test_the_age_text_holds_until_the_moment_age_until_gives_and_changes_then():
    """The pending pane re-ages a row only when its AGE text can change (a 17h-old pod every hour)."""
    from datetime import UTC, datetime, timedelta

    from observatory.ui.text import age, age_until

    created = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
    for seconds in (0, 0.4, 1, 59.5, 119, 120, 599.9, 600, 3599, 7200.5, 8 * 3600 + 30, 47 * 3600 + 59, 3 * 86400 + 5,
                    8 * 86400 + 1, 400 * 86400, 3 * 365 * 86400 + 7):
        now = created + timedelta(seconds=seconds)
        text, until = age_until(created, now)
        assert text == age(created, now), seconds
        assert until > now, seconds
        assert age(created, until - timedelta(milliseconds=1)) == text, seconds
        assert age(created, until) != text, seconds
    assert age_until(None, created)[0] == "<unknown>"
    future = created + timedelta(seconds=30)  # a creation time ahead of the clock shows 0s until a second after it
    assert age_until(future, created) == ("0s", future + timedelta(seconds=1))


async def test_a_tab_or_newline_in_a_cell_is_a_space_and_never_pushes_the_row_past_the_pane():
    """A tab measured 0 cells wide and was drawn 8 wide: an event message with tabs ran into the next pane."""
    app = ListApp()
    async with app.run_test(size=(40, 6)) as pilot:
        table = app.query_one(RowList)
        table.set_rows({"a": ("a\tb", Text("tab\there\nand\x1b[31mthere\x00"))})
        await pilot.pause()
        line = table.render_line(1)
        assert line.cell_length == 40
        assert line.text.rstrip() == " a b  tab here and [31mthere"


async def test_scrolled_columns_come_back_when_rows_narrow_or_the_pane_widens_and_wide_characters_crop_by_cell():
    app = ListApp()
    async with app.run_test(size=(30, 6)) as pilot:
        table = app.query_one(RowList)
        table.focus()
        table.set_rows({"a": ("a", "x" * 60), "b": ("b", "宽字符" * 10)})
        await pilot.press("right", "right", "right")
        assert table.scroll_column == 12
        await pilot.pause()
        assert all(table.render_line(y).cell_length == 30 for y in range(3))  # two cells per wide character
        assert screen_text(table)[2].startswith("宽字符")  # cell 12 is 6 cells into the STATE cell: a whole "宽"
        await pilot.resize_terminal(100, 6)  # everything fits: nothing to scroll
        await pilot.pause()
        assert table.scroll_column == 0 and screen_text(table)[0].startswith(" POD")
        await pilot.resize_terminal(30, 6)
        await pilot.press("right")
        assert table.scroll_column == 4
        table.set_rows({"a": ("a", "short")})  # the wide rows went
        await pilot.pause()
        assert table.scroll_column == 0 and screen_text(table)[1].startswith(" a    short")


async def test_the_last_row_going_is_announced_as_none():
    app = ListApp()
    async with app.run_test(size=(40, 6)) as pilot:
        table = app.query_one(RowList)
        table.set_rows(rows(2))
        table.set_rows({})
        table.set_rows(rows(1))
        assert app.moves == ["ns/pod-0000", None, "ns/pod-0000"]
        await pilot.pause()
