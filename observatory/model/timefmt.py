"""Times as Kubernetes writes and prints them: pure functions of their arguments.

* :func:`human_duration` is apimachinery ``pkg/util/duration.HumanDuration``, the AGE that kubectl and the
  server-side tables print (``5s``, ``3m2s``, ``4h``);
* :func:`ago` is the short "how long ago" of the diagnosis sentences (``5s ago``, ``3m ago``, ``2h ago``);
* :func:`rfc3339` and :func:`parse_time` write and read the times of recordings and transcripts;
* :func:`timestamp` reads an API object's ``metav1.Time`` / ``MicroTime`` leniently (None when unreadable).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

__all__ = ["ago", "human_duration", "human_duration_ns", "parse_time", "rfc3339", "timestamp"]

_NS = 1_000_000_000
_MIN = 60 * _NS
_HOUR = 60 * _MIN


def human_duration_ns(d: int) -> str:
    """apimachinery ``duration.HumanDuration`` on a Go ``time.Duration`` (integer nanoseconds)."""
    seconds = d // _NS if d >= 0 else -((-d) // _NS)  # Go int(d.Seconds()) truncates toward zero
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = d // _MIN
    if minutes < 10:
        s = (d // _NS) % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = d // _HOUR
    if hours < 8:
        m = (d // _MIN) % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def human_duration(seconds: float) -> str:
    """apimachinery ``pkg/util/duration.HumanDuration`` for a duration given in (possibly fractional) seconds.

    ``< -1s`` -> ``<invalid>``; ``(-2s, 0)`` -> ``0s``; ``< 2m`` -> ``Ns``; ``< 10m`` -> ``NmSs``/``Nm``;
    ``< 3h`` -> ``Nm``; ``< 8h`` -> ``NhMm``/``Nh``; ``< 48h`` -> ``Nh``; ``< 8d`` -> ``NdHh``/``Nd``;
    ``< 2y`` -> ``Nd``; ``< 8y`` -> ``NyDd``/``Ny``; else ``Ny`` (a year is 365 days).
    """
    return human_duration_ns(round(seconds * _NS))


def ago(then: datetime | None, now: datetime) -> str:
    """``5s ago`` below two minutes, ``3m ago`` below two hours, else ``2h ago``; ``at an unknown time`` for None."""
    if then is None:
        return "at an unknown time"
    seconds = max(0, int((now - then).total_seconds()))
    if seconds < 120:
        return f"{seconds}s ago"
    if seconds < 7200:
        return f"{seconds // 60}m ago"
    return f"{seconds // 3600}h ago"


def rfc3339(when: datetime) -> str:
    """``2026-11-29T10:00:00.250000Z``: ISO 8601 with the offset (``Z`` for UTC), microseconds when not zero. A naive
    datetime is written without an offset (and read back naive)."""
    text = when.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def parse_time(text: str) -> datetime:
    """The inverse of :func:`rfc3339`; ValueError for anything else."""
    if not isinstance(text, str) or not text:
        raise ValueError("not a time")
    return datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)


def timestamp(value: Any) -> datetime | None:
    """An RFC 3339 ``metav1.Time`` / ``MicroTime`` string as an aware UTC datetime; None when missing or unreadable
    (``null``, "", a zero time is still a time). A naive value is taken as UTC."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:  # "0001-01-01T00:00:00+01:00": its UTC time is before year 1
        return None
