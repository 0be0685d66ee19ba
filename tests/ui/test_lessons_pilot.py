"""Lesson mode against a real lab: lesson checks pass and fail correctly, including a step that must not pass early
('no FailedScheduling event' must not pass while a FailedScheduling event exists).

manual-binding is walked with the keys a learner presses (b, worker, Enter: 201; then b, control, Enter, y: 409) and
ends with the transcript exported; scheduled-pod is walked with ``kubectl run`` against the lab's kubeconfig. Expected
texts come from the lessons' YAML, the scenarios and kube-apiserver's messages, not from earlier runs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from observatory.kube.connect import connect
from observatory.kube.source import ClusterSource
from observatory.lessons import load_lesson
from observatory.settings import LabSettings
from observatory.ui.app import ObservatoryApp
from observatory.ui.screens.confirm import ConfirmScreen
from observatory.ui.widgets.lesson_pane import LessonPane
from tests.ui.helpers import until

MANUAL = "sched-lab/manual"
ALREADY_ASSIGNED = ('Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node '
                    '"pair-worker"')
REFUSAL = ("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
           "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: 0/2 nodes are "
           "available: 2 Preemption is not helpful for scheduling.")
"""A FailedScheduling message as kube-scheduler v1.34.1 writes it (refusals.yaml)."""


@pytest.fixture
def lab_settings() -> LabSettings:
    """The simulated cluster with a quick kubelet; nobody schedules sched-lab/manual (schedulerName nobody-at-all)."""
    return LabSettings(kubelet_start_seconds=0.3, podgc=False, bookmark_interval=0.2)


@pytest.fixture
async def make_app(lab):
    sources = []

    async def make(lesson: str) -> ObservatoryApp:
        connection = await connect(str(lab.kubeconfig_path), "observatory-lab", None)
        source = ClusterSource(connection, namespace=None, lab=True)
        sources.append(source)
        return ObservatoryApp(source, refresh_interval=0.05, lesson=load_lesson(lesson))

    yield make
    for source in sources:
        await source.close()


def ticked(app: ObservatoryApp) -> list[int]:
    """The 1-based numbers of the ticked steps."""
    return [n for n, at in enumerate(app.main.lesson.run.ticked, start=1) if at is not None]


def pane_text(app: ObservatoryApp) -> str:
    return app.query_one(LessonPane).text()


async def post_failed_scheduling(http: aiohttp.ClientSession, uid: str) -> str:
    """A FailedScheduling event for sched-lab/manual, as kube-scheduler's events/v1 recorder writes it; its name."""
    body = {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "manual.187c5d2e00000001", "namespace": "sched-lab"},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": "sched-lab", "name": "manual",
                               "uid": uid},
            "reason": "FailedScheduling", "message": REFUSAL, "type": "Warning", "action": "Scheduling",
            "eventTime": "2026-11-29T09:28:30.000000Z", "reportingComponent": "default-scheduler",
            "reportingInstance": "default-scheduler-pair-control-plane", "source": {}}
    async with http.post("/api/v1/namespaces/sched-lab/events", json=body) as response:
        assert response.status == 201, await response.text()
    return body["metadata"]["name"]


async def manual_uid(http: aiohttp.ClientSession) -> str:
    async with http.get("/api/v1/namespaces/sched-lab/pods/manual") as response:
        assert response.status == 200
        return (await response.json())["metadata"]["uid"]


async def flushes(pilot, count: int = 5) -> None:
    """Let ``count`` refresh intervals pass, each with its flush and lesson evaluation."""
    for _ in range(count):
        await pilot.pause(pilot.app.main.refresh_interval)


# -- manual-binding: a step that must not pass early -----------------------------------------------------------------

async def test_no_failed_scheduling_event_does_not_pass_while_one_exists(make_app, http):
    event = await post_failed_scheduling(http, await manual_uid(http))
    app = await make_app("manual-binding")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: ticked(app) == [1], "step 1 (the pod exists)")
        reasons = await until(pilot, lambda: {e.reason for e in app.main.state.events_for(MANUAL)}, "the event watched")
        assert reasons == {"FailedScheduling"}
        await flushes(pilot, 10)
        assert ticked(app) == [1], "step 2 must not pass while a FailedScheduling event exists"
        assert app.main.lesson.run.current == 1
        detail = app.main.lesson.run.detail(1)
        assert f"pod {MANUAL} has a Warning FailedScheduling event from default-scheduler: {REFUSAL}" in detail
        text = pane_text(app)
        assert "Lesson manual-binding: step 2 of 6" in text
        assert f"Not yet: pod {MANUAL} has a Warning FailedScheduling event" in text
        assert "✓ 1. Create the pod" in text and "▶ 2. Confirm the negative result" in text

        async with http.delete(f"/api/v1/namespaces/sched-lab/events/{event}") as response:
            assert response.status == 200
        await until(pilot, lambda: ticked(app) == [1, 2], "step 2, once the event is gone")
        await flushes(pilot)
        assert ticked(app) == [1, 2], "step 3 waits for a Binding"
        assert app.main.lesson.run.detail(2) == (f"no Binding of {MANUAL} sent from observatory yet; pod {MANUAL}: "
                                            "spec.nodeName <empty>, not set")
        await until(pilot, lambda: "✓ 2. Confirm the negative result" in pane_text(app), "the tick shown")


async def test_later_steps_never_tick_before_an_earlier_one(make_app, http):
    """With step 2 held back by the event, a Binding sent by hand satisfies steps 3 and 4: neither ticks."""
    await post_failed_scheduling(http, await manual_uid(http))
    app = await make_app("manual-binding")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: ticked(app) == [1], "step 1")
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "manual", "namespace": "sched-lab"},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": "pair-worker"}}
        async with http.post("/api/v1/namespaces/sched-lab/pods/manual/binding", json=binding) as response:
            assert response.status == 201
        await until(pilot, lambda: app.main.state.pods[MANUAL].phase == "Running", "the pod Running")
        await flushes(pilot, 10)
        assert ticked(app) == [1]
        assert app.main.lesson.run.current == 1
        detail = app.main.lesson.run.detail(1)
        assert f"pod {MANUAL}: phase Running, not Pending, spec.nodeName pair-worker, not <empty>" in detail
        assert "FailedScheduling" in detail
        assert "▶ 2. Confirm the negative result" in pane_text(app)
        assert "✓ 3." not in pane_text(app) and "✓ 4." not in pane_text(app)


# -- manual-binding: walked with keys, the transcript at the end -----------------------------------------------------

async def test_walking_manual_binding_with_keys_ticks_every_step_and_exports_the_transcript(make_app, tmp_path,
                                                                                           monkeypatch):
    monkeypatch.chdir(tmp_path)  # the transcript's default folder
    app = await make_app("manual-binding")
    exports: list[tuple[Path, Path] | None] = []
    export = app.main.teaching.export_transcript

    def counted(*args: Any, **kwargs: Any) -> tuple[Path, Path] | None:
        exports.append(export(*args, **kwargs))
        return exports[-1]

    app.main.teaching.export_transcript = counted  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: ticked(app) == [1, 2], "steps 1 and 2 (the seed pod, untouched)")
        await until(pilot, lambda: app.main.selected == MANUAL, "the only pending pod selected")

        await pilot.press("b", *"worker", "enter")
        await until(pilot, lambda: len(app.main.exchanges) == 1, "the first Binding's answer")
        assert app.main.exchanges[0].status_line == "HTTP/1.1 201 Created"
        await until(pilot, lambda: 3 in ticked(app), "step 3 (the Binding sent)")
        await until(pilot, lambda: ticked(app) == [1, 2, 3, 4], "step 4 (empty then set, and Running)")
        detail = app.main.lesson.run.detail(3)  # what the passing check found
        assert detail.startswith(f"pod {MANUAL}: spec.nodeName <empty> at resourceVersion ")
        bound_at = app.main.state.timeline(MANUAL)[1].resource_version
        assert detail.endswith(f"then pair-worker at resourceVersion {bound_at}; pod {MANUAL}: phase Running")
        assert exports == []

        await pilot.press("b", *"control", "enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the warning")
        await pilot.press("y")
        await until(pilot, lambda: len(app.main.exchanges) == 2, "the second Binding's answer")
        assert app.main.exchanges[1].status_message == ALREADY_ASSIGNED
        await until(pilot, lambda: app.main.lesson.run.done, "every step ticked")
        await until(pilot, lambda: "Transcript:" in pane_text(app), "where the transcript went")
        await flushes(pilot)

        times = app.main.lesson.run.ticked
        assert list(times) == sorted(times), "steps tick in order"
        assert len(exports) == 1 and exports[0] is not None, "exported once"
        markdown, twin = exports[0]
        assert markdown.parent == tmp_path and markdown.exists() and twin.exists()
        text = pane_text(app)
        assert "Lesson manual-binding: done" in text and "✓ Every step ticked." in text
        assert f"Transcript: {markdown}\nJSON twin: {twin}" in text

    md = markdown.read_text()
    assert ALREADY_ASSIGNED in md
    assert "## Lesson `manual-binding`: Scheduling, minus the scheduler: one POST to a subresource (done)" in md
    lesson = json.loads(twin.read_text())["lesson"]
    assert lesson["name"] == "manual-binding" and lesson["done"] is True
    assert [s["title"] for s in lesson["steps"]] == [s.title for s in load_lesson("manual-binding").steps]
    assert all(s["ticked"] for s in lesson["steps"])
    assert ALREADY_ASSIGNED in lesson["steps"][4]["detail"]


async def test_l_hides_and_shows_the_lesson_pane(make_app):
    app = await make_app("manual-binding")
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.query_one(LessonPane)
        await until(pilot, lambda: pane.shown is not None, "the lesson shown")
        assert app.has_class("-lesson") and pane.display and app.focused is not pane
        await pilot.press("l")
        assert app.focused is pane, "l focuses the lesson pane"
        await pilot.press("l")
        assert not pane.display and not app.has_class("-lesson"), "l on the focused pane hides it"
        assert app.focused is app.query_one("#pending")
        await pilot.press("l")
        assert pane.display and app.focused is pane


async def test_without_a_lesson_there_is_no_lesson_pane_and_no_l(make_app):
    connection_app = await make_app("manual-binding")
    app = ObservatoryApp(connection_app.main.source, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert not app.query(LessonPane) and not app.has_class("-lesson")
        assert app.main.check_action("toggle_lesson", ()) is False


# -- scheduled-pod: kubectl run against the lab -------------------------------------------------------------------

@pytest.mark.parametrize("lab_scenario", ["pair"])
async def test_scheduled_pod_ticks_as_kubectl_run_creates_the_pod_and_the_scheduler_binds_it(make_app, lab, kubectl,
                                                                                             tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = await make_app("scheduled-pod")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: all(w.state == "live" for w in app.main.state.watch_states.values())
                    and len(app.main.state.watch_states) == 3, "every watch live")
        await flushes(pilot)
        assert ticked(app) == [] and app.main.lesson.run.detail(0) == "no pod default/seamb yet"

        process = await asyncio.create_subprocess_exec(
            kubectl, "--kubeconfig", str(lab.kubeconfig_path), "run", "seamb", "--image=nginx", "--restart=Never",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await process.communicate()
        assert process.returncode == 0, err.decode()
        assert out.decode().strip() == "pod/seamb created"

        await until(pilot, lambda: app.main.lesson.run.done, "every step of scheduled-pod ticked")
        times = app.main.lesson.run.ticked
        assert list(times) == sorted(times)
        node = app.main.state.pods["default/seamb"].node_name
        assert node in ("pair-worker", "pair-control-plane")
        progress = app.main.lesson.run.progress()
        assert progress.steps[1].detail.startswith("pod default/seamb: spec.nodeName <empty> at resourceVersion ")
        assert progress.steps[1].detail.endswith(f"then {node} at resourceVersion "
                                                 f"{app.main.state.timeline('default/seamb')[1].resource_version}")
        assert progress.steps[2].detail.startswith("pod default/seamb has a Normal Scheduled event from "
                                                   f"default-scheduler: Successfully assigned default/seamb to {node}")
        assert progress.steps[3].detail == f"pod default/seamb: phase Running, spec.nodeName {node}"
        await until(pilot, lambda: "Transcript:" in pane_text(app), "the transcript exported")
    assert len(list(tmp_path.glob("observatory-transcript-*.md"))) == 1
