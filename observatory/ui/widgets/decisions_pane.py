"""What the in-process scheduler decided (``r``, :mod:`observatory.ui.scheduler`): the latest decision as a
table, one row per node (its filter verdict, its score, the chosen node highlighted), the outcome with the Binding's
status line, then a short history of the decisions before it.

Decisions are shown in queue order, by when their scheduling cycle started (``SchedulingDecision.queue_order``), not
in the order their outcomes arrived: a refusal is known at once, a Binding only when its answer comes back, so a pod
queued last can be refused before the pods queued ahead of it are bound. The latest decision is the one of the latest
cycle; every line gives its cycle's number (``#3``) and start time.

The scheduler's log lines (synced, a watch in trouble, a write that failed) are not part of any decision: the latest
one is shown, with its time, on the pane's bottom border, and each new one replaces it.

A Rich table rather than a DataTable: a verdict cell wraps (``node(s) had untolerated taint {…}``), and the whole
decision is replaced at once, so there are no rows to keep by key. Large clusters are summarised: past
:data:`ALL_NODES_UP_TO` nodes the table holds the chosen node and the best scores, and one line counts the rest by
reason.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Sequence

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from observatory.model.decisions import SchedulingDecision
from observatory.ui.text import clock_time

__all__ = ["ALL_NODES_UP_TO", "DecisionsPane", "history_line", "in_queue_order", "outcome_text", "render_decision"]

ALL_NODES_UP_TO = 16
"""Up to this many nodes, every node has a row, in node order; beyond, the chosen node and the best scores do."""
BEST_ROWS = 10
"""Rows of feasible nodes shown on a large cluster (best score first)."""
HISTORY = 8
"""Decisions listed under the latest one, latest cycle first."""
_NODE_WIDTH = 28
"""Node names wider than this end in an ellipsis in the table (the verdicts need the room)."""
WAITING = ("No decision yet: the scheduler lists the pods waiting for it and the nodes, then decides one pod at a "
           "time. w shows the Why pane in this place, and back.")
HISTORY_HEAD = "Earlier decisions, by scheduling cycle (latest first)"

_PLUGIN_SHORT = {"NodeResourcesFit": "Fit", "NodeResourcesBalancedAllocation": "Balanced",
                 "TaintToleration": "Taint", "NodeAffinity": "Affinity", "ImageLocality": "Image",
                 "InterPodAffinity": "PodAffinity", "PodTopologySpread": "Spread"}
"""Score plugins by a short name, so a row's plugin scores fit half the screen."""
_OUTCOME_STYLE = {"bound": "bold green", "dry-run": "bold cyan", "unschedulable": "bold red", "conflict": "bold yellow",
                  "error": "bold red", "skipped": "dim"}


def _score_cell(decision: SchedulingDecision, node: str) -> Text:
    score = decision.scores.get(node)
    if score is None:
        return Text("-", style="dim")
    if decision.policy == "spread":
        return Text(f"{-score} pods")  # spread scores minus the node's pod count: fewer pods wins
    return Text(str(score))


def _verdict_cell(decision: SchedulingDecision, node: str) -> Text:
    """``✗`` and the first rejecting filter's reasons, or ``✓ fits`` and the score plugins' normalised scores."""
    reason = decision.verdicts[node]
    if reason:
        return Text(f"✗ {reason}", style="red")
    out = Text("✓ fits", style="green")
    plugins = decision.plugin_scores.get(node) or {}
    if plugins:
        scores = " · ".join(f"{_PLUGIN_SHORT.get(name, name)} {value}" for name, value in plugins.items())
        out.append(f"  (scores {scores})", style="dim")
    return out


def _rows(decision: SchedulingDecision) -> tuple[list[str], str]:
    """The nodes that get a row, and a line summarising the others ("" when every node has a row)."""
    nodes = list(decision.verdicts)
    if len(nodes) <= ALL_NODES_UP_TO:
        return nodes, ""
    best = [node for node, _ in decision.top_scores(BEST_ROWS)] or list(decision.feasible[:BEST_ROWS])
    if decision.node is not None and decision.node not in best:
        best.insert(0, decision.node)
    shown = set(best)
    rest = [node for node in nodes if node not in shown]
    feasible = sum(1 for node in rest if not decision.verdicts[node])
    reasons = Counter(decision.verdicts[node] for node in rest if decision.verdicts[node])
    parts = ([f"{feasible} more feasible"] if feasible else []) + [f"{n} {why}" for why, n in reasons.most_common()]
    return best, f"… and {len(rest)} more nodes: {'; '.join(parts)}"


def decision_table(decision: SchedulingDecision) -> Table:
    """One row per node (see :data:`ALL_NODES_UP_TO`): ``▶`` and the name reversed on the chosen node, NODE, SCORE
    (the policy's: the weighted total of the score plugins, or for ``spread`` the node's pod count; ``-`` when the
    policy does not score or the node was filtered out), FILTERS (``✗`` and the first rejecting filter's reasons, or
    ``✓ fits`` and the score plugins' normalised scores, 0-100)."""
    nodes, rest = _rows(decision)
    table = Table(expand=True, show_edge=False, pad_edge=False, box=None, header_style="bold", caption=rest or None,
                  caption_style="dim", caption_justify="left")
    table.add_column("", width=1, no_wrap=True)
    table.add_column("NODE", width=min(max((len(n) for n in nodes), default=4), _NODE_WIDTH), no_wrap=True,
                     overflow="ellipsis")
    table.add_column("SCORE", justify="right", no_wrap=True)
    table.add_column("FILTERS", overflow="fold")
    for node in nodes:
        chosen = node == decision.node
        table.add_row(Text("▶", style="bold green") if chosen else Text(""),
                      Text(node, style="bold reverse" if chosen else ""), _score_cell(decision, node),
                      _verdict_cell(decision, node), style="bold" if chosen else None)
    return table


def outcome_text(decision: SchedulingDecision) -> Text:
    """The outcome in words, with the Binding's status line when one was sent: ``bound → pair-worker · Binding ←
    HTTP/1.1 201 Created (4 ms)``; ``FailedScheduling`` and the FitError text verbatim; ``would bind`` in a dry run."""
    out = Text()
    style = _OUTCOME_STYLE.get(decision.outcome, "bold")
    ex = decision.exchange
    if decision.outcome == "bound":
        out.append(f"bound → {decision.node}", style=style)
    elif decision.outcome == "dry-run":
        out.append(f"would bind → {decision.node}", style=style)
        out.append("  (dry run: no Binding sent)", style="dim")
    elif decision.outcome == "unschedulable":
        out.append("FailedScheduling", style=style)
        if decision.dry_run:
            out.append("  (dry run: no event written)", style="dim")
        out.append("\n")
        out.append(decision.message or "")
    elif decision.outcome == "conflict":
        out.append(f"conflict → {decision.node}", style=style)
        out.append("  another binder won: not retried, no Scheduled event", style="dim")
    else:
        out.append(decision.outcome, style=style)
        if decision.node:
            out.append(f" → {decision.node}", style=style)
    if ex is not None:
        out.append("\nBinding ← ", style="bold")
        if ex.error:
            out.append(f"no response: {ex.error}", style="bold red")
        else:
            out.append(ex.status_line, style="bold green" if ex.ok else "bold red")
            out.append(f"   ({ex.elapsed_ms:.0f} ms)", style="dim")
    if decision.outcome in ("conflict", "error", "skipped") and decision.message:
        out.append("\n")
        out.append(decision.message)
    return out


def in_queue_order(decisions: Sequence[SchedulingDecision]) -> list[SchedulingDecision]:
    """``decisions`` sorted by when their scheduling cycle started (queue order), earliest first."""
    return sorted(decisions, key=lambda d: d.queue_order)


def _cycle(decision: SchedulingDecision) -> str:
    """``#3 09:30:01``: the cycle's number (when known) and start time."""
    number = f"#{decision.cycle} " if decision.cycle else ""
    return f"{number}{clock_time(decision.started or decision.time)}"


def render_decision(decision: SchedulingDecision) -> Group:
    """The latest decision: the cycle (number and start time), the pod (and attempt), the node table, the
    outcome."""
    title = Text()
    title.append(_cycle(decision), style="dim")
    title.append(f" {decision.pod}", style="bold")
    if decision.attempt > 1:
        title.append(f"  attempt {decision.attempt}", style="dim")
    title.append(f"  {len(decision.feasible)}/{len(decision.verdicts)} nodes feasible", style="dim")
    return Group(title, decision_table(decision), Text(""), outcome_text(decision))


def history_line(decision: SchedulingDecision) -> Text:
    """``#2 09:30:01 sched-lab/a → pair-worker 201`` or ``#3 09:30:01 sched-lab/huge FailedScheduling``: the cycle's
    number and start time, the pod, the outcome."""
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(_cycle(decision), style="dim")
    out.append(f" {decision.pod}")
    style = _OUTCOME_STYLE.get(decision.outcome, "")
    ex = decision.exchange
    if decision.outcome == "unschedulable":
        out.append(" FailedScheduling", style=style)
    elif decision.outcome == "dry-run":
        out.append(f" ⇢ {decision.node}  would bind", style=style)
    elif decision.node:
        out.append(f" → {decision.node}", style=style)
        out.append(f" {ex.status if ex is not None and ex.status else decision.outcome}", style=style)
    else:
        out.append(f" {decision.outcome}", style=style)
    return out


class DecisionsPane(VerticalScroll):
    """The latest decision, then the recent ones, in queue order; the scheduler's last log line on the bottom
    border. :meth:`show` repaints only when something changed."""

    BORDER_TITLE = "Scheduler decisions"
    ALLOW_MAXIMIZE = True  # ctrl+p, Maximize: the way to read a big decision in full

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple[int, int, str, str] | None = None
        self._latest: RenderableType = Text(WAITING, style="dim")
        self._history: list[Text] = []
        self.log_line = ""
        """The scheduler's log line shown on the bottom border (``09:30:00 Synced: …``), "" for none."""

    def compose(self) -> ComposeResult:
        yield Static(self._latest, id="decision-latest")
        yield Static(id="decision-history")

    def show(self, decisions: Sequence[SchedulingDecision], title: str, log: str = "") -> None:
        """Show, of ``decisions`` in queue order, the latest in full and up to :data:`HISTORY` before it (latest
        cycle first); ``title`` goes on the top border, ``log`` (the scheduler's last log line, with its time) on the
        bottom border, never among the decisions."""
        key = (len(decisions), id(decisions[-1]) if decisions else 0, title, log)
        if key == self._shown:
            return
        self.border_title = Text(title)  # a Text: a schedulerName is not markup
        self.log_line = log
        self.border_subtitle = Text(log, style="italic") if log else None
        ordered = in_queue_order(decisions)
        latest = ordered[-1] if ordered else None
        self._latest = render_decision(latest) if latest is not None else Text(WAITING, style="dim")
        self.query_one("#decision-latest", Static).update(self._latest)
        earlier = ordered[-HISTORY - 1:-1][::-1]
        self._history = [history_line(d) for d in earlier]
        history = self.query_one("#decision-history", Static)
        history.display = bool(earlier)
        if earlier:
            head = Text(HISTORY_HEAD, style="bold")
            history.update(Text("\n").join([head, *self._history]))
        self._shown = key  # last: a pane not composed yet (NoMatches above) is painted on the next call

    def plain(self, width: int = 100) -> str:
        """The decisions the pane shows (the latest, then the history), as plain text ``width`` columns wide (for
        tests and copying); the log line on the border is :attr:`log_line`."""
        console = Console(width=width, record=True, color_system=None, file=io.StringIO())
        console.print(self._latest)
        if self._history:
            console.print(Text(f"\n{HISTORY_HEAD}"))
        for line in self._history:
            console.print(line)
        return console.export_text()

