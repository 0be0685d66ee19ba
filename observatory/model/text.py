"""Text leaving observatory for a terminal or a file: control characters shown, never sent.

Cluster text (Event messages, conditions, schedulerName, labels) is written by anyone who may create an object, and
real API servers do not validate Event messages. Written raw, ``\\x1b]52;c;…\\x07`` puts a command into the reader's
clipboard (OSC 52) and ``\\x1b]0;…\\x07`` retitles the terminal as soon as the file is ``cat``-ed. :func:`safe` is the
one cleaner for every text observatory writes outside the screen (the screen's own filter, ``ui/printable.py``,
drops the same characters so cell widths stay put). :func:`safe_json` does the same for a JSON document while
keeping its value: the characters become JSON's own ``\\uNNNN`` escapes.
"""

from __future__ import annotations

import re

__all__ = ["UNSAFE", "safe", "safe_json"]

UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""C0 controls except tab and newline (so ESC, BEL and CR), DEL, C1 controls, the bidi embeddings, overrides and
isolates, and lone surrogates (which no UTF-8 terminal or file can be sent)."""


def safe(text: str) -> str:
    """``text`` with each :data:`UNSAFE` character shown as ``\\xNN`` (below U+0100) or ``\\uNNNN``; tabs, newlines
    and every printable character are kept."""
    if not UNSAFE.search(text):
        return text
    return UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                      else f"\\u{ord(m.group()):04x}", text)


def safe_json(document: str) -> str:
    """A JSON document (as ``json.dumps`` writes it, with or without ``ensure_ascii``) with each :data:`UNSAFE`
    character written as its ``\\uNNNN`` escape. ``json.dumps`` escapes C0 controls itself, but with
    ``ensure_ascii=False`` it writes DEL, C1 controls (``\\x9b`` is CSI to a terminal), bidi controls and lone
    surrogates as they are. Outside strings a JSON document holds only printable ASCII and whitespace, so every
    such character is inside a string, where its escape stands for the same character: ``json.loads`` of the result
    equals ``json.loads`` of ``document``."""
    if not UNSAFE.search(document):
        return document
    return UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", document)
