"""Lesson mode: :class:`LessonController` evaluates a :class:`~observatory.model.lessons.LessonRun` against the
watched state on every repaint, gives the lesson pane what to show, and exports the transcript once every step is
ticked.

Steps tick strictly in order (``LessonRun``), at the screen's clock (the recorded clock in a replay). ``l`` (the
screen's) shows and focuses the pane, and hides it when it has the focus.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Protocol

from observatory.model.lessons import Lesson, LessonRun
from observatory.model.records import BindingExchange
from observatory.model.source import Source
from observatory.model.state import ClusterState
from observatory.model.transcript import LessonProgress, default_transcript_path
from observatory.ui.areas import Area
from observatory.ui.host import Notifier
from observatory.ui.widgets.lesson_pane import LessonView

__all__ = ["LessonController", "LessonHost", "TranscriptExporter", "make_lesson_run"]


def make_lesson_run(lesson: Lesson | None, source: Source) -> LessonRun | None:
    """The run of ``lesson`` (None without one). Pod names in its checks are in the lesson's own namespace in the
    lab (where its scenario put them), and in the watched namespace against a real cluster (the context's, or
    ``-n``), as ``kubectl`` without ``-n`` would create them there; with every namespace watched, the lesson's."""
    if lesson is None:
        return None
    return LessonRun(lesson, namespace=None if source.lab else source.namespace)


class LessonHost(Notifier, Protocol):
    """What lesson mode needs from the screen."""

    @property
    def state(self) -> ClusterState: ...

    @property
    def exchanges(self) -> Sequence[BindingExchange]: ...

    @property
    def replaying(self) -> bool: ...

    def now(self) -> datetime: ...


class TranscriptExporter(Protocol):
    """The transcript export (``e``, :class:`~observatory.ui.teaching.TeachingController`)."""

    def export_transcript(self, path: Path | None = None,
                          lesson: LessonProgress | None = None) -> tuple[Path, Path] | None:
        """Both paths written, or None after notifying why they were not."""
        ...


class LessonController:
    """The lesson's checks and the transcript at the end."""

    def __init__(self, host: LessonHost, run: LessonRun, transcripts: TranscriptExporter) -> None:
        self.host, self.run, self.transcripts = host, run, transcripts
        self.transcript = ""
        """Where the transcript went once the lesson was done (or why it did not)."""
        self._inputs: tuple[int, int] | None = None
        self._exported = False

    def update(self, dirty: Area, now: datetime) -> LessonView:
        """Evaluate the current step (and, as each passes, the next) when the state or the exchanges changed, export
        the transcript the first time every step is ticked, and say what the pane shows."""
        run, host = self.run, self.host
        inputs = (id(host.state), len(host.exchanges))
        if not self._synced():
            pass  # "no FailedScheduling event" is not a fact before the events are listed
        elif dirty or inputs != self._inputs:
            self._inputs = inputs
            run.update(host.state, list(host.exchanges), now)
        if run.done and not self._exported:
            self._exported = True
            self._export()
        current = run.current
        return LessonView(run.lesson, run.ticked, current, run.detail(current) if current is not None else "",
                          self.transcript)

    def _synced(self) -> bool:
        """Whether pods, events and nodes have each been listed once (a forbidden kind never will: it counts), so a
        check of absence (no event, no node) reads a complete cache rather than one still filling."""
        listed, watches = self.host.state.resource_versions, self.host.state.watch_states
        return all(kind in listed or (kind in watches and watches[kind].state == "forbidden")
                   for kind in ("pods", "events", "nodes"))

    def _export(self) -> None:
        """The transcript export (``e``), with the lesson's progress; the pane says where it went."""
        host = self.host
        host.notify(f"Every step of {self.run.lesson.name} is ticked.", title="Lesson complete", timeout=10)
        path = None
        if host.replaying:  # on the recorded clock: the live run's transcript has the same name
            live = default_transcript_path(host.now())
            path = live.with_name(f"{live.stem}-replay{live.suffix}")
        written = self.transcripts.export_transcript(path, lesson=self.run.progress())
        if written is None:
            self.transcript = "The transcript could not be written (the notification says why); e tries again."
        else:
            markdown, twin = written
            self.transcript = f"Transcript: {markdown}\nJSON twin: {twin}"
