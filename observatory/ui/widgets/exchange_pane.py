"""The raw HTTP exchange of each Binding: request line and body, status line, headers, body with its message."""

from __future__ import annotations

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

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


def render_response(exchange: BindingExchange) -> Group:
    """The status line, the Status message, the shown headers and the body; or why there was no response."""
    if exchange.error:
        return Group(Text(f"← no response: {exchange.error}", style="bold red"))
    parts: list = []
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
    for name, value in exchange.response_headers:
        if name.lower() in SHOWN_RESPONSE_HEADERS:
            parts.append(Text(f"{name}: {value}", style="dim"))
    parts.append(Syntax(exchange.pretty_response, "json", theme="ansi_dark", background_color="default",
                        word_wrap=True))
    return Group(*parts)


class ExchangePane(VerticalScroll):
    """Every exchange of this session, newest at the bottom; earlier ones are a scroll away."""

    BORDER_TITLE = "HTTP exchange"

    def on_mount(self) -> None:
        self.mount(Static(Text("No Binding sent yet. Select a pending pod and press b.", style="dim"),
                          id="exchange-empty"))

    def add(self, exchange: BindingExchange) -> None:
        for empty in self.query("#exchange-empty"):
            empty.remove()
        request = Static(render_request(exchange), classes="exchange-request")
        response = Static(render_response(exchange), classes="exchange-response")
        self.mount(Vertical(request, response, classes="exchange"))
        self.border_title = f"HTTP exchange: {exchange.status_line if not exchange.error else 'no response'}"
        self.call_after_refresh(self._show_latest, request, response)

    def _show_latest(self, request: Static, response: Static) -> None:
        """The newest exchange from its request line when its status line and message fit below; else from its
        status line (the request is a scroll up). Earlier exchanges are above it."""
        if request.outer_size.height + _STATUS_LINES <= self.scrollable_content_region.height:
            self.scroll_to_widget(request, animate=False, top=True)
        else:
            self.scroll_to_widget(response, animate=False, top=True)
