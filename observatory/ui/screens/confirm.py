"""Confirm a Binding the API server or the cluster may refuse: ``y`` sends it, ``n`` or Esc does not."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label

from observatory.ui.screens.once import OnceModal
from observatory.ui.text import literal


class ConfirmScreen(OnceModal[bool]):
    """Shows the warnings and waits for y / n."""

    BINDINGS = [Binding("y", "answer(True)", "Send anyway", id="confirm-yes"),
                Binding("n", "answer(False)", "Don't send", id="confirm-no"),
                Binding("escape", "answer(False)", "Don't send", show=False, id="confirm-escape")]

    def __init__(self, title: str, warnings: list[str]) -> None:
        super().__init__()
        self.title_text = title
        self.warnings = warnings

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Label(literal(self.title_text), id="confirm-title")
            for warning in self.warnings:
                yield Label(literal(f"⚠ {warning}"), classes="warning")
            yield Label("Send the Binding anyway?  [b]y[/b] yes   [b]n[/b] no", id="confirm-prompt")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
