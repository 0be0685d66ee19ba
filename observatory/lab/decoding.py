"""Turning request bodies into JSON values the way kube-apiserver's decoders accept them, and nothing else.

Go's decoders never produce what JSON cannot carry, so neither may the lab: ``NaN``/``Infinity`` are rejected
(Go: ``invalid character 'N' looking for beginning of value``), a lone UTF-16 surrogate escape becomes U+FFFD as in
Go's ``encoding/json``, YAML is read as sigs.k8s.io/yaml reads it (timestamps stay strings, ``!!binary`` and other
non-JSON values are refused, excessive aliasing is refused as yaml.v2 does), bodies over kube-apiserver's 3 MiB
limit get 413, and nesting deeper than the lab supports gets 400 instead of exhausting the stack.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from observatory.lab import errors

MAX_BODY_BYTES = 3 * 1024 * 1024
"""kube-apiserver's ``--max-request-bytes`` default for JSON/YAML bodies: 3145728 (``Request entity too large``)."""

MAX_DEPTH = 100
"""Deepest nesting the lab decodes (upstream allows 10000; no Kubernetes object comes close to 100)."""

MAX_NODES = 500_000
"""Values a decoded body may expand to, aliases included (yaml.v2 refuses "excessive aliasing")."""


def request_too_large() -> errors.StatusError:
    """413 RequestEntityTooLarge as the apiserver's body limit answers it."""
    return errors.StatusError(errors.status_failure(413, "RequestEntityTooLarge",
                                                    f"Request entity too large: limit is {MAX_BODY_BYTES}"))


def too_deep_message() -> str:
    """The 400 text for a body nested deeper than :data:`MAX_DEPTH`."""
    return f"the body is nested deeper than the lab accepts ({MAX_DEPTH} levels)"


def reject_constant(name: str) -> Any:
    raise ValueError(f"invalid character '{name[0]}' looking for beginning of value")


class _YAMLLoader(yaml.SafeLoader):
    """SafeLoader without the timestamp type: sigs.k8s.io/yaml converts YAML to JSON, so dates stay strings."""


_YAMLLoader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def decode(raw: bytes, content_type: str) -> Any:
    """The JSON value of a JSON or YAML body. Raises a 400/413 StatusError for anything Go would not decode."""
    if len(raw) > MAX_BODY_BYTES:
        raise request_too_large()
    try:
        if content_type in ("application/yaml", "application/x-yaml"):
            value = yaml.load(raw, Loader=_YAMLLoader)
        else:
            value = json.loads(raw, parse_constant=reject_constant)
    except RecursionError:
        raise errors.bad_request(too_deep_message()) from None
    except (ValueError, yaml.YAMLError) as exc:
        raise errors.bad_request(f"couldn't get version/kind; json parse error: {exc}") from None
    return sanitize(value)


def sanitize(value: Any) -> Any:
    """A fresh JSON value equal to ``value``: only dict/list/str/int/float/bool/None, string keys, lone surrogates
    replaced by U+FFFD, shared (aliased) subtrees copied within :data:`MAX_NODES`, nesting within :data:`MAX_DEPTH`.
    Raises a 400 StatusError otherwise."""
    budget = [MAX_NODES]

    def walk(v: Any, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise errors.bad_request("error converting YAML to JSON: yaml: document contains excessive aliasing")
        if depth > MAX_DEPTH:
            raise errors.bad_request(too_deep_message())
        if isinstance(v, str):
            return _fix_surrogates(v)
        if v is None or isinstance(v, bool | int):
            return v
        if isinstance(v, float):
            if v != v or v in (float("inf"), float("-inf")):
                raise errors.bad_request("json: unsupported value: NaN or infinity")
            return v
        if isinstance(v, dict):
            out = {}
            for k, item in v.items():
                if not isinstance(k, str):
                    raise errors.bad_request(f"error converting YAML to JSON: yaml: invalid map key: {k!r}")
                out[_fix_surrogates(k)] = walk(item, depth + 1)
            return out
        if isinstance(v, list):
            return [walk(item, depth + 1) for item in v]
        raise errors.bad_request(f"error converting YAML to JSON: unsupported value of type {type(v).__name__}")

    return walk(value, 0)


def _fix_surrogates(s: str) -> str:
    """Go's encoding/json turns each lone surrogate escape into U+FFFD (Python keeps valid pairs joined already)."""
    if s.isascii() or not any("\ud800" <= c <= "\udfff" for c in s):
        return s
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in s)
