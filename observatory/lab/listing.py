"""List and watch queries of the lab: selectors, limit and continue, the selection predicate and continue tokens.

Reproduces the parsing of ``metav1.ListOptions`` in apiserver ``pkg/endpoints/handlers/get.go`` ``ListResource``
(decoding, defaulting and validation in :mod:`observatory.lab.validation.listoptions`, then the selectors), the
selection predicate of ``pkg/storage/selection_predicate.go`` (fields from the kind's ``ToSelectableFields``, labels
from ``metadata.labels``) and the continue token of ``pkg/storage/continue.go`` (``EncodeContinue``/``DecodeContinue``:
base64 JSON of version, resourceVersion and the start key). Bad input raises a
:class:`~observatory.lab.errors.StatusError` with upstream's code and text (400 BadRequest, 422 on
``ListOptions.meta.k8s.io``, and for resourceVersions the storage refuses 500 or 504).
Used by :class:`~observatory.lab.registry.Registry` for lists and by :mod:`observatory.lab.watch` for watches.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

from observatory.lab import decoding, errors, labelselectors, selectors
from observatory.lab.resources import ResourceType
from observatory.lab.validation import listoptions


@dataclass(frozen=True)
class ListResult:
    """One page of a list: ``items`` in key order, the list ``resource_version``, and paging metadata."""

    items: list[dict[str, Any]]
    resource_version: str
    continue_token: str = ""
    remaining: int | None = None


@dataclass(frozen=True)
class ListQuery:
    """Parsed list/watch filters: namespace (None = all), selectors and paging."""

    namespace: str | None = None
    field_selector: selectors.FieldSelector | None = None
    label_selector: labelselectors.LabelSelector | None = None
    limit: int = 0
    continue_token: str = ""
    options: listoptions.Options = listoptions.DEFAULT
    """The decoded and defaulted ListOptions (watch, resourceVersion, resourceVersionMatch, sendInitialEvents, ...)."""

    @property
    def watch(self) -> bool:
        return self.options.watch

    @property
    def filtered(self) -> bool:
        return bool(self.field_selector and self.field_selector.requirements) or bool(
            self.label_selector and not self.label_selector.empty
        )


def parse_query(rt: ResourceType, namespace: str | None, params: dict[str, str]) -> ListQuery:
    """Parse the list/watch query as ``ListResource`` does: decode the options (400 for integers that do not parse),
    parse the selectors (400), validate the options (422 on ``ListOptions.meta.k8s.io``), check the field labels
    (400), and for a watch parse the resourceVersion (upstream's 500 when it is not an unsigned integer)."""
    options = listoptions.decode(params)
    try:
        fsel = selectors.parse_field_selector(params.get("fieldSelector", ""))
        lsel = labelselectors.parse_label_selector(params.get("labelSelector", ""))
    except selectors.SelectorError as exc:
        raise errors.bad_request(str(exc)) from None
    listoptions.validate(options)
    try:
        _, supported, aliases = selectors.FIELD_SETS.get(rt.name, selectors.METADATA_FIELDS)
        fsel.check_supported(supported, aliases, default_conversion=rt.name not in selectors.FIELD_SETS)
    except selectors.SelectorError as exc:
        raise errors.bad_request(str(exc)) from None
    if options.watch:
        listoptions.check_watch_resource_version(options)
    return ListQuery(namespace, fsel, lsel, max(options.limit, 0), options.continue_token, options)


def check_resource_version(query: ListQuery, current: int) -> None:
    """A list's resourceVersion against the store's (400, 500 or 504 as kube-apiserver answers; see
    :func:`observatory.lab.validation.listoptions.check_list_resource_version`)."""
    listoptions.check_list_resource_version(query.options, current)


def make_predicate(rt: ResourceType, query: ListQuery):
    """A predicate over stored objects for the query's selectors, or None when nothing filters."""
    if not query.filtered:
        return None
    fields_fn, _, _ = selectors.FIELD_SETS.get(rt.name, selectors.METADATA_FIELDS)
    fsel, lsel = query.field_selector, query.label_selector

    def predicate(obj: dict[str, Any]) -> bool:
        if fsel is not None and fsel.requirements and not fsel.matches(fields_fn(obj)):
            return False
        if lsel is not None and not lsel.empty and not lsel.matches((obj.get("metadata") or {}).get("labels") or {}):
            return False
        return True

    return predicate


def _encode_continue(rv: int, start: tuple[str, str, str]) -> str:
    key = f"{start[1]}/{start[2]}" if start[1] else start[2]
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": key + "\x00"}, separators=(",", ":"))
    return base64.b64encode(raw.encode()).decode()


CONTINUE_VERSION = "meta.k8s.io/v1"

_INVALID_KEY = "continue key is not valid"
"""``ErrGenericInvalidKey`` (apiserver ``pkg/storage/continue.go``); the other errors there extend it."""

_B64URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_B64STD = frozenset("+/=")
"""The lab's own tokens are standard base64 with padding (``_encode_continue``); upstream's are
``base64.RawURLEncoding``. Both alphabets are read."""

_TOKEN_FIELDS = {"v": ("v", "string"), "rv": ("rv", "int64"), "start": ("start", "string")}
"""``continueToken``'s JSON fields and their Go types; encoding/json matches keys case-insensitively."""

_INT64 = (-(2**63), 2**63 - 1)


class _Fraction(str):
    """A JSON number with a fraction or exponent, kept as its text (Go names it so in ``cannot unmarshal``)."""


def _go_json_type(value: Any) -> str:
    """encoding/json's name for a JSON value in ``cannot unmarshal <type>``; numbers carry their text."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | _Fraction):
        return f"number {value}"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else "null"


def _mismatch(go_type: str, value: Any) -> bool:
    """Whether encoding/json refuses ``value`` for a field of ``go_type`` (``string`` or ``int64``)."""
    if go_type == "string":
        return type(value) is not str
    return type(value) is not int or not _INT64[0] <= value <= _INT64[1]


def _continue_error(detail: str) -> errors.StatusError:
    """400 ``invalid continue token: continue key is not valid[: <detail>]``: etcd3 ``store.GetList`` wraps every
    ``DecodeContinue`` error in ``apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))``."""
    return errors.bad_request(f"invalid continue token: {_INVALID_KEY}{detail}")


def _token_bytes(token: str) -> bytes:
    """The decoded token, or the StatusError Go's base64 decoder gives (``illegal base64 data at input byte N``)."""
    for index, char in enumerate(token):
        if char not in _B64URL and char not in _B64STD:
            raise _continue_error(f": illegal base64 data at input byte {index}")
    text = token.rstrip("=").replace("+", "-").replace("/", "_")
    if "=" in text or len(text) % 4 == 1:
        raise _continue_error(f": illegal base64 data at input byte {len(text) - 1 if text else 0}")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _decode_continue(token: str, resource: str) -> tuple[int, tuple[str, str, str]]:
    """The resourceVersion and start key of a continue token, as apiserver ``storage.DecodeContinue`` reads one:
    base64, then JSON into ``{v string, rv int64, start string}`` (unknown fields ignored, keys matched without
    regard to case, invalid UTF-8 replaced by U+FFFD), then version ``meta.k8s.io/v1``, a non-zero ``rv``, a
    non-empty ``start`` that ``path.Clean`` leaves unchanged. Every failure is 400 BadRequest with upstream's text:
    ``invalid continue token: continue key is not valid: <why>``, or one of ``continue key is not valid: incorrect
    encoded start resourceVersion (version meta.k8s.io/v1)``, ``... encoded start key empty (version
    meta.k8s.io/v1)``, ``... server does not recognize this encoded version <v>``. Nesting too deep for Python's
    parser is refused with encoding/json's ``exceeded max depth``; NaN and Infinity are syntax errors as in Go."""
    raw = _token_bytes(token)
    try:
        data = json.loads(raw.decode("utf-8", "replace"), parse_constant=decoding.reject_constant,
                          parse_float=_Fraction)
    except RecursionError:
        raise _continue_error(": exceeded max depth") from None
    except ValueError as exc:
        raise _continue_error(f": {exc}") from None
    if not isinstance(data, dict):
        raise _continue_error(f": json: cannot unmarshal {_go_json_type(data).split()[0]} into Go value of type "
                              "storage.continueToken")
    fields: dict[str, Any] = {"v": "", "rv": 0, "start": ""}
    for key, value in data.items():
        known = _TOKEN_FIELDS.get(key.lower())
        if known is None or value is None:
            continue
        name, go_type = known
        if _mismatch(go_type, value):
            raise _continue_error(f": json: cannot unmarshal {_go_json_type(value)} into Go struct field "
                                  f"continueToken.{name} of type {go_type}")
        fields[name] = value
    if fields["v"] != CONTINUE_VERSION:
        raise errors.bad_request(f"invalid continue token: {_INVALID_KEY}: server does not recognize this encoded "
                                 f"version {fields['v']}")
    if fields["rv"] == 0:
        raise errors.bad_request(f"invalid continue token: {_INVALID_KEY}: incorrect encoded start resourceVersion "
                                 f"(version {CONTINUE_VERSION})")
    start = fields["start"]
    if not start:
        raise errors.bad_request(f"invalid continue token: {_INVALID_KEY}: encoded start key empty "
                                 f"(version {CONTINUE_VERSION})")
    key = start if start.startswith("/") else "/" + start
    if _go_path_clean(key) != key:
        raise _continue_error(f": {start}")
    ns, _, name = key[1:].rstrip("\x00").rpartition("/")
    return int(fields["rv"]), (resource, ns, name)


def _go_path_clean(path: str) -> str:
    """Go's ``path.Clean`` for an absolute path: ``.``, ``..`` and repeated slashes resolved, no trailing slash."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/" + "/".join(parts)
