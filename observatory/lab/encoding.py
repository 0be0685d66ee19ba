"""JSON bytes exactly as kube-apiserver writes them.

apimachinery's JSON serializer (``pkg/runtime/serializer/json/json.go`` ``doEncode``) uses Go's
``json.NewEncoder(w).Encode(obj)``: compact separators, non-ASCII kept as UTF-8, ``<``, ``>`` and ``&`` escaped as
``\\u003c``, ``\\u003e`` and ``\\u0026`` (Go's default HTML escaping), U+2028/U+2029 escaped, and one trailing newline.
"""

from __future__ import annotations

import json
from typing import Any

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode

_GO_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def go_json(obj: Any) -> bytes:
    """``obj`` as Go's ``json.Encoder.Encode`` writes it, trailing ``\\n`` included (UTF-8 bytes)."""
    text = _dumps(obj)
    for char, escape in _GO_ESCAPES:  # str.replace is ~20x faster than str.translate on large bodies
        if char in text:
            text = text.replace(char, escape)
    return (text + "\n").encode()


def with_kind(obj: dict[str, Any], kind: str, api_version: str) -> dict[str, Any]:
    """A stored object (which has no kind/apiVersion) as a standalone object, kind and apiVersion first."""
    out: dict[str, Any] = {"kind": kind, "apiVersion": api_version}
    out.update(obj)
    return out
