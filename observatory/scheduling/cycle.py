"""The per-cycle state of the PreFilter plugins that keep one (``framework.CycleState``).

PodTopologySpread and InterPodAffinity count pods across the whole cluster at PreFilter; their Filter reads the
counts node by node. Preemption's dry run changes them as it takes victims off a node (``RemovePod``) and puts
reprieved ones back (``AddPod``) on its own copy, as upstream clones the CycleState per candidate node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .interpodaffinity import PodAffinityState
    from .nodeinfo import NodeInfo, PodInfo
    from .podtopologyspread import SpreadState
    from .volumeplugins import VolumeState

__all__ = ["CycleState"]


@dataclass(slots=True)
class CycleState:
    """``spread``: PodTopologySpread's state; ``affinity``: InterPodAffinity's; ``volumes``: the volume plugins'
    (None: that plugin skips)."""

    spread: SpreadState | None = None
    affinity: PodAffinityState | None = None
    volumes: VolumeState | None = None

    def copy(self) -> CycleState:
        return CycleState(self.spread.copy() if self.spread is not None else None,
                          self.affinity.copy() if self.affinity is not None else None,
                          self.volumes.copy() if self.volumes is not None else None)

    def update_with_pod(self, other: PodInfo, node: NodeInfo, value: int) -> None:
        """``RunPreFilterExtensionAddPod`` (value 1) / ``RemovePod`` (-1) for every plugin with a state."""
        if self.spread is not None:
            self.spread.update_with_pod(other, node, value)
        if self.affinity is not None:
            self.affinity.update_with_pod(other, node, value)
        if self.volumes is not None:
            self.volumes.update_with_pod(other, value)
