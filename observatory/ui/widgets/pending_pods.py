"""Pending pods: every pod whose ``spec.nodeName`` is empty, and for a few seconds the ones just bound."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from observatory.model.state import PendingRow
from observatory.scheduling.fiterror import parse_fit_error, summary
from observatory.ui.text import age
from observatory.ui.widgets.keyed_rows import sync_rows


_COLUMNS = ("pod", "age", "state", "scheduler")


def _cells(row: PendingRow, now: datetime) -> tuple:
    """POD, AGE, STATE (why it is pending, FailedScheduling texts summarised), SCHEDULER (non-default in yellow)."""
    pod = row.pod
    if row.bound_to:
        state = Text(f"→ {row.bound_to}", style="bold green")
    elif row.state.startswith("FailedScheduling: "):
        state = Text(summary(parse_fit_error(row.state.removeprefix("FailedScheduling: "))), style="red")
    elif row.state.startswith("SchedulerError"):
        state = Text(row.state, style="red")
    else:
        state = Text(row.state, style="yellow" if row.state == "no scheduler has looked" else "")
    scheduler = Text(pod.scheduler_name, style="" if row.default_scheduler else "bold yellow")
    return (pod.key, age(pod.created, now), state, scheduler)


class PendingPodsPane(DataTable):
    """Rows keyed by ``namespace/name``; the highlighted row is the selected pod."""

    BORDER_TITLE = "Pending pods"

    class PodHighlighted(Message):
        """The user moved to another pod (``key`` is ``namespace/name``)."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = False
        for column in _COLUMNS:
            self.add_column(column.upper(), key=column)

    def show(self, rows: list[PendingRow], now: datetime, filter_text: str = "", selected: str | None = None) -> None:
        """Update the table in place by row key: add, change and remove rows, never rebuild for churn.

        The selected pod keeps its row while selected, and the cursor stays on it, so the selection never jumps
        to another pod when the list changes."""
        wanted = {}
        for row in rows:
            if filter_text and filter_text not in row.pod.key:
                continue
            wanted[row.pod.key] = _cells(row, now)
        if selected and not filter_text and selected not in wanted and selected in self.rows:
            wanted[selected] = tuple(self.get_row(selected))  # left the list while selected: keep it in view
        with self.app.batch_update():
            sync_rows(self, wanted, _COLUMNS)
            if selected in self.rows and self.cursor_row != self.get_row_index(selected):
                self.move_cursor(row=self.get_row_index(selected), animate=False)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value is not None:  # None: the list is empty
            self.post_message(self.PodHighlighted(event.row_key.value))

    def select(self, key: str) -> None:
        """Move the cursor to ``key`` if it is listed."""
        if key in self.rows:
            self.move_cursor(row=self.get_row_index(key))
