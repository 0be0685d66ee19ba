"""The key-cast overlay: the last few keys pressed, in the bottom-right corner, for viewers of a recording or a
projected lesson (``b ↓ ⏎ y``). It records nothing; the app tells it each key as it arrives."""

from __future__ import annotations

from collections import deque

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Container
from textual.keys import format_key
from textual.widgets import Static

SHOWN_KEYS = 6
"""How many of the last keys stay in view."""

_NAMES = {"tab": "⇥", "shift+tab": "⇤", "space": "␣", "escape": "Esc", "enter": "⏎", "ctrl+p": "^p",
          "ctrl+c": "^c", "ctrl+q": "^q", "question_mark": "?", "slash": "/"}
"""How a few keys are shown; the rest as Textual's footer shows them (``↓``, ``pgdn``), or their character."""


def key_label(key: str, character: str | None = None) -> str:
    """What the overlay shows for one key: ``b``, ``⏎``, ``↓``, ``⇥``, ``^p``, ``ctrl+x``."""
    if key in _NAMES:
        return _NAMES[key]
    if character is not None and len(character) == 1 and character.isprintable() and character != " ":
        return character
    if key.startswith("ctrl+") and len(key) == 6:
        return f"^{key[-1]}"
    return format_key(key)


class KeyCast(Static):
    """A small box with the last :data:`SHOWN_KEYS` keys, oldest first."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.keys: deque[str] = deque(maxlen=SHOWN_KEYS)

    def on_mount(self) -> None:
        self._show()

    def press(self, key: str, character: str | None = None) -> None:
        """Add one key (Textual's key name and the character it typed, if any)."""
        self.keys.append(key_label(key, character))
        self._show()

    @property
    def text(self) -> str:
        """The keys as shown, separated by spaces."""
        return " ".join(self.keys)

    def _show(self) -> None:
        self.update(Text(self.text or "keys appear here", style="bold" if self.keys else "italic"))


class KeyCastBar(Container):
    """The invisible strip along the bottom that holds the :class:`KeyCast` box at its right end, on a layer of its
    own so the panes keep their size (styles/app.tcss)."""

    def compose(self) -> ComposeResult:
        yield KeyCast(id="keycast")
