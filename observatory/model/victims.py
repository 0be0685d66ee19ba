"""The pods a preemptor evicted, read from kube-scheduler's ``Preempted`` events. Pure.

kube-scheduler's ``PreemptPod`` (``pkg/scheduler/framework/preemption/preemption.go``) records, for each victim,
``Eventf(victim, preemptor, Normal, "Preempted", "Preempting", "Preempted by pod %v on node %v", preemptor.UID,
node)``: in core/v1 the victim is ``involvedObject`` and the preemptor ``related``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from observatory.model._json import text as _text

__all__ = ["Victim", "victims_of"]


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Victim:
    """A pod this pod preempted, from its ``Preempted`` event: ``pod`` as ``namespace/name``, the ``node`` the
    event names and the event's ``note``."""

    pod: str
    node: str
    note: str

    def to_json(self) -> dict[str, str]:
        return {"pod": self.pod, "node": self.node, "note": self.note}


_PREEMPTED_ON = re.compile(r" on node (\S+)$")


def victims_of(pod: dict[str, Any], events: list[dict[str, Any]]) -> tuple[Victim, ...]:
    """The victims named by ``Preempted`` events related to ``pod`` (by uid), oldest first, each pod once."""
    meta = pod.get("metadata")
    uid = _text(meta.get("uid")) if isinstance(meta, dict) else ""
    out: dict[str, Victim] = {}
    for event in sorted(events, key=lambda e: _text(e.get("eventTime") or e.get("firstTimestamp"))):
        related = _object(event.get("related"))
        regarding = _object(event.get("involvedObject"))
        if not uid or _text(related.get("uid")) != uid or event.get("reason") != "Preempted":
            continue
        note = _text(event.get("message") or event.get("note"))
        match = _PREEMPTED_ON.search(note)
        name = f"{_text(regarding.get('namespace'))}/{_text(regarding.get('name'))}"
        out.setdefault(name, Victim(name, match.group(1) if match else "", note))
    return tuple(out.values())
