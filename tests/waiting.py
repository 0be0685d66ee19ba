"""Waiting on a condition, never on a fixed sleep: one helper for every async test."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any


async def eventually(check: Callable[[], Any], what: str = "the condition", timeout: float = 10.0, *,
                     pause: Callable[[], Awaitable[Any]] | None = None) -> Any:
    """Call ``check`` until it returns something truthy (returned), pausing between calls with ``pause`` (default
    a 20 ms sleep; a pilot passes its own). Raises AssertionError naming ``what`` after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = check()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await (pause() if pause is not None else asyncio.sleep(0.02))
