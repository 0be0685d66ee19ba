"""Field and label selectors, parsed and matched as kube-apiserver does.

Field selectors reproduce ``k8s.io/apimachinery pkg/fields/selector.go`` (``parseSelector``, ``splitTerms``,
``splitTerm``, ``UnescapeValue``); the selectable fields per kind come from kubernetes
``pkg/registry/core/{pod,event,node,namespace}/strategy.go`` (``ToSelectableFields``) and the supported labels from
``pkg/apis/core/v1/conversion.go`` (reference §3.3). Label selectors reproduce ``pkg/labels/selector.go`` (``Parse``:
lexer, recursive-descent parser, ``NewRequirement``) with the label key/value checks of
``pkg/api/validate/content``. Every error is a :class:`SelectorError` whose text is upstream's, to be sent as the
message of a 400 BadRequest Status.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

__all__ = [
    "FIELD_SETS", "FieldSelector", "LabelSelector", "SelectorError", "event_fields", "namespace_fields",
    "node_fields", "parse_field_selector", "parse_label_selector", "pod_fields",
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
    for key in path:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj if isinstance(obj, str) else ""


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


METADATA_FIELDS = (metadata_fields, frozenset(metadata_fields({})), {})
"""The FIELD_SETS entry of every resource without a conversion function of its own."""


# --- label key and value validation (pkg/api/validate/content) ---------------------------------------------------

_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_VALUE_FMT = f"({_NAME_FMT})?"
_DNS1123_SUBDOMAIN_FMT = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
             "character")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    return msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples) + f"regex used for validation is '{fmt}')"


def _label_key_errors(key: str) -> list[str]:
    parts = key.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return ["a valid label key " + _regex_error(_NAME_MSG, _NAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if len(prefix) > 253:
                errs.append("prefix part must be no more than 253 characters")
            if not re.fullmatch(_DNS1123_SUBDOMAIN_FMT, prefix):
                errs.append("prefix part " + _regex_error(
                    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                    "and must start and end with an alphanumeric character", _DNS1123_SUBDOMAIN_FMT, "example.com"))
    name = parts[-1]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not re.fullmatch(_NAME_FMT, name):
        errs.append("name part " + _regex_error(_NAME_MSG, _NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def _label_value_errors(value: str) -> list[str]:
    errs = ["must be no more than 63 characters"] if len(value) > 63 else []
    if not re.fullmatch(_VALUE_FMT, value):
        errs.append(_regex_error("a valid label must be an empty string or " + _NAME_MSG[5:], _VALUE_FMT,
                                 "MyValue", "my_value", "12345"))
    return errs


def _invalid(field: str, value: str, detail: str) -> str:
    """``field.Invalid(path, value, detail).Error()``; a nil path prints as ``<nil>``."""
    return f"{field}: Invalid value: {go_quote(value)}: {detail}"


# --- label selectors ----------------------------------------------------------------------------------------------

_ERR, _EOS, _CLOSE, _COMMA, _NOT, _DEQ, _EQ, _GT, _ID, _IN, _LT, _NEQ, _NOTIN, _OPEN = range(14)
_TOKENS = {")": _CLOSE, ",": _COMMA, "!": _NOT, "==": _DEQ, "=": _EQ, ">": _GT, "in": _IN, "<": _LT,
           "!=": _NEQ, "notin": _NOTIN, "(": _OPEN}
_OPS = {_IN: "in", _EQ: "=", _DEQ: "==", _GT: "gt", _LT: "lt", _NOTIN: "notin", _NEQ: "!="}
_BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"
_SPECIAL, _SPACE = "=!(),><", " \t\r\n"


def _lex(s: str) -> list[tuple[int, str]]:
    """The ``Lexer``: identifiers, keywords (``in``, ``notin``) and operator symbols, ending in end-of-string."""
    items, pos = [], 0
    while True:
        while pos < len(s) and s[pos] in _SPACE:
            pos += 1
        if pos >= len(s):
            items.append((_EOS, ""))
            return items
        if s[pos] in _SPECIAL:
            buf, last = "", (_ERR, "")
            while pos < len(s) and s[pos] in _SPECIAL:
                buf += s[pos]
                if buf in _TOKENS:
                    last = (_TOKENS[buf], buf)
                elif last[0] != _ERR:
                    break
                pos += 1
            items.append(last if last[0] != _ERR else (_ERR, f"error expected: keyword found '{buf}'"))
        else:
            start = pos
            while pos < len(s) and s[pos] not in _SPECIAL and s[pos] not in _SPACE:
                pos += 1
            word = s[start:pos]
            items.append((_TOKENS.get(word, _ID), word))


class _Parser:
    """The recursive-descent ``Parser``; ``in``/``notin`` read as identifiers where a value is expected."""

    def __init__(self, text: str) -> None:
        self.items, self.pos = _lex(text), 0

    def peek(self, values: bool = True) -> tuple[int, str]:
        tok, lit = self.items[self.pos]
        return (_ID if values and tok in (_IN, _NOTIN) else tok), lit

    def take(self, values: bool = True) -> tuple[int, str]:
        item = self.peek(values)
        self.pos += 1
        return item

    def parse(self) -> list[tuple[str, str, tuple[str, ...]]]:
        reqs = []
        while True:
            tok, lit = self.peek()
            if tok == _EOS:
                return reqs
            if tok not in (_ID, _NOT):
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                reqs.append(self.requirement())
            except SelectorError as exc:
                raise SelectorError(f"unable to parse requirement: {exc}") from None
            tok, lit = self.take()
            if tok == _EOS:
                return reqs
            if tok != _COMMA:
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            tok2, lit2 = self.peek()
            if tok2 not in (_ID, _NOT):
                raise SelectorError(f"found '{lit2}', expected: identifier after ','")

    def requirement(self) -> tuple[str, str, tuple[str, ...]]:
        op = ""
        tok, key = self.take()
        if tok == _NOT:
            op = "!"
            tok, key = self.take()
        if tok != _ID:
            raise SelectorError(f"found '{key}', expected: identifier")
        if errs := _label_key_errors(key):
            raise SelectorError(_invalid("<nil>", key, "; ".join(errs)))
        if self.peek()[0] in (_EOS, _COMMA) and op != "!":
            op = "exists"
        if op in ("exists", "!"):
            return key, op, ()
        tok, lit = self.take(values=False)
        if tok not in _OPS:
            raise SelectorError(f"found '{lit}', expected: {_BINARY_OPERATORS}")
        op = _OPS[tok]
        values = tuple(sorted(self.set_values() if op in ("in", "notin") else self.exact_value()))
        _check_requirement(key, op, values)
        return key, op, values

    def set_values(self) -> set[str]:
        tok, lit = self.take()
        if tok != _OPEN:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.peek()
        if tok == _CLOSE:
            self.take()
            return {""}
        if tok not in (_ID, _COMMA):
            raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")
        values = self.identifiers()
        if self.take()[0] != _CLOSE:
            raise SelectorError(f"found '{lit}', expected: ')'")
        return values

    def identifiers(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self.take()
            if tok == _ID:
                values.add(lit)
                tok2, lit2 = self.peek()
                if tok2 == _CLOSE:
                    return values
                if tok2 != _COMMA:
                    raise SelectorError(f"found '{lit2}', expected: ',' or ')'")
            elif tok == _COMMA:
                if not values:
                    values.add("")
                tok2 = self.peek()[0]
                if tok2 == _CLOSE:
                    values.add("")
                    return values
                if tok2 == _COMMA:
                    self.take()
                    values.add("")
            else:
                raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        if self.peek()[0] in (_EOS, _COMMA):
            return {""}
        tok, lit = self.take()
        if tok != _ID:
            raise SelectorError(f"found '{lit}', expected: identifier")
        return {lit}


def _check_requirement(key: str, op: str, values: tuple[str, ...]) -> None:
    """The value checks of ``NewRequirement`` (the key was already validated), aggregated as upstream does."""
    errs: list[str] = []
    if op in ("gt", "lt"):
        for i, v in enumerate(values):
            if not re.fullmatch(r"[+-]?[0-9]+", v) or not -(2**63) <= int(v) < 2**63:
                errs.append(_invalid(f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, v in enumerate(values):
        if verrs := _label_value_errors(v):
            errs.append(_invalid(f"values[{i}][{key}]", v, "; ".join(verrs)))
    errs = list(dict.fromkeys(errs))
    if errs:
        raise SelectorError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")


class LabelSelector:
    """A parsed label selector: an AND of ``(key, op, values)`` sorted by key. ``op`` is one of ``=``, ``==``,
    ``!=``, ``in``, ``notin``, ``exists``, ``!`` (does not exist), ``gt``, ``lt`` (``selection.Operator``)."""

    def __init__(self, requirements: tuple[tuple[str, str, tuple[str, ...]], ...] = ()) -> None:
        self.requirements = requirements

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """``Requirement.Matches`` for every requirement; ``None`` means no labels."""
        labels = labels or {}
        for key, op, values in self.requirements:
            has = key in labels
            if op in ("=", "==", "in"):
                ok = has and labels[key] in values
            elif op in ("!=", "notin"):
                ok = not has or labels[key] not in values
            elif op in ("exists", "!"):
                ok = has == (op == "exists")
            else:
                ok = has and re.fullmatch(r"[+-]?[0-9]+", labels[key]) is not None and (
                    int(labels[key]) > int(values[0]) if op == "gt" else int(labels[key]) < int(values[0]))
            if not ok:
                return False
        return True

    def __repr__(self) -> str:
        return f"LabelSelector({self.requirements!r})"


def parse_label_selector(text: str) -> LabelSelector:
    """``labels.Parse``. ``""`` selects everything; errors read e.g. ``unable to parse requirement: <nil>: Invalid
    value: "app:web": name part must consist of ...`` or ``found ')', expected: !, identifier, or 'end of string'``."""
    return LabelSelector(tuple(sorted(_Parser(text).parse(), key=lambda r: r[0])))
