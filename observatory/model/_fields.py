"""Typed reads of one decoded recording line: every problem is a :class:`~.recording.RecordingError` naming the
line and the key."""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any, overload

from .timefmt import parse_time


class RecordingError(ValueError):
    """A recording that cannot be read. ``str(err)`` is ``"line N: <what is wrong>"`` (just the reason when no
    line is to blame); ``line`` is the 1-based line number or None, ``reason`` the text without it."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        self.reason, self.line = reason, line
        super().__init__(f"line {line}: {reason}" if line is not None else reason)


class Fields:
    """Typed reads of one decoded object; every problem is a RecordingError naming the line and the key."""

    def __init__(self, obj: Mapping[str, Any], what: str, line: int | None) -> None:
        self.obj, self.what, self.line = obj, what, line

    def fail(self, reason: str) -> RecordingError:
        return RecordingError(f"{self.what}: {reason}", self.line)

    def get(self, key: str, types: type | tuple[type, ...], name: str, *, optional: bool = False) -> Any:
        if key not in self.obj:
            if optional:
                return None
            raise self.fail(f"{key!r} is missing")
        value = self.obj[key]
        if value is None and optional:
            return None
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in _tuple(types)):
            raise self.fail(f"{key!r} must be {name}, not {json.dumps(value)[:40]}")
        return value

    def text(self, key: str, *, optional: bool = False) -> Any:
        return self.get(key, str, "a string", optional=optional)

    def number(self, key: str) -> float:
        value = self.get(key, (int, float), "a number")
        if not math.isfinite(value):
            raise self.fail(f"{key!r} must be a finite number")
        return float(value)

    @overload
    def time(self, key: str) -> datetime: ...

    @overload
    def time(self, key: str, *, optional: bool) -> datetime | None: ...

    def time(self, key: str, *, optional: bool = False) -> datetime | None:
        value = self.text(key, optional=optional)
        if value is None:
            return None
        try:
            return parse_time(value)
        except ValueError:
            raise self.fail(f"{key!r} is not an RFC 3339 time: {value!r}") from None

    def obj_of(self, key: str) -> dict[str, Any]:
        return self.get(key, dict, "a JSON object")

    def headers(self, key: str) -> tuple[tuple[str, str], ...]:
        pairs = self.get(key, list, "a list of [name, value] pairs")
        if not all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in pairs):
            raise self.fail(f"{key!r} must be a list of [name, value] string pairs")
        return tuple((p[0], p[1]) for p in pairs)

    def body(self, key: str) -> bytes:
        value = self.text(key)
        if not self.get(key + "Base64", bool, "true or false"):
            return value.encode("utf-8")
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise self.fail(f"{key!r} is not valid base64") from None


def _tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)
