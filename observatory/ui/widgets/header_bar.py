"""The header: which cluster, which scope, how each watch is doing, and the LAB / READ-ONLY badges."""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

from observatory.model.deltas import WatchState
from observatory.ui.text import clock_time

_STATE_STYLE = {"live": "green", "connecting": "yellow", "resyncing": "yellow", "stale": "bold red",
                "forbidden": "bold magenta"}


class HeaderBar(Static):
    """Two lines: ``[LAB] [READ-ONLY] context · server`` and ``scope … · pods live · nodes live · events live``,
    followed, while a watch is stale or forbidden, by the first such watch's reason (``· The watch of pods
    sent nothing …``: the detail names its watch). With ``kubeconfig`` (the embedded lab's), the first line ends
    with ``· export KUBECONFIG=<path>``, so kubectl in another terminal reaches the same cluster; when the server
    and the path do not both fit, the path is shown without the server."""

    DEFAULT_CSS = "HeaderBar { height: 2; }"

    scheduler: Text | None = None
    """The in-process scheduler's badge (ui/scheduler.py), after the LAB / READ-ONLY badges; None: none runs."""

    def show(self, *, context: str, server: str, namespace: str | None, lab: bool, read_only: bool,
             watches: Mapping[str, WatchState], kubeconfig: str | None = None) -> None:
        line = Text(no_wrap=True, overflow="ellipsis")
        if lab:
            line.append(" LAB ", style="bold black on yellow")
            line.append(" ")
        if read_only:
            line.append(" READ-ONLY ", style="bold white on red")
            line.append(" ")
        if self.scheduler is not None:
            line.append_text(self.scheduler)
            line.append(" ")
        line.append(context, style="bold")
        width = max(self.size.width, 1)
        export = Text(f"export KUBECONFIG={shlex.quote(kubeconfig)}", style="bold") if kubeconfig else None
        if export is None or line.cell_len + 6 + cell_len(server) + export.cell_len <= width:
            line.append(" · ", style="dim")
            line.append(server, style="dim")  # the kubeconfig names the server too: it goes first when both don't fit
        if export is not None:
            line.append(" · ", style="dim")
            line.append_text(export)
        states = Text(no_wrap=True, overflow="ellipsis")
        states.append("scope ")
        states.append(namespace if namespace else "all namespaces", style="bold cyan")
        for kind in ("pods", "nodes", "events"):
            watch = watches.get(kind)
            label = "connecting" if watch is None else watch.state
            if watch is not None and watch.state == "stale" and watch.since is not None:
                label = f"stale since {clock_time(watch.since)}"
            states.append(f" · {kind} ", style="dim")
            states.append(label, style=_STATE_STYLE.get(watch.state if watch else "connecting", ""))
        trouble = next((w for k in ("pods", "nodes", "events") if (w := watches.get(k)) is not None
                        and w.state in ("stale", "forbidden") and w.detail), None)
        if trouble is not None:  # why, in the reflector's words (the first watch in trouble; cut to the width)
            states.append(f" · {' '.join(trouble.detail.split())}", style="dim")
        for part in (line, states):  # each line is cut to the width, so the watch states always stay in view
            part.truncate(width, overflow="ellipsis")
        content = Text("\n").join([line, states])
        if content != getattr(self, "_shown", None):  # update() lays out the whole screen: only on a change
            self._shown = content
            self.update(content)
