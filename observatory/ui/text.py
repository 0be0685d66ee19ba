"""Text helpers for the panes: ages, times, quantities, the colour of each diagnosis state. Pure functions of their
arguments."""

from __future__ import annotations

from datetime import datetime, timedelta

from rich.text import Text

from observatory.model import diagnosis as dx
from observatory.model.timefmt import human_duration
from observatory.model.units import cpu, memory

__all__ = ["STATE_STYLE", "age", "age_until", "cell", "clock_time", "cpu", "literal", "memory"]

STATE_STYLE = {
    dx.REFUSED: "red", dx.SCHEDULER_ERROR: "red",
    dx.NO_SCHEDULER: "yellow",
    dx.GATED: "magenta", dx.NOMINATED: "magenta",
    dx.WAITING_KUBELET: "cyan", dx.SCHEDULED: "cyan", dx.NODE_NOT_READY: "bold cyan", dx.NODE_MISSING: "bold cyan",
    dx.DELETING: "dim", dx.RUNNING: "green", dx.FINISHED: "dim",
}
"""Diagnosis state -> the STATE column's colour: refused red, nobody looking yellow, held back magenta, bound and
not yet running cyan (bold when the node is the problem), on its way out dim."""


def age(created: datetime | None, now: datetime) -> str:
    """kubectl's AGE: ``5s``, ``3m2s``, ``4h``; ``<unknown>`` without a creation time."""
    if created is None:
        return "<unknown>"
    return human_duration(max(0.0, (now - created).total_seconds()))


_AGE_STEPS = ((600, 1), (8 * 3600, 60), (8 * 86400, 3600))
"""(below this many seconds of age, the AGE text changes at most every this many seconds): HumanDuration shows
seconds below 10 minutes, minutes below 8 hours, hours below 8 days, and days or years beyond."""


def age_until(created: datetime | None, now: datetime) -> tuple[str, datetime]:
    """:func:`age` and the moment its text can next change (``datetime.max`` for ``<unknown>``): a pod 17 hours
    old shows ``17h`` until its next whole hour, so a list of 1,400 such pods need not be re-aged every second."""
    if created is None:
        return "<unknown>", datetime.max.replace(tzinfo=now.tzinfo)
    seconds = max(0.0, (now - created).total_seconds())
    step = next((step for below, step in _AGE_STEPS if seconds < below), 86400)
    return human_duration(seconds), created + timedelta(seconds=(seconds // step + 1) * step)


def cell(value: str) -> Text:
    """A table cell showing ``value`` as is, never as markup: in a DataTable, cluster text such as the event message
    ``exec: "[/bin/sh -c]" failed`` was parsed as Rich markup, raised MarkupError and stopped the app."""
    return Text(value, no_wrap=True, end="")


def literal(value: str | Text) -> Text:
    """``value`` for a Label or Static, shown as is. A str there is parsed as Textual markup, so a name typed in a
    chooser (``[/]`` for a node) or read from the cluster raised MarkupError when the widget was drawn."""
    return Text(value) if isinstance(value, str) else value


def clock_time(at: datetime | None) -> str:
    """``HH:MM:SS`` in local time, or ``-``; in UTC for a time local time cannot hold (``0001-01-01T00:00:00Z``
    west of Greenwich, ``9999-12-31T23:59:59Z`` east of it: ``astimezone`` raised OverflowError mid-repaint)."""
    if at is None:
        return "-"
    try:
        return at.astimezone().strftime("%H:%M:%S")
    except (OverflowError, ValueError, OSError):
        return at.strftime("%H:%M:%S")
