"""The selected pod's ``spec.nodeName`` timeline: each watch frame that changed its node, phase or state."""

from __future__ import annotations

from rich.text import Text

from observatory.model.records import TimelineFrame
from observatory.ui.text import cell, clock_time
from observatory.ui.widgets.row_list import RowList

_COLUMNS = ("TIME", "RV", "FRAME", "spec.nodeName", "PHASE", "STATUS")


class TimelinePane(RowList):
    """One row per frame, oldest first, with its resourceVersion and local receipt time; the newest in view."""

    BORDER_TITLE = "nodeName timeline"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__([(column, column) for column in _COLUMNS], id=id, cursor=False)
        self._shown: tuple[str | None, list[TimelineFrame]] | None = None

    def show(self, pod_key: str | None, frames: list[TimelineFrame]) -> None:
        if self._shown == (pod_key, frames):
            return
        self._shown = (pod_key, list(frames))
        self.border_title = f"nodeName timeline: {pod_key}" if pod_key else "nodeName timeline (select a pod)"
        wanted = {}
        for i, frame in enumerate(frames):
            node = Text(frame.node_name, style="bold green") if frame.node_name else Text("<empty>", style="dim")
            wanted[str(i)] = (clock_time(frame.at), cell(frame.resource_version), frame.change, node,
                              cell(frame.phase), cell(frame.status))
        self.set_rows(wanted)
        self.scroll_rows(len(frames))  # the newest frame in view
