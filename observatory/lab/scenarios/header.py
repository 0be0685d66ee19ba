"""A scenario file's ``kind: Scenario`` header as a pydantic model, and its problem as the sentence the loader
reports (:func:`observatory.lab.scenarios.load_scenario`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, StrictStr, ValidationError

__all__ = ["HEADER_KIND", "ScenarioHeader", "header_problem"]

HEADER_KIND = "Scenario"


def _one_line(value: str) -> str:
    text = value.strip()
    if not text or "\n" in text:
        raise ValueError("not one line of text")
    return text


def _named(value: str) -> str:
    text = value.strip()
    if not text:
        raise ValueError("empty")
    return text


class ScenarioHeader(BaseModel):
    """The first document of a scenario file: ``kind: Scenario``, a one-line ``description`` and, optionally, the
    scenario it ``extends`` (a name or a file path). Values are kept stripped."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["Scenario"]
    description: Annotated[StrictStr, AfterValidator(_one_line)]
    extends: Annotated[StrictStr, AfterValidator(_named)] = ""  # only when given: see model_fields_set


def header_problem(exc: ValidationError) -> str:
    """The first problem of a header: its unknown fields (all, by name), then the description, then extends."""
    errors = exc.errors()
    unknown = sorted(str(e["loc"][0]) for e in errors if e["type"] in ("extra_forbidden", "invalid_key"))
    if unknown:
        return (f"the Scenario header has unknown field(s) {', '.join(unknown)}; "
                "allowed are kind, description and extends.")
    if any(e["loc"][:1] == ("description",) for e in errors):
        return "the Scenario header needs a one-line text 'description'."
    return "'extends' must name one scenario (a name or a file path)."
