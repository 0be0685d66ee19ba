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
import binascii
import json
from dataclasses import dataclass
from typing import Any

from observatory.lab import errors, labelselectors, selectors
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


def _decode_continue(token: str, resource: str) -> tuple[int, tuple[str, str, str]]:
    try:
        data = json.loads(base64.b64decode(token, validate=True))
        rv, start = int(data["rv"]), str(data["start"]).rstrip("\x00")
        if data.get("v") != "meta.k8s.io/v1":
            raise ValueError(data.get("v"))
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        raise errors.bad_request(f"continue key is not valid: {exc}") from None
    ns, _, name = start.rpartition("/")
    return rv, (resource, ns, name)
