"""What every server-side Table shares: ObjectMeta's column descriptions, a column definition, and printers.go's
``translateTimestampSince``. Used by :mod:`observatory.lab.printing`, :mod:`observatory.lab.printing_columns` and the
kinds' printers (:mod:`observatory.lab.kinds`), which the printing modules dispatch to.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from observatory.model.timefmt import human_duration_ns

DOC_NAME = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources may "
    "allow a client to request the generation of an appropriate name automatically. Name is primarily intended "
    "for creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
DOC_CREATION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this value. "
    "It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. "
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)


def column(name: str, description: str, *, type_: str = "string", format_: str = "", priority: int = 0) -> dict:
    """One TableColumnDefinition: ``{"name","type","format","description","priority"}`` (no omitempty upstream)."""
    return {"name": name, "type": type_, "format": format_, "description": description, "priority": priority}


def parse_time(ts: Any) -> datetime | None:
    if not ts or not isinstance(ts, str):
        return None
    try:
        t = datetime.fromisoformat(ts.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def translate_timestamp_since(ts: str | None, now: datetime) -> str:
    """printers.go ``translateTimestampSince``: ``<unknown>`` for a missing/zero time, else HumanDuration(now-ts).

    ``ts`` is an RFC3339 (metav1.Time) or RFC3339-micro (metav1.MicroTime) string; ``now`` should be aware
    (naive is taken as UTC).
    """
    t = parse_time(ts)
    if t is None:
        return "<unknown>"
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    delta = now - t
    micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    return human_duration_ns(micros * 1000)
