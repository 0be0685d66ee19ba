"""Text helpers for the panes: ages, times, quantities, the colour of each diagnosis state. Pure functions of their
arguments."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text

from observatory.lab.printing import human_duration
from observatory.model import diagnosis as dx
from observatory.model.units import cpu, memory

__all__ = ["STATE_STYLE", "age", "cell", "clock_time", "cpu", "literal", "memory"]

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


def cell(value: str) -> Text:
    """A DataTable cell showing ``value`` as is, cropped like a str cell. A str cell is parsed as Rich markup, so
    cluster text such as the event message ``exec: "[/bin/sh -c]" failed`` raised MarkupError and stopped the app."""
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
