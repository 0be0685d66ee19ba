"""The Why pane's node-fit list for big clusters: past :data:`LINES_ABOVE` nodes, one :class:`FitLines` child (a
:class:`~observatory.ui.widgets.block_lines.BlockLines`) instead of two Statics per node, showing the same verdict
line (:func:`fit_line`) and reasons (:func:`fit_reasons`, indented 4 as ``.fit-reasons { padding-left: 4; }``).
See block_lines.py for why.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual.containers import Vertical

from observatory.model.fit import NodeFit
from observatory.ui.widgets.block_lines import BlockLines, Parts

if TYPE_CHECKING:
    from observatory.ui.widgets.why_pane import WhyPane

LINES_ABOVE = 100
"""Nodes in the preview beyond which the pane switches to :class:`FitLines`."""
REASONS_INDENT = 4


class FitLines(BlockLines):
    """A verdict line per node, its reasons indented under it."""


def show_fits_as_lines(pane: WhyPane, fits: tuple[NodeFit, ...], width: int) -> bool:
    """For :meth:`WhyPane._show_fits`: past :data:`LINES_ABOVE` nodes, show the verdicts in one :class:`FitLines`
    child of ``#why-fit`` and return True; otherwise remove that child if there is one and return False (the pane
    mounts two Statics per node). ``width`` is the width node names are padded to."""
    from observatory.ui.widgets.why_pane import fit_line, fit_reasons

    box = pane.query_one("#why-fit", Vertical)
    lines = next(iter(box.query(FitLines)), None)
    if len(fits) <= LINES_ABOVE:
        if lines is not None:
            lines.remove()
        return False
    for node in list(pane._blocks):
        for widget in pane._blocks.pop(node):
            widget.remove()
        pane._fits.pop(node, None)
    if lines is None:
        lines = FitLines()
        box.mount(lines)

    def parts(fit: NodeFit) -> Parts:
        line = ((fit_line(fit, width), 0),)
        return (*line, (fit_reasons(fit), REASONS_INDENT)) if fit.why else line

    lines.set_blocks([(fit.node, (fit, width), partial(parts, fit)) for fit in fits])
    return True
