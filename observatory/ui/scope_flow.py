"""The namespace scope of the screen, a mixin of :class:`~observatory.ui.app.ObservatoryApp`: ``n`` chooses a
namespace (or types one), ``a`` toggles between every namespace and the last one, and :meth:`rescope` restarts the
pod and event streams there from a fresh state."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from observatory.model.state import ClusterState
from observatory.ui.screens.chooser import ChooserScreen

if TYPE_CHECKING:
    from observatory.ui.source import Source

DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
"""What a namespace name must be (RFC 1123 label)."""


class ScopeFlow:
    """``n`` / ``a`` and :meth:`rescope`; the app provides the attributes below, the streams and the dirty set."""

    state: ClusterState
    source: Source
    selected: str | None
    clock: Callable[[], datetime]
    _dirty: set[str]

    def action_choose_namespace(self) -> None:
        if self.scope_locked(chooser=True):  # a replay keeps the recorded scope (replay_flow.py)
            return
        known = sorted({pod.namespace for pod in self.state.pods.values()} | {self.source.namespace or "default"})
        options = [(ns, ns) for ns in known]

        def chosen(namespace: str | None) -> None:
            if namespace and not DNS1123_LABEL.fullmatch(namespace):
                self.notify(f"{namespace!r} is not a namespace name (lower-case letters, digits and '-').",
                            title="Namespace", severity="warning")
            elif namespace:
                self.rescope(namespace)

        self.push_screen(ChooserScreen("Show which namespace?", options, "type a namespace", free_text=True),
                         chosen)

    def action_all_namespaces(self) -> None:
        self.rescope(None if self.source.namespace else self._home_namespace())

    def _home_namespace(self) -> str:
        return getattr(self, "_home", None) or "default"

    def rescope(self, namespace: str | None) -> None:
        """Watch pods and events of another namespace (None: all); the relist replaces what was shown."""
        if self.scope_locked():
            return
        if self.source.namespace:
            self._home = self.source.namespace
        self.workers.cancel_group(self, "streams")
        self.source = self.source.with_namespace(namespace)
        # Every stream restarts with a fresh list: start from a fresh state too, so pods that merely left the
        # scope are not recorded as deleted in their timelines.
        self.state = ClusterState(self.clock, recent_seconds=self.state.recent_seconds)
        self.selected = None
        self.start_streams()
        self._dirty |= {"pods", "nodes", "events", "watch", "why"}
