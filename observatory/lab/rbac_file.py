"""The RBAC file's schema (``lab serve --rbac FILE``; the format is in :mod:`observatory.lab.rbac`) as pydantic
models, and a schema problem as the one sentence :func:`observatory.lab.rbac.load_policy` reports.

The models check structure (mappings, known fields, lists of strings); what needs more than one value (unique
names and tokens, a rule's verbs and resources, namespace names) is checked by the loader.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictStr, ValidationError

__all__ = ["RULE_FIELDS", "RuleFile", "UserFile", "rule_problem", "user_problem"]


def _listed(value: Any) -> Any:
    """One string is a list of that string, as a YAML author means ``verbs: get``."""
    return [value] if isinstance(value, str) else value


Strings = Annotated[list[StrictStr], BeforeValidator(_listed)]

ALL = "*"


class RuleFile(BaseModel):
    """One entry of a user's ``rules``; ``namespaces`` counts only when given (``model_fields_set``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verbs: Strings = []
    resources: Strings = []
    nonResourceURLs: Strings = []
    namespaces: Strings = []
    apiGroups: Strings = [ALL]
    resourceNames: Strings = []


class UserFile(BaseModel):
    """One entry of ``users``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[StrictStr, Field(min_length=1)]
    token: StrictStr = ""
    namespaces: Strings = [ALL]
    rules: list[RuleFile] = []


RULE_FIELDS = tuple(sorted(RuleFile.model_fields))


_UNKNOWN = ("extra_forbidden", "invalid_key")  # a field not in the model; a key that is not a string (YAML ``1: x``)
_RULE_ORDER = ("verbs", "resources", "nonResourceURLs", "namespaces", "apiGroups", "resourceNames")
_USER_ORDER = ("name", "token", "namespaces", "rules")


def _first(errors: list[tuple[tuple[Any, ...], str]], order: tuple[str, ...],
           before_unknown: tuple[str, ...] = ()) -> tuple[tuple[Any, ...], str]:
    """The (location, error type) to report: a non-mapping first, then the fields in ``before_unknown``, the unknown
    field first by name, and the fields in ``order``."""
    def rank(error: tuple[tuple[Any, ...], str]) -> tuple[Any, ...]:
        loc, kind = error
        if not loc:
            return (0,)
        field = str(loc[0])
        if kind in _UNKNOWN and len(loc) == 1:
            return (2, field)
        position = order.index(field) if field in order else len(order)
        return (1 if field in before_unknown else 3, position, loc[1:2] if field == "rules" else ())
    return min(errors, key=rank)


def _rule_sentence(loc: tuple[Any, ...], kind: str) -> str:
    if not loc:
        return "not a mapping with verbs and resources"
    if kind in _UNKNOWN:
        return f"unknown field {str(loc[0])!r} (known: {', '.join(RULE_FIELDS)})"
    return f"{loc[0]}: must be a list of strings"


def rule_problem(exc: ValidationError) -> str:
    """The first problem of one rule, after its ``rules[j]: `` prefix."""
    return _rule_sentence(*_first([(tuple(e["loc"]), e["type"]) for e in exc.errors()], _RULE_ORDER))


def user_problem(exc: ValidationError) -> tuple[str, str]:
    """The first problem of one user, and where it stands: ``"unnamed"`` (the sentence follows ``users[i]: ``),
    ``"named"`` (it follows ``users[i] (alice): ``) or ``"later"`` (likewise, but a name another user already has
    is the earlier problem). A problem inside ``rules[j]`` is that rule's (:func:`rule_problem`)."""
    errors = [(tuple(e["loc"]), e["type"]) for e in exc.errors()]
    loc, kind = _first(errors, _USER_ORDER, before_unknown=("name",))
    if not loc:
        return "unnamed", "not a mapping with name, token, namespaces and rules"
    field = str(loc[0])
    if kind in _UNKNOWN and len(loc) == 1:
        return "named", f"unknown field {field!r} (a user has name, token, namespaces, rules)"
    if field == "name":
        return "unnamed", "'name' must be a non-empty string"
    if field == "token":
        return "later", "'token' must be a non-empty string without spaces"
    if field == "namespaces":
        return "later", "namespaces: must be a list of strings"
    if len(loc) == 1:
        return "later", "'rules' must be a list"
    index = loc[1]
    inner = [(e[2:], k) for e, k in errors if e[:2] == ("rules", index)]
    return "later", f"rules[{index}]: {_rule_sentence(*_first(inner, _RULE_ORDER))}"
