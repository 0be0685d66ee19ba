"""Nothing from the cluster drives the terminal: a line filter over everything the app draws.

Pod names, event messages, taints and scheduler messages are whatever the API server stored, and anyone who can
create an Event chooses its text. Rich strips only a few control codes (BEL, BS, VT, FF, CR); an ESC, a C1 CSI
(``\\x9b``), NUL or a bidi override would reach the terminal as is: clearing the screen, setting its title, or
reordering what the reader sees. A lone surrogate (``json.loads`` makes one of ``"\\ud800"``) cannot be encoded
for a UTF-8 terminal at all and stops the driver.

:class:`PrintableFilter` is a Textual line filter, so it applies to every widget, pane and modal alike. It keeps
each line's cell width, which the compositor relies on: the characters it removes occupy no cell, and a lone
surrogate (one cell) becomes U+FFFD. ``observatory why`` escapes the same characters visibly instead
(:func:`observatory.model.text.safe`), since it has no layout to keep.
"""

from __future__ import annotations

import re

from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

__all__ = ["PrintableFilter", "printable"]

_ZERO_WIDTH = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 controls (tab and newline excepted), DEL, C1 controls, bidi embeddings, overrides and isolates: no cell."""
_SURROGATE = re.compile("[\ud800-\udfff]")
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` without terminal control characters and bidi overrides, lone surrogates as U+FFFD; the cell width
    (``rich.cells.cell_len``) is unchanged."""
    if not _UNPRINTABLE.search(text):
        return text
    return _SURROGATE.sub("\ufffd", _ZERO_WIDTH.sub("", text))


class PrintableFilter(LineFilter):
    """Applies :func:`printable` to the text of every segment the app draws (control segments, the driver's own
    cursor moves, are left alone)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [segment if segment.control or not _UNPRINTABLE.search(segment.text)
                else Segment(printable(segment.text), segment.style, segment.control) for segment in segments]
