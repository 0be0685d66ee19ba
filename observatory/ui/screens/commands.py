"""``c``: the kubectl and curl commands that send the same Binding by hand, in full, in a read-only text area you can
select and copy from. Credentials are placeholders (``$TOKEN``, ``$CLIENT_CERT`` …), never values."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, TextArea

from observatory.model.commands import EquivalentCommands
from observatory.ui.screens.once import OnceModal
from observatory.ui.text import literal


def commands_text(commands: EquivalentCommands) -> str:
    """Both snippets, each complete on its own (it writes binding.json, then sends it), with a comment above each."""
    return "\n".join(["# With kubectl (prints the Status, or 'Error from server (…)' and exits 1):",
                      commands.kubectl, "",
                      "# With curl (-i shows the status line and headers, as the HTTP exchange pane does):",
                      commands.curl, ""])


class CommandsScreen(OnceModal[None]):
    """The equivalent commands of one Binding exchange; Esc closes."""

    BINDINGS = [Binding("escape", "close", "Close", id="commands-close")]

    def __init__(self, title: str, commands: EquivalentCommands, subtitle: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.commands = commands
        self.subtitle = subtitle

    @property
    def text(self) -> str:
        """What the text area holds."""
        return commands_text(self.commands)

    def compose(self) -> ComposeResult:
        with Vertical(id="commands"):
            yield Label(literal(self.title_text), id="commands-title")
            if self.subtitle:
                yield Label(literal(self.subtitle), id="commands-subtitle")
            yield TextArea(self.text, read_only=True, soft_wrap=True, show_line_numbers=False, id="commands-text")
            yield Label("credentials are placeholders, never printed · select with the mouse or shift+arrows, "
                        "ctrl+c copies · Esc closes", id="commands-hint")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_close(self) -> None:
        self.dismiss(None)
