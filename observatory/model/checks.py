"""The check language of lessons: small declarative conditions on the watched state, and their evaluation.

A CHECK is a YAML mapping with exactly one of these keys (parsed by :func:`parse_check`). A pod is ``name`` (in the
lesson's namespace) or ``namespace/name``; every check also takes ``namespace`` to override it.

``pod: NAME`` or ``pod: {name, phase, status, nodeName, schedulerName, diagnosis}``
    The pod exists (and has that ``status.phase``, kubectl STATUS text, ``spec.nodeName`` (``""`` empty, ``"*"``
    set: quote both in YAML, ``*`` alone is an alias), ``spec.schedulerName``, :mod:`.diagnosis` state).
``absent_pod: NAME`` or ``{name}``
    No such pod.
``event: {pod, reason, from, type, message_contains}`` / ``no_event: {…}``
    The pod has (has no) event with that reason, and when given that source (``reportingComponent``, else
    ``source.component``), type and message substring. ``no_event`` fails while any matching event exists.
``binding: {pod, status, nth, node, message_contains}``
    A Binding of the pod sent by observatory was answered ``status`` (the ``nth`` one sent for that pod, 1-based,
    when given; otherwise any), to ``node``, with the Status message (else the body) containing the text. Binds
    sent with kubectl are not seen here: only their effect on the pod is.
``timeline: {pod, nodeName: empty-then-set}``
    The pod's watch frames (:meth:`ClusterState.timeline <observatory.model.state.ClusterState.timeline>`) show
    ``spec.nodeName`` empty and, in the very next frame, set: no frame in between.
``all: [CHECK, …]`` / ``any: [CHECK, …]``
    Every one / at least one passes.

:func:`evaluate` gives a :class:`CheckResult`: passed or not, and one sentence saying what was found.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from .diagnosis import STATES
from .exchange import BindingExchange
from .state import ClusterState

__all__ = [
    "CHECK_KINDS", "EMPTY_THEN_SET", "AbsentPodCheck", "AllCheck", "AnyCheck", "BindingCheck", "Check",
    "CheckResult", "EventCheck", "LessonError", "PodCheck", "TimelineCheck", "evaluate", "parse_check",
]

EMPTY_THEN_SET = "empty-then-set"


class LessonError(ValueError):
    """A lesson that cannot be loaded: ``"<source>: <key path>: <what is wrong>"`` (the key path is left out when
    the whole file is to blame)."""

    def __init__(self, source: str, reason: str, key: str = "") -> None:
        self.source, self.key, self.reason = source, key, reason
        super().__init__(f"{source}: {key}: {reason}" if key else f"{source}: {reason}")


# -- checks ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PodCheck:
    """``pod``: the pod exists, with every field that is not None as given (``node_name`` "" empty, "*" set)."""

    name: str
    namespace: str | None = None
    phase: str | None = None
    status: str | None = None
    node_name: str | None = None
    scheduler_name: str | None = None
    diagnosis: str | None = None


@dataclass(frozen=True, slots=True)
class AbsentPodCheck:
    """``absent_pod``: no such pod in the state."""

    name: str
    namespace: str | None = None


@dataclass(frozen=True, slots=True)
class EventCheck:
    """``event`` (``present``) / ``no_event``: a matching event of the pod exists / none does. ``source`` is the
    YAML ``from``."""

    pod: str
    reason: str
    namespace: str | None = None
    source: str | None = None
    type: str | None = None
    message_contains: str | None = None
    present: bool = True


@dataclass(frozen=True, slots=True)
class BindingCheck:
    """``binding``: a Binding of the pod that observatory sent (the ``nth`` one, when given) matches."""

    pod: str
    namespace: str | None = None
    status: int | None = None
    nth: int | None = None
    node: str | None = None
    message_contains: str | None = None


@dataclass(frozen=True, slots=True)
class TimelineCheck:
    """``timeline``: the pod's frames show ``spec.nodeName`` empty, then set in the next frame."""

    pod: str
    namespace: str | None = None
    node_name: str = EMPTY_THEN_SET


@dataclass(frozen=True, slots=True)
class AllCheck:
    """``all``: every check passes."""

    checks: tuple[Check, ...]


@dataclass(frozen=True, slots=True)
class AnyCheck:
    """``any``: at least one check passes."""

    checks: tuple[Check, ...]


Check = PodCheck | AbsentPodCheck | EventCheck | BindingCheck | TimelineCheck | AllCheck | AnyCheck


@dataclass(frozen=True, slots=True)
class CheckResult:
    """Whether a check passed, and one readable sentence saying what was found."""

    passed: bool
    detail: str


class _Spec:
    """Typed reads of one mapping of the lesson; errors name the source and the key path."""

    def __init__(self, data: Any, source: str, where: str, allowed: Sequence[str]) -> None:
        if not isinstance(data, Mapping):
            raise LessonError(source, f"must be a mapping, not {_kind(data)}", where)
        unknown = [k for k in data if k not in allowed]
        if unknown:
            raise LessonError(source, f"unknown key {unknown[0]!r} (expected one of: {', '.join(allowed)})", where)
        self.data, self.source, self.where = data, source, where

    def key(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    @overload
    def text(self, key: str, *, required: Literal[True], empty: bool = False) -> str: ...

    @overload
    def text(self, key: str, *, required: bool = False, empty: bool = False) -> str | None: ...

    def text(self, key: str, *, required: bool = False, empty: bool = False) -> str | None:
        if key not in self.data:
            if required:
                raise LessonError(self.source, "is missing", self.key(key))
            return None
        value = self.data[key]
        if not isinstance(value, str) or (not value.strip() and not empty):
            raise LessonError(self.source, f"must be a non-empty string, not {_kind(value)}", self.key(key))
        return value

    def integer(self, key: str, low: int, high: int) -> int | None:
        if key not in self.data:
            return None
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise LessonError(self.source, f"must be a whole number from {low} to {high}, not {_kind(value)}",
                              self.key(key))
        return value


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return repr(value) if len(value) < 40 else "a long string"
    if isinstance(value, bool) or isinstance(value, (int, float)):
        return repr(value)
    return {dict: "a mapping", list: "a list", type(None): "nothing"}.get(type(value), type(value).__name__)


_POD_KEYS = ("name", "namespace", "phase", "status", "nodeName", "schedulerName", "diagnosis")
_EVENT_KEYS = ("pod", "namespace", "reason", "from", "type", "message_contains")
_BINDING_KEYS = ("pod", "namespace", "status", "nth", "node", "message_contains")
CHECK_KINDS = ("pod", "absent_pod", "event", "no_event", "binding", "timeline", "all", "any")


def parse_check(data: Any, *, source: str = "<lesson>", where: str = "check") -> Check:
    """A CHECK (module docstring) from parsed YAML; :class:`LessonError` naming ``source`` and ``where``."""
    if not isinstance(data, Mapping) or len(data) != 1:
        raise LessonError(source, f"must be a mapping with exactly one of: {', '.join(CHECK_KINDS)}", where)
    (kind, args), = data.items()
    at = f"{where}.{kind}"
    if kind in ("all", "any"):
        if not isinstance(args, list) or not args:
            raise LessonError(source, "must be a non-empty list of checks", at)
        checks = tuple(parse_check(c, source=source, where=f"{at}[{i}]") for i, c in enumerate(args))
        return AllCheck(checks) if kind == "all" else AnyCheck(checks)
    if kind in ("pod", "absent_pod") and isinstance(args, str):
        args = {"name": args}
    if kind == "pod":
        s = _Spec(args, source, at, _POD_KEYS)
        node = s.text("nodeName", empty=True)
        diagnosis = s.text("diagnosis")
        if diagnosis is not None and diagnosis not in STATES:
            raise LessonError(source, f"unknown diagnosis {diagnosis!r} (expected one of: {', '.join(STATES)})",
                              s.key("diagnosis"))
        return PodCheck(s.text("name", required=True), s.text("namespace"), s.text("phase"), s.text("status"),
                        node, s.text("schedulerName"), diagnosis)
    if kind == "absent_pod":
        s = _Spec(args, source, at, ("name", "namespace"))
        return AbsentPodCheck(s.text("name", required=True), s.text("namespace"))
    if kind in ("event", "no_event"):
        s = _Spec(args, source, at, _EVENT_KEYS)
        return EventCheck(s.text("pod", required=True), s.text("reason", required=True), s.text("namespace"),
                          s.text("from"), s.text("type"), s.text("message_contains"), present=kind == "event")
    if kind == "binding":
        s = _Spec(args, source, at, _BINDING_KEYS)
        return BindingCheck(s.text("pod", required=True), s.text("namespace"), s.integer("status", 100, 599),
                            s.integer("nth", 1, 1000), s.text("node"), s.text("message_contains"))
    if kind == "timeline":
        s = _Spec(args, source, at, ("pod", "namespace", "nodeName"))
        node = s.text("nodeName", required=True)
        if node != EMPTY_THEN_SET:
            raise LessonError(source, f"must be {EMPTY_THEN_SET!r}, not {node!r}", s.key("nodeName"))
        return TimelineCheck(s.text("pod", required=True), s.text("namespace"), node)
    raise LessonError(source, f"unknown check {kind!r} (expected one of: {', '.join(CHECK_KINDS)})", where)


# -- evaluation -----------------------------------------------------------------------------------------------------

def _key(pod: str, namespace: str | None, default: str) -> str:
    return pod if "/" in pod else f"{namespace or default}/{pod}"


def _node(value: str) -> str:
    return value or "<empty>"


def evaluate(check: Check, state: ClusterState, exchanges: Sequence[BindingExchange], *,
             namespace: str = "default") -> CheckResult:
    """Evaluate ``check`` against the watched ``state`` (pods, events, timelines, diagnoses) and the Binding
    exchanges observatory has sent, oldest first. ``namespace`` is the default for pod names without one."""
    if isinstance(check, (AllCheck, AnyCheck)):
        results = [evaluate(c, state, exchanges, namespace=namespace) for c in check.checks]
        if isinstance(check, AllCheck):  # all: what fails, else everything found
            failed = [r for r in results if not r.passed]
            return CheckResult(not failed, "; ".join(r.detail for r in failed or results))
        passed = [r for r in results if r.passed]  # any: the first that passes, else everything found
        return CheckResult(bool(passed), passed[0].detail if passed else "; ".join(r.detail for r in results))
    if isinstance(check, PodCheck):
        return _pod(check, state, _key(check.name, check.namespace, namespace))
    if isinstance(check, AbsentPodCheck):
        key = _key(check.name, check.namespace, namespace)
        found = key in state.pods
        return CheckResult(not found, f"pod {key} exists" if found else f"no pod {key}")
    if isinstance(check, EventCheck):
        return _event(check, state, _key(check.pod, check.namespace, namespace))
    if isinstance(check, BindingCheck):
        return _binding(check, exchanges, _key(check.pod, check.namespace, namespace))
    if isinstance(check, TimelineCheck):
        return _timeline(state, _key(check.pod, check.namespace, namespace))
    raise TypeError(f"not a check: {check!r}")


def _pod(check: PodCheck, state: ClusterState, key: str) -> CheckResult:
    pod = state.pods.get(key)
    if pod is None:
        return CheckResult(False, f"no pod {key} yet")
    found: list[str] = []
    wrong: list[str] = []

    def compare(label: str, have: str, want: str, ok: bool) -> None:
        if ok:
            found.append(f"{label} {have}")
        else:
            wrong.append(f"{label} {have}, not {want}")

    for label, want, have in (("phase", check.phase, pod.phase), ("STATUS", check.status, pod.status),
                              ("schedulerName", check.scheduler_name, pod.scheduler_name)):
        if want is not None:
            compare(label, have or "<none>", want, have == want)
    if check.node_name is not None:
        ok = bool(pod.node_name) if check.node_name == "*" else pod.node_name == check.node_name
        compare("spec.nodeName", _node(pod.node_name), "set" if check.node_name == "*" else _node(check.node_name),
                ok)
    if check.diagnosis is not None:
        diagnosis = state.diagnosis(key)
        have = f"{diagnosis.state} ({diagnosis.headline})" if diagnosis is not None else "unknown"
        compare("diagnosis", have, check.diagnosis, diagnosis is not None and diagnosis.state == check.diagnosis)
    if wrong:
        return CheckResult(False, f"pod {key}: " + ", ".join(wrong))
    return CheckResult(True, f"pod {key}" + (": " + ", ".join(found) if found else " exists"))


def _event(check: EventCheck, state: ClusterState, key: str) -> CheckResult:
    what = check.reason + (f" from {check.source}" if check.source else "")
    matches = [ev for ev in state.events_for(key)
               if ev.reason == check.reason and check.source in (None, ev.source)
               and check.type in (None, ev.type)
               and (check.message_contains is None or check.message_contains in ev.message)]
    if not matches:
        return CheckResult(not check.present, f"no {what} event for pod {key}")
    ev = matches[-1]
    return CheckResult(check.present, f"pod {key} has a {ev.type} {ev.reason} event from {ev.source or '?'}: "
                                      f"{ev.message}")


def _binding(check: BindingCheck, exchanges: Sequence[BindingExchange], key: str) -> CheckResult:
    sent = [ex for ex in exchanges if ex.pod == key]
    if check.nth is not None:
        if len(sent) < check.nth:
            return CheckResult(False, f"{len(sent)} Binding(s) of {key} sent so far; waiting for number {check.nth}")
        candidates = [(check.nth, sent[check.nth - 1])]
    else:
        if not sent:
            return CheckResult(False, f"no Binding of {key} sent from observatory yet")
        candidates = list(enumerate(sent, start=1))

    def answer(n: int, ex: BindingExchange) -> str:
        message = ex.status_message
        return (f"Binding {n} of {key} to {ex.node}: {ex.status_line or 'no answer: ' + (ex.error or '?')}"
                + (f": {message}" if message else ""))

    for n, ex in reversed(candidates):
        text = ex.status_message or ex.response_body.decode("utf-8", errors="replace")
        if (check.status in (None, ex.status) and check.node in (None, ex.node)
                and (check.message_contains is None or check.message_contains in text)):
            return CheckResult(True, answer(n, ex))
    want = [f"status {check.status}"] if check.status is not None else []
    want += [f"node {check.node}"] if check.node is not None else []
    want += [f"a message containing {check.message_contains!r}"] if check.message_contains is not None else []
    return CheckResult(False, answer(*candidates[-1]) + f" (waiting for {', '.join(want)})")


def _timeline(state: ClusterState, key: str) -> CheckResult:
    frames = state.timeline(key)
    if not frames:
        return CheckResult(False, f"pod {key} not seen yet")
    for a, b in itertools.pairwise(frames):
        if not a.node_name and b.node_name and "DELETED" not in (a.change, b.change):
            return CheckResult(True, f"pod {key}: spec.nodeName <empty> at resourceVersion {a.resource_version}, "
                                     f"then {b.node_name} at resourceVersion {b.resource_version}")
    first = frames[0]
    if first.node_name:
        return CheckResult(False, f"pod {key} was first seen already bound to {first.node_name} (resourceVersion "
                                  f"{first.resource_version}): the empty frame was not watched")
    return CheckResult(False, f"pod {key}: spec.nodeName still <empty>")
