"""The writes pane (``#exchange``): every write to the selected pod, whoever sent it, one line each, and the selected
line's request and response; observatory's own Bindings with their raw HTTP exchange (request line and body, the
kubectl that sends the same Binding, status line, headers, body with its message).

Without an audit feed the pane is the HTTP exchange of observatory's own Bindings, every one stacked, newest at the
bottom, and one line says how to see everyone's writes. With one (:meth:`ExchangePane.show_writes`) it lists the
writes of the selected pod (``p``: of every pod in scope) from the API server's audit events, and shows the
highlighted line's request and response below; ``v`` marks a write, and ``v`` on another asks for both side by side
(:class:`ExchangePane.CompareRequested`).
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from observatory.model.commands import EquivalentCommands
from observatory.model.records import BindingExchange
from observatory.model.writes import Write, WriteStore
from observatory.ui.widgets.row_list import RowList
from observatory.ui.widgets.write_lines import (
    COLUMNS,
    Entry,
    OwnExchange,
    entries,
    entry_cells,
    render_write_request,
    render_write_response,
)

_STATUS_LINES = 4
"""The status line and a Status message of up to three lines: what must be in view after a Binding."""
SHOWN_RESPONSE_HEADERS = ("content-type", "content-length", "date", "audit-id", "cache-control", "warning",
                          "x-kubernetes-pf-flowschema-uid", "x-kubernetes-pf-prioritylevel-uid")


def render_exchange(exchange: BindingExchange) -> Group:
    """Request, then response, as the wire had them (credentials were never recorded)."""
    return Group(render_request(exchange), render_response(exchange))


def render_request(exchange: BindingExchange) -> Group:
    """The request line, its headers and its body."""
    parts: list = []
    request = Text()
    request.append("→ ", style="bold cyan")
    request.append(exchange.request_line, style="bold")
    parts.append(request)
    for name, value in exchange.request_headers:
        parts.append(Text(f"{name}: {value}", style="dim"))
    # The request body exactly as it went on the wire (compact JSON), wrapped to the pane.
    parts.append(Syntax(exchange.request_body.decode("utf-8", "replace"), "json", theme="ansi_dark",
                        background_color="default", word_wrap=True))
    return Group(*parts)


def kubectl_line(commands: EquivalentCommands) -> str:
    """The kubectl command of ``commands`` on one line, its ``--kubeconfig`` and ``--context`` flags shortened to
    ``…`` (``c`` shows them in full): ``kubectl … create --raw /api/v1/namespaces/NS/pods/NAME/binding -f
    binding.json``."""
    line = commands.kubectl.rsplit("\n", 1)[-1]
    flags, found, rest = line.partition(" create --raw ")
    if not found:
        return line
    return f"kubectl{' …' if flags.strip() != 'kubectl' else ''} create --raw {rest}"


def render_commands(commands: EquivalentCommands) -> Text:
    """One compact line under the answer: the same Binding with kubectl, and the key for both commands in full."""
    out = Text()
    out.append("by hand ▸ ", style="bold")
    out.append(kubectl_line(commands))
    out.append("  (c: kubectl and curl in full)", style="dim")
    return out


def render_response(exchange: BindingExchange, commands: EquivalentCommands | None = None) -> Group:
    """The status line, the Status message, the kubectl line of ``commands`` (when given), the shown headers and the
    body; or why there was no response."""
    if exchange.error:
        failed = Text(f"← no response: {exchange.error}", style="bold red")
        return Group(failed, render_commands(commands)) if commands is not None else Group(failed)
    parts: list[RenderableType] = []
    ok = 200 <= exchange.status < 300
    status = Text()
    status.append("← ", style="bold cyan")
    status.append(exchange.status_line, style="bold green" if ok else "bold red")
    status.append(f"   ({exchange.elapsed_ms:.0f} ms)", style="dim")
    parts.append(status)
    if exchange.status_message:
        message = Text("Status message ▸ ", style="bold")
        message.append(exchange.status_message, style="bold black on yellow" if not ok else "bold green")
        parts.append(message)
    if commands is not None:
        parts.append(render_commands(commands))
    for name, value in exchange.response_headers:
        if name.lower() in SHOWN_RESPONSE_HEADERS:
            parts.append(Text(f"{name}: {value}", style="dim"))
    parts.append(Syntax(exchange.pretty_response, "json", theme="ansi_dark", background_color="default",
                        word_wrap=True))
    return Group(*parts)


EMPTY_HINT = "No Binding sent yet. Select a pending pod and press b."
NO_FEED_HINT = "Others' writes: --audit-log or --audit-webhook-listen"
"""The one line of a pane without an audit feed (a cluster whose API server's audit log observatory cannot read):
``observatory --audit-log PATH`` follows a kube-apiserver's ``--audit-log-path`` file, ``--audit-webhook-listen
ADDR`` receives its ``--audit-webhook-config-file`` batches. 53 columns: one line in the pane at 120x40."""


def _is_binding(entry: Entry) -> bool:
    """Whether the line is a Binding: one of observatory's own, or a ``pods/NAME/binding`` or ``bindings``
    create."""
    if entry.own is not None:
        return True
    return entry.write is not None and entry.write.event.is_binding


class WritesList(RowList):
    """The writes, one line each (:data:`~observatory.ui.widgets.write_lines.COLUMNS`), newest at the bottom."""

    class Highlighted(Message):
        """The cursor is on another line (``key`` None: no line)."""

        def __init__(self, key: str | None) -> None:
            super().__init__()
            self.key = key

    def cursor_moved(self, key: str | None) -> None:
        self.post_message(self.Highlighted(key))


class ExchangePane(Vertical):
    """The writes pane (see the module docstring). ``own`` holds observatory's own exchanges in the order sent."""

    BORDER_TITLE = "HTTP exchange"
    ALLOW_MAXIMIZE = True  # ctrl+p, Maximize: the way to read a pane in full on a small screen
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p", "toggle_every_pod", "Every pod", id="writes-every-pod"),
        Binding("v", "compare", "Side by side", id="writes-compare"),
    ]

    class CompareRequested(Message):
        """``v`` on two writes: show ``left`` (the one marked first) and ``right`` side by side."""

        def __init__(self, left: Write, right: Write) -> None:
            super().__init__()
            self.left, self.right = left, right

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._hint = EMPTY_HINT
        self.own: list[OwnExchange] = []
        self._sent = 0
        self._blocks: dict[str, tuple[Widget, Widget, Widget]] = {}  # key -> (block, request, response)
        self.feed: str | None = None
        """The audit feed's origin (``lab``, ``log PATH``) once :meth:`show_writes` was called; None: no feed."""
        self.every_pod = False
        """``p``: the writes of every pod in scope, not only the selected pod's."""
        self.marked: Write | None = None
        """``v``: the write to put beside the next one marked (kept when another pod is selected)."""
        self._note_text = ""
        self._view: tuple[WriteStore, str | None, str | None] | None = None  # (store, selected pod, namespace)
        self._entries: dict[str, Entry] = {}
        self._painted: tuple[object, ...] | None = None  # what the lines were made of: no change, no work
        self._shown: str | None = None  # the key whose request and response are shown
        self._followed: str | None = None  # the line the pane last put the cursor on

    def compose(self) -> ComposeResult:
        note = Static(Text(NO_FEED_HINT, style="dim"), id="writes-note")
        yield note
        rows = WritesList(COLUMNS, id="writes-list")
        rows.display = False
        yield rows
        with VerticalScroll(id="exchange-detail"):
            yield Static(Text(EMPTY_HINT, style="dim"), id="exchange-empty")
            write = Vertical(Static(classes="write-request"), Static(classes="write-response"), id="write-detail",
                             classes="write")
            write.display = False
            yield write

    def hint(self, text: str) -> None:
        """What the pane says before the first Binding: :data:`EMPTY_HINT`, or why Bind is off. Updated only when
        it changes (a Static update lays the screen out)."""
        if text == self._hint:
            return
        self._hint = text
        for empty in self.query("#exchange-empty").results(Static):
            empty.update(Text(text, style="dim"))

    # -- observatory's own Bindings ---------------------------------------------------------------------------------

    def add(self, exchange: BindingExchange, commands: EquivalentCommands | None = None) -> Widget:
        """Show one of observatory's own exchanges, with the compact kubectl line of ``commands`` when given: below
        the earlier ones without a feed; as its write's line with one. Returns its block (to remove it later)."""
        for empty in self.query("#exchange-empty"):
            empty.display = False
        request = Static(render_request(exchange), classes="exchange-request")
        response = Static(render_response(exchange, commands), classes="exchange-response")
        block = Vertical(request, response, classes="exchange")
        key = f"x{self._sent}"
        self._sent += 1
        self.own.append(OwnExchange(key, exchange, commands))
        self._blocks[key] = (block, request, response)
        detail = self.query_one("#exchange-detail", VerticalScroll)
        detail.mount(block, before=self.query_one("#write-detail"))
        if self.feed is None:
            self.border_title = f"HTTP exchange: {exchange.status_line if not exchange.error else 'no response'}"
            self.call_after_refresh(self._show_latest, request, response)
        else:
            block.display = False
            self._refresh(follow=True)
        return block

    def _show_latest(self, request: Widget, response: Widget, tries: int = 10) -> None:
        """The newest exchange from its request line when its status line and message fit below; else from its
        status line (the request is a scroll up). Earlier exchanges are above it. A block not laid out yet (the
        refresh came before the layout, e.g. while a modal screen was closing) is scrolled to after a later
        refresh: scrolling now would stop at the old end."""
        if not request.outer_size.height and tries:
            self.call_after_refresh(self._show_latest, request, response, tries - 1)
            return
        detail = self.query_one("#exchange-detail", VerticalScroll)
        if request.outer_size.height + _STATUS_LINES <= detail.scrollable_content_region.height:
            detail.scroll_to_widget(request, animate=False, top=True)
        else:
            detail.scroll_to_widget(response, animate=False, top=True)

    # -- everyone's writes ------------------------------------------------------------------------------------------

    def show_writes(self, store: WriteStore, pod: str | None, namespace: str | None, origin: str) -> None:
        """The writes of ``pod`` (or, after ``p``, of every pod of ``namespace``, None: all) kept in ``store``, from
        the audit feed ``origin``. While the cursor is where the pane last put it, it follows the newest Binding
        (the newest line when there is none): the answer to a Binding stays in view as the kubelet's writes that
        follow it arrive."""
        first = self.feed is None
        self.feed = origin
        self._view = (store, pod, namespace)
        if first:
            self.query_one(WritesList).display = True
            self.refresh_bindings()
        self._refresh(follow=first)

    def _refresh(self, follow: bool = False) -> None:
        if self._view is None:
            return
        store, pod, namespace = self._view
        shown_pod = None if self.every_pod else pod
        self._forget_removed()
        inputs = (store.version, store.malformed, shown_pod, namespace, len(self.own), self.marked)
        if inputs == self._painted and not follow:
            return
        self._painted = inputs
        writes = store.for_pod(shown_pod) if shown_pod is not None else store.in_scope(namespace)
        rows = self.query_one(WritesList)
        following = rows.row_count == 0 or rows.cursor_key == self._followed
        lines = entries(writes, self.own, shown_pod, namespace)
        self._entries = {entry.key: entry for entry in lines}
        rows.set_rows({entry.key: entry_cells(entry, shown_pod is not None) for entry in lines})
        if (follow or following) and lines:
            target = next((entry for entry in reversed(lines) if _is_binding(entry)), lines[-1])
            self._followed = target.key
            rows.select(target.key)
        where = shown_pod or (f"every pod in {namespace}" if namespace else "every pod")
        self.border_title = f"Writes: {where}"
        self._note(store)
        for empty in self.query("#exchange-empty").results(Static):
            empty.display = not lines
        self._show_entry(rows.cursor_key)

    def _forget_removed(self) -> None:
        """Drop the exchanges whose block was removed (the in-process scheduler keeps only its newest ones)."""
        gone = {key for key, (block, _, _) in self._blocks.items() if block.parent is None}
        if gone:
            self.own = [mine for mine in self.own if mine.key not in gone]
            for key in gone:
                del self._blocks[key]

    def _note(self, store: WriteStore) -> None:
        note = Text()
        note.append(f"audit: {self.feed}", style="dim")
        note.append(" · p: " + ("the selected pod" if self.every_pod else "every pod"), style="dim")
        if self.marked is None:
            note.append(" · v: mark a write", style="dim")
        else:
            note.append(" · v on another: beside ", style="dim")
            note.append(self.marked.summary, style="bold")
        if store.malformed:
            note.append(f" · {store.malformed} malformed", style="bold black on yellow")
            if store.problem:
                note.append(f": {store.problem}", style="yellow")
        if note.plain != self._note_text:
            self._note_text = note.plain
            self.query_one("#writes-note", Static).update(note)

    def on_writes_list_highlighted(self, message: WritesList.Highlighted) -> None:
        message.stop()
        self._show_entry(message.key)

    def _show_entry(self, key: str | None) -> None:
        """The request and response of line ``key``: observatory's own exchange block, or the audit event's."""
        entry = self._entries.get(key) if key is not None else None
        own_key = entry.own.key if entry is not None and entry.own is not None else None
        for block_key, (block, _, _) in self._blocks.items():
            block.display = block_key == own_key
        write = self.query_one("#write-detail", Vertical)
        if entry is not None and entry.own is None and entry.write is not None:
            request, response = write.query(Static)
            request.update(render_write_request(entry.write))
            response.update(render_write_response(entry.write))
            write.display = True
        else:
            write.display = False
        if key != self._shown:
            self._shown = key
            if own_key is not None:
                _, sent, answer = self._blocks[own_key]
                self.call_after_refresh(self._show_latest, sent, answer)
            elif write.display:
                sent, answer = write.query(Static)
                self.call_after_refresh(self._show_latest, sent, answer)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("toggle_every_pod", "compare"):
            return self.feed is not None
        return True

    def action_toggle_every_pod(self) -> None:
        """``p``: the writes of every pod in scope, or the selected pod's again."""
        self.every_pod = not self.every_pod
        self._refresh(follow=True)

    def action_compare(self) -> None:
        """``v``: mark the highlighted write; on another, ask for both side by side (:class:`CompareRequested`;
        ``v`` on the marked one unmarks it)."""
        key = self.query_one(WritesList).cursor_key
        entry = self._entries.get(key) if key is not None else None
        if entry is None or entry.write is None:
            self.notify("Highlight a write whose audit event has arrived first.", title="Side by side")
            return
        marked, write = self.marked, entry.write
        if marked is None or marked.event.audit_id == write.event.audit_id:
            self.marked = None if marked is not None else write
        else:
            self.marked = None
            self.post_message(self.CompareRequested(marked, write))
        if self._view is not None:
            self._note(self._view[0])
