"""Lesson mode: a :class:`~observatory.model.lessons.LessonRun` evaluated against the watched state on every flush,
shown in the lesson pane, and the transcript exported once every step is ticked. A mixin of
:class:`~observatory.ui.app.ObservatoryApp`, kept apart so the app module stays small.

Steps tick strictly in order (``LessonRun``), at the app's clock (the recorded clock in a replay). ``l`` shows and
focuses the pane, and hides it when it has the focus.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from textual.widget import Widget

from observatory.model.lessons import Lesson, LessonRun
from observatory.model.records import BindingExchange
from observatory.model.state import ClusterState
from observatory.model.transcript import default_transcript_path
from observatory.ui.widgets.lesson_pane import LessonPane, LessonView

if TYPE_CHECKING:
    from observatory.ui.source import Source


def make_lesson_run(lesson: Lesson | None, source: Source) -> LessonRun | None:
    """The run of ``lesson`` (None without one). Pod names in its checks are in the lesson's own namespace in the
    lab (where its scenario put them), and in the watched namespace against a real cluster (the context's, or
    ``-n``), as ``kubectl`` without ``-n`` would create them there; with every namespace watched, the lesson's."""
    if lesson is None:
        return None
    return LessonRun(lesson, namespace=None if source.lab else source.namespace)


class LessonFlow:
    """The lesson pane, its checks and the transcript at the end."""

    state: ClusterState
    source: Source
    exchanges: list[BindingExchange]
    clock: Callable[[], datetime]
    lesson_run: LessonRun | None = None
    """The lesson being walked; None outside lesson mode."""
    lesson_transcript: str = ""
    """Where the transcript went once the lesson was done (or why it did not)."""
    _lesson_inputs: tuple[int, int] | None = None
    _lesson_exported = False

    def lesson_panes(self) -> Iterator[Widget]:
        """For ``compose``: the lesson pane, in lesson mode only."""
        if self.lesson_run is not None:
            yield LessonPane(id="lesson")

    def on_mount(self) -> None:
        self.set_class(self.lesson_run is not None, "-lesson")

    def show_lesson(self, dirty: set[str], now: datetime) -> None:
        """Evaluate the current step (and, as each passes, the next) when the state or the exchanges changed, show
        the result, and export the transcript the first time every step is ticked."""
        run = self.lesson_run
        if run is None:
            return
        inputs = (id(self.state), len(self.exchanges))
        if not self._lesson_synced():
            pass  # "no FailedScheduling event" is not a fact before the events are listed
        elif dirty or inputs != self._lesson_inputs:
            self._lesson_inputs = inputs
            run.update(self.state, self.exchanges, now)
        if run.done and not self._lesson_exported:
            self._lesson_exported = True
            self.export_lesson_transcript()
        current = run.current
        self.query_one(LessonPane).show(LessonView(run.lesson, run.ticked, current,
                                                   run.detail(current) if current is not None else "",
                                                   self.lesson_transcript))

    def _lesson_synced(self) -> bool:
        """Whether pods, events and nodes have each been listed once (a forbidden kind never will: it counts), so a
        check of absence (no event, no node) reads a complete cache rather than one still filling."""
        listed, watches = self.state.resource_versions, self.state.watch_states
        return all(kind in listed or (kind in watches and watches[kind].state == "forbidden")
                   for kind in ("pods", "events", "nodes"))

    def export_lesson_transcript(self) -> None:
        """The app's transcript export (``e``), with the lesson's progress; the pane says where it went."""
        run = self.lesson_run
        assert run is not None
        self.notify(f"Every step of {run.lesson.name} is ticked.", title="Lesson complete", timeout=10)
        export = getattr(self, "export_transcript", None)
        if export is None:
            self.lesson_transcript = "This build cannot export a transcript."
            return
        path = None
        if getattr(self, "replaying", False):  # on the recorded clock: the live run's transcript has the same name
            live = default_transcript_path(self.clock())
            path = live.with_name(f"{live.stem}-replay{live.suffix}")
        written = export(path, lesson=run.progress())
        if inspect.isawaitable(written):
            self.run_worker(self._exported(written), group="lesson-transcript", exit_on_error=False)
        else:
            self._note_transcript(written)

    async def _exported(self, pending: Any) -> None:
        self._note_transcript(await pending)

    def _note_transcript(self, written: tuple[Any, Any] | None) -> None:
        if written is None:
            self.lesson_transcript = "The transcript could not be written (the notification says why); e tries again."
        else:
            markdown, twin = written
            self.lesson_transcript = f"Transcript: {markdown}\nJSON twin: {twin}"

    def action_toggle_lesson(self) -> None:
        """``l``: show and focus the lesson pane; when it has the focus, hide it."""
        pane = self.query_one(LessonPane)
        if pane.display and self.focused is pane:
            pane.display = False
            self.set_class(False, "-lesson")
            self.query_one("#pending").focus()
        else:
            pane.display = True
            self.set_class(True, "-lesson")
            pane.focus()
