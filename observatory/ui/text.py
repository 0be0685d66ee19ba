"""Text helpers for the panes: ages, times, quantities, the colour of each diagnosis state. Pure functions of their
arguments."""

from __future__ import annotations

from datetime import datetime

from observatory.lab.printing import human_duration
from observatory.model import diagnosis as dx
from observatory.model.units import cpu, memory

__all__ = ["STATE_STYLE", "age", "clock_time", "cpu", "memory"]

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


def clock_time(at: datetime | None) -> str:
    """``HH:MM:SS`` in local time, or ``-``."""
    return at.astimezone().strftime("%H:%M:%S") if at is not None else "-"
