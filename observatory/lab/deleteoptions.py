"""Decoding a DELETE request's body as ``metav1.DeleteOptions``, as kube-apiserver's delete handler does
(apiserver ``pkg/endpoints/handlers/delete.go``).

An empty body is no options. A JSON body must be an object (``DeleteOptions: invalid JSON`` otherwise, 400).
"""

from __future__ import annotations

import json
from typing import Any

from observatory.lab import errors


def decode(content_type: str, raw: bytes) -> dict[str, Any]:
    """The DeleteOptions of a DELETE body of ``content_type`` as a JSON-shaped dict; raises StatusError (400)."""
    if not raw:
        return {}
    try:
        options = json.loads(raw)
    except ValueError:
        raise errors.bad_request("DeleteOptions: invalid JSON") from None
    if not isinstance(options, dict):
        raise errors.bad_request("DeleteOptions: expected a JSON object")
    return options
