"""Events of the selected pod, or of every pending pod when nothing is selected."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from observatory.model.records import EventView
from observatory.ui.text import cell, clock_time
from observatory.ui.widgets.keyed_rows import FreshWidths, sync_rows

_COLUMNS = ("time", "type", "reason", "from", "message")


class EventsPane(FreshWidths, DataTable):
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
                              cell(ev.reason), cell(ev.source), cell(ev.message + count))
        with self.app.batch_update():
            sync_rows(self, wanted, _COLUMNS)
