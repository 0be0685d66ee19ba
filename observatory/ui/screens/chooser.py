"""A modal list you narrow by typing: nodes for a Binding, namespaces for the scope."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from observatory.ui.screens.once import OnceModal
from observatory.ui.text import literal

Prompt = str | Text
"""What an option or a subtitle shows: plain or styled text."""


class ChooserScreen(OnceModal[str | None]):
    """Type to filter, arrows to move, Enter to choose, Esc to cancel. Dismisses with the chosen id or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="chooser-cancel"),
                Binding("down", "move(1)", "Next", show=False, id="chooser-next"),
                Binding("up", "move(-1)", "Previous", show=False, id="chooser-previous")]

    def __init__(self, title: str, options: list[tuple[str, Prompt]], placeholder: str = "type to filter", *,
                 free_text: bool = False, subtitle: Prompt = "", free_text_hint: str = "(not listed: use it anyway)"
                 ) -> None:
        """``options`` are (id, label) pairs, shown in the given order; typing filters them by id. With
        ``free_text``, typed text that is no option's id is offered as one more option, labelled with
        ``free_text_hint`` (a namespace nobody has listed yet, a node that does not exist)."""
        super().__init__()
        self.free_text = free_text
        self.free_text_hint = free_text_hint
        self.title_text = title
        self.subtitle = subtitle
        self.options = options
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="chooser"):
            yield Label(literal(self.title_text), id="chooser-title")
            if self.subtitle:
                yield Label(literal(self.subtitle), id="chooser-subtitle")
            yield Input(placeholder=self.placeholder, id="chooser-filter")
            yield OptionList(*[Option(literal(label), id=oid) for oid, label in self.options], id="chooser-options")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        options = self.query_one(OptionList)
        if options.option_count:
            options.highlighted = 0

    def on_input_changed(self, event: Input.Changed) -> None:
        typed = event.value.strip()
        text = typed.lower()
        options = self.query_one(OptionList)
        options.clear_options()
        matching = [(oid, label) for oid, label in self.options if text in oid.lower()]
        # An exact name first, so typing a whole name that is also part of another picks the one typed.
        matching.sort(key=lambda option: option[0] != typed)
        options.add_options([Option(literal(label), id=oid) for oid, label in matching])
        if self.free_text and typed and all(oid != typed for oid, _ in matching):
            hint = Text(typed, style="bold")
            hint.append(f"  {self.free_text_hint}", style="italic")
            options.add_option(Option(hint, id=typed))
        if options.option_count:
            options.highlighted = 0

    def on_input_submitted(self, event: Input.Submitted) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is not None and options.option_count:
            self.dismiss(options.get_option_at_index(options.highlighted).id)
        elif self.free_text and event.value.strip():
            self.dismiss(event.value.strip())
        else:
            self.notify("Nothing matches; Esc cancels.", severity="warning")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if options.option_count:
            current = options.highlighted or 0
            options.highlighted = (current + step) % options.option_count

    def action_cancel(self) -> None:
        self.dismiss(None)
