"""Text helpers for the panes: ages, times, quantities. Pure functions of their arguments."""

from __future__ import annotations

from datetime import datetime

from observatory.lab.printing import human_duration


def age(created: datetime | None, now: datetime) -> str:
    """kubectl's AGE: ``5s``, ``3m2s``, ``4h``; ``<unknown>`` without a creation time."""
    if created is None:
        return "<unknown>"
    return human_duration(max(0.0, (now - created).total_seconds()))


def clock_time(at: datetime | None) -> str:
    """``HH:MM:SS`` in local time, or ``-``."""
    return at.astimezone().strftime("%H:%M:%S") if at is not None else "-"


def cpu(milli: int) -> str:
    """Millicores as kubectl describe prints them: ``250m``, ``2``, ``1500m``."""
    return f"{milli // 1000}" if milli % 1000 == 0 else f"{milli}m"


def memory(value: int) -> str:
    """Bytes in the largest binary unit that divides them: ``128Mi``, ``8Gi``; else ``Ki`` rounded, else bytes."""
    for unit, size in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if value and value % size == 0:
            return f"{value // size}{unit}"
    if value >= 1 << 20:
        return f"{value / (1 << 20):.0f}Mi"
    return f"{value}"
