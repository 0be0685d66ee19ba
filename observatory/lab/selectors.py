"""Field selectors, parsed and matched as kube-apiserver does, and what every selector error shares.

Field selectors reproduce ``k8s.io/apimachinery pkg/fields/selector.go`` (``parseSelector``, ``splitTerms``,
``splitTerm``, ``UnescapeValue``); the selectable fields per kind come from kubernetes
``pkg/registry/core/{pod,event,node,namespace}/strategy.go`` (``ToSelectableFields``) and the supported labels from
``pkg/apis/core/v1/conversion.go`` (reference §3.3). Label selectors live in :mod:`observatory.lab.labelselectors`.
Every error is a :class:`SelectorError` whose text is upstream's, to be sent as the message of a 400 BadRequest
Status.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

__all__ = [
    "FIELD_SETS", "FieldSelector", "SelectorError", "event_fields", "namespace_fields", "node_fields",
    "parse_field_selector", "pod_fields",
]



class SelectorError(ValueError):
    """A selector kube-apiserver rejects; ``str()`` is the exact upstream message."""


def go_quote(s: str) -> str:
    """Go's ``%q`` for a string (``strconv.Quote``): printable runes kept, others escaped."""
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append("\\" + "abfnrtv"["\a\b\f\n\r\t\v".index(ch)])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


# --- field selectors ------------------------------------------------------------------------------------------

class FieldSelector:
    """A parsed field selector: an AND of ``(field, op, value)`` with op ``=`` or ``!=`` (``==`` reads as ``=``,
    as upstream ``Requirements()`` reports it), in upstream's order (terms sorted as text)."""

    def __init__(self, requirements: tuple[tuple[str, str, str], ...] = ()) -> None:
        self.requirements = requirements

    @property
    def empty(self) -> bool:
        return not self.requirements

    def check_supported(self, supported: Collection[str], aliases: Mapping[str, str] = {}, *,
                        default_conversion: bool = False) -> FieldSelector:
        """Run the kind's field-label conversion (``conversion.go``): an unknown label raises
        ``field label not supported: <label>``, or for kinds with the scheme's default conversion
        ``"<label>" is not a known field selector: only "metadata.name", "metadata.namespace"``; aliases
        (``spec.host`` -> ``spec.nodeName``) are applied to this selector in place, which is also returned."""
        converted = []
        for field, op, value in self.requirements:
            field = aliases.get(field, field)
            if field not in supported:
                if default_conversion:
                    raise SelectorError(
                        f'"{field}" is not a known field selector: only "metadata.name", "metadata.namespace"')
                raise SelectorError(f"field label not supported: {field}")
            converted.append((field, op, value))
        self.requirements = tuple(converted)
        return self

    def matches(self, fields: Mapping[str, str]) -> bool:
        """True when every term holds; a field missing from ``fields`` reads as ``""`` (``fields.Set.Get``)."""
        for field, op, value in self.requirements:
            if (fields.get(field, "") == value) != (op == "="):
                return False
        return True

    def value_for(self, field: str) -> str | None:
        """``RequiresExactMatch``: the value of the first ``=``/``==`` term on ``field``, else None."""
        for f, op, value in self.requirements:
            if f == field and op == "=":
                return value
        return None

    def __repr__(self) -> str:
        return f"FieldSelector({self.requirements!r})"


def _split_terms(text: str) -> list[str]:
    """``splitTerms``: split on commas not escaped by a backslash; escapes stay in the terms."""
    if not text:
        return []
    terms, start, in_slash = [], 0, False
    for i, ch in enumerate(text):
        if in_slash:
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _unescape_value(s: str) -> str:
    """``UnescapeValue``: ``\\\\``, ``\\,`` and ``\\=`` are the only escapes; bare ``,``/``=`` are errors."""
    out, in_slash = [], False
    for ch in s:
        if in_slash:
            if ch not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if in_slash:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def parse_field_selector(text: str) -> FieldSelector:
    """``fields.ParseSelector``. ``""`` selects everything; a term with no operator raises
    ``invalid selector: '<text>'; can't understand '<term>'``."""
    reqs = []
    for part in sorted(_split_terms(text)):
        if part == "":
            continue
        for i in range(len(part)):
            op = next((o for o in ("!=", "==", "=") if part.startswith(o, i)), None)
            if op:
                lhs, rhs = part[:i], part[i + len(op):]
                break
        else:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        reqs.append((lhs, "!=" if op == "!=" else "=", _unescape_value(rhs)))
    return FieldSelector(tuple(reqs))


def _s(obj: Mapping[str, Any], *path: str) -> str:
    value: Any = obj
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value if isinstance(value, str) else ""


def pod_fields(pod: Mapping[str, Any]) -> dict[str, str]:
    """Pod ``ToSelectableFields``. ``status.podIP`` is ``podIPs[0].ip``; ``status.podIPs`` is accepted by the
    conversion but upstream never fills it, so it always reads as ``""``."""
    ips = (pod.get("status") or {}).get("podIPs") or []
    first = ips[0].get("ip", "") if ips and isinstance(ips[0], Mapping) else ""
    return {
        "metadata.name": _s(pod, "metadata", "name"),
        "metadata.namespace": _s(pod, "metadata", "namespace"),
        "spec.nodeName": _s(pod, "spec", "nodeName"),
        "spec.restartPolicy": _s(pod, "spec", "restartPolicy"),
        "spec.schedulerName": _s(pod, "spec", "schedulerName"),
        "spec.serviceAccountName": _s(pod, "spec", "serviceAccountName"),
        "spec.hostNetwork": "true" if (pod.get("spec") or {}).get("hostNetwork") is True else "false",
        "status.phase": _s(pod, "status", "phase"),
        "status.podIP": first if isinstance(first, str) else "",
        "status.podIPs": "",
        "status.nominatedNodeName": _s(pod, "status", "nominatedNodeName"),
    }


def event_fields(event: Mapping[str, Any]) -> dict[str, str]:
    """core/v1 Event ``ToSelectableFields``; ``source`` is ``source.component``, else ``reportingComponent``."""
    fields = {f"involvedObject.{k}": _s(event, "involvedObject", k)
              for k in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")}
    fields.update({
        "reason": _s(event, "reason"),
        "reportingComponent": _s(event, "reportingComponent"),
        "source": _s(event, "source", "component") or _s(event, "reportingComponent"),
        "type": _s(event, "type"),
        "metadata.namespace": _s(event, "metadata", "namespace"),
        "metadata.name": _s(event, "metadata", "name"),
    })
    return fields


def node_fields(node: Mapping[str, Any]) -> dict[str, str]:
    """Node ``ToSelectableFields``: ``spec.unschedulable`` is ``fmt.Sprint(bool)``."""
    unschedulable = (node.get("spec") or {}).get("unschedulable") is True
    return {"metadata.name": _s(node, "metadata", "name"), "spec.unschedulable": "true" if unschedulable else "false"}


def namespace_fields(ns: Mapping[str, Any]) -> dict[str, str]:
    """Namespace ``NamespaceToSelectableFields`` (the legacy ``name`` key is not selectable through the API)."""
    return {"metadata.name": _s(ns, "metadata", "name"), "status.phase": _s(ns, "status", "phase")}


FIELD_SETS: dict[str, tuple[Callable[[Mapping[str, Any]], dict[str, str]], frozenset[str], dict[str, str]]] = {
    "pods": (pod_fields, frozenset(pod_fields({})), {"spec.host": "spec.nodeName"}),
    "events": (event_fields, frozenset(event_fields({})), {}),
    "nodes": (node_fields, frozenset(node_fields({})), {}),
    "namespaces": (namespace_fields, frozenset(namespace_fields({})), {}),
}
"""resource -> (selectable-fields function, labels the conversion accepts, label aliases)."""


def metadata_fields(obj: Mapping[str, Any]) -> dict[str, str]:
    """``DefaultMetaV1FieldSelectorConversion`` kinds (e.g. Lease): only name and namespace are selectable."""
    return {"metadata.name": _s(obj, "metadata", "name"), "metadata.namespace": _s(obj, "metadata", "namespace")}


METADATA_FIELDS: tuple[Callable[[Mapping[str, Any]], dict[str, str]], frozenset[str], dict[str, str]] = (
    metadata_fields, frozenset(metadata_fields({})), {})
"""The FIELD_SETS entry of every resource without a conversion function of its own."""
