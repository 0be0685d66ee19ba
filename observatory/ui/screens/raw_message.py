"""``m``: the scheduler's message for the selected pod, verbatim, in a read-only text area you can select and copy."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, TextArea

from observatory.ui.screens.once import OnceModal
from observatory.ui.text import literal

NO_MESSAGE = "No scheduler message for this pod."
MAX_SHOWN = 65536
"""The characters of a message the window holds. kube-scheduler's messages are a few hundred bytes; a hostile 1 MiB
one took the text area seconds to wrap, on opening and at every resize."""


def shown(message: str) -> str:
    """``message`` as the window shows it: in full up to :data:`MAX_SHOWN` characters, else cut there, with a last
    line saying how much is left out and where to read it all."""
    if len(message) <= MAX_SHOWN:
        return message
    return (message[:MAX_SHOWN] + f"\n… {len(message) - MAX_SHOWN} more characters not shown "
            "(observatory why -o json prints the message in full)")


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
            yield Label(literal(self.title_text), id="raw-message-title")
            if self.source:
                yield Label(literal(self.source), id="raw-message-source")
            yield TextArea(shown(self.message) or NO_MESSAGE, read_only=True, soft_wrap=True, show_line_numbers=False,
                           id="raw-message-text")
            yield Label("select with the mouse or shift+arrows, ctrl+c copies · Esc closes", id="raw-message-hint")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_close(self) -> None:
        self.dismiss(None)
