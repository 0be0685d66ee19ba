"""``m``: the scheduler's message for the selected pod, verbatim, in a read-only text area you can select and copy."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical

from observatory.ui.screens.once import OnceModal
from textual.widgets import Label, TextArea

NO_MESSAGE = "No scheduler message for this pod."


class RawMessageScreen(OnceModal[None]):
    """The full text of a FailedScheduling message (or PodScheduled condition message); Esc closes."""

    BINDINGS = [Binding("escape", "close", "Close", id="raw-message-close")]

    def __init__(self, title: str, message: str, source: str = "") -> None:
        """``source`` says where the message came from (shown under the title)."""
        super().__init__()
        self.title_text = title
        self.message = message
        self.source = source

    def compose(self) -> ComposeResult:
        with Vertical(id="raw-message"):
            yield Label(self.title_text, id="raw-message-title")
            if self.source:
                yield Label(self.source, id="raw-message-source")
            yield TextArea(self.message or NO_MESSAGE, read_only=True, soft_wrap=True, show_line_numbers=False,
                           id="raw-message-text")
            yield Label("select with the mouse or shift+arrows, ctrl+c copies · Esc closes", id="raw-message-hint")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_close(self) -> None:
        self.dismiss(None)
