"""Label selectors, parsed and matched as kube-apiserver does.

Reproduces ``k8s.io/apimachinery pkg/labels/selector.go`` (``Parse``: lexer, recursive-descent parser,
``NewRequirement``, ``Requirement.Matches``) with the label key/value checks of ``pkg/api/validate/content``. Every
error is a :class:`~observatory.lab.selectors.SelectorError` whose text is upstream's, to be sent as the message of a
400 BadRequest Status.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from observatory.lab.selectors import SelectorError, go_quote
from observatory.lab.validation.names import is_qualified_name, is_valid_label_value

__all__ = ["LabelSelector", "parse_label_selector"]


# --- label key and value validation: pkg/api/validate/content, one implementation with the objects' own labels --

_label_key_errors = is_qualified_name
_label_value_errors = is_valid_label_value


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
        reqs: list[tuple[str, str, tuple[str, ...]]] = []
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
