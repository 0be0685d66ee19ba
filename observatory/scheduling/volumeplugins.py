"""The three volume plugins of the default profile, run in its order: VolumeRestrictions, VolumeBinding, VolumeZone.

kube-scheduler v1.34.1's default profile runs, at PreFilter and at Filter, ``VolumeRestrictions``,
``NodeVolumeLimits`` (not modelled: CSINode limits), ``VolumeBinding`` and ``VolumeZone`` between NodeResourcesFit
and PodTopologySpread. :func:`prefilter` runs their PreFilters and keeps the states in one :class:`VolumeState`
(the cycle state's ``volumes``); :meth:`VolumeState.filter` runs their Filters on one node, stopping at the first
rejection. A pod with no claim and no in-tree disk costs one tuple check; a Snapshot without a usable catalog
(``Snapshot.volumes`` None, or a kind that could not be listed) runs none of them.

**The PostFilter text after a volume PreFilter rejection.** A PreFilter that returns UnschedulableAndUnresolvable
stops ``RunPreFilterPlugins`` at once ("no need to execute all PreFilter"), so DynamicResources' PreFilter, the last
one, never writes its cycle state. ``RunPostFilterPlugins`` then calls DynamicResources' PostFilter first, whose
``getStateData`` fails with the cycle state's ``ErrNotFound`` (``not found``); ``statusError`` makes that an Error
status, and ``RunPostFilterPlugins`` returns an Error at once, before DefaultPreemption runs. ``schedulingCycle``
still copies the status message into ``PostFilterMsg``, so the FitError reads ``0/N nodes are available: pod has
unbound immediate PersistentVolumeClaims. not found`` (``dynamicresources.go`` PostFilter and
``framework/runtime/framework.go`` RunPostFilterPlugins; public captures of FailedScheduling events show this
text). Without DRA there is no such tail and DefaultPreemption writes ``preemption: 0/N nodes are available: N
Preemption is not helpful for scheduling.``
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import volumebinding, volumerestrictions, volumezone
from .verdicts import UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE, Code, VolumeConflict
from .volumebinding import VOLUME_BINDING, BindingState, VolumePlan
from .volumerestrictions import VOLUME_RESTRICTIONS, RestrictionState
from .volumezone import ERR_VOLUME_ZONE, VOLUME_ZONE, ZoneState

if TYPE_CHECKING:
    from .nodeinfo import NodeInfo, PodInfo, Snapshot

__all__ = ["DRA_POSTFILTER_STATE_NOT_FOUND", "VOLUME_PLUGINS", "VolumeState", "prefilter", "reserve_volumes"]

VOLUME_PLUGINS = (VOLUME_RESTRICTIONS, VOLUME_BINDING, VOLUME_ZONE)
"""The volume plugins reproduced here, in the default profile's Filter order."""
DRA_POSTFILTER_STATE_NOT_FOUND = "not found"
"""The PostFilter message after a PreFilter rejection (see the module docstring)."""


@dataclass(slots=True)
class VolumeState:
    """The PreFilter states of the volume plugins for one cycle (None: that plugin skips)."""

    restrictions: RestrictionState | None = None
    binding: BindingState | None = None
    zone: ZoneState | None = None

    def copy(self) -> VolumeState:
        return VolumeState(self.restrictions.copy() if self.restrictions is not None else None, self.binding,
                           self.zone)

    def update_with_pod(self, other: PodInfo, value: int) -> None:
        if self.restrictions is not None and other.volumes:
            self.restrictions.update_with_pod(other, value)

    def filter(self, node: NodeInfo) -> tuple[str, Code, tuple[str, ...], tuple[VolumeConflict, ...]] | None:
        """The first volume plugin that rejects ``node``: ``(plugin, code, reasons, details)``, or None."""
        if self.restrictions is not None:
            rejected = self.restrictions.filter(node)
            if rejected is not None:
                return VOLUME_RESTRICTIONS, UNSCHEDULABLE, (rejected[0],), (rejected[1],)
        if self.binding is not None:
            found = self.binding.filter(node)
            if found is not None:
                return VOLUME_BINDING, UNSCHEDULABLE_AND_UNRESOLVABLE, found[0], found[1]
        if self.zone is not None:
            conflict = self.zone.filter(node)
            if conflict is not None:
                return VOLUME_ZONE, UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_VOLUME_ZONE,), (conflict,)
        return None


def prefilter(pod: PodInfo, snapshot: Snapshot) -> VolumeState | tuple[str, str] | None:
    """The volume plugins' PreFilters in order: their state, None when all skip, or ``(plugin, message)`` for an
    UnschedulableAndUnresolvable rejection of the pod."""
    if not pod.volumes:
        return None
    catalog = snapshot.volumes
    if catalog is None or not catalog.usable:
        return None
    restrictions = volumerestrictions.prefilter(pod, catalog, snapshot)
    if isinstance(restrictions, str):
        return VOLUME_RESTRICTIONS, restrictions
    binding = volumebinding.prefilter(pod, catalog)
    if isinstance(binding, str):
        return VOLUME_BINDING, binding
    zone = volumezone.prefilter(pod, catalog)
    if isinstance(zone, str):
        return VOLUME_ZONE, zone
    if restrictions is None and binding is None and zone is None:
        return None
    return VolumeState(restrictions, binding, zone)


def reserve_volumes(pod: PodInfo, snapshot: Snapshot, node: str) -> VolumePlan | None:
    """VolumeBinding's Reserve for the node the cycle chose: the PreFilter and that node's Filter again (one node),
    then :func:`.volumebinding.reserve`. None when there is nothing to bind (no claims, or all bound)."""
    catalog = snapshot.volumes
    info = snapshot.get(node)
    if not pod.volumes or catalog is None or not catalog.usable or info is None:
        return None
    state = volumebinding.prefilter(pod, catalog)
    if not isinstance(state, BindingState) or state.filter(info) is not None:
        return None
    return volumebinding.reserve(state, node)
