"""The raw HTTP exchange of each Binding: request line and body, the kubectl that sends the same Binding, status
line, headers, body with its message."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from observatory.model.commands import EquivalentCommands
from observatory.model.records import BindingExchange

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


class ExchangePane(VerticalScroll):
    """Every exchange of this session, newest at the bottom; earlier ones are a scroll away."""

    BORDER_TITLE = "HTTP exchange"
    ALLOW_MAXIMIZE = True  # ctrl+p, Maximize: the way to read a pane in full on a small screen

    def on_mount(self) -> None:
        self._hint = EMPTY_HINT
        self.mount(Static(Text(EMPTY_HINT, style="dim"), id="exchange-empty"))

    def hint(self, text: str) -> None:
        """What the pane says before the first exchange: :data:`EMPTY_HINT`, or why Bind is off. Updated only when
        it changes (a Static update lays the screen out)."""
        if text == getattr(self, "_hint", None):
            return
        self._hint = text
        for empty in self.query("#exchange-empty").results(Static):
            empty.update(Text(text, style="dim"))

    def add(self, exchange: BindingExchange, commands: EquivalentCommands | None = None) -> None:
        """Show one exchange below the earlier ones, with the compact kubectl line of ``commands`` when given."""
        for empty in self.query("#exchange-empty"):
            empty.remove()
        request = Static(render_request(exchange), classes="exchange-request")
        response = Static(render_response(exchange, commands), classes="exchange-response")
        self.mount(Vertical(request, response, classes="exchange"))
        self.border_title = f"HTTP exchange: {exchange.status_line if not exchange.error else 'no response'}"
        self.call_after_refresh(self._show_latest, request, response)

    def _show_latest(self, request: Static, response: Static, tries: int = 10) -> None:
        """The newest exchange from its request line when its status line and message fit below; else from its
        status line (the request is a scroll up). Earlier exchanges are above it. A block not laid out yet (the
        refresh came before the layout, e.g. while a modal screen was closing) is scrolled to after a later
        refresh: scrolling now would stop at the old end."""
        if not request.outer_size.height and tries:
            self.call_after_refresh(self._show_latest, request, response, tries - 1)
            return
        if request.outer_size.height + _STATUS_LINES <= self.scrollable_content_region.height:
            self.scroll_to_widget(request, animate=False, top=True)
        else:
            self.scroll_to_widget(response, animate=False, top=True)
