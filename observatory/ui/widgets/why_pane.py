"""Why is the selected pod where it is: its diagnosis in plain words, then every node's fit verdict for it.

The node-fit preview is a block per node (a verdict line, then the reasons with their numbers, indented), keyed by
node name and updated in place like the nodes pane. Not a DataTable: a table cannot wrap a cell, and at half the
screen the WHY column, which holds the numbers, would start past the pane's edge.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from observatory.model.diagnosis import Diagnosis
from observatory.model.fit import FitPreview, NodeFit
from observatory.ui.text import STATE_STYLE
from observatory.ui.widgets.block_lines import same_wrap
from observatory.ui.widgets.fit_lines import show_fits_as_lines

NOTHING_SELECTED = "Select a pod in the pending pods pane to see why it is pending."
MAX_LINE = 4000
"""Characters of one explanation line shown: a line that quotes a hostile 1 MiB message took seconds to wrap."""
_NAME_WIDTH = 30
"""Node names are padded to the longest, up to this, so the filter names line up."""


def render_diagnosis(diagnosis: Diagnosis) -> Text:
    """The state's title in its colour, the explanation lines (which spell out what the pending pane's headline
    summarises), and the likely cause."""
    out = Text()
    out.append(diagnosis.title, style=f"bold {STATE_STYLE.get(diagnosis.state, '')}".strip())
    for line in diagnosis.explanation or (diagnosis.headline,):
        out.append("\n")
        out.append(line if len(line) <= MAX_LINE else line[:MAX_LINE] + " … (m shows the message in full)")
    if diagnosis.likely:
        out.append("\nLikely: ", style="bold")
        out.append(diagnosis.likely)
    return out


def fit_label(preview: FitPreview) -> Text:
    """The preview's source in words, so nobody takes a prediction for the scheduler's answer."""
    out = Text()
    out.append("Node fit ▸ ", style="bold")
    out.append(preview.label, style="italic")
    if preview.scope:
        out.append(f"\nonly pods of namespace {preview.scope} are watched, so other pods' requests are not counted "
                   "and free resources may be overstated", style="dim")
    if preview.disagreement:
        out.append(f"\n{preview.disagreement}", style="yellow")
    return out


def fit_line(fit: NodeFit, name_width: int = 0) -> Text:
    """``✓ node  fits`` or ``✗ node  <Filter>``, then what a binder should know (NotReady, cordoned)."""
    style = "green" if fit.fits else "red"
    out = Text()
    out.append("✓ " if fit.fits else "✗ ", style=style)
    out.append(fit.node.ljust(name_width), style="bold")
    out.append("  ")
    out.append("fits" if fit.fits else (fit.filter or "rejected"), style=style)
    if fit.notes:
        out.append(f"  ({'; '.join(fit.notes)})", style="yellow")
    return out


def fit_reasons(fit: NodeFit) -> Text:
    """The filter's reasons in plain words with their numbers, one per line."""
    return Text("\n".join(fit.why))


class WhyPane(VerticalScroll):
    """The diagnosis text, the preview's label, and a verdict block per node. :meth:`show` repaints only what
    changed."""

    BORDER_TITLE = "Why (select a pod)"
    ALLOW_MAXIMIZE = True  # ctrl+p, Maximize: the way to read a pane in full on a small screen

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple[str | None, Diagnosis | None, FitPreview | None] | None = None
        self._blocks: dict[str, tuple[Static, Static]] = {}
        self._fits: dict[str, tuple[NodeFit, int]] = {}

    def compose(self) -> ComposeResult:
        yield Static(Text(NOTHING_SELECTED, style="dim"), id="why-text")
        yield Static(id="why-fit-label")
        yield Vertical(id="why-fit")

    def on_mount(self) -> None:
        self.query_one("#why-fit-label").display = False

    @property
    def preview(self) -> FitPreview | None:
        """The fit preview on screen, if any."""
        return self._shown[2] if self._shown else None

    def fit_text(self, node: str) -> str:
        """What the block of ``node`` shows, as plain text ("" when there is none)."""
        block = self._blocks.get(node)
        if block is None:
            return ""
        line, reasons = (widget.content for widget in block)
        return "\n".join(part.plain for part in (line, reasons) if isinstance(part, Text) and part.plain)

    def show(self, pod_key: str | None, diagnosis: Diagnosis | None, preview: FitPreview | None) -> None:
        """Show ``pod_key``'s diagnosis and fit preview (None: nothing selected); a no-op when nothing changed."""
        if self._shown == (pod_key, diagnosis, preview):
            return
        self._shown = (pod_key, diagnosis, preview)
        self.border_title = f"Why: {pod_key}" if pod_key else "Why (select a pod)"
        text = self.query_one("#why-text", Static)
        content = render_diagnosis(diagnosis) if diagnosis is not None else Text(NOTHING_SELECTED, style="dim")
        text.update(content, layout=not same_wrap(text.content, content))  # a count going up needs no layout
        label = self.query_one("#why-fit-label", Static)
        label.display = preview is not None
        if preview is not None:
            heading = fit_label(preview)
            if heading != label.content:
                label.update(heading, layout=not same_wrap(label.content, heading))
        with self.app.batch_update():
            self._show_fits(preview.nodes if preview is not None else ())

    def _show_fits(self, fits: tuple[NodeFit, ...]) -> None:
        """Keyed by node name: remove the blocks of nodes gone, update changed ones, mount new ones in order."""
        width = min(max((len(fit.node) for fit in fits), default=0), _NAME_WIDTH)
        if show_fits_as_lines(self, fits, width):  # past 100 nodes: one line-API child (fit_lines.py)
            return
        wanted = {fit.node: fit for fit in fits}
        for node in [n for n in self._blocks if n not in wanted]:
            for widget in self._blocks.pop(node):
                widget.remove()
            del self._fits[node]
        box = self.query_one("#why-fit", Vertical)
        following: Static | None = None
        for fit in reversed(fits):  # backwards, so each new block can be mounted before its successor
            block = self._blocks.get(fit.node)
            if block is None:
                block = (Static(fit_line(fit, width), classes="fit-line"),
                         Static(fit_reasons(fit), classes="fit-reasons"))
                self._blocks[fit.node] = block
                box.mount(*block, before=following)  # None: at the end
            elif self._fits[fit.node] != (fit, width):
                block[0].update(fit_line(fit, width))
                block[1].update(fit_reasons(fit))
            block[1].display = bool(fit.why)
            self._fits[fit.node] = (fit, width)
            following = block[0]
