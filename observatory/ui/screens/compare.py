"""Two writes side by side (``v`` twice in the writes pane): for two Bindings, the same POST and the same body
shape, and only who sent them differs: user, user agent, source IP. The API server, and the kubelet that watches
it, cannot tell the scheduler's Binding from one sent with kubectl or curl.

Each field :func:`~observatory.model.writes.differences` finds different is highlighted on both sides; the title
says which differ, or that nothing but the object does.
"""

from __future__ import annotations

import json
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Label, Static

from observatory.model.writes import Write, differences
from observatory.ui.screens.once import OnceModal
from observatory.ui.text import literal
from observatory.ui.widgets.write_lines import status_text

__all__ = ["FIELD_NAMES", "CompareScreen", "render_side"]

FIELD_NAMES = {"verb": "verb", "request_uri": "request", "user": "user", "groups": "groups",
               "user_agent": "user agent", "source_ips": "source IPs", "code": "answer", "body": "body shape"}
"""How the side-by-side view names each field :func:`~observatory.model.writes.differences` compares."""
HIGHLIGHT = "bold black on yellow"


def _value(write: Write, field: str) -> str:
    event = write.event
    if field == "verb":
        return f"{event.verb} ({write.method})"
    if field == "request_uri":
        return f"{write.method} {event.request_uri}"
    if field in ("groups", "source_ips"):
        return ", ".join(getattr(event, field)) or "-"
    if field == "code":
        return status_text(event.code, event.reason)
    if field == "body":
        return "as the other's" if event.request_object is not None else "not logged"
    return str(getattr(event, field)) or "-"


def render_side(write: Write, differing: frozenset[str]) -> Group:
    """One side: the writer, then each compared field (highlighted where the two differ), then the request
    body."""
    parts: list[RenderableType] = [Text(write.event.writer, style="bold")]
    for field, name in FIELD_NAMES.items():
        line = Text(f"{name}: ", style="dim")
        value = _value(write, field)
        if field == "body" and "body" in differing:
            value = "differs"
        line.append(value, style=HIGHLIGHT if field in differing else "")
        parts.append(line)
    if write.event.request_object is not None:
        parts.append(Syntax(json.dumps(write.event.request_object, indent=2, ensure_ascii=False), "json",
                            theme="ansi_dark", background_color="default", word_wrap=True))
    return Group(*parts)


def title(differing: frozenset[str]) -> str:
    """``Side by side: only user, user agent, source IPs differ``, or what else differs too."""
    names = [FIELD_NAMES[f] for f in FIELD_NAMES if f in differing]
    if not names:
        return "Side by side: the same write, but for the object it names"
    return f"Side by side: only {', '.join(names)} differ" if set(differing) <= {
        "user", "groups", "user_agent", "source_ips"} else f"Side by side: {', '.join(names)} differ"


class CompareScreen(OnceModal[None]):
    """Two writes, the first marked on the left; Esc closes."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close", id="compare-close")]

    def __init__(self, left: Write, right: Write) -> None:
        super().__init__()
        self.left, self.right = left, right
        self.differing = differences(left.event, right.event)

    def compose(self) -> ComposeResult:
        with Vertical(id="compare"):
            yield Label(literal(title(self.differing)), id="compare-title")
            with VerticalScroll(id="compare-sides"), Horizontal(id="compare-row"):
                yield Static(render_side(self.left, self.differing), id="compare-left", classes="compare-side")
                yield Static(render_side(self.right, self.differing), id="compare-right", classes="compare-side")
            yield Label("highlighted: what differs · Esc closes", id="compare-hint")

    def action_close(self) -> None:
        self.dismiss(None)
