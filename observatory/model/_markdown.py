"""Markdown pieces for the transcripts: fenced blocks, inline code and tables that hold any text unchanged."""

from __future__ import annotations

__all__ = ["cell", "code", "fenced", "table"]


def _longest_backquotes(text: str) -> int:
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return longest


def fenced(text: str, info: str = "") -> str:
    """``text`` in a fenced code block whose fence is longer than any run of backquotes inside it."""
    fence = "`" * max(3, _longest_backquotes(text) + 1)
    return f"{fence}{info}\n{text.rstrip(chr(10))}\n{fence}"


def cell(text: str) -> str:
    """A table cell: pipes escaped, line breaks as spaces, empty as a dash."""
    text = " ".join(text.replace("|", "\\|").splitlines())
    return text or "-"


def code(text: str) -> str:
    """Inline code, with a fence longer than any backquote run inside (and padding when it starts or ends with
    one)."""
    ticks = "`" * (_longest_backquotes(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines
