"""Lessons: exercises as data, walked step by step, each step ticked when its check passes against the live state.

A lesson is a YAML mapping (the shipped ones are ``observatory/lessons/*.yaml``, read by
:mod:`observatory.lessons`; this module parses text and never reads files)::

    name: manual-binding            # required; a shipped lesson's name is its file name without .yaml
    title: Scheduling, minus the scheduler
    summary: One line for `observatory lessons`.
    scenario: manual-binding        # the lab scenario `--lab --lesson NAME` loads
    namespace: sched-lab            # optional, default "default": the namespace of pod names in checks
    steps:                          # one or more
      - title: Confirm the negative result
        instruction: |              # what to do; may hold commands verbatim
          ...
        observe: What to look at.   # optional
        check: CHECK                # see observatory.model.checks

Unknown keys, repeated keys, missing or mistyped values raise :class:`LessonError`, whose message names the file
and the key path, e.g. ``…/manual-binding.yaml: steps[2].check.pod: unknown key 'phse' (expected one of: name,
namespace, …)``.

:class:`LessonRun` walks a lesson: steps tick strictly in order, at the time the caller passes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from .checks import (
    CHECK_KINDS,
    EMPTY_THEN_SET,
    AbsentPodCheck,
    AllCheck,
    AnyCheck,
    BindingCheck,
    Check,
    CheckResult,
    EventCheck,
    LessonError,
    PodCheck,
    TimelineCheck,
    _kind,
    evaluate,
    parse_check,
)
from .exchange import BindingExchange
from .state import ClusterState
from .transcript import LessonProgress, StepProgress

__all__ = [
    "CHECK_KINDS", "EMPTY_THEN_SET", "AbsentPodCheck", "AllCheck", "AnyCheck", "BindingCheck", "Check",
    "CheckResult", "EventCheck", "Lesson", "LessonError", "LessonInfo", "LessonRun", "PodCheck", "Step",
    "TimelineCheck", "evaluate", "parse_check", "parse_lesson",
]


# -- lessons --------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Step:
    title: str
    instruction: str
    observe: str
    check: Check


@dataclass(frozen=True, slots=True)
class Lesson:
    """A parsed lesson; ``source`` is where it came from (for messages)."""

    name: str
    title: str
    summary: str
    scenario: str
    namespace: str
    steps: tuple[Step, ...]
    source: str = ""

    @property
    def info(self) -> LessonInfo:
        return LessonInfo(self.name, self.title, self.summary)


@dataclass(frozen=True, slots=True)
class LessonInfo:
    """One line of ``observatory lessons``."""

    name: str
    title: str
    summary: str


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses repeated mapping keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                if key_node.value in seen:
                    raise yaml.constructor.ConstructorError(None, None, f"repeated key {key_node.value!r}",
                                                            key_node.start_mark)
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


def _non_empty(value: str) -> str:
    if not value.strip():
        raise ValueError("blank")
    return value


Text = Annotated[StrictStr, AfterValidator(_non_empty)]

_LESSON_KEYS = ("name", "title", "summary", "scenario", "namespace", "steps")
_STEP_KEYS = ("title", "instruction", "observe", "check")


class StepFile(BaseModel):
    """One entry of a lesson file's ``steps``; ``check`` is a CHECK of :mod:`observatory.model.checks`."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    title: Text
    instruction: Text
    observe: Text = ""
    check: Check

    @field_validator("check", mode="plain")
    @classmethod
    def _check(cls, value: Any, info: ValidationInfo) -> Check:
        return parse_check(value, source=(info.context or {}).get("source", "<lesson>"), where="check")


class LessonFile(BaseModel):
    """A lesson file (the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Text
    title: Text
    summary: Text
    scenario: Text
    namespace: Text = "default"
    steps: Annotated[list[StepFile], Field(min_length=1)]


_UNKNOWN = ("extra_forbidden", "invalid_key")  # a key not in the model; a key that is not a string (YAML ``1: x``)


def _rank(loc: tuple[Any, ...], kind: str, position: int) -> tuple[Any, ...]:
    """The order the loader reports problems in: the lesson not a mapping, its unknown keys (as written), its steps
    (each: not a mapping, unknown keys, check missing, title, instruction, observe, the check), then the lesson's
    own fields."""
    def fields(rest: tuple[Any, ...], keys: tuple[str, ...], first: tuple[str, ...]) -> tuple[Any, ...]:
        if not rest:
            return (0,)
        if kind in _UNKNOWN and len(rest) == 1:
            return (1, position)
        key = str(rest[0])
        if key in first and kind == "missing":
            return (2,)
        return (3, keys.index(key) if key in keys else len(keys))
    if loc and loc[0] == "steps":
        if len(loc) == 1:
            return (2,)
        return (3, loc[1], *fields(loc[2:], _STEP_KEYS, ("check",)))
    top = fields(loc, _LESSON_KEYS, ())
    return top if top[0] < 2 else (4, *top)


def _lesson_error(exc: ValidationError, data: Any, source: str) -> LessonError:
    """The first problem of a lesson file as the sentence :class:`LessonError` holds."""
    errors = sorted(((tuple(e["loc"]), e["type"], e.get("input"), e.get("ctx") or {}, i)
                     for i, e in enumerate(exc.errors())), key=lambda e: _rank(e[0], e[1], e[4]))
    loc, kind, value, ctx, _ = errors[0]
    keys: tuple[str, ...]
    if loc[:1] == ("steps",) and len(loc) >= 2:
        where, rest, keys = f"steps[{loc[1]}]", loc[2:], _STEP_KEYS
        if rest[:1] == ("check",) and isinstance(ctx.get("error"), LessonError):
            inner: LessonError = ctx["error"]
            return LessonError(source, inner.reason, f"{where}.{inner.key}")
    elif loc[:1] == ("steps",):
        return LessonError(source, "must be a non-empty list of steps", "steps")
    else:
        where, rest, keys = "", loc, _LESSON_KEYS
    if not rest:
        return LessonError(source, f"must be a mapping, not {_kind(value)}", where)
    key = rest[0]
    path = f"{where}.{key}" if where else str(key)
    if kind in _UNKNOWN:
        return LessonError(source, f"unknown key {key!r} (expected one of: {', '.join(keys)})", where)
    if kind == "missing":
        return LessonError(source, "is missing", path)
    return LessonError(source, f"must be a non-empty string, not {_kind(value)}", path)


def parse_lesson(text: str, source: str = "<lesson>") -> Lesson:
    """A :class:`Lesson` from YAML ``text``; ``source`` (a file name) goes into every :class:`LessonError`."""
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise LessonError(source, f"YAML error{where}: {err.problem or err.context or 'invalid YAML'}") from None
    except yaml.YAMLError as err:
        raise LessonError(source, f"YAML error: {err}") from None
    try:
        spec = LessonFile.model_validate(data, context={"source": source})
    except ValidationError as exc:
        raise _lesson_error(exc, data, source) from None
    steps = tuple(Step(s.title, s.instruction, s.observe, s.check) for s in spec.steps)
    return Lesson(spec.name, spec.title, spec.summary, spec.scenario, spec.namespace, steps, source)


# -- running a lesson -----------------------------------------------------------------------------------------------

class LessonRun:
    """One walk through a lesson. Steps are ticked strictly in order: :meth:`update` evaluates the first unticked
    step and, each time one passes, the next, stopping at the first that fails. So a later step is never evaluated,
    let alone ticked, before every earlier one is. ``namespace`` overrides the lesson's (e.g. the context's)."""

    def __init__(self, lesson: Lesson, *, namespace: str | None = None) -> None:
        self.lesson = lesson
        self.namespace = namespace or lesson.namespace
        self._ticked: list[datetime | None] = [None] * len(lesson.steps)
        self._details: list[str] = [""] * len(lesson.steps)

    @property
    def current(self) -> int | None:
        """The index of the first unticked step; None when done."""
        return next((i for i, t in enumerate(self._ticked) if t is None), None)

    @property
    def done(self) -> bool:
        return self.current is None

    @property
    def ticked(self) -> tuple[datetime | None, ...]:
        """When each step was ticked (None while not)."""
        return tuple(self._ticked)

    def detail(self, index: int) -> str:
        """What the last evaluation of step ``index`` found ("" when never evaluated)."""
        return self._details[index]

    def update(self, state: ClusterState, exchanges: Iterable[BindingExchange], now: datetime) -> tuple[int, ...]:
        """Evaluate from the current step on; tick (at ``now``, aware) each that passes until one fails. Returns
        the indices ticked by this call."""
        exchanges = list(exchanges)
        newly: list[int] = []
        index = self.current
        while index is not None:
            result = evaluate(self.lesson.steps[index].check, state, exchanges, namespace=self.namespace)
            self._details[index] = result.detail
            if not result.passed:
                break
            self._ticked[index] = now
            newly.append(index)
            index = self.current
        return tuple(newly)

    def progress(self) -> LessonProgress:
        """The progress for the transcript."""
        return LessonProgress(self.lesson.name, self.lesson.title, tuple(
            StepProgress(step.title, at, detail)
            for step, at, detail in zip(self.lesson.steps, self._ticked, self._details, strict=True)))
