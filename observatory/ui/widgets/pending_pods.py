"""Pending pods: every pod with no node yet, or bound and not yet running, and for a few seconds each one just bound."""

from __future__ import annotations

import bisect
from datetime import datetime

from rich.text import Text
from textual.message import Message

from observatory.model.rows import pending_row
from observatory.model.state import ClusterState, PendingRow
from observatory.ui.text import STATE_STYLE, age_until, cell
from observatory.ui.widgets.row_list import RowList

_COLUMNS = ("pod", "age", "state", "scheduler")


def state_text(row: PendingRow) -> Text:
    """The STATE cell: ``→ node`` for a pod just bound, else the diagnosis headline in its state's colour. The style
    is a span, so a cell whose colour alone changes still compares unequal and is repainted."""
    if row.bound_to:
        text, style = f"→ {row.bound_to}", "bold green"
    else:
        text, style = row.diagnosis.headline, STATE_STYLE.get(row.diagnosis.state, "")
    out = Text(text)
    out.stylize(style)
    return out


def _cells(row: PendingRow, age_text: str) -> tuple:
    """POD, AGE, STATE (why it is pending, in a few words), SCHEDULER (non-default in yellow)."""
    pod = row.pod
    scheduler = Text(pod.scheduler_name)
    scheduler.stylize("" if row.default_scheduler else "bold yellow")
    return (cell(pod.key), age_text, state_text(row), scheduler)


def with_selected_row(state: ClusterState, selected: str | None) -> list[PendingRow]:
    """The pending rows, plus the selected pod's at its place when it is no longer pending (it keeps its row while
    selected, showing where it is now: running, say, after a bind)."""
    rows = state.pending()
    if selected is None or any(row.pod.key == selected for row in rows):
        return rows
    diagnosis = state.diagnosis(selected)
    if diagnosis is None:
        return rows
    bisect.insort(rows, pending_row(state.pods[selected], diagnosis), key=lambda row: (row.pod.namespace, row.pod.name))
    return rows


class PendingPodsPane(RowList):
    """Rows keyed by ``namespace/name``; the row under the cursor is the selected pod. A :class:`RowList`, not a
    DataTable: a 10,000-pod cluster has about 1,400 pending pods, and a pod created or bound there must not cost a
    pass over all of them (see row_list.py)."""

    BORDER_TITLE = "Pending pods"

    class PodHighlighted(Message):
        """The user moved to another pod (``key`` is ``namespace/name``), or none is listed any more (None: the
        last row went, or the filter hides every row, so nothing is selected)."""

        def __init__(self, key: str | None) -> None:
            super().__init__()
            self.key = key

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__([(column, column.upper()) for column in _COLUMNS], id=id)
        self._rows_shown: list[PendingRow] | None = None
        self._shown: tuple = ()
        self._made: dict[str, tuple] = {}  # key -> (row, its AGE text good until, AGE text, cells)
        self._ages_until: datetime | None = None  # the first AGE text due to change

    def show(self, rows: list[PendingRow], now: datetime, filter_text: str = "", selected: str | None = None) -> None:
        """Update the list in place by row key: add, change and remove rows, never rebuild for churn.

        The selected pod (``selected``: None once it is deleted) keeps its row while selected, even after it stops
        being pending, and the cursor stays on the pod under it, so the selection never jumps to another pod when
        the list changes. The cursor decides which pod that is: the app learns of a move by a queued message, so
        its ``selected`` may still name the pod before, and following it would undo the move."""
        shown = (filter_text, selected)
        if rows == self._rows_shown and shown == self._shown and self._ages_until and now < self._ages_until:
            return  # the same row objects and no AGE due to change: nothing to repaint (== compares identity first)
        self._rows_shown, self._shown = rows, shown
        current = self.cursor_key or selected
        wanted = {}
        made, self._made = self._made, {}
        ages_until = datetime.max.replace(tzinfo=now.tzinfo)
        for row in rows:
            key = row.pod.key
            if filter_text and filter_text not in key:
                continue
            # The same row object and age text make the same cells: reuse the tuple, which set_rows then skips.
            hit = made.get(key)
            if hit is None or hit[0] is not row or now >= hit[1]:
                text, until = age_until(row.pod.created, now)
                cells = hit[3] if hit is not None and hit[0] is row and hit[2] == text else _cells(row, text)
                hit = (row, until, text, cells)
            ages_until = min(ages_until, hit[1])
            self._made[key] = hit
            wanted[key] = hit[3]
        self._ages_until = ages_until
        if current and current == selected and not filter_text and current not in wanted and current in self.rows:
            wanted[current] = self.get_row(current)  # left the list while selected: keep it in view
        self.set_rows(wanted)
        if current is not None and current in self.rows:
            self.select(current)

    def cursor_moved(self, key: str | None) -> None:
        self.post_message(self.PodHighlighted(key))
