"""PATCH bodies applied to core/v1 objects (plain JSON dicts) as kube-apiserver applies them.

Merge patch is RFC 7386 as ``gopkg.in/evanphx/json-patch.v4`` ``MergePatch`` does it; JSON patch is RFC 6902 via the
``jsonpatch`` library; strategic merge patch lives in :mod:`observatory.lab.strategicpatch`. Errors are
:class:`PatchError` carrying what ``apiserver pkg/endpoints/handlers/patch.go`` answers: 400 BadRequest for
undecodable bodies and bad directive formats, 422 Invalid for patches that cannot apply, 500 with an empty reason for
strategicpatch errors upstream passes through unwrapped (``map: map[image:nginx] does not contain declared merge key:
name``). Bodies may be given parsed, or raw as ``bytes``/``str`` (then Go's JSON error texts apply). Inputs are never
mutated.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonpatch

from observatory.lab import errors
from observatory.lab.selectors import go_quote

GENERIC_422 = "the server rejected our request due to an error in our request"


class PatchError(ValueError):
    """A patch the server refuses. ``code``: 400, 413, 422 or 500; ``reason``: the Status reason (``""`` for 500);
    ``message``: the Status message; ``details``: the Status details dict, or None when upstream sends none."""

    _REASONS = {400: "BadRequest", 413: "RequestEntityTooLarge", 422: "Invalid", 500: ""}

    def __init__(self, code: int, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.details, self.reason = code, message, details, self._REASONS[code]

    def status_error(self) -> errors.StatusError:
        """The StatusError kube-apiserver would answer with."""
        return errors.StatusError(errors.status_failure(self.code, self.reason, self.message, self.details))


def _bad(message: str) -> PatchError:
    return PatchError(400, message)


def _internal(message: str) -> PatchError:
    """A non-Status error: ``ErrorToAPIStatus`` makes it a 500 with an empty reason."""
    return PatchError(500, message)


def _unprocessable() -> PatchError:
    """``NewGenericServerResponse(422, ...)``: the server's own message is dropped and details are ``{}``."""
    return PatchError(422, GENERIC_422, {})


# --- Go renderings -------------------------------------------------------------------------------------------

def _json_kind(v: Any) -> str:
    """The JSON kind Go's ``UnmarshalTypeError`` names."""
    return {dict: "object", list: "array", str: "string", bool: "bool"}.get(type(v), "number")


def _decode(raw: bytes | str) -> Any:
    """``encoding/json`` decoding of a raw body; syntax errors raise 400 with Go's text."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        pos, msg = exc.pos, exc.msg
        if msg.startswith("Invalid \\"):
            pos += 1
        if pos >= len(text) or msg.startswith("Unterminated string"):
            raise _bad("unexpected end of JSON input") from None
        char = "'\\''" if text[pos] == "'" else "'" + go_quote(text[pos])[1:-1].replace('\\"', '"') + "'"
        where = {"Expecting value": "looking for beginning of value",
                 "Expecting ':' delimiter": "after object key",
                 "Extra data": "after top-level value"}.get(msg, "looking for beginning of value")
        if msg.startswith("Expecting property name"):
            where = "looking for beginning of object key string"
        elif msg == "Expecting ',' delimiter":  # inside an object or an array?
            stack: list[str] = []
            in_str, esc = False, False
            for ch in text[:pos]:
                if in_str:
                    in_str, esc = not (ch == '"' and not esc), ch == "\\" and not esc
                elif ch in '"[{]}':
                    in_str = ch == '"'
                    stack = [*stack, ch] if ch in "[{" else stack[:-1] if ch in "]}" else stack
            where = "after object key:value pair" if stack[-1:] == ["{"] else "after array element"
        elif msg.startswith("Invalid control character"):
            where = "in string literal"
        elif msg.startswith("Invalid \\"):
            where = "in string escape code"
        raise _bad(f"invalid character {char} {where}") from None


def _not_an_object(result: Any) -> PatchError:
    """422 from decoding a patched document that is not an object (``DecodeInto`` via ``SimpleMetaFactory``)."""
    doc = json.dumps(result, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    detail = (f"Invalid value: {go_quote(doc)}: couldn't get version/kind; json parse error: json: cannot unmarshal "
              f"{_json_kind(result)} into Go value of type struct {{ APIVersion string "
              '"json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }')
    return PatchError(422, f' "" is invalid: patch: {detail}',
                      {"causes": [{"reason": "FieldValueInvalid", "message": detail, "field": "patch"}]})


# --- JSON merge patch (RFC 7386) and JSON patch (RFC 6902) ----------------------------------------------------

def _prune(v: Any) -> Any:
    """evanphx ``pruneNulls``: drop null members and null array elements, recursively."""
    if isinstance(v, dict):
        return {k: _prune(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_prune(x) for x in v if x is not None]
    return v


def _merge_docs(doc: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    for k, v in patch.items():
        cur = doc.get(k)
        if v is None:
            doc.pop(k, None)
        elif not isinstance(cur, dict):  # absent, null or not an object: take the pruned patch value
            doc[k] = _prune(v)
        elif isinstance(v, dict):
            doc[k] = _merge_docs(cur, v)
        else:
            doc[k] = v
    return doc


def json_merge_patch(target: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Apply a JSON merge patch; returns a new object. A null or non-object, non-array patch (or bad JSON) is 400
    ``Invalid JSON Patch``; an array patch replaces the document, which then fails to decode (422)."""
    if isinstance(patch, (bytes, str)):
        try:
            patch = _decode(patch)
        except PatchError:
            raise _bad("Invalid JSON Patch") from None
    if isinstance(patch, list):
        raise _not_an_object(_prune(patch))
    if not isinstance(patch, dict):
        raise _bad("Invalid JSON Patch")
    return _merge_docs(copy.deepcopy(target), copy.deepcopy(patch))


def json_patch(target: dict[str, Any], ops: Any) -> dict[str, Any]:
    """Apply an RFC 6902 patch; returns a new object. Bodies ``jsonpatch.DecodePatch`` cannot decode are 400 with
    Go's text (``json: cannot unmarshal object into Go value of type jsonpatch.Patch``); more than 10000 operations
    are 413; any operation that fails to apply is 422 with the generic message and ``details: {}``."""
    if isinstance(ops, (bytes, str)):
        ops = _decode(ops)
    ops = [] if ops is None else ops
    if not isinstance(ops, list):
        raise _bad(f"json: cannot unmarshal {_json_kind(ops)} into Go value of type jsonpatch.Patch")
    for op in ops:
        if op is not None and not isinstance(op, dict):
            raise _bad(f"json: cannot unmarshal {_json_kind(op)} into Go value of type jsonpatch.Operation")
    if len(ops) > 10000:
        raise PatchError(413, "Request entity too large: The allowed maximum operations in a JSON patch is "
                              f"10000, got {len(ops)}")
    try:
        result = jsonpatch.JsonPatch(copy.deepcopy(ops)).apply(copy.deepcopy(target))
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, IndexError, TypeError,
            ValueError, AttributeError):
        raise _unprocessable() from None
    if not isinstance(result, dict):
        raise _not_an_object(result)
    return result
