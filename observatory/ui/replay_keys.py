"""Key presses in a recording and in a replay: :class:`ReplayKeys`, held by the app (keys reach the app first).

- Recording: every key press from the terminal goes to the source's key-recording capability when it has one
  (:class:`~observatory.recorder.RecordingSource`), looked up on each press because a namespace change replaces the
  source.
- Replay: a key script (:meth:`ReplaySource.keys() <observatory.replay.ReplaySource.keys>`) is pressed again, one key
  at a time, exactly as the terminal would press it, so bindings and modal screens react as they did. Before each key
  the panes are brought up to date with the state (a person saw the screen before pressing), and the next key is
  asked for only once this one has been handled: the replay's timeline waits for that, so keys and watch deltas keep
  their recorded interleaving at any speed.
- A replay keeps the recorded scope (the recording holds only what was watched): ``n`` and ``a`` say so instead of
  changing it. A recorded ``n`` still opens the chooser, so the keys typed into it land where they landed; its
  choice is not applied.
- A replay never quits by itself: the recorded ``q`` that ended the session is not obeyed; a person's ``q`` is.
- When the replay has delivered everything, a notification says so; the screen stays as the recording left it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from textual import events
from textual.screen import Screen

from observatory.model.source import ReplayProgress
from observatory.ui.host import Notifier

__all__ = ["SETTLE_ROUNDS", "SETTLE_TIMEOUT", "ReplayHost", "ReplayKeys"]

SETTLE_ROUNDS = 4
"""Rounds of "every widget handled what was queued", with the screen stack unchanged, that make a key handled."""
SETTLE_TIMEOUT = 5.0
"""The longest one round waits (a widget removed with the round's callback queued never answers)."""


class _Pump(Protocol):
    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...


class ReplayHost(Notifier, _Pump, Protocol):
    """What pressing recorded keys needs from the app: its screens and message queue, and a repaint."""

    @property
    def screen_stack(self) -> list[Screen[Any]]: ...

    @property
    def screen(self) -> Screen[Any]: ...

    def post_key(self, key: str) -> events.Key:
        """Post the Key event a terminal's key press becomes (the driver posts it to the app the same way)."""
        ...

    def repaint_now(self) -> None:
        """Bring the panes up to date with the state (a person saw the screen before pressing)."""
        ...


class ReplayKeys:
    """The key script of a replay; whether the key being handled is one of it; the recorded scope kept; "replay
    finished"."""

    def __init__(self, host: ReplayHost, script: AsyncIterator[str] | None, progress: ReplayProgress | None) -> None:
        self.host, self.script, self.progress = host, script, progress
        self.scripted = False
        """True while the app handles a key of the key script (first as it arrives, then as it bubbles back up)."""
        self.script_event: events.Key | None = None
        self.finished_shown = False

    @property
    def replaying(self) -> bool:
        """True over a replay: a key script, or a source that can finish (a live cluster never does)."""
        return self.script is not None or self.progress is not None

    async def press(self, script: AsyncIterator[str]) -> None:
        """Press each key of ``script`` in turn, asking for the next only once this one has been handled."""
        async for key in script:
            self.host.repaint_now()
            await self._settled()
            self.script_event = self.host.post_key(key)
            await self._settled()

    async def _settled(self) -> None:
        """Wait for the app to handle what is queued and what that causes: a key goes from the app to the focused
        widget and bubbles up, a binding's action may push or pop a screen, a repaint's row highlight reaches the
        app as a message of a message. Round after round until the screen stack has stayed the same for
        ``SETTLE_ROUNDS`` rounds."""
        calm = 0
        while calm < SETTLE_ROUNDS:
            stack = list(self.host.screen_stack)
            await self._round()
            calm = calm + 1 if list(self.host.screen_stack) == stack else 0

    async def _round(self) -> None:
        """Wait until the app and every widget of the current screen have handled the messages queued so far."""
        pumps: list[_Pump] = [self.host, *self.host.screen.walk_children(with_self=True)]
        left = 0
        done = asyncio.Event()

        def one_done() -> None:
            nonlocal left
            left -= 1
            if left == 0:
                done.set()

        for pump in pumps:
            if pump.call_later(one_done):
                left += 1
        if left:
            try:
                await asyncio.wait_for(done.wait(), SETTLE_TIMEOUT)
            except TimeoutError:
                pass  # a widget went away with the callback queued: carry on

    def quit_refused(self) -> bool:
        """A replay never quits by itself: the ``q`` that ended the recorded session leaves the replay on the screen
        it ended on (a person's ``q`` quits, as always). True, after saying so, for the recorded ``q``."""
        if self.scripted:
            self.host.notify("The recorded session quit here; the replay stays on this screen. q quits.",
                             title="Replay")
        return self.scripted

    def scope_locked(self, namespace: str | None, *, chooser: bool = False) -> bool:
        """True, after saying why, when the scope must not change: in a replay. ``chooser``: the namespace chooser
        may still open for a recorded ``n`` (its choice reaches :meth:`scope_locked` again, and is refused)."""
        if not self.replaying or (chooser and self.scripted):
            return False
        scope = namespace or "all namespaces"
        self.host.notify(f"A replay keeps the recorded scope ({scope}): the recording holds only what was watched, so "
                         "n and a are off.", title="Replay", severity="warning")
        return True

    def show_state(self) -> None:
        """Once the replay has delivered every recorded entry, say so (once)."""
        if not self.finished_shown and self.progress is not None and self.progress.finished:
            self.finished_shown = True
            self.host.notify("Replay finished: every recorded watch event, Binding answer and key press has been "
                             "played. q quits.", title="Replay", timeout=10)
