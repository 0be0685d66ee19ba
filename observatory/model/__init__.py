"""Pure records and cluster state built from API JSON: no I/O, no Textual, no kubernetes_asyncio.

* :mod:`.records`: frozen PodView / NodeView / EventView / Taint / TimelineFrame from API JSON, and
  BindingExchange (from :mod:`.exchange`);
* :mod:`.deltas`: what a reflector yields (Upserted, Deleted, Relisted, WatchState);
* :mod:`.state`: ClusterState, ``apply(delta) -> changed areas`` and the panes' selectors (rows in :mod:`.rows`);
* :mod:`.podstatus`: kubectl's STATUS/READY text for a pod.
"""

from .deltas import Deleted, Delta, Relisted, Upserted, WatchState
from .podstatus import pod_status
from .records import BindingExchange, EventView, NodeView, PodView, Taint, TimelineFrame
from .rows import NodePlacement, PendingRow
from .state import ClusterState

__all__ = [
    "BindingExchange",
    "ClusterState",
    "Deleted",
    "Delta",
    "EventView",
    "NodePlacement",
    "NodeView",
    "PendingRow",
    "PodView",
    "Relisted",
    "Taint",
    "TimelineFrame",
    "Upserted",
    "WatchState",
    "pod_status",
]
