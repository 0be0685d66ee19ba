"""One defensive reader for the scheduling package's JSON: an array field that may be missing, null or malformed."""

from __future__ import annotations

from typing import Any


def listed(value: Any) -> list[Any] | tuple[Any, ...]:
    """``value`` when it is a JSON array (a list or tuple), else ``()``: null, a number, a string or an object where
    an array belongs reads as no entries (a Go client would have refused to decode it at all)."""
    return value if isinstance(value, (list, tuple)) else ()
