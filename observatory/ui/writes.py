"""Who wrote what: :class:`WritesController` follows the source's audit feed into a
:class:`~observatory.model.writes.WriteStore`, and paints the writes pane and the nodeName timeline from it.

The feed (``source.capabilities().audit``) is followed in one worker of the screen from mount on, whatever the
scope (it is the API server's, not one namespace's); each update marks :attr:`Area.WRITES
<observatory.ui.areas.Area>` and asks for a repaint. A source without a feed leaves the pane as the HTTP exchange
of observatory's own Bindings, with a line saying how to see everyone's writes, and the timeline as it was.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, Protocol

from observatory.model.source import AuditFeed
from observatory.model.writes import FrameWrite, WriteStore, join_frames
from observatory.ui.areas import Area
from observatory.ui.host import Asker, Panes, ScreenFacts
from observatory.ui.screens.compare import CompareScreen
from observatory.ui.widgets.exchange_pane import ExchangePane

__all__ = ["REPAINTS", "WritesController", "WritesHost"]

REPAINTS = Area.PODS | Area.TIMELINE | Area.WRITES
"""What changes the writes pane or the timeline: the pods (a rescope, a new frame), the selection, the writes."""


class WritesHost(ScreenFacts, Asker, Protocol):
    """What the writes need from the screen."""

    @property
    def selected(self) -> str | None: ...

    @property
    def panes(self) -> Panes: ...

    def follow_audit(self, follow: Coroutine[Any, Any, None]) -> None:
        """Run ``follow`` (:meth:`WritesController.follow`) in a worker of the screen."""
        ...

    def writes_changed(self) -> None:
        """Mark :attr:`Area.WRITES` and have it painted."""
        ...


class WritesController:
    """The store of writes fed by the audit feed, and what the writes pane and the timeline show of it."""

    def __init__(self, host: WritesHost, store: WriteStore | None = None) -> None:
        self.host = host
        self.store = store if store is not None else WriteStore()
        """Every pod's writes (bounded), and the feed's malformed count."""
        self.feed: AuditFeed | None = None
        """The audit feed followed, None when the source has none."""

    def start(self) -> None:
        """Follow the source's audit feed, when it has one (once: a rescope keeps it)."""
        if self.feed is None:
            self.feed = self.host.source.capabilities().audit
            if self.feed is not None:
                self.host.follow_audit(self.follow(self.feed))
                self.host.writes_changed()

    async def follow(self, feed: AuditFeed) -> None:
        """Take each update of ``feed`` into the store; an update that changed no pod's writes (reads, other
        objects) repaints only for a new malformed count."""
        async for update in feed.audit_stream():
            malformed = self.store.malformed
            if self.store.apply(update) or self.store.malformed != malformed:
                self.host.writes_changed()

    def compare(self, request: ExchangePane.CompareRequested) -> None:
        """``v`` twice in the writes pane: the two writes side by side."""
        self.host.ask(CompareScreen(request.left, request.right), lambda _: None)

    def timeline(self, pod: str | None) -> list[FrameWrite] | None:
        """The selected pod's frames with their writes; None without a feed (the timeline names no writer)."""
        if self.feed is None:
            return None
        if pod is None:
            return []
        return join_frames(self.host.state.timeline(pod), self.store.for_pod(pod))

    def show(self, dirty: Area) -> None:
        """Repaint the timeline (its frames joined to their writes) and, with a feed, the writes pane."""
        if not dirty & REPAINTS:
            return
        host, panes = self.host, self.host.panes
        selected = host.selected
        frames = host.state.timeline(selected) if selected else []
        panes.timeline.show(selected, frames, self.timeline(selected))
        if self.feed is not None:
            panes.exchange.show_writes(self.store, selected, host.source.namespace, self.feed.origin)
