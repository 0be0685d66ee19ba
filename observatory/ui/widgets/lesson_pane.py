"""The lesson being walked: every step with a ✓ and the time it was ticked, then the current step's instruction (its
commands verbatim, selectable with the mouse and copied with ctrl+c), what to observe, and what its check finds now,
so a learner sees what is still missing. When every step is ticked, where the transcript went.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from observatory.model.lessons import Lesson
from observatory.ui.text import clock_time

_COMMAND = re.compile(r"(kubectl|cat|sed|grep|curl|export|rm|echo)\b|[A-Z_][A-Z0-9_]*=|#")
"""The first word of a paragraph of shell commands (or a shell comment, or ``NODE=…``); other paragraphs are
prose."""


def paragraphs(instruction: str) -> list[tuple[str, bool]]:
    """``instruction`` split at blank lines into ``(text, is_commands)``: commands verbatim (line breaks and
    indentation kept), prose reflowed into one line that the pane wraps to its width."""
    out: list[tuple[str, bool]] = []
    for block in re.split(r"\n\s*\n", instruction.strip("\n")):
        block = block.rstrip()
        if not block:
            continue
        is_commands = bool(_COMMAND.match(block.lstrip()))
        out.append((block if is_commands else " ".join(line.strip() for line in block.splitlines()), is_commands))
    return out


def commands(instruction: str) -> str:
    """Only the command paragraphs of ``instruction``, separated by a blank line ("" when it has none)."""
    return "\n\n".join(text for text, is_commands in paragraphs(instruction) if is_commands)


@dataclass(frozen=True, slots=True)
class LessonView:
    """What the pane shows: the ``lesson``, when each step was ``ticked`` (None while not), the ``current`` step's
    index (None when all are ticked), the current check's ``detail``, and the ``transcript`` note (where the
    transcript went, or why it did not) once the lesson is done."""

    lesson: Lesson
    ticked: tuple[datetime | None, ...]
    current: int | None
    detail: str
    transcript: str = ""


def render_steps(view: LessonView) -> Text:
    """One line per step: ``✓`` and the tick time, ``▶`` for the current one, the rest dim."""
    out = Text()
    for index, (step, at) in enumerate(zip(view.lesson.steps, view.ticked, strict=True)):
        if index:
            out.append("\n")
        if at is not None:
            out.append("✓ ", style="bold green")
            out.append(f"{index + 1}. {step.title}")
            out.append(f"  {clock_time(at)}", style="dim")
        elif index == view.current:
            out.append("▶ ", style="bold yellow")
            out.append(f"{index + 1}. {step.title}", style="bold")
        else:
            out.append(f"  {index + 1}. {step.title}", style="dim")
    return out


def render_current(view: LessonView) -> Text:
    """The current step's title and its check: what was found, while it does not pass."""
    if view.current is None:
        out = Text("✓ Every step ticked.", style="bold green")
        out.append(f"\nStep {len(view.lesson.steps)}: {view.lesson.steps[-1].title}", style="bold")
        return out
    step = view.lesson.steps[view.current]
    out = Text()
    out.append(f"Step {view.current + 1} of {len(view.lesson.steps)}: {step.title}", style="bold")
    out.append("\nNot yet: ", style="bold yellow")
    out.append(view.detail or "not checked yet")
    return out


def shown_step(view: LessonView) -> int:
    """The step whose instruction is shown: the current one, or the last once all are ticked (it may ask for
    something to do after its check passed, such as writing down the 409's message)."""
    return view.current if view.current is not None else len(view.lesson.steps) - 1


def render_instruction(view: LessonView) -> Text:
    """The instruction, prose reflowed and commands verbatim in their own colour."""
    out = Text()
    for index, (text, is_commands) in enumerate(paragraphs(view.lesson.steps[shown_step(view)].instruction)):
        if index:
            out.append("\n\n")
        out.append(text, style="bold cyan" if is_commands else "")
    return out


def render_observe(view: LessonView) -> Text:
    observe = view.lesson.steps[shown_step(view)].observe.strip()
    if not observe:
        return Text()
    out = Text("Observe: ", style="bold")
    out.append(" ".join(observe.split()))
    return out


class LessonPane(VerticalScroll):
    """The steps, the current step and its check, the transcript; :meth:`show` repaints only what changed.
    Focusable (``l`` or Tab), so the arrows scroll a long instruction."""

    BORDER_TITLE = "Lesson"
    DEFAULT_CSS = """
    LessonPane > Static { height: auto; }
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.shown: LessonView | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="lesson-title")
        yield Static(id="lesson-steps")
        yield Static(id="lesson-current")
        yield Static(id="lesson-instruction")
        yield Static(id="lesson-observe")
        yield Static(id="lesson-transcript")

    def show(self, view: LessonView) -> None:
        """Show ``view``; a no-op when it is what is shown."""
        if view == self.shown:
            return
        before, self.shown = self.shown, view
        lesson = view.lesson
        done = sum(at is not None for at in view.ticked)
        progress = "done" if view.current is None else f"step {view.current + 1} of {len(lesson.steps)}"
        self.border_title = f"Lesson {lesson.name}: {progress}"
        self.border_subtitle = f"{done}/{len(lesson.steps)} ✓"
        self.query_one("#lesson-title", Static).update(Text(lesson.title, style="bold"))
        self.query_one("#lesson-steps", Static).update(render_steps(view))
        self.query_one("#lesson-current", Static).update(render_current(view))
        if before is None or before.current != view.current:
            self.query_one("#lesson-instruction", Static).update(render_instruction(view))
            self.query_one("#lesson-observe", Static).update(render_observe(view))
            if before is not None:
                self.scroll_home(animate=False)  # a step ticked: show it, and the next step from its start
        note = self.query_one("#lesson-transcript", Static)
        note.display = bool(view.transcript)
        note.update(Text(view.transcript))

    def toggle(self, back_to: Widget) -> bool:
        """``l``: show and focus the pane; when it has the focus, hide it and focus ``back_to``. True: shown."""
        showing = not (self.display and self.has_focus)
        self.display = showing
        (self if showing else back_to).focus()
        return showing

    def text(self) -> str:
        """Everything the pane shows, as plain text (for tests and the curious)."""
        parts = [self.border_title or ""]
        for static in self.query(Static):
            content = static.content
            plain = content.plain if isinstance(content, Text) else str(content)
            if static.display and plain:
                parts.append(plain)
        return "\n".join(parts)
