"""Text helpers for the panes: ages, times, quantities. Pure functions of their arguments."""

from __future__ import annotations

from datetime import datetime

from observatory.lab.printing import human_duration
from observatory.model.units import cpu, memory

__all__ = ["age", "clock_time", "cpu", "memory"]


def age(created: datetime | None, now: datetime) -> str:
    """kubectl's AGE: ``5s``, ``3m2s``, ``4h``; ``<unknown>`` without a creation time."""
    if created is None:
        return "<unknown>"
    return human_duration(max(0.0, (now - created).total_seconds()))


def clock_time(at: datetime | None) -> str:
    """``HH:MM:SS`` in local time, or ``-``."""
    return at.astimezone().strftime("%H:%M:%S") if at is not None else "-"
