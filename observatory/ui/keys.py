"""The main screen's keys: every binding has an ``id``, so ``OBSERVATORY_UI__KEYMAP`` can remap it, and a
description for the footer and the help screen (``?``)."""

from __future__ import annotations

from textual.binding import Binding

__all__ = ["EXTRA_KEYS", "MAIN_BINDINGS"]

MAIN_BINDINGS: list[Binding] = [
    Binding("b", "bind", "Bind", id="bind"),
    Binding("m", "raw_message", "Message", id="raw-message"),
    Binding("n", "choose_namespace", "Namespace", id="namespace"),
    Binding("a", "all_namespaces", "All ns", id="all-namespaces"),
    Binding("slash", "filter", "Filter", id="filter", key_display="/"),
    Binding("question_mark", "help", "Keys", id="help", key_display="?"),
    Binding("tab", "app.focus_next", "Next pane", show=False, id="next-pane"),
    Binding("shift+tab", "app.focus_previous", "Previous pane", show=False, id="previous-pane"),
    Binding("escape", "clear_filter", "Clear filter", show=False, id="clear-filter"),
    Binding("l", "toggle_lesson", "Lesson", id="lesson"),  # lesson mode only
    Binding("r", "toggle_scheduler", "Scheduler", show=False, id="scheduler"),
    Binding("w", "toggle_why_decisions", "While a scheduler runs: Why pane / its decisions", show=False,
            id="why-or-decisions"),
    Binding("q", "app.quit", "Quit", id="quit"),
    Binding("c", "show_commands", "Commands", id="commands"),
    Binding("e", "transcript", "Transcript", id="transcript"),
    Binding("s", "screenshot_svg", "Screenshot", show=False, id="screenshot"),  # in ? and the palette
]
"""In footer order; ``check_action`` on the main screen disables Bind (read-only, RBAC) and ``l`` (no lesson)."""

EXTRA_KEYS = [Binding("up,down,pageup,pagedown,home,end", "", "move in the focused pane"),
              Binding("left,right", "", "in a table cut with …: scroll its columns sideways"),
              Binding("enter", "", "in a chooser: pick the highlighted entry"),
              Binding("p", "", "in the writes pane (with an audit feed): every pod's writes / the selected pod's"),
              Binding("v", "", "in the writes pane: mark a write; on another, the two side by side"),
              Binding("y,n", "", "in a warning: send the Binding anyway / don't"),
              Binding("ctrl+p", "", "command palette: maximize the focused pane, change theme, "
                                    "toggle the key-cast overlay, quit")]
"""Keys of the panes and modals, for the help screen."""
