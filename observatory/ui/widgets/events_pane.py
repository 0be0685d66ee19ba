"""Events of the selected pod, or of every pending pod when nothing is selected."""

from __future__ import annotations

from rich.text import Text

from observatory.model.records import EventView
from observatory.ui.text import cell, clock_time
from observatory.ui.widgets.row_list import RowList

_COLUMNS = ("time", "type", "reason", "from", "message")


class EventsPane(RowList):
    """Rows keyed by the Event's ``namespace/name``, so a repeat (count or series) updates its row. A
    :class:`RowList`: selecting another pod changes every row, and a DataTable's new height laid out the screen."""

    BORDER_TITLE = "Events"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__([(column, column.upper()) for column in _COLUMNS], id=id)
        self._made: dict[str, tuple[EventView, tuple]] = {}

    def show(self, events: list[EventView], title: str) -> None:
        self.border_title = title
        wanted = {}
        made, self._made = self._made, {}
        for ev in events:
            hit = made.get(ev.key)
            if hit is None or hit[0] != ev:  # an unchanged event keeps its cells: its line is not redrawn
                count = f" (x{ev.count})" if ev.count > 1 else ""
                hit = (ev, (clock_time(ev.time), Text(ev.type, style="red" if ev.type == "Warning" else ""),
                            cell(ev.reason), cell(ev.source), cell(ev.message + count)))
            self._made[ev.key] = hit
            wanted[ev.key] = hit[1]
        self.set_rows(wanted)
