"""``?``: every key binding of the app and the focused pane, with its id for remapping."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from observatory.ui.screens.once import OnceModal


class HelpScreen(OnceModal[None]):
    """A table of keys, actions and binding ids; any of Esc, q or ? closes it."""

    BINDINGS = [Binding("escape,q,question_mark", "close", "Close", id="help-close")]

    def __init__(self, bindings: list[Binding]) -> None:
        super().__init__()
        self.bindings = bindings

    def compose(self) -> ComposeResult:
        table = Table(title="Keys (remap by id with OBSERVATORY_UI__KEYMAP)", expand=True)
        table.add_column("key")
        table.add_column("does")
        table.add_column("id", style="dim")
        for binding in self.bindings:
            table.add_row(binding.key_display or binding.key, binding.description, binding.id or "")
        with VerticalScroll(id="help"):
            yield Static(table)

    def action_close(self) -> None:
        self.dismiss(None)
