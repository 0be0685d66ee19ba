"""What changed since the last repaint, as flags: the areas :meth:`ClusterState.apply
<observatory.model.state.ClusterState.apply>` names, ``WHY`` (the selection or kube-scheduler's Lease) and
``WRITES`` (the audit feed's writes)."""

from __future__ import annotations

import enum
from collections.abc import Iterable

__all__ = ["ALL", "SELECTION", "WHY_INPUTS", "Area"]


class Area(enum.Flag):
    """One area of the screen that may need a repaint."""

    PODS = enum.auto()
    NODES = enum.auto()
    EVENTS = enum.auto()
    WATCH = enum.auto()
    TIMELINE = enum.auto()
    PENDING = enum.auto()
    WHY = enum.auto()
    WRITES = enum.auto()
    """The audit feed brought writes (observatory/ui/writes.py)."""

    @classmethod
    def of(cls, names: Iterable[str]) -> Area:
        """The flags of ``ClusterState.apply``'s area names (``{"pods", "watch"}``: ``PODS | WATCH``)."""
        areas = cls(0)
        for name in names:
            areas |= cls[name.upper()]
        return areas


ALL = Area.PODS | Area.NODES | Area.EVENTS | Area.WATCH | Area.WHY
"""What the first repaint paints, and a rescope repaints."""
SELECTION = Area.EVENTS | Area.TIMELINE | Area.NODES | Area.WHY
"""What shows the selected pod, besides the pending pane's cursor."""
WHY_INPUTS = Area.PODS | Area.NODES | Area.EVENTS | Area.WHY
"""What can change a diagnosis or a fit preview."""
