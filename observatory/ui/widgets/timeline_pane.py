"""The selected pod's ``spec.nodeName`` timeline: each watch frame that changed its node, phase or state, and, with an
audit feed, the write that made it in the last column (WRITE): ``← POST pods/manual/binding · kubectl · 201``, the
same with ``(matched by order)`` when the write's answer did not carry the frame's resourceVersion, or ``no write
seen``. The write comes last so that spec.nodeName, PHASE and STATUS, the frame itself, stay in view in a narrow
pane; the write's text is what is cut."""

from __future__ import annotations

from rich.text import Text

from observatory.model.records import TimelineFrame
from observatory.model.writes import FrameWrite
from observatory.ui.text import cell, clock_time
from observatory.ui.widgets.row_list import RowList

_COLUMNS = ("TIME", "RV", "FRAME", "spec.nodeName", "PHASE", "STATUS", "WRITE")


class TimelinePane(RowList):
    """One row per frame, oldest first, with its resourceVersion and local receipt time; the newest in view."""

    BORDER_TITLE = "nodeName timeline"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__([(column, column) for column in _COLUMNS], id=id, cursor=False)
        self._shown: tuple[str | None, list[TimelineFrame], list[str] | None] | None = None

    def show(self, pod_key: str | None, frames: list[TimelineFrame], writes: list[FrameWrite] | None = None) -> None:
        """The frames of ``pod_key``, oldest first; ``writes`` (one per frame, :func:`~observatory.model.writes.
        join_frames`) names each frame's write in the WRITE column; None: no audit feed, the column is empty."""
        labels = [w.label for w in writes] if writes is not None else None
        if self._shown == (pod_key, frames, labels):
            return
        self._shown = (pod_key, list(frames), labels)
        self.border_title = f"nodeName timeline: {pod_key}" if pod_key else "nodeName timeline (select a pod)"
        wanted = {}
        for i, frame in enumerate(frames):
            node = Text(frame.node_name, style="bold green") if frame.node_name else Text("<empty>", style="dim")
            write = Text()
            if labels is not None and i < len(labels):
                write = Text(labels[i], style="dim" if writes is not None and writes[i].how != "exact" else "")
            wanted[str(i)] = (clock_time(frame.at), cell(frame.resource_version), frame.change, node,
                              cell(frame.phase), cell(frame.status), write)
        self.set_rows(wanted)
        self.scroll_rows(len(frames))  # the newest frame in view
