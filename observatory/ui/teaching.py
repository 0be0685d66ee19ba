"""Teaching: :class:`TeachingController` keeps the equivalent commands of each Binding (``c``), the lab transcript
(``e``), screenshots (``s``) and the embedded lab's kubeconfig (in the header, to follow along with kubectl); the app
keeps the display themes and the main screen the key-cast overlay.

Every Binding becomes a :class:`~observatory.model.transcript.BindRecord`: the pod as it was when the Binding was
sent (taken when the Binding is sent, :class:`~observatory.ui.binding.BindingResponded` carries it), the exchange,
the equivalent commands, and the pod after: at once for an answer that changed nothing (4xx, 5xx, no answer), else
when the watch shows its ``spec.nodeName`` changed, or at the export at the latest. Nothing written to a file or
shown holds a credential: exchanges never carry one, commands hold placeholders, and the transcript is passed
through :func:`~observatory.model.transcript.redact` with the source's secrets.

With an audit feed, the transcript also carries the writes of its pods and the write of each of their timeline
frames, from :attr:`TeachingController.write_store` (the store the screen feeds from ``Capabilities.audit``).
"""

from __future__ import annotations

import shlex
from datetime import datetime
from pathlib import Path
from typing import Protocol

from observatory.model.records import BindingExchange
from observatory.model.source import Source
from observatory.model.transcript import (
    BindRecord,
    LessonProgress,
    PodSnapshot,
    PodWrites,
    Transcript,
    default_transcript_path,
    json_twin,
    render,
)
from observatory.model.transcript_writes import transcript_pods
from observatory.model.writes import WriteStore
from observatory.ui.binding import BindingResponded
from observatory.ui.host import Asker, ScreenFacts
from observatory.ui.screens.commands import CommandsScreen
from observatory.ui.screens.export import ExportScreen

__all__ = ["TeachingController", "TeachingHost"]


def _succeeded(exchange: BindingExchange) -> bool:
    return 200 <= exchange.status < 300


class TeachingHost(ScreenFacts, Asker, Protocol):
    """What teaching needs from the screen."""

    def now(self) -> datetime: ...

    def save_screenshot(self, filename: str | None = None, path: str | None = None) -> str:
        """Textual's: write an SVG of the screen, return its path."""
        ...


class TeachingController:
    """Bind records, the equivalent commands, the transcript and screenshots."""

    def __init__(self, host: TeachingHost, *, screenshot_dir: Path | str = Path(".")) -> None:
        self.host = host
        self.bind_records: list[BindRecord] = []
        """One record per Binding sent this session, in order."""
        self._awaiting_after: set[int] = set()
        self.screenshot_dir = Path(screenshot_dir).expanduser()
        self.started = host.now()
        """When the transcript's session started."""
        self._kubeconfig_of: tuple[Source | None, str | None] = (None, None)
        self.write_store: WriteStore | None = None
        """The writes of the source's audit feed, kept by whoever reads the feed; None without one (the transcript
        then says who wrote what is not known)."""

    # -- bind records ----------------------------------------------------------------------------------------------

    def snapshot(self, pod_key: str) -> PodSnapshot:
        """The pod in the watched state now."""
        state = self.host.state
        return PodSnapshot.take(state, pod_key, self.host.now(), scope=state.node_scope(self.host.source.namespace))

    def record(self, message: BindingResponded) -> None:
        """A Binding was answered: its record, with the pod after when the answer changed nothing."""
        exchange = message.exchange
        before = message.before or self.snapshot(exchange.pod)
        commands = message.commands or self.host.source.commands_context().commands(exchange)
        record = BindRecord(exchange, before, commands=commands)
        if not _succeeded(exchange):  # the API server changed nothing: the pod after is the pod now
            record = record.with_after(self.snapshot(exchange.pod))
        else:
            self._awaiting_after.add(len(self.bind_records))
        self.bind_records.append(record)
        self.settle_binds()

    def settle_binds(self) -> None:
        """Take the ``after`` of each accepted Binding once the watch shows its pod's ``spec.nodeName`` changed
        (or the pod gone)."""
        for index in sorted(self._awaiting_after):
            record = self.bind_records[index]
            pod = self.host.state.pods.get(record.exchange.pod)
            if pod is None or pod.node_name != record.before.node_name:
                self.bind_records[index] = record.with_after(self.snapshot(record.exchange.pod))
                self._awaiting_after.discard(index)

    # -- the embedded lab's kubeconfig ----------------------------------------------------------------------------

    def kubeconfig_export(self) -> str | None:
        """The embedded lab's kubeconfig for the header's ``export KUBECONFIG=…``. Not while recording: a
        recording's screen is what its replay shows, and a replay has no kubeconfig (:meth:`show_kubeconfig` says
        it in a recording too)."""
        source = self.host.source
        if source is not self._kubeconfig_of[0]:
            recording = source.capabilities().keys is not None
            path = source.commands_context().kubeconfig if source.lab and not recording else None
            self._kubeconfig_of = (source, path)
        return self._kubeconfig_of[1]

    def show_kubeconfig(self) -> None:
        """The palette's *Kubeconfig*: the line to paste into another terminal, to follow along with kubectl."""
        source = self.host.source
        path = source.commands_context().kubeconfig if source.lab else None
        if path is None:
            self.host.notify("This screen is not on an embedded lab it started: kubectl uses your own kubeconfig.",
                             title="Kubeconfig")
        else:
            self.host.notify(f"export KUBECONFIG={shlex.quote(path)}", title="Kubeconfig: follow along with kubectl",
                             timeout=30)

    # -- c: the equivalent commands --------------------------------------------------------------------------------

    def show_commands(self) -> None:
        host = self.host
        if not self.bind_records:
            host.notify("No Binding sent yet: bind a pod with b, then c shows the kubectl and curl that send the "
                        "same Binding.", title="Equivalent commands")
            return
        record = self.bind_records[-1]
        exchange = record.exchange
        answer = exchange.status_line or f"no answer ({exchange.error})"
        host.ask(CommandsScreen(f"Send the same Binding by hand: {exchange.pod} → {exchange.node}",
                                record.commands or host.source.commands_context().commands(exchange),
                                f"observatory sent it and got: {answer}"), _ignore)

    # -- e: the transcript -----------------------------------------------------------------------------------------

    def transcript(self) -> None:
        default = default_transcript_path(self.host.now())
        self.host.ask(ExportScreen(str(default), lambda path: self.export_transcript(path)), _ignore)

    def export_transcript(self, path: Path | None = None,
                          lesson: LessonProgress | None = None) -> tuple[Path, Path] | None:
        """Write the transcript of this session (and ``lesson``'s progress, when given) to ``path`` (default
        ``./observatory-transcript-YYYYmmdd-HHMMSS.md``; a folder gets that name inside it; no suffix gets ``.md``)
        and its JSON twin beside it. Returns both paths (absolute), or None after notifying why it could not."""
        now = self.host.now()
        target = Path(path).expanduser() if path is not None else default_transcript_path(now)
        if target.is_dir():
            target = default_transcript_path(now, target)
        elif not target.suffix:
            target = target.with_suffix(".md")
        try:
            twin = json_twin(target)
        except ValueError as exc:
            self.host.notify(str(exc), title="Transcript not written", severity="error", timeout=10, markup=False)
            return None
        records = tuple(r if r.after is not None else r.with_after(self.snapshot(r.exchange.pod))
                        for r in self.bind_records)
        source = self.host.source
        audit, writes = self._writes(records)
        transcript = Transcript(context=source.context, server=source.server, namespace=source.namespace or "",
                                lab=source.lab, started=self.started, exported=now, records=records, lesson=lesson,
                                audit=audit, writes=writes)
        markdown, text = render(transcript, secrets=source.secrets)
        try:
            target.write_text(markdown, encoding="utf-8")
            twin.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.host.notify(f"Cannot write {exc.filename or target}: {exc.strerror or exc}",
                             title="Transcript not written", severity="error", timeout=10,
                             markup=False)  # paths are not markup
            return None
        target, twin = target.absolute(), twin.absolute()
        self.host.notify(f"{target}\nand its JSON twin {twin.name}", title="Transcript written", timeout=10,
                         markup=False)
        return target, twin

    def _writes(self, records: tuple[BindRecord, ...]) -> tuple[str | None, tuple[PodWrites, ...]]:
        """The audit feed's origin and the writes of the transcript's pods (:func:`transcript_pods`), each with its
        timeline joined to them; ``(None, ())`` without an audit feed."""
        feed, store = self.host.source.capabilities().audit, self.write_store
        if feed is None or store is None:
            return None, ()
        pods = transcript_pods(store, [r.exchange.pod for r in records], self.host.source.namespace)
        return feed.origin, tuple(PodWrites.take(store, pod, self.host.state.timeline(pod)) for pod in pods)

    # -- s: screenshots --------------------------------------------------------------------------------------------

    def screenshot_svg(self) -> Path | None:
        """Save an SVG of the screen as ``observatory-YYYYmmdd-HHMMSS.svg`` in the screenshot folder, made when
        missing (``-2``, ``-3`` … when that second already has one). Returns the path, or None after notifying why
        not. The SVG holds the screen as drawn, after :class:`~observatory.ui.printable.PrintableFilter`: no
        control character of cluster text reaches the file."""
        folder = self.screenshot_dir
        stamp = f"observatory-{self.host.now().astimezone():%Y%m%d-%H%M%S}"
        name, n = f"{stamp}.svg", 1
        while (folder / name).exists():
            n += 1
            name = f"{stamp}-{n}.svg"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            saved = Path(self.host.save_screenshot(filename=name, path=str(folder)))
        except OSError as exc:
            self.host.notify(f"Cannot write {folder / name}: {exc.strerror or exc}", title="Screenshot not saved",
                             severity="error", timeout=10, markup=False)
            return None
        self.host.notify(str(saved.absolute()), title="Screenshot saved", markup=False)
        return saved


def _ignore(_answer: object) -> None:
    """For a modal that acts by itself (its answer needs nothing more)."""
