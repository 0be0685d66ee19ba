"""Defensive readers for API JSON: any key may be missing, null or of the wrong type, and none of that raises."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_EMPTY: Mapping[str, Any] = {}


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else an empty one."""
    if type(value) is dict:  # the common case, without the ABC check
        return value
    return value if isinstance(value, Mapping) else _EMPTY


def items(value: Any) -> list[Any]:
    """``value`` when it is a list (or tuple), else an empty list."""
    return value if isinstance(value, (list, tuple)) else []  # type: ignore[return-value]


def text(value: Any) -> str:
    """``value`` as a string: "" for None; numbers and booleans as JSON would print them."""
    if type(value) is str:
        return value
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def integer(value: Any, default: int = 0) -> int:
    """``value`` as an int (ints, integral floats and numeric strings), else ``default``."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return default
    return default


def metadata_key(obj: Mapping[str, Any], namespaced: bool = True) -> str:
    """``"namespace/name"`` for namespaced objects, ``"name"`` otherwise; "" when the name is missing."""
    meta = mapping(obj.get("metadata")) if isinstance(obj, Mapping) else _EMPTY
    name = text(meta.get("name"))
    if not name:
        return ""
    return f"{text(meta.get('namespace'))}/{name}" if namespaced else name
