"""The namespace scope: ``n`` chooses a namespace (or types one), ``a`` toggles between every namespace and the last
one. The screen does the rescope itself (its streams restart there from a fresh state)."""

from __future__ import annotations

import re
from typing import Protocol

from observatory.model.source import Source
from observatory.ui.host import Asker, ScreenFacts
from observatory.ui.screens.chooser import ChooserScreen

__all__ = ["DNS1123_LABEL", "ScopeController", "ScopeHost"]

DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
"""What a namespace name must be (RFC 1123 label)."""


class ScopeHost(ScreenFacts, Asker, Protocol):
    """What the scope needs: the source and state shown, and the rescope."""

    def rescope(self, namespace: str | None) -> None:
        """Watch another namespace (None: all); does nothing, after saying why, in a replay."""
        ...

    def scope_locked(self, *, chooser: bool = False) -> bool:
        """True, after saying why, when the scope must not change (a replay)."""
        ...


class ScopeController:
    """``n`` / ``a``; remembers the last namespace shown, for ``a`` to come back to."""

    def __init__(self, host: ScopeHost) -> None:
        self.host = host
        self.home: str | None = None
        """The last single namespace shown (None: none yet)."""

    def choose_namespace(self) -> None:
        host = self.host
        if host.scope_locked(chooser=True):
            return
        known = sorted({pod.namespace for pod in host.state.pods.values()} | {host.source.namespace or "default"})
        options: list[tuple[str, str]] = [(ns, ns) for ns in known]

        def chosen(namespace: str | None) -> None:
            if namespace and not DNS1123_LABEL.fullmatch(namespace):
                host.notify(f"{namespace!r} is not a namespace name (lower-case letters, digits and '-').",
                            title="Namespace", severity="warning")
            elif namespace:
                host.rescope(namespace)

        host.ask(ChooserScreen("Show which namespace?", list(options), "type a namespace", free_text=True), chosen)

    def toggle_all_namespaces(self) -> None:
        self.host.rescope(None if self.host.source.namespace else (self.home or "default"))

    def leaving(self, source: Source) -> None:
        """Called before a rescope away from ``source``: remember its namespace."""
        if source.namespace:
            self.home = source.namespace
