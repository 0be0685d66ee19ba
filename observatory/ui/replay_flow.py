"""Key presses in a recording and in a replay. A mixin of :class:`~observatory.ui.app.ObservatoryApp`, kept apart so
the app module stays small.

- Recording: every key press from the terminal goes to the source's ``record_key`` when it has one
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
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from textual import events, work
from textual.keys import key_to_character

if TYPE_CHECKING:
    from observatory.ui.source import Source

SETTLE_ROUNDS = 4
"""Rounds of "every widget handled what was queued", with the screen stack unchanged, that make a key handled."""
SETTLE_TIMEOUT = 5.0
"""The longest one round waits (a widget removed with the round's callback queued never answers)."""


class ReplayFlow:
    """``record_key`` for every key; the key script of a replay; the recorded scope kept; "replay finished"."""

    source: Source
    key_script: AsyncIterator[str] | None = None
    """The keys to press again (a replay's); None when live."""
    _scripted_key = False
    _script_event: events.Key | None = None
    _replay_finished_shown = False

    async def on_event(self, event: events.Event) -> None:
        """Every key from the terminal is recorded before anything handles it. While the app handles a key of the
        key script (first as it arrives, then as it bubbles back up to the app's bindings),
        :attr:`_scripted_key` is True."""
        if not isinstance(event, events.Key):
            await super().on_event(event)  # type: ignore[misc]
            return
        if event is self._script_event:
            self._scripted_key = True
            try:
                await super().on_event(event)  # type: ignore[misc]
            finally:
                self._scripted_key = False
            return
        if not event.is_forwarded:
            record = getattr(self.source, "record_key", None)
            if record is not None:
                record(event.key)
        await super().on_event(event)  # type: ignore[misc]

    @property
    def replaying(self) -> bool:
        """True over a replay: a key script, or a source that can finish (a live cluster never does)."""
        return self.key_script is not None or hasattr(self.source, "finished")

    def on_mount(self) -> None:
        if self.key_script is not None:
            self.press_recorded_keys(self.key_script)

    @work(group="key-script", exit_on_error=False)
    async def press_recorded_keys(self, script: AsyncIterator[str]) -> None:
        """Press each key of ``script`` in turn, asking for the next only once this one has been handled."""
        async for key in script:
            self.flush()
            await self._settled()
            # The Key event a terminal's key press becomes (the driver posts it to the app the same way).
            event = events.Key(key, key_to_character(key))
            event.set_sender(self)
            self._script_event = event
            self.post_message(event)
            await self._settled()

    async def _settled(self) -> None:
        """Wait for the app to handle what is queued and what that causes: a key goes from the app to the focused
        widget and bubbles up, a binding's action may push or pop a screen, a repaint's row highlight reaches the
        app as a message of a message. Round after round until the screen stack has stayed the same for
        ``SETTLE_ROUNDS`` rounds."""
        calm = 0
        while calm < SETTLE_ROUNDS:
            stack = list(self.screen_stack)
            await self._round()
            calm = calm + 1 if list(self.screen_stack) == stack else 0

    async def _round(self) -> None:
        """Wait until the app and every widget of the current screen have handled the messages queued so far."""
        pumps = [self, *self.screen.walk_children(with_self=True)]
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

    async def action_quit(self) -> None:
        """A replay never quits by itself: the ``q`` that ended the recorded session leaves the replay on the screen
        it ended on (a person's ``q`` quits, as always)."""
        if self._scripted_key:
            self.notify("The recorded session quit here; the replay stays on this screen. q quits.", title="Replay")
            return
        await super().action_quit()  # type: ignore[misc]

    def scope_locked(self, *, chooser: bool = False) -> bool:
        """True, after saying why, when the scope must not change: in a replay. ``chooser``: the namespace chooser
        may still open for a recorded ``n`` (its choice reaches :meth:`scope_locked` again, and is refused)."""
        if not self.replaying or (chooser and self._scripted_key):
            return False
        scope = self.source.namespace or "all namespaces"
        self.notify(f"A replay keeps the recorded scope ({scope}): the recording holds only what was watched, so n "
                    "and a are off.", title="Replay", severity="warning")
        return True

    def show_replay_state(self) -> None:
        """Once the replay has delivered every recorded entry, say so (once)."""
        if not self._replay_finished_shown and getattr(self.source, "finished", False):
            self._replay_finished_shown = True
            self.notify("Replay finished: every recorded watch event, Binding answer and key press has been played. "
                        "q quits.", title="Replay", timeout=10)
