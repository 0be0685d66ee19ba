"""``events.k8s.io/v1`` Events: the same stored objects as core/v1 events, seen through the other group's schema.

kube-apiserver serves one storage for both groups (``AddCohabitatingResources``): an Event written through either
group is one etcd object, read back converted. The lab stores events in core/v1 form (what
:class:`~observatory.lab.store.Store` keeps under ``events``), and this module converts at the edge:

* :func:`to_core` / :func:`from_core`: k/k ``pkg/apis/events/v1/conversion.go`` (``regarding``⇄``involvedObject``,
  ``note``⇄``message``, ``deprecatedSource``⇄``source``, ``deprecatedFirstTimestamp``⇄``firstTimestamp``,
  ``deprecatedLastTimestamp``⇄``lastTimestamp``, ``deprecatedCount``⇄``count``, ``reportingController``⇄
  ``reportingComponent``; the rest by name), each side serialised as the Go types' JSON tags dictate (reference §4.1).
* :func:`validate_create` / :func:`validate_update`: ``ValidateEventCreate`` / ``ValidateEventUpdate`` of k/k
  ``pkg/apis/core/validation/events.go`` for a request through events.k8s.io/v1 (the strict branch), on the core
  form with the internal type's field paths, as upstream reports them.
* :data:`FIELD_LABELS`: the field-selector labels ``AddFieldLabelConversionsForEvent`` accepts for the group.

HTTP routing for ``/apis/events.k8s.io/v1/...`` lives in :mod:`observatory.lab.events_v1_api`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from observatory.lab import gotypes, schema, strategy
from observatory.lab.selectors import FieldSelector, SelectorError, go_quote
from observatory.lab.validation.names import is_qualified_name

Cause = tuple[str, str, str]

GROUP = "events.k8s.io"
VERSION = "v1"
GROUP_VERSION = f"{GROUP}/{VERSION}"

TO_CORE = {
    "regarding": "involvedObject",
    "note": "message",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
    "reportingController": "reportingComponent",
}
"""events.k8s.io/v1 field -> core/v1 field, where the names differ (``conversion.go``)."""

FROM_CORE = {core: ev for ev, core in TO_CORE.items()}

EVENTS_FIELDS = ("eventTime", "series", "reportingController", "reportingInstance", "action", "reason", "regarding",
                 "related", "note", "type", "deprecatedSource", "deprecatedFirstTimestamp", "deprecatedLastTimestamp",
                 "deprecatedCount")
"""events.k8s.io/v1 Event fields after ``metadata``, in ``k8s.io/api/events/v1`` struct order."""

REPORTING_INSTANCE_LIMIT = ACTION_LIMIT = REASON_LIMIT = 128
NOTE_LIMIT = 1024
"""``ReportingInstanceLengthLimit``, ``ActionLengthLimit``, ``ReasonLengthLimit``, ``NoteLengthLimit``."""

FIELD_LABELS = {
    "reason": "reason",
    "regarding.kind": "involvedObject.kind",
    "regarding.namespace": "involvedObject.namespace",
    "regarding.name": "involvedObject.name",
    "regarding.uid": "involvedObject.uid",
    "regarding.apiVersion": "involvedObject.apiVersion",
    "regarding.resourceVersion": "involvedObject.resourceVersion",
    "regarding.fieldPath": "involvedObject.fieldPath",
    "reportingController": "reportingComponent",
    "source": "source",
    "type": "type",
    "metadata.namespace": "metadata.namespace",
    "metadata.name": "metadata.name",
}
"""Field-selector label of events.k8s.io/v1 -> the core/v1 selectable field it reads (``conversion.go``
``AddFieldLabelConversionsForEvent``); any other label is ``field label not supported: <label>``."""


def _blank(value: Any) -> bool:
    return value is None or value == "" or (value == 0 and not isinstance(value, bool))


# --- conversion ---------------------------------------------------------------------------------------------------


def rename_to_core(event: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 body with its known fields renamed to core/v1 names, values untouched (unknown top-level
    fields dropped, as the decoder drops them); used to type-check and then :func:`to_core`."""
    out: dict[str, Any] = {}
    for key, value in event.items():
        if key in ("kind", "apiVersion", "metadata"):
            out[key] = value
        elif key in EVENTS_FIELDS:
            out[TO_CORE.get(key, key)] = value
    return out


def to_core(event: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event (JSON dict) as the core/v1 Event JSON of the same object, without kind/apiVersion.

    Field order and empties follow ``k8s.io/api/core/v1`` Event's JSON tags (reference §4.1): ``involvedObject``
    and ``source`` always (``{}`` when empty), ``firstTimestamp``/``lastTimestamp``/``eventTime`` always (``null``
    when unset), ``reportingComponent``/``reportingInstance`` always (``""`` when unset); ``reason``, ``message``,
    ``count``, ``type``, ``series``, ``action``, ``related`` only when set.
    """
    core = rename_to_core(event)
    return normalize_core({k: v for k, v in core.items() if k not in ("kind", "apiVersion")})


_CORE_ORDER = ("involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count", "type",
               "eventTime", "series", "action", "related", "reportingComponent", "reportingInstance")


def normalize_core(core: dict[str, Any]) -> dict[str, Any]:
    """A core/v1 Event dict serialised as the apiserver writes it (see :func:`to_core`); ``metadata`` kept as is."""
    out: dict[str, Any] = {"metadata": core.get("metadata") or {}}
    for key in _CORE_ORDER:
        value = core.get(key)
        if key in ("involvedObject", "source"):
            out[key] = value if isinstance(value, dict) else {}
        elif key in ("firstTimestamp", "lastTimestamp", "eventTime"):
            out[key] = value or None
        elif key in ("reportingComponent", "reportingInstance"):
            out[key] = value or ""
        elif not _blank(value):
            out[key] = value
    return out


def from_core(core: dict[str, Any]) -> dict[str, Any]:
    """A stored core/v1 Event as the events.k8s.io/v1 Event of the same object, without kind/apiVersion.

    ``k8s.io/api/events/v1`` JSON tags: ``eventTime`` always (``null`` when unset); ``regarding`` and
    ``deprecatedSource`` always (structs, ``{}`` when empty); ``deprecatedFirstTimestamp`` and
    ``deprecatedLastTimestamp`` always (``metav1.Time``, ``null`` when unset); ``series``, ``reportingController``,
    ``reportingInstance``, ``action``, ``reason``, ``related``, ``note``, ``type`` and ``deprecatedCount`` only
    when set.
    """
    out: dict[str, Any] = {"metadata": core.get("metadata") or {}}
    for key in EVENTS_FIELDS:
        value = core.get(TO_CORE.get(key, key))
        if key in ("regarding", "deprecatedSource"):
            out[key] = value if isinstance(value, dict) else {}
        elif key in ("eventTime", "deprecatedFirstTimestamp", "deprecatedLastTimestamp"):
            out[key] = value or None
        elif not _blank(value):
            out[key] = value
    return out


def wire(core: dict[str, Any]) -> dict[str, Any]:
    """A stored core/v1 Event as a standalone events.k8s.io/v1 object (``kind`` and ``apiVersion`` first)."""
    return {"kind": "Event", "apiVersion": GROUP_VERSION, **from_core(core)}


# --- decoding checks ----------------------------------------------------------------------------------------------

_STRUCT_FIELD = re.compile(r"(Go struct field \w+\.)(\w+)")


def type_error(event: dict[str, Any]) -> str | None:
    """The decoder's 400 message for an events.k8s.io/v1 body whose JSON types do not decode, or None.

    The check is core/v1's (:func:`observatory.lab.gotypes.type_error`, the field types are the same) with the
    field path put back in events.k8s.io/v1 names: ``Event in version "v1" cannot be handled as a Event: json:
    cannot unmarshal number into Go struct field Event.note of type string``.
    """
    message = gotypes.type_error("Event", rename_to_core(event))
    if message is None:
        return None
    return _STRUCT_FIELD.sub(lambda m: m.group(1) + FROM_CORE.get(m.group(2), m.group(2)), message)


_MODEL = re.compile(r"^(?:V1|CoreV1|EventsV1)[A-Za-z0-9]+$")


def unknown_fields(event: dict[str, Any]) -> list[str]:
    """Paths of the fields of an events.k8s.io/v1 body its schema does not know (``fieldValidation``), in document
    order; top-level ``kind``/``apiVersion`` are known."""
    out: list[str] = []
    _walk("EventsV1Event", event, "", out)
    return out


def _walk(model: str, value: Any, path: str, out: list[str]) -> None:
    if not isinstance(value, dict):
        return
    fields = schema.model_fields(model)
    for key, sub in value.items():
        here = f"{path}.{key}" if path else key
        known = fields.get(key)
        if known is None:
            if not (path == "" and key in ("kind", "apiVersion")):
                out.append(here)
            continue
        type_string = known[0]
        if type_string.startswith("list[") and isinstance(sub, list):
            inner = type_string[5:-1]
            if _MODEL.match(inner):
                for i, item in enumerate(sub):
                    _walk(inner, item, f"{here}[{i}]", out)
        elif _MODEL.match(type_string) and not type_string.startswith("dict("):
            _walk(type_string, sub, here, out)


# --- validation ---------------------------------------------------------------------------------------------------


def _invalid(field: str, value: Any, detail: str) -> Cause:
    return ("FieldValueInvalid", field, f"Invalid value: {_go_value(value)}: {detail}")


def _required(field: str) -> Cause:
    return ("FieldValueRequired", field, "Required value")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _legacy(core: dict[str, Any]) -> list[Cause]:
    """``legacyValidateEvent``: namespace agreement, and for events with ``eventTime`` the reporting fields."""
    causes: list[Cause] = []
    meta = core.get("metadata") or {}
    namespace = _text(meta.get("namespace"))
    involved = core.get("involvedObject") or {}
    involved_ns = _text(involved.get("namespace"))
    if not core.get("eventTime"):
        if (not involved_ns and namespace not in ("", "default")) or (involved_ns and namespace != involved_ns):
            causes.append(_invalid("involvedObject.namespace", involved_ns, "does not match event.namespace"))
    else:
        if not involved_ns and namespace not in ("default", "kube-system"):
            causes.append(_invalid("involvedObject.namespace", involved_ns, "does not match event.namespace"))
        controller = _text(core.get("reportingComponent"))
        if not controller:
            causes.append(_required("reportingController"))
        for msg in is_qualified_name(controller):
            causes.append(_invalid("reportingController", controller, msg))
        for field, core_field, limit in (("reportingInstance", "reportingInstance", REPORTING_INSTANCE_LIMIT),
                                         ("action", "action", ACTION_LIMIT), ("reason", "reason", REASON_LIMIT)):
            value = _text(core.get(core_field))
            if not value:
                causes.append(_required(field))
            if len(value.encode()) > limit:
                causes.append(_invalid(field, "", f"can have at most {limit} characters"))
        if len(_text(core.get("message")).encode()) > NOTE_LIMIT:
            causes.append(_invalid("message", "", f"can have at most {NOTE_LIMIT} characters"))
    if len(namespace) > 253:  # IsDNS1123Subdomain
        causes.append(_invalid("namespace", namespace, "must be no more than 253 characters"))
    if not strategy._DNS1123_SUBDOMAIN.fullmatch(namespace):
        causes.append(_invalid("namespace", namespace, strategy._SUBDOMAIN_MSG))
    return causes


def _series(core: dict[str, Any]) -> list[Cause]:
    """``validateV1EventSeries``."""
    series = core.get("series")
    if not isinstance(series, dict):
        return []
    causes: list[Cause] = []
    count = series.get("count")
    if not isinstance(count, int) or count < 2:
        causes.append(_invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        causes.append(_required("series.lastObservedTime"))
    return causes


def validate_create(core: dict[str, Any]) -> list[Cause]:
    """``ValidateEventCreate(event, events.k8s.io/v1)`` on the core form of a new event: the legacy checks, then
    ObjectMeta, series, ``eventTime`` required, ``type`` Normal or Warning, and the deprecated fields unset.

    Causes carry the internal type's field paths (``message``, ``source``, ``count``...), as upstream reports
    them, e.g. ``("FieldValueInvalid", "message", 'Invalid value: "": can have at most 1024 characters')``.
    """
    causes = _legacy(core)
    causes += strategy.validate_object_meta(core.get("metadata") or {}, namespaced=True)
    causes += _series(core)
    if not core.get("eventTime"):
        causes.append(_required("eventTime"))
    type_ = _text(core.get("type"))
    if type_ not in ("Normal", "Warning"):
        causes.append(_invalid("type", "", f"has invalid value: {type_}"))
    for field in ("firstTimestamp", "lastTimestamp"):
        if core.get(field):
            causes.append(_invalid(field, "", "needs to be unset"))
    if core.get("count"):
        causes.append(_invalid("count", "", "needs to be unset"))
    source = core.get("source") or {}
    if isinstance(source, dict) and (source.get("component") or source.get("host")):
        causes.append(_invalid("source", "", "needs to be unset"))
    return causes


_IMMUTABLE = ("involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count", "reason",
              "type", "eventTime", "action", "related", "reportingComponent", "reportingInstance")
"""``ValidateEventUpdate``'s ``ValidateImmutableField`` calls, in order (``reason`` is checked twice upstream)."""

_INTERNAL_NAMES = {"reportingComponent": "reportingController"}
"""Field paths upstream writes for the internal type where they differ from core/v1 JSON names."""


def validate_update(new: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """``ValidateEventUpdate(new, old, events.k8s.io/v1)`` on core forms (both normalised): legacy checks, the
    series when it changed, then every field but ``series`` and metadata immutable (``field is immutable``).

    Values in immutable-field messages are rendered as Go's ``field.Error`` does for the internal types: strings
    quoted, integers bare, structs as ``json.Marshal`` of the internal struct (Go field names), times as
    RFC 3339 (MicroTime with microseconds).
    """
    new, old = normalize_core(new), normalize_core(old)
    causes = _legacy(new)
    if new.get("series") != old.get("series"):
        causes += _series(new)
    for field in _IMMUTABLE:
        if new.get(field) != old.get(field) and not (_blank(new.get(field)) and _blank(old.get(field))):
            value = _internal_value(field, new.get(field))
            causes.append(("FieldValueInvalid", _INTERNAL_NAMES.get(field, field),
                           f"Invalid value: {value}: field is immutable"))
    return causes


_REF_FIELDS = (("Kind", "kind"), ("Namespace", "namespace"), ("Name", "name"), ("UID", "uid"),
               ("APIVersion", "apiVersion"), ("ResourceVersion", "resourceVersion"), ("FieldPath", "fieldPath"))


def _internal_value(field: str, value: Any) -> str:
    """A core field's value as ``field.Invalid`` prints the internal Go value."""
    if field in ("involvedObject", "related"):
        if not isinstance(value, dict):
            return "null" if field == "related" else _go_json({g: "" for g, _ in _REF_FIELDS})
        return _go_json({g: value.get(j) or "" for g, j in _REF_FIELDS})
    if field == "source":
        src = value if isinstance(value, dict) else {}
        return _go_json({"Component": src.get("component") or "", "Host": src.get("host") or ""})
    if field in ("firstTimestamp", "lastTimestamp", "eventTime"):
        return _go_json(value or None)
    if field == "count":
        return str(value or 0)
    return _go_value(_text(value))


def _go_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _go_value(value: Any) -> str:
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return _go_json(value)


# --- field selectors ----------------------------------------------------------------------------------------------


def convert_field_selector(fsel: FieldSelector) -> FieldSelector:
    """The group's field-label conversion: each label mapped to the core/v1 selectable field it reads.

    Raises :class:`~observatory.lab.selectors.SelectorError` ``field label not supported: <label>`` for any label
    outside :data:`FIELD_LABELS` (``involvedObject.name`` included: it is a core/v1 label).
    """
    converted = []
    for field, op, value in fsel.requirements:
        mapped = FIELD_LABELS.get(field)
        if mapped is None:
            raise SelectorError(f"field label not supported: {field}")
        converted.append((mapped, op, value))
    return FieldSelector(tuple(converted))
