"""The nodes pane and the Why pane's fit list past 100 nodes: one line-API child (block_lines.py) that shows
exactly what a Static per block shows (text, wrapping, colours, margins, scrolling) and renders only what is on
screen."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult

from observatory.lab.scenarios.scale import generate
from observatory.model.deltas import Relisted
from observatory.model.state import ClusterState
from observatory.ui.app import STYLES
from observatory.ui.widgets import fit_lines, node_lines
from observatory.ui.widgets.fit_lines import FitLines
from observatory.ui.widgets.node_lines import NodeLines
from observatory.ui.widgets.nodes_pane import NodesPane
from observatory.ui.widgets.why_pane import WhyPane
from tests.waiting import eventually

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


async def settled(app: App[Any], pilot: Any) -> list[list[tuple[str, str]]]:
    """The screen once two captures in a row agree (a mount and its layout take a few turns of the loop)."""
    last = None
    for _ in range(100):
        await pilot.pause()
        now = screen(app)
        if now == last:
            return now
        last = now
    raise AssertionError("the screen kept changing")


async def shown(monkeypatch, threshold: int, state: ClusterState, selected: str | None, *, scroll: bool = False):
    monkeypatch.setattr(node_lines, "LINES_ABOVE", threshold)
    app = PaneApp()
    async with app.run_test(size=(46, 30)) as pilot:
        pane = app.query_one(NodesPane)
        pane.show(state.placement(), selected, state.orphans())
        await settled(app, pilot)
        if scroll:
            pane.scroll_to(y=37, animate=False)
        return await settled(app, pilot), len(pane.query(NodeLines)), len(pane.query(".node"))


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
        # a show soon after another is deferred (at most SHOW_EVERY), and the latest one wins
        await eventually(lambda: f"▶ {pod.key}" in child.plain_lines()[1], "the mark on the selected pod",
                         pause=lambda: pilot.pause(0.05))
        assert child.plain_lines()[0] == before[0]
        pane.show(state.placement()[:2], None, [])
        await pilot.pause()
        assert not pane.query(NodeLines) and len(pane.query(".node")) == 2


class WhyApp(App[None]):
    CSS_PATH = [STYLES / "app.tcss"]

    def compose(self) -> ComposeResult:
        yield WhyPane(id="why")


async def why_shown(monkeypatch, threshold: int, state: ClusterState, key: str):
    monkeypatch.setattr(fit_lines, "LINES_ABOVE", threshold)
    app = WhyApp()
    async with app.run_test(size=(40, 60)) as pilot:
        pane = app.query_one(WhyPane)
        pane.show(key, state.diagnosis(key), state.fit(key))
        await settled(app, pilot)
        return await settled(app, pilot), len(pane.query(FitLines)), len(pane.query(".fit-line"))


async def test_fit_lines_show_what_two_statics_per_node_show(monkeypatch):
    state = cluster(6, 60)
    key = next(k for k, pod in state.pods.items() if not pod.node_name and pod.cpu_request_milli)
    statics, lines_children, static_children = await why_shown(monkeypatch, 1000, state, key)
    assert (lines_children, static_children) == (0, 6)
    lines, lines_children, static_children = await why_shown(monkeypatch, 0, state, key)
    assert (lines_children, static_children) == (1, 0)
    assert lines == statics


def test_same_wrap_only_when_every_character_keeps_its_width_and_place():
    from rich.text import Text

    from observatory.ui.widgets.block_lines import same_wrap

    assert same_wrap(Text("reported 11 times"), Text("reported 12 times"))
    assert not same_wrap(Text("reported 9 times"), Text("reported 10 times"))  # longer
    assert not same_wrap(Text("a bc"), Text("ab c"))  # a space moved: may wrap elsewhere
    assert not same_wrap(Text("ab"), Text("a界"))  # a wide character
    assert not same_wrap(None, Text("x"))
