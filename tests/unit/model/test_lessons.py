"""Lessons: the shipped YAML loads, bad YAML says where, checks pass and fail on recorded lab state, and a step
never ticks before the ones above it."""

from __future__ import annotations

import asyncio
import copy
import functools
import json

import pytest

from observatory.lab.kubeconfig import kubeconfig_dict
from observatory.lab.resources import CORE_V1
from observatory.lab.scenarios import list_scenarios
from observatory.lessons import lesson_names, list_lessons, load_lesson
from observatory.model.checks import (
    AllCheck,
    AnyCheck,
    BindingCheck,
    EventCheck,
    PodCheck,
    TimelineCheck,
    evaluate,
    parse_check,
)
from observatory.model.deltas import Deleted, Upserted
from observatory.model.lessons import LessonError, LessonRun, parse_lesson
from observatory.model.state import ClusterState

from . import lab_json
from .test_exchange import exchange
from .test_records import scheduler_event
from .test_state import T0, Clock, load

MANUAL = "sched-lab/manual"
# k8s-api-reference.md §1.3 item 5, for the lesson's pod and node.
CONFLICT = ('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be '
            'fulfilled on pods/binding \\"manual\\": pod manual is already assigned to node \\"pair-worker\\"",'
            '"reason":"Conflict","details":{"name":"manual","kind":"pods/binding"},"code":409}')
# k8s-api-reference.md §4.3: the Scheduled event's message, `Successfully assigned %v/%v to %v`.
SCHEDULED_PREFIX = "Successfully assigned default/seamb to "


def created():
    return exchange()


def conflict():
    return exchange(node="pair-control-plane", status=409, reason="Conflict", response_body=CONFLICT.encode())


def apply_changes(state: ClusterState, clock: Clock, changes, until=None) -> None:
    for _rv, type_, kind, obj in changes:
        clock.advance(0.5)
        state.apply(Deleted(kind, obj) if type_ == "DELETED" else Upserted(kind, obj, type_))
        if until is not None and until(state):
            return


def failed_scheduling_for(pod: dict) -> dict:
    meta = pod["metadata"]
    return scheduler_event(metadata={"name": "manual.18ec9114b81f5a25", "namespace": meta["namespace"],
                                     "uid": "fs1", "resourceVersion": "9001",
                                     "creationTimestamp": "2026-11-29T10:00:09Z"},
                           involvedObject={"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"],
                                           "uid": meta["uid"], "apiVersion": "v1"})


# -- the shipped lessons ------------------------------------------------------------------------------------------

def test_two_lessons_ship_and_list():
    assert lesson_names() == ["manual-binding", "scheduled-pod"]
    infos = {i.name: i for i in list_lessons()}
    assert infos["manual-binding"].title == "Scheduling, minus the scheduler: one POST to a subresource"
    assert infos["scheduled-pod"].title == "Seam B: the persisted pod becomes a scheduled one"
    assert all(i.summary for i in infos.values())


def test_lessons_name_real_scenarios_and_the_lab_contexts_namespace():
    scenarios = {s.name for s in list_scenarios()}
    manual, seamb = load_lesson("manual-binding"), load_lesson("scheduled-pod")
    assert (manual.scenario, manual.namespace) == ("manual-binding", "sched-lab")
    assert seamb.scenario in scenarios and seamb.scenario == "pair"
    # `kubectl run seamb` without -n lands in the context's namespace: the lab kubeconfig's.
    context = kubeconfig_dict("http://127.0.0.1:1")["contexts"][0]["context"]
    assert seamb.namespace == context["namespace"] == "default"


def test_instructions_carry_the_seed_commands_verbatim():
    manual, seamb = load_lesson("manual-binding"), load_lesson("scheduled-pod")
    assert [s.title for s in manual.steps] == ["Create the pod", "Confirm the negative result", "Send the binding",
                                               "Watch the transition", "Send it a second time", "Write down"]
    assert "kubectl -n sched-lab apply -f - <<'EOF'\n" in manual.steps[0].instruction
    assert "  schedulerName: nobody-at-all\n" in manual.steps[0].instruction
    assert ("kubectl create --raw /api/v1/namespaces/sched-lab/pods/manual/binding -f /tmp/binding.json"
            in manual.steps[2].instruction)
    assert "kubectl -n sched-lab get pod manual -o wide -w" in manual.steps[3].instruction
    assert 'sed -i "s/$NODE/<cp-node>/" /tmp/binding.json' in manual.steps[4].instruction
    assert "kubectl run seamb --image=nginx --restart=Never &" in seamb.steps[0].instruction
    assert ("kubectl get pod seamb -w -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName"
            in seamb.steps[0].instruction)


def test_a_lesson_file_by_path(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\ntitle: T\nsummary: S\nscenario: pair\nsteps:\n"
                    "  - {title: a, instruction: do it, check: {absent_pod: x}}\n")
    lesson = load_lesson(str(path))
    assert (lesson.name, lesson.namespace, lesson.steps[0].observe) == ("mine", "default", "")
    with pytest.raises(LessonError, match="no such lesson; the lessons are: manual-binding, scheduled-pod"):
        load_lesson("manual-bind")
    with pytest.raises(LessonError, match=r"missing\.yaml: the file cannot be read"):
        load_lesson(str(tmp_path / "missing.yaml"))


# -- loading errors ---------------------------------------------------------------------------------------------

GOOD = """\
name: x
title: T
summary: S
scenario: pair
steps:
  - title: one
    instruction: do it
    check:
      pod: {name: manual, phase: Pending}
"""


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("phase: Pending", "phse: Pending", "x.yaml: steps[0].check.pod: unknown key 'phse' (expected one of: name,"),
    ("title: T\n", "", "x.yaml: title: is missing"),
    ("summary: S\n", "summary: S\nauthor: me\n", "x.yaml: unknown key 'author'"),
    ("phase: Pending", "diagnosis: stuck", "x.yaml: steps[0].check.pod.diagnosis: unknown diagnosis 'stuck'"),
    ("phase: Pending", "nodeName: *", "x.yaml: YAML error at line 9"),
    ("phase: Pending", "phase: Pending, phase: Running",
     "x.yaml: YAML error at line 9, column 43: repeated key 'phase'"),
    ("    check:\n      pod: {name: manual, phase: Pending}\n", "", "x.yaml: steps[0].check: is missing"),
    ("pod: {name: manual, phase: Pending}", "{pod: manual, absent_pod: manual}",
     "x.yaml: steps[0].check: must be a mapping with exactly one of: pod, absent_pod"),
    ("pod: {name: manual, phase: Pending}", "binding: {pod: manual, status: 4090}",
     "x.yaml: steps[0].check.binding.status: must be a whole number from 100 to 599, not 4090"),
    ("pod: {name: manual, phase: Pending}", "timeline: {pod: manual, nodeName: set}",
     "x.yaml: steps[0].check.timeline.nodeName: must be 'empty-then-set', not 'set'"),
    ("pod: {name: manual, phase: Pending}", "any: []", "x.yaml: steps[0].check.any: must be a non-empty list"),
    ("pod: {name: manual, phase: Pending}", "all: [{pod: manual}, {event: {pod: manual}}]",
     "x.yaml: steps[0].check.all[1].event.reason: is missing"),
    ("pod: {name: manual, phase: Pending}", "no_event: {pod: manual, reason: 7}",
     "x.yaml: steps[0].check.no_event.reason: must be a non-empty string, not 7"),
    ("pod: {name: manual, phase: Pending}", "pod: {name: manual, phase: }",
     "x.yaml: steps[0].check.pod.phase: must be a non-empty string, not nothing"),
    ("steps:\n" + GOOD.split("steps:\n")[1], "steps: []\n", "x.yaml: steps: must be a non-empty list of steps"),
])
def test_loading_errors_name_the_file_and_the_key(old, new, expected):
    assert old in GOOD
    with pytest.raises(LessonError) as info:
        parse_lesson(GOOD.replace(old, new), "lessons/x.yaml")
    assert str(info.value).startswith("lessons/" + expected), str(info.value)


def test_good_yaml_parses():
    lesson = parse_lesson(GOOD, "x.yaml")
    assert lesson.steps[0].check == PodCheck("manual", phase="Pending")
    assert parse_check({"pod": "manual"}) == PodCheck("manual")
    assert parse_check({"no_event": {"pod": "manual", "reason": "FailedScheduling", "from": "default-scheduler"}}) \
        == EventCheck("manual", "FailedScheduling", source="default-scheduler", present=False)


# -- checks on recorded lab state -------------------------------------------------------------------------------

NEGATIVE = load_lesson("manual-binding").steps[1].check


def test_negative_result_passes_on_the_untouched_pod():
    state = load(lab_json.manual_binding().initial)
    result = evaluate(NEGATIVE, state, [], namespace="sched-lab")
    assert result.passed, result.detail
    assert "spec.nodeName <empty>" in result.detail and "no FailedScheduling event for pod sched-lab/manual" \
        in result.detail


def test_no_failed_scheduling_does_not_pass_while_one_exists():
    rec = lab_json.manual_binding()
    state = load(rec.initial)
    state.apply(Upserted("events", failed_scheduling_for(rec.initial.pod(MANUAL)), "ADDED"))
    no_event = EventCheck("manual", "FailedScheduling", present=False)
    result = evaluate(no_event, state, [], namespace="sched-lab")
    assert not result.passed
    assert result.detail.startswith("pod sched-lab/manual has a Warning FailedScheduling event from "
                                    "default-scheduler: 0/2 nodes are available")
    assert not evaluate(NEGATIVE, state, [], namespace="sched-lab").passed
    assert evaluate(EventCheck("manual", "FailedScheduling"), state, [], namespace="sched-lab").passed
    # the event gone (deleted), the check passes again
    state.apply(Deleted("events", failed_scheduling_for(rec.initial.pod(MANUAL))))
    assert evaluate(no_event, state, [], namespace="sched-lab").passed


def test_pod_checks():
    rec = lab_json.manual_binding()
    clock = Clock()
    state = load(rec.initial, clock)
    check = PodCheck("manual", phase="Running", node_name="*")
    result = evaluate(check, state, [], namespace="sched-lab")
    assert not result.passed and result.detail == (
        "pod sched-lab/manual: phase Pending, not Running, spec.nodeName <empty>, not set")
    apply_changes(state, clock, rec.changes)
    assert evaluate(check, state, []).detail == "no pod default/manual yet"
    assert evaluate(check, state, [], namespace="sched-lab").passed
    assert evaluate(PodCheck("sched-lab/manual", node_name="pair-worker", scheduler_name="nobody-at-all"), state,
                    []).passed
    assert not evaluate(PodCheck("manual", namespace="sched-lab", node_name=""), state, []).passed
    assert not evaluate(PodCheck("manual", diagnosis="no-scheduler"), state, [], namespace="sched-lab").passed
    assert evaluate(PodCheck("manual", diagnosis="running", status="Running"), state, [],
                    namespace="sched-lab").passed
    assert evaluate(parse_check({"absent_pod": "seamb"}), state, []).passed
    assert not evaluate(parse_check({"absent_pod": "sched-lab/manual"}), state, []).passed


def test_binding_checks():
    ns = {"namespace": "sched-lab"}
    second_409 = BindingCheck("manual", nth=2, status=409, message_contains="already assigned")
    assert evaluate(second_409, ClusterState(), [], **ns).detail == (
        "0 Binding(s) of sched-lab/manual sent so far; waiting for number 2")
    assert not evaluate(BindingCheck("manual", status=201), ClusterState(), [], **ns).passed
    sent = [created()]
    assert evaluate(BindingCheck("manual", status=201), ClusterState(), sent, **ns).passed
    assert not evaluate(second_409, ClusterState(), sent, **ns).passed
    sent.append(conflict())
    result = evaluate(second_409, ClusterState(), sent, **ns)
    assert result.passed
    assert result.detail == ('Binding 2 of sched-lab/manual to pair-control-plane: HTTP/1.1 409 Conflict: '
                             'Operation cannot be fulfilled on pods/binding "manual": pod manual is already '
                             'assigned to node "pair-worker"')
    first_409 = BindingCheck("manual", nth=1, status=409)
    assert not evaluate(first_409, ClusterState(), sent, **ns).passed
    assert "waiting for status 409" in evaluate(first_409, ClusterState(), sent, **ns).detail
    assert not evaluate(BindingCheck("manual", status=409, message_contains="being deleted"), ClusterState(),
                        sent, **ns).passed
    assert not evaluate(BindingCheck("other", status=201), ClusterState(), sent, **ns).passed
    assert evaluate(BindingCheck("manual", node="pair-worker", status=201), ClusterState(), sent, **ns).passed


def test_timeline_empty_then_set():
    rec = lab_json.manual_binding()
    clock = Clock()
    state = load(rec.initial, clock)
    check = TimelineCheck("manual", "sched-lab")
    assert evaluate(check, state, []).detail == "pod sched-lab/manual: spec.nodeName still <empty>"
    apply_changes(state, clock, rec.changes)
    result = evaluate(check, state, [])
    bind_rv = next(obj["metadata"]["resourceVersion"] for _, _, kind, obj in rec.changes
                   if kind == "pods" and obj["spec"].get("nodeName"))
    assert result.passed and result.detail.endswith(f"then pair-worker at resourceVersion {bind_rv}")
    # A state that first saw the pod already bound never watched it empty.
    late = ClusterState(Clock())
    bound = [obj for _, _, kind, obj in rec.changes if kind == "pods"]
    late.apply(Upserted("pods", bound[0], "ADDED"))  # bound, Pending
    late.apply(Upserted("pods", bound[-1], "MODIFIED"))  # bound, Running: two frames, neither empty
    assert [f.node_name for f in late.timeline(MANUAL)] == ["pair-worker", "pair-worker"]
    result = evaluate(check, late, [])
    assert not result.passed and "first seen already bound to pair-worker" in result.detail
    assert not evaluate(TimelineCheck("nope", "sched-lab"), state, []).passed


def test_all_and_any():
    state = load(lab_json.manual_binding().initial)
    yes, no = PodCheck("manual"), PodCheck("manual", phase="Running")
    ns = {"namespace": "sched-lab"}
    assert evaluate(AnyCheck((no, yes)), state, [], **ns) == evaluate(yes, state, [], **ns)
    assert not evaluate(AllCheck((yes, no)), state, [], **ns).passed
    assert evaluate(AllCheck((yes, no)), state, [], **ns).detail == "pod sched-lab/manual: phase Pending, not Running"
    assert not evaluate(AnyCheck((no, no)), state, [], **ns).passed


# -- running a lesson -----------------------------------------------------------------------------------------------

ORDERED = """\
name: ordered
title: T
summary: S
scenario: manual-binding
namespace: sched-lab
steps:
  - {title: exists, instruction: a, check: {pod: manual}}
  - {title: bound by us, instruction: b, check: {binding: {pod: manual, status: 201}}}
  - {title: running, instruction: c, check: {pod: {name: manual, phase: Running}}}
"""


def test_a_later_step_does_not_tick_before_an_earlier_one():
    rec = lab_json.manual_binding()
    clock = Clock()
    state = load(rec.initial, clock)
    run = LessonRun(parse_lesson(ORDERED, "ordered.yaml"))
    assert run.update(state, [], clock()) == (0,)
    apply_changes(state, clock, rec.changes)  # bound by kubectl, not observatory: the pod runs, step 2 fails
    assert evaluate(run.lesson.steps[2].check, state, [], namespace="sched-lab").passed
    assert run.update(state, [], clock()) == ()
    assert run.ticked[1:] == (None, None) and run.current == 1 and not run.done
    assert run.detail(1) == "no Binding of sched-lab/manual sent from observatory yet" and run.detail(2) == ""
    clock.advance(1)
    assert run.update(state, [created()], clock()) == (1, 2)
    assert run.ticked == (T0, clock(), clock()) and run.done


def test_the_shipped_lesson_does_not_run_ahead_of_a_missed_step():
    rec = lab_json.manual_binding()
    clock = Clock()
    state = load(rec.initial, clock)
    apply_changes(state, clock, rec.changes)  # started late: the pod is already bound and running
    run = LessonRun(load_lesson("manual-binding"))
    assert run.update(state, [created(), conflict()], clock()) == (0,)
    assert run.current == 1 and "spec.nodeName pair-worker, not <empty>" in run.detail(1)


def test_walking_the_manual_binding_lesson():
    rec = lab_json.manual_binding()
    clock = Clock()
    state = ClusterState(clock)
    run = LessonRun(load_lesson("manual-binding"))
    assert run.update(state, [], clock()) == () and run.detail(0) == "no pod sched-lab/manual yet"
    state = load(rec.initial, clock)
    assert run.update(state, [], clock()) == (0, 1)
    clock.advance(2)
    sent = [created()]
    assert run.update(state, sent, clock()) == (2,)
    bound_at = clock()
    apply_changes(state, clock, rec.changes[:1])
    assert run.update(state, sent, clock()) == ()  # bound, not yet Running
    apply_changes(state, clock, rec.changes[1:])
    running_at = clock()
    assert run.update(state, sent, clock()) == (3,)
    clock.advance(5)
    sent.append(conflict())
    assert run.update(state, sent, clock()) == (4, 5) and run.done
    progress = run.progress()
    assert [s.ticked_at for s in progress.steps] == [T0, T0, bound_at, running_at, clock(), clock()]
    assert progress.done and progress.name == "manual-binding"
    assert "already assigned" in progress.steps[5].detail


# -- the seam-B lesson on a recorded lab stream ------------------------------------------------------------------

SEAMB = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "seamb", "labels": {"run": "seamb"}},
         "spec": {"containers": [{"name": "seamb", "image": "nginx"}], "restartPolicy": "Never"}}


async def _record_seamb() -> tuple[lab_json.Cluster, list]:
    server = lab_json._lab("pair", scheduler=True, kubelet=True, kubelet_start_seconds=0.02, bind_delay=0.05)
    store = server.store
    changes: list = []
    store.listeners.append(lambda ch: changes.append((str(ch.rv), ch.type, ch.resource, copy.deepcopy(ch.obj)))
                           if ch.resource in lab_json.KINDS else None)
    await server.start()
    try:
        await lab_json._wait_for(lambda: server.scheduler is not None and server.scheduler.elector is not None
                                 and server.scheduler.elector.leading.is_set())
        initial = lab_json.Cluster(*(json.loads(json.dumps(list(store.iter(k)))) for k in lab_json.KINDS),
                                   str(store.resource_version))
        changes.clear()
        server.registry.create(CORE_V1["pods"], "default", copy.deepcopy(SEAMB))  # what kubectl run POSTs

        def running() -> bool:
            pod = store.get("pods", "default", "seamb")
            return pod is not None and pod["status"].get("phase") == "Running"

        await lab_json._wait_for(running)
    finally:
        await server.stop()
    return initial, json.loads(json.dumps(changes))


@functools.cache
def seamb_recording():
    return asyncio.run(_record_seamb())


def test_walking_the_scheduled_pod_lesson():
    initial, changes = seamb_recording()
    clock = Clock()
    state = load(initial, clock)
    run = LessonRun(load_lesson("scheduled-pod"))
    assert run.update(state, [], clock()) == ()
    ticks: dict[int, str] = {}
    for _rv, type_, kind, obj in changes:
        clock.advance(0.1)
        state.apply(Deleted(kind, obj) if type_ == "DELETED" else Upserted(kind, obj, type_))
        for index in run.update(state, [], clock()):
            ticks[index] = f"{kind} {type_} {obj['spec'].get('nodeName', '') if kind == 'pods' else obj['reason']}"
    assert run.done, [run.detail(i) for i in range(4)]
    node = state.pods["default/seamb"].node_name
    assert node == "pair-worker"  # the control plane is tainted
    assert ticks[0] == "pods ADDED " and ticks[1] == f"pods MODIFIED {node}"
    assert ticks[2] == "events ADDED Scheduled"
    assert ticks[3] == f"pods MODIFIED {node}" and state.pods["default/seamb"].phase == "Running"
    scheduled = [e for e in state.events_for("default/seamb") if e.reason == "Scheduled"]
    assert [(e.source, e.message) for e in scheduled] == [("default-scheduler", SCHEDULED_PREFIX + node)]
    first, second, third, fourth = run.ticked
    assert first < second < third < fourth
