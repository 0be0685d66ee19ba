"""Helpers shared by the UI tests: waiting on the app (on a condition, never a fixed sleep), selecting the seed
exercise's pod, and picking a command in the palette. The fixtures (``make_app`` against a lab) are in conftest.py,
the recorded sources in fakes.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.command import CommandList, CommandPalette

from tests.waiting import eventually

MANUAL = "sched-lab/manual"
"""The seed exercise's pod (the manual-binding scenario)."""


async def until(pilot: Any, check: Callable[[], Any], what: str = "the condition", timeout: float = 30.0) -> Any:
    """Wait until ``check()`` is truthy (returned), letting the app run 50 ms between two calls."""
    return await eventually(check, what, timeout, pause=lambda: pilot.pause(0.05))


async def until_painted(pilot: Any, check: Callable[[], Any], what: str = "the app state",
                        timeout: float = 10.0) -> None:
    """:func:`until`, then let the repaints that follow land (three refresh intervals of 50 ms and the scheduled
    animations): for snapshots, and for tests that read what the screen shows."""
    await until(pilot, check, what, timeout)
    await pilot.pause(0.15)
    await pilot.wait_for_scheduled_animations()


async def select_manual(pilot: Any) -> None:
    """Select the seed's pod in the pending pane, once listed, and wait for its timeline (then for the repaint)."""
    app = pilot.app
    await until_painted(pilot, lambda: MANUAL in app.query_one("#pending").rows)
    app.query_one("#pending").select(MANUAL)
    await until_painted(pilot, lambda: app.main.selected == MANUAL and app.main.state.timeline(MANUAL))


async def pick_in_palette(pilot: Any, app: Any, typed: str, title: str) -> None:
    """ctrl+p (or, in the theme picker, nothing), type, wait until ``title`` is the highlighted entry, Enter."""
    if not isinstance(app.screen, CommandPalette):
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the command palette")
    await pilot.press(*typed)

    def highlighted() -> str:
        found = app.screen.query(CommandList)
        if not found or found.first().highlighted is None:
            return ""
        entries = found.first()
        return str(entries.get_option_at_index(entries.highlighted).prompt)

    await until(pilot, lambda: title in highlighted(), f"{title!r} highlighted in the palette")
    await pilot.press("enter")
