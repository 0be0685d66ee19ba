"""Teaching: the equivalent commands of each Binding (``c``), the lab transcript (``e``), screenshots (``s``), the
display themes and the key-cast overlay. A mixin of :class:`~observatory.ui.app.ObservatoryApp`, kept apart so the
app module stays small.

Every Binding becomes a :class:`~observatory.model.transcript.BindRecord`: the pod as it was when the Binding was
sent (taken by the binding flow, :class:`~observatory.ui.binding_flow.BindingResponded` carries it), the exchange,
the equivalent commands, and the pod after: at once for an answer that changed nothing (4xx, 5xx, no answer), else
when the watch shows its ``spec.nodeName`` changed, or at the export at the latest. Nothing written to a file or
shown holds a credential: exchanges never carry one, commands hold placeholders, and the transcript is passed
through :func:`~observatory.model.transcript.redact` with the source's secrets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rich.terminal_theme import TerminalTheme
from textual import events
from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from observatory.model.records import BindingExchange
from observatory.model.state import ClusterState
from observatory.model.transcript import (
    BindRecord,
    LessonProgress,
    PodSnapshot,
    Transcript,
    default_transcript_path,
    json_twin,
    render,
)
from observatory.ui.binding_flow import BindingResponded
from observatory.ui.screens.commands import CommandsScreen
from observatory.ui.screens.export import ExportScreen
from observatory.ui.themes import ANSI_PALETTES, DEFAULT_THEME, OBSERVATORY_THEMES, theme_problem
from observatory.ui.widgets.keycast import KeyCast, KeyCastBar

if TYPE_CHECKING:
    from observatory.ui.source import Source

__all__ = ["TEACHING_BINDINGS", "TeachingFlow"]

TEACHING_BINDINGS = [
    Binding("c", "show_commands", "Commands", id="commands"),
    Binding("e", "transcript", "Transcript", id="transcript"),
    Binding("s", "screenshot_svg", "Screenshot", show=False, id="screenshot"),  # in ? and the palette
]
"""The teaching keys; ObservatoryApp lists them in its BINDINGS (a mixin's own BINDINGS would be ignored)."""


def _succeeded(exchange: BindingExchange) -> bool:
    return 200 <= exchange.status < 300


class TeachingFlow:
    """Equivalent commands, the transcript, screenshots, themes and the key-cast overlay."""

    state: ClusterState
    source: Source
    clock: Callable[[], datetime]
    refresh_interval: float

    bind_records: list[BindRecord]
    """One record per Binding sent this session, in order."""
    screenshot_dir: Path
    keycast: bool
    transcript_started: datetime

    def setup_teaching(self, *, theme: str = DEFAULT_THEME, keycast: bool = False,
                       screenshot_dir: Path | str = Path(".")) -> None:
        """Called from the app's ``__init__``: register the themes; remember the settings for ``on_mount``."""
        self.bind_records = []
        self._awaiting_after: set[int] = set()
        self.screenshot_dir = Path(screenshot_dir).expanduser()
        self.keycast = keycast
        self.transcript_started = self.clock()
        for registered in OBSERVATORY_THEMES:
            self.register_theme(registered)
        self._start_theme = theme

    def on_mount(self) -> None:
        problem = theme_problem(self._start_theme)
        if problem:
            self.notify(problem.removeprefix("observatory: "), title="Theme", severity="error", timeout=15)
        else:
            self.theme = self._start_theme
        bar = KeyCastBar(id="keycast-bar")
        bar.display = self.keycast
        self.mount(bar)
        self.set_interval(self.refresh_interval, self.settle_binds)

    # -- themes and the key-cast overlay ---------------------------------------------------------------------------

    @property
    def ansi_theme(self) -> TerminalTheme:
        """Observatory's themes map the panes' named colours to their own $success, $error … (see themes.py);
        Textual's themes keep Textual's mapping."""
        return ANSI_PALETTES.get(self.theme) or super().ansi_theme

    async def on_event(self, event: events.Event) -> None:
        """Every key from the terminal (not yet handled by anything) goes to the key-cast overlay when it is on."""
        if isinstance(event, events.Key) and not event.is_forwarded and self.keycast:
            for cast in self.query(KeyCast):
                cast.press(event.key, event.character)
        await super().on_event(event)

    def action_toggle_keycast(self) -> None:
        self.keycast = not self.keycast
        for bar in self.query(KeyCastBar):
            bar.display = self.keycast

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's commands, with its Screenshot replaced by observatory's (same folder as ``s``), and the
        teaching commands."""
        for command in super().get_system_commands(screen):
            if command.title != "Screenshot":
                yield command
        yield SystemCommand("Toggle key-cast overlay", "Show or hide the last keys pressed, for viewers of a "
                            "recording or a projector", self.action_toggle_keycast)
        yield SystemCommand("Screenshot", f"Save an SVG of the screen in {self.screenshot_dir} (s)",
                            lambda: self.set_timer(0.1, self.action_screenshot_svg))
        yield SystemCommand("Equivalent commands", "kubectl and curl for the last Binding (c)",
                            self.action_show_commands)
        yield SystemCommand("Export transcript", "The lab transcript as Markdown with a JSON twin (e)",
                            self.action_transcript)

    # -- bind records ----------------------------------------------------------------------------------------------

    def snapshot(self, pod_key: str) -> PodSnapshot:
        """The pod in the watched state now."""
        return PodSnapshot.take(self.state, pod_key, self.clock(), scope=self.source.namespace)

    def on_binding_responded(self, message: BindingResponded) -> None:
        exchange = message.exchange
        before = message.before or self.snapshot(exchange.pod)
        commands = message.commands or self.source.commands_context().commands(exchange)
        record = BindRecord(exchange, before, commands=commands)
        if not _succeeded(exchange):  # the API server changed nothing: the pod after is the pod now
            record = record.with_after(self.snapshot(exchange.pod))
        else:
            self._awaiting_after.add(len(self.bind_records))
        self.bind_records.append(record)
        self.settle_binds()

    def settle_binds(self) -> None:
        """Take the ``after`` of each accepted Binding once the watch shows its pod's ``spec.nodeName`` changed
        (or the pod gone)."""
        for index in sorted(self._awaiting_after):
            record = self.bind_records[index]
            pod = self.state.pods.get(record.exchange.pod)
            if pod is None or pod.node_name != record.before.node_name:
                self.bind_records[index] = record.with_after(self.snapshot(record.exchange.pod))
                self._awaiting_after.discard(index)

    # -- c: the equivalent commands --------------------------------------------------------------------------------

    def action_show_commands(self) -> None:
        if not self.bind_records:
            self.notify("No Binding sent yet: bind a pod with b, then c shows the kubectl and curl that send the "
                        "same Binding.", title="Equivalent commands")
            return
        record = self.bind_records[-1]
        exchange = record.exchange
        answer = exchange.status_line or f"no answer ({exchange.error})"
        self.push_screen(CommandsScreen(f"Send the same Binding by hand: {exchange.pod} → {exchange.node}",
                                        record.commands or self.source.commands_context().commands(exchange),
                                        f"observatory sent it and got: {answer}"))

    # -- e: the transcript -----------------------------------------------------------------------------------------

    def action_transcript(self) -> None:
        default = default_transcript_path(self.clock())
        self.push_screen(ExportScreen(str(default), lambda path: self.export_transcript(path)))

    def export_transcript(self, path: Path | None = None,
                          lesson: LessonProgress | None = None) -> tuple[Path, Path] | None:
        """Write the transcript of this session (and ``lesson``'s progress, when given) to ``path`` (default
        ``./observatory-transcript-YYYYmmdd-HHMMSS.md``; a folder gets that name inside it; no suffix gets ``.md``)
        and its JSON twin beside it. Returns both paths (absolute), or None after notifying why it could not."""
        now = self.clock()
        target = Path(path).expanduser() if path is not None else default_transcript_path(now)
        if target.is_dir():
            target = default_transcript_path(now, target)
        elif not target.suffix:
            target = target.with_suffix(".md")
        try:
            twin = json_twin(target)
        except ValueError as exc:
            self.notify(str(exc), title="Transcript not written", severity="error", timeout=10, markup=False)
            return None
        records = tuple(r if r.after is not None else r.with_after(self.snapshot(r.exchange.pod))
                        for r in self.bind_records)
        transcript = Transcript(context=self.source.context, server=self.source.server,
                                namespace=self.source.namespace or "", lab=self.source.lab,
                                started=self.transcript_started, exported=now, records=records, lesson=lesson)
        markdown, text = render(transcript, secrets=self.source.secrets)
        try:
            target.write_text(markdown, encoding="utf-8")
            twin.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.notify(f"Cannot write {exc.filename or target}: {exc.strerror or exc}", title="Transcript not written",
                        severity="error", timeout=10, markup=False)  # paths are not markup
            return None
        target, twin = target.absolute(), twin.absolute()
        self.notify(f"{target}\nand its JSON twin {twin.name}", title="Transcript written", timeout=10, markup=False)
        return target, twin

    # -- s: screenshots --------------------------------------------------------------------------------------------

    def action_screenshot_svg(self) -> Path | None:
        """Save an SVG of the screen as ``observatory-YYYYmmdd-HHMMSS.svg`` in the screenshot folder, made when
        missing (``-2``, ``-3`` … when that second already has one). Returns the path, or None after notifying why
        not."""
        folder = self.screenshot_dir
        stamp = f"observatory-{self.clock().astimezone():%Y%m%d-%H%M%S}"
        name, n = f"{stamp}.svg", 1
        while (folder / name).exists():
            n += 1
            name = f"{stamp}-{n}.svg"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            saved = Path(self.save_screenshot(filename=name, path=str(folder)))
        except OSError as exc:
            self.notify(f"Cannot write {folder / name}: {exc.strerror or exc}", title="Screenshot not saved",
                        severity="error", timeout=10, markup=False)
            return None
        self.notify(str(saved.absolute()), title="Screenshot saved", markup=False)
        return saved
