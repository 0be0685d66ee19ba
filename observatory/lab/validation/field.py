"""Field errors as ``k8s.io/apimachinery/pkg/util/validation/field`` renders them, and the 422 they make.

A cause is a ``(type, field, detail)`` triple, the shape :func:`observatory.lab.errors.invalid` takes:
``("FieldValueInvalid", "spec.nodeName", 'Invalid value: "a b": a lowercase RFC 1123 subdomain ...')``. The detail is
``Error.ErrorBody()`` (``errors.go``):

* Required, Forbidden, TooLong and InternalError print only the type and the detail: ``Required value``,
  ``Forbidden: cannot be set on create``, ``Too long: may not be more than 262144 bytes``;
* every other type prints the bad value: strings with Go's ``%q`` (``"a b"``), integers, floats and booleans with
  ``%v`` (``-1``, ``true``), a nil value as ``null``, a ``fmt.Stringer`` (``resource.Quantity``, ``ResourceName``)
  unquoted, anything else with ``%#v`` (callers pass that rendering as :class:`GoValue`);
* then ``: <detail>`` when there is one.

:func:`invalid_error` is ``errors.NewInvalid``: message ``<Kind>[.<group>] "<name>" is invalid: <aggregate>``, where
the aggregate (``utilerrors.NewAggregate``) is the one error's text, or ``[a, b]`` for several, each distinct text
once; ``details.causes`` keeps every error, duplicates included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from observatory.lab import errors
from observatory.lab.selectors import go_quote

Cause = tuple[str, str, str]

REQUIRED = "FieldValueRequired"
INVALID = "FieldValueInvalid"
NOT_SUPPORTED = "FieldValueNotSupported"
FORBIDDEN = "FieldValueForbidden"
DUPLICATE = "FieldValueDuplicate"
TOO_LONG = "FieldValueTooLong"
NOT_FOUND = "FieldValueNotFound"

_TITLES = {REQUIRED: "Required value", INVALID: "Invalid value", NOT_SUPPORTED: "Unsupported value",
           FORBIDDEN: "Forbidden", DUPLICATE: "Duplicate value", TOO_LONG: "Too long", NOT_FOUND: "Not found"}


@dataclass(frozen=True)
class GoValue:
    """A bad value already in the text Go prints for it (``%#v`` of a struct, ``String()`` of a Stringer)."""

    text: str


def go_value(value: Any) -> str:
    """The bad value as ``ErrorBody`` prints it (see the module docstring)."""
    if isinstance(value, GoValue):
        return value.text
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _cause(kind: str, path: str, value: Any = None, detail: str = "", *, show_value: bool = True) -> Cause:
    body = _TITLES[kind] + (f": {go_value(value)}" if show_value else "")
    return kind, path, body + (f": {detail}" if detail else "")


def required(path: str, detail: str = "") -> Cause:
    return _cause(REQUIRED, path, detail=detail, show_value=False)


def forbidden(path: str, detail: str) -> Cause:
    return _cause(FORBIDDEN, path, detail=detail, show_value=False)


def too_long(path: str, max_bytes: int) -> Cause:
    """``field.TooLong``: ``Too long: may not be more than <n> bytes`` (``byte`` for 1)."""
    return _cause(TOO_LONG, path, detail=f"may not be more than {max_bytes} {'byte' if max_bytes == 1 else 'bytes'}",
                  show_value=False)


def invalid(path: str, value: Any, detail: str) -> Cause:
    return _cause(INVALID, path, value, detail)


def duplicate(path: str, value: Any, detail: str = "") -> Cause:
    return _cause(DUPLICATE, path, value, detail)


def not_found(path: str, value: Any, detail: str = "") -> Cause:
    return _cause(NOT_FOUND, path, value, detail)


def not_supported(path: str, value: Any, valid: list[str] | tuple[str, ...]) -> Cause:
    """``field.NotSupported``: ``Unsupported value: "x": supported values: "A", "B"``."""
    detail = "supported values: " + ", ".join(go_quote(v) for v in valid) if valid else ""
    return _cause(NOT_SUPPORTED, path, value, detail)


def text(cause: Cause) -> str:
    """``Error.Error()``: ``<field>: <body>``."""
    return f"{cause[1]}: {cause[2]}"


def invalid_error(kind: str, name: str, causes: list[Cause], group: str = "") -> errors.StatusError:
    """422 Invalid exactly as ``errors.NewInvalid`` builds it (:func:`observatory.lab.errors.invalid`)."""
    return errors.invalid(kind, name, causes, group)
