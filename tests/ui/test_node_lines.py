"""The nodes pane past 100 nodes: one line-API child (node_lines.py) that shows exactly what a Static per node
shows, and renders only what is on screen (issue 8)."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult

from observatory.lab.scenarios.scale import generate
from observatory.model.deltas import Relisted
from observatory.model.state import ClusterState
from observatory.ui.app import STYLES
from observatory.ui.widgets import node_lines
from observatory.ui.widgets.node_lines import NodeLines
from observatory.ui.widgets.nodes_pane import NodesPane

LONG_TAINT = "example.com/a-taint-key-long-enough-to-wrap-the-line"


def cluster(nodes: int, pods: int) -> ClusterState:
    docs = generate(f"nodes={nodes},pods={pods}")
    node_docs = [d for d in docs if d["kind"] == "Node"]
    node_docs[0]["spec"]["taints"] = [{"key": LONG_TAINT, "value": "yes", "effect": "NoSchedule"}]
    state = ClusterState()
    state.apply(Relisted("nodes", tuple(node_docs), "1"))
    state.apply(Relisted("pods", tuple(d for d in docs if d["kind"] == "Pod"), "1"))
    return state


class PaneApp(App[None]):
    CSS_PATH = [STYLES / "app.tcss"]

    def compose(self) -> ComposeResult:
        yield NodesPane(id="nodes")


def screen(app: App[Any]) -> list[list[tuple[str, str]]]:
    """Every screen line as (text, style) runs, so a colour difference shows too (the style's text form leaves out
    the mouse-selection metadata, which holds offsets into each widget)."""
    return [[(seg.text, str(seg.style)) for seg in strip.simplify()]
            for strip in app.screen._compositor.render_strips()]


async def shown(monkeypatch, threshold: int, state: ClusterState, selected: str | None, *, scroll: bool = False):
    monkeypatch.setattr(node_lines, "LINES_ABOVE", threshold)
    app = PaneApp()
    async with app.run_test(size=(46, 30)) as pilot:
        pane = app.query_one(NodesPane)
        pane.show(state.placement(), selected, state.orphans())
        await pilot.pause()
        if scroll:
            pane.scroll_to(y=37, animate=False)
            await pilot.pause()
        return screen(app), len(pane.query(NodeLines)), len(pane.query(".node"))


async def test_lines_show_what_a_static_per_node_shows(monkeypatch):
    state = cluster(4, 30)
    selected = next(key for key, pod in state.pods.items() if pod.node_name == "scale-node-0001")
    statics, lines_children, static_children = await shown(monkeypatch, 1000, state, selected)
    assert (lines_children, static_children) == (0, 4)
    lines, lines_children, static_children = await shown(monkeypatch, 0, state, selected)
    assert (lines_children, static_children) == (1, 0)
    assert any(LONG_TAINT[:20] in "".join(t for t, _ in row) for row in lines)  # the wrapped taint is there
    assert lines == statics


async def test_lines_scroll_like_the_statics(monkeypatch):
    state = cluster(4, 30)
    statics, *_ = await shown(monkeypatch, 1000, state, None, scroll=True)
    lines, *_ = await shown(monkeypatch, 0, state, None, scroll=True)
    assert lines == statics


async def test_a_changed_node_is_shown_and_the_pane_switches_back_below_the_threshold(monkeypatch):
    monkeypatch.setattr(node_lines, "LINES_ABOVE", 2)
    state = cluster(4, 30)
    app = PaneApp()
    async with app.run_test(size=(46, 30)) as pilot:
        pane = app.query_one(NodesPane)
        pane.show(state.placement(), None, state.orphans())
        await pilot.pause()
        child = pane.query_one(NodeLines)
        before = child.plain_lines()
        assert [text.split()[0] for text in before] == sorted(state.nodes)
        pod = next(p for p in state.pods.values() if p.node_name == "scale-node-0002")
        pane.show(state.placement(), pod.key, state.orphans())  # selecting marks the pod on its node
        await pilot.pause()
        after = child.plain_lines()
        assert after[0] == before[0] and f"▶ {pod.key}" in after[1]
        pane.show(state.placement()[:2], None, [])
        await pilot.pause()
        assert not pane.query(NodeLines) and len(pane.query(".node")) == 2
