"""Pending pods: every pod whose ``spec.nodeName`` is empty, and for a few seconds the ones just bound."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from observatory.model.state import PendingRow
from observatory.ui.text import age


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
        self.add_column("POD", key="pod")
        self.add_column("AGE", key="age")
        self.add_column("SCHEDULER", key="scheduler")
        self.add_column("STATE", key="state")

    def show(self, rows: list[PendingRow], now: datetime, filter_text: str = "") -> None:
        """Update the table in place by row key: add, change and remove rows, never rebuild."""
        wanted = {}
        for row in rows:
            if filter_text and filter_text not in row.pod.key:
                continue
            pod = row.pod
            scheduler = Text(pod.scheduler_name, style="" if row.default_scheduler else "bold yellow")
            if row.bound_to:
                state = Text(f"→ {row.bound_to}", style="bold green")
            elif row.state.startswith(("FailedScheduling", "SchedulerError")):
                state = Text(row.state, style="red")
            else:
                state = Text(row.state, style="yellow" if row.state == "no scheduler has looked" else "")
            wanted[pod.key] = (pod.key, age(pod.created, now), scheduler, state)
        with self.app.batch_update():
            for key in [k.value for k in list(self.rows)]:
                if key not in wanted:
                    self.remove_row(key)
            for key, cells in wanted.items():
                if key in self.rows:
                    for column, value in zip(("pod", "age", "scheduler", "state"), cells, strict=True):
                        if self.get_cell(key, column) != value:
                            self.update_cell(key, column, value)
                else:
                    self.add_row(*cells, key=key)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self.post_message(self.PodHighlighted(event.row_key.value))

    def select(self, key: str) -> None:
        """Move the cursor to ``key`` if it is listed."""
        if key in self.rows:
            self.move_cursor(row=self.get_row_index(key))
