"""Quantities as kubectl prints them, from the scheduler's integer units
(see :mod:`observatory.scheduling.resources`)."""

from __future__ import annotations

__all__ = ["amount", "cpu", "memory"]


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


def amount(resource: str, value: int) -> str:
    """One amount of ``resource`` in its usual notation: cpu as :func:`cpu`, memory, ephemeral-storage and
    hugepages as :func:`memory`, anything else (pods, extended resources) as a plain count."""
    if resource == "cpu":
        return cpu(value)
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return memory(value)
    return str(value)
