"""The selected pod's ``spec.nodeName`` timeline: each watch frame that changed its node, phase or state."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from observatory.model.records import TimelineFrame
from observatory.ui.text import cell, clock_time
from observatory.ui.widgets.keyed_rows import FreshWidths


class TimelinePane(FreshWidths, DataTable):
    """One row per frame, oldest first, with its resourceVersion and local receipt time."""

    BORDER_TITLE = "nodeName timeline"

    def on_mount(self) -> None:
        self.cursor_type = "none"
        for column in ("TIME", "RV", "FRAME", "spec.nodeName", "PHASE", "STATUS"):
            self.add_column(column)

    def show(self, pod_key: str | None, frames: list[TimelineFrame]) -> None:
        self.border_title = f"nodeName timeline: {pod_key}" if pod_key else "nodeName timeline (select a pod)"
        with self.app.batch_update():
            self.clear()
            for frame in frames:
                node = Text(frame.node_name, style="bold green") if frame.node_name else Text("<empty>", style="dim")
                self.add_row(clock_time(frame.at), cell(frame.resource_version), frame.change, node,
                             cell(frame.phase), cell(frame.status))
            if frames:
                self.scroll_end(animate=False)
