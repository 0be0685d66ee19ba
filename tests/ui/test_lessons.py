"""The lesson pane's text and the lesson's namespace, without a lab: pure functions of the shipped lessons."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

from observatory.lessons import load_lesson
from observatory.ui.lesson import make_lesson_run
from observatory.ui.widgets.lesson_pane import (
    LessonView,
    commands,
    paragraphs,
    render_current,
    render_instruction,
    render_observe,
    render_steps,
)

BINDING_BY_HAND = """NODE=<worker-node>
cat > /tmp/binding.json <<EOF
{"apiVersion":"v1","kind":"Binding",
 "metadata":{"name":"manual","namespace":"sched-lab"},
 "target":{"apiVersion":"v1","kind":"Node","name":"$NODE"}}
EOF
kubectl create --raw /api/v1/namespaces/sched-lab/pods/manual/binding -f /tmp/binding.json"""
"""Step 3 of manual-binding.yaml, the commands verbatim."""


def test_an_instruction_is_prose_and_commands_verbatim():
    step = load_lesson("manual-binding").steps[2]
    assert paragraphs(step.instruction) == [
        ("Select sched-lab/manual, press b and pick the worker node (pair-worker in the lab). Or send it yourself:",
         False),
        (BINDING_BY_HAND, True)]
    assert commands(step.instruction) == BINDING_BY_HAND


def test_the_first_step_of_each_lesson_has_its_commands_and_prose_apart():
    create = load_lesson("manual-binding").steps[0].instruction
    assert commands(create).splitlines()[0] == "kubectl -n sched-lab apply -f - <<'EOF'"
    assert commands(create).splitlines()[-1] == "kubectl -n sched-lab describe pod manual | sed -n '/Events/,$p'"
    assert "    containers: [{name: pause, image: registry.k8s.io/pause:3.9}]" not in commands(create)
    assert "  containers: [{name: pause, image: registry.k8s.io/pause:3.9}]" in commands(create)  # indent kept
    seamb = load_lesson("scheduled-pod").steps[0].instruction
    assert commands(seamb) == ("kubectl run seamb --image=nginx --restart=Never &\n"
                               "kubectl get pod seamb -w -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName\n"
                               "# nodeName is empty for the first frames, then set the moment the Binding lands")
    assert commands(load_lesson("manual-binding").steps[1].instruction) == ""


def test_the_pane_lists_steps_with_ticks_and_says_what_is_missing():
    lesson = load_lesson("manual-binding")
    at = datetime(2026, 11, 29, 9, 30, 0, tzinfo=UTC)
    view = LessonView(lesson, (at, None, None, None, None, None), 1,
                      "pod sched-lab/manual has a Warning FailedScheduling event from default-scheduler: 0/2 nodes")
    steps = render_steps(view).plain.splitlines()
    assert steps[0].startswith("✓ 1. Create the pod  ")
    assert steps[1:] == ["▶ 2. Confirm the negative result", "  3. Send the binding", "  4. Watch the transition",
                         "  5. Send it a second time", "  6. Write down"]
    assert render_current(view).plain == ("Step 2 of 6: Confirm the negative result\nNot yet: pod sched-lab/manual has "
                                          "a Warning FailedScheduling event from default-scheduler: 0/2 nodes")
    assert render_instruction(view).plain == " ".join(lesson.steps[1].instruction.split())  # prose reflowed
    assert render_observe(view).plain == f"Observe: {lesson.steps[1].observe}"
    done = LessonView(lesson, (at,) * 6, None, "")
    assert render_current(done).plain == "✓ Every step ticked.\nStep 6: Write down"
    assert render_instruction(done).plain.startswith("Write down the 409's full message, and one sentence")
    assert render_observe(done).plain.startswith("Observe: The message in the HTTP exchange pane")


def test_the_lesson_namespace_is_the_lessons_in_the_lab_and_the_watched_one_on_a_cluster():
    lesson = load_lesson("scheduled-pod")
    assert make_lesson_run(None, SimpleNamespace(lab=True, namespace=None)) is None
    assert make_lesson_run(lesson, SimpleNamespace(lab=True, namespace="team-a")).namespace == "default"
    assert make_lesson_run(lesson, SimpleNamespace(lab=False, namespace="team-a")).namespace == "team-a"
    assert make_lesson_run(lesson, SimpleNamespace(lab=False, namespace=None)).namespace == "default"  # -A
