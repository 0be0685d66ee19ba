"""ObservatoryApp: the app around the main screen (:class:`~observatory.ui.main_screen.MainScreen`, which composes
the panes, owns the repaint and holds the features).

The app keeps what is the whole terminal's: the themes, the stylesheet, the narrow layout class, the keymap, the
line filter that keeps cluster text from driving the terminal, the keys as they arrive (recorded, cast, or pressed
again from a replay's key script: :class:`~observatory.ui.replay_keys.ReplayKeys`), and the one handler that turns
an unexpected worker failure into a visible message (the main screen's workers report to the same function).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from rich.terminal_theme import TerminalTheme
from textual import events
from textual.app import App, SystemCommand
from textual.filter import LineFilter
from textual.keys import key_to_character
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.worker import Worker

from observatory.model.lessons import Lesson
from observatory.model.source import Source
from observatory.scheduler.host import SchedulerHost
from observatory.ui.binding import BindingResponded
from observatory.ui.host import report_worker_failure
from observatory.ui.main_screen import MainScreen
from observatory.ui.printable import PrintableFilter
from observatory.ui.replay_keys import ReplayKeys
from observatory.ui.themes import ANSI_PALETTES, DEFAULT_THEME, OBSERVATORY_THEMES, theme_problem
from observatory.ui.widgets.keycast import KeyCast

__all__ = ["NARROW_WIDTH", "BindingResponded", "ObservatoryApp"]

NARROW_WIDTH = 100
"""Below this many columns the panes stack in one column (styles/app.tcss ``.-narrow``)."""

MOUNT_TIMEOUT = 10.0
"""Seconds the app waits at most, while it mounts, for the main screen's panes."""

STYLES = Path(__file__).resolve().parent.parent / "styles"
"""``styles/`` ships inside the package (see pyproject); in a source tree it is the top-level folder."""
if not STYLES.is_dir():
    STYLES = Path(__file__).resolve().parents[2] / "styles"


class ObservatoryApp(App[None]):
    """The observatory TUI over any :class:`Source`. ``scheduler`` runs a scheduler from the screen (``r``); without
    one (a recording, a replay) ``r`` says it cannot. ``key_script`` is a replay's keys, pressed again."""

    CSS_PATH = [STYLES / "app.tcss"]
    TITLE = "observatory"

    def __init__(self, source: Source, *, clock: Callable[[], datetime] | None = None,
                 refresh_interval: float = 0.1, recent_seconds: float = 10.0, lease_interval: float = 10.0,
                 keymap: dict[str, str] | None = None, theme: str = DEFAULT_THEME, keycast: bool = False,
                 screenshot_dir: Path | str = Path("."), lesson: Lesson | None = None,
                 key_script: AsyncIterator[str] | None = None, scheduler: SchedulerHost | None = None) -> None:
        super().__init__()
        self._printable = PrintableFilter()  # no cluster text drives the terminal (ui/printable.py)
        self._wanted_keymap = keymap or {}
        self._start_theme = theme
        for registered in OBSERVATORY_THEMES:
            self.register_theme(registered)
        self.replay = ReplayKeys(self, key_script, source.capabilities().replay)
        self.main = MainScreen(source, clock=clock or (lambda: datetime.now(UTC)), replay=self.replay,
                               refresh_interval=refresh_interval, recent_seconds=recent_seconds,
                               lease_interval=lease_interval, screenshot_dir=screenshot_dir, lesson=lesson,
                               scheduler=scheduler, keycast=keycast)
        """The main screen (its panes, state and features), whatever modal is on top of it."""

    def get_default_screen(self) -> Screen[None]:
        return self.main

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then the one that turns control characters into spaces."""
        return [*super().get_line_filters(), self._printable]

    async def on_mount(self) -> None:
        self.set_class(self.size.width < NARROW_WIDTH, "-narrow")
        if self._wanted_keymap:
            self.set_keymap(self._wanted_keymap)
        problem = theme_problem(self._start_theme)
        if problem:
            self.notify(problem.removeprefix("observatory: "), title="Theme", severity="error", timeout=15)
        else:
            self.theme = self._start_theme
        with contextlib.suppress(TimeoutError):  # the main screen's panes exist before the app is ready
            await asyncio.wait_for(self.main.mounted.wait(), MOUNT_TIMEOUT)
        if self.replay.script is not None:
            self.run_worker(self.replay.press(self.replay.script), group="key-script", exit_on_error=False)

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW_WIDTH, "-narrow")

    @property
    def ansi_theme(self) -> TerminalTheme:
        """Observatory's themes map the panes' named colours to their own $success, $error … (see themes.py);
        Textual's themes keep Textual's mapping."""
        return ANSI_PALETTES.get(self.theme) or super().ansi_theme

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's commands without its Screenshot: the main screen's palette provider has observatory's (the
        same folder as ``s``)."""
        for command in super().get_system_commands(screen):
            if command.title != "Screenshot":
                yield command

    # -- keys ------------------------------------------------------------------------------------------------------

    async def on_event(self, event: events.Event) -> None:
        """Every key from the terminal (not yet handled by anything) goes to the key-cast overlay when it is on and
        is recorded before anything handles it; while a key of the replay's key script is handled, the replay says
        so (:attr:`ReplayKeys.scripted`)."""
        if not isinstance(event, events.Key):
            await super().on_event(event)
            return
        if not event.is_forwarded and self.main.keycast:
            for cast in self.query(KeyCast):
                cast.press(event.key, event.character)
        if event is self.replay.script_event:
            self.replay.scripted = True
            try:
                await super().on_event(event)
            finally:
                self.replay.scripted = False
            return
        if not event.is_forwarded:
            keys = self.main.source.capabilities().keys
            if keys is not None:
                keys.record_key(event.key)
        await super().on_event(event)

    def post_key(self, key: str) -> events.Key:
        """Post the Key event a terminal's key press becomes (the driver posts it to the app the same way)."""
        event = events.Key(key, key_to_character(key))
        event.set_sender(self)
        self.post_message(event)
        return event

    def repaint_now(self) -> None:
        self.main.flush()

    async def action_quit(self) -> None:
        """``q`` quits, except the recorded ``q`` that ended a replayed session (:meth:`ReplayKeys.quit_refused`)."""
        if not self.replay.quit_refused():
            await super().action_quit()

    # -- errors ----------------------------------------------------------------------------------------------------

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Textual's notify with markup off by default: a notification quotes server messages, paths and names a
        user typed, and ``[/]`` in any of them would otherwise be a MarkupError."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker_failure(self, event.worker)
