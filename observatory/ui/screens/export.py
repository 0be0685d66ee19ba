"""``e``: where to write the lab transcript. An input prefilled with the default path; Enter writes the Markdown
file and its JSON twin, Esc cancels. A path that cannot be written leaves the window open with the error shown."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label

from observatory.ui.screens.once import OnceModal


class ExportScreen(OnceModal[tuple[Path, Path] | None]):
    """Asks for the transcript's path and calls ``write(path)``, which returns the two paths written or None (it
    has said why); dismisses with the paths, or None on Esc."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="export-cancel")]

    def __init__(self, default: str, write: Callable[[Path], tuple[Path, Path] | None]) -> None:
        super().__init__()
        self.default = default
        self.write = write

    def compose(self) -> ComposeResult:
        with Vertical(id="export"):
            yield Label("Export the lab transcript (Markdown, with a JSON twin beside it)", id="export-title")
            yield Input(self.default, placeholder="path of the .md file", id="export-path")
            yield Label("Enter writes · Esc cancels · a folder gets the default name · no credential is written",
                        id="export-hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        typed = event.value.strip()
        if not typed:
            self.notify("Type a path for the transcript; Esc cancels.", title="Transcript", severity="warning")
            return
        written = self.write(Path(typed))
        if written is not None:
            self.dismiss(written)

    def action_cancel(self) -> None:
        self.dismiss(None)
