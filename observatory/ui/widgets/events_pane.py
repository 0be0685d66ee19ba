"""Events of the selected pod, or of every pending pod when nothing is selected."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from observatory.model.records import EventView
from observatory.ui.text import clock_time

_COLUMNS = ("time", "type", "reason", "from", "message")


class EventsPane(DataTable):
    """Rows keyed by the Event's ``namespace/name``, so a repeat (count or series) updates its row."""

    BORDER_TITLE = "Events"

    def on_mount(self) -> None:
        self.cursor_type = "row"
        for column in _COLUMNS:
            self.add_column(column.upper(), key=column)

    def show(self, events: list[EventView], title: str) -> None:
        self.border_title = title
        wanted = {}
        for ev in events:
            count = f" (x{ev.count})" if ev.count > 1 else ""
            wanted[ev.key] = (clock_time(ev.time), Text(ev.type, style="red" if ev.type == "Warning" else ""),
                              ev.reason, ev.source, ev.message + count)
        order = list(wanted)
        with self.app.batch_update():
            current = [k.value for k in self.rows]
            if [k for k in current if k in wanted] != [k for k in order if k in current]:
                self.clear()  # the order changed (a new selection): a new set of rows, not churn
                current = []
            for key in current:
                if key not in wanted:
                    self.remove_row(key)
            for key, cells in wanted.items():
                if key in self.rows:
                    for column, value in zip(_COLUMNS, cells, strict=True):
                        if self.get_cell(key, column) != value:
                            self.update_cell(key, column, value, update_width=True)
                else:
                    self.add_row(*cells, key=key)
