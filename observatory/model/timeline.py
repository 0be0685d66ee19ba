"""Per-pod nodeName timelines: the frames that changed ``spec.nodeName``, phase or STATUS, with bounded memory."""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime, timedelta

from .records import PodView, TimelineFrame

__all__ = ["Timelines"]


class Timelines:
    """The timelines of every pod seen, keyed by ``"namespace/name"``.

    Each keeps its last ``length`` frames. A pod deleted more than ``forget_seconds`` ago, or beyond the
    ``max_forgotten`` most recently deleted, loses its timeline. A new pod under an old name (another uid) starts a
    new timeline.
    """

    def __init__(self, length: int = 50, forget_seconds: float = 600.0, max_forgotten: int = 1000) -> None:
        self.length = length
        self.forget_seconds = forget_seconds
        self.max_forgotten = max_forgotten
        self._frames: dict[str, tuple[str, list[TimelineFrame]]] = {}  # key -> (pod uid, frames)
        self._deleted: OrderedDict[str, datetime] = OrderedDict()  # key -> deletion time, oldest first

    def record(self, key: str, old: PodView | None, new: PodView | None, change: str, now: datetime) -> bool:
        """Note one change of the pod ``key`` (``new`` None: deleted); True when it made a frame. A first sighting
        and a deletion always do; otherwise only a different node, phase or STATUS."""
        pod = new or old
        if pod is None:
            return False
        if new is None:
            self._deleted[key] = now
        else:
            self._deleted.pop(key, None)
        entry = self._frames.get(key)
        if entry is None or (new is not None and entry[0] != new.uid):
            entry = (pod.uid, [])
            self._frames[key] = entry
        frames = entry[1]
        if new is not None and frames:
            last = frames[-1]
            if last.change != "DELETED" and (last.node_name, last.phase, last.status) == (
                    new.node_name, new.phase, new.status):
                return False
        frames.append(TimelineFrame(pod.resource_version, now, change, pod.node_name, pod.phase, pod.status))
        if len(frames) > self.length:
            del frames[: len(frames) - self.length]
        return True

    def forget(self, now: datetime) -> None:
        """Drop the timelines of pods deleted long ago, or too many deletions ago (amortised O(1) per call)."""
        cutoff = now - timedelta(seconds=self.forget_seconds)
        deleted = self._deleted
        while deleted:
            key, when = next(iter(deleted.items()))
            if len(deleted) <= self.max_forgotten and when >= cutoff:
                break
            deleted.popitem(last=False)
            self._frames.pop(key, None)

    def get(self, key: str) -> list[TimelineFrame]:
        """The frames of ``key``, oldest first (a copy); [] for a pod never seen or forgotten."""
        entry = self._frames.get(key)
        return list(entry[1]) if entry is not None else []
