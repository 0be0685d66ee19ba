"""A modal list you narrow by typing: nodes for a Binding, namespaces for the scope."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option


class ChooserScreen(ModalScreen[str | None]):
    """Type to filter, arrows to move, Enter to choose, Esc to cancel. Dismisses with the chosen id or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="chooser-cancel"),
                Binding("down", "move(1)", "Next", show=False, id="chooser-next"),
                Binding("up", "move(-1)", "Previous", show=False, id="chooser-previous")]

    def __init__(self, title: str, options: list[tuple[str, str]], placeholder: str = "type to filter", *,
                 free_text: bool = False) -> None:
        """``options`` are (id, label) pairs, shown in the given order. With ``free_text``, Enter on text that
        matches no option chooses the text itself (a namespace nobody has listed yet)."""
        super().__init__()
        self.free_text = free_text
        self.title_text = title
        self.options = options
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="chooser"):
            yield Label(self.title_text, id="chooser-title")
            yield Input(placeholder=self.placeholder, id="chooser-filter")
            yield OptionList(*[Option(label, id=oid) for oid, label in self.options], id="chooser-options")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        options = self.query_one(OptionList)
        if options.option_count:
            options.highlighted = 0

    def on_input_changed(self, event: Input.Changed) -> None:
        text = event.value.strip().lower()
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(label, id=oid) for oid, label in self.options
                             if text in oid.lower() or text in label.lower()])
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
