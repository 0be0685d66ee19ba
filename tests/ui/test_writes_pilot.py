"""The writes pane, the timeline's writers and two writes side by side, driven by a recorded source with an audit
feed (tests/ui/audit_fakes.py): exercise 1's kubectl Bindings (201, then kubectl's 409 text), the kubelet's status
patches, kube-scheduler's Binding of another pod; and the pane of a source without a feed."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text

from observatory.ui.app import ObservatoryApp
from observatory.ui.screens.compare import CompareScreen
from observatory.ui.widgets.exchange_pane import EMPTY_HINT, NO_FEED_HINT, ExchangePane
from tests.ui.audit_fakes import ALREADY_ASSIGNED, AuditedSource
from tests.ui.fakes import RecordedSource, frozen_clock
from tests.ui.helpers import MANUAL, select_manual, until, until_painted

pytestmark = pytest.mark.usefixtures("utc_local_time")  # clock times as the snapshots show them


def plain(value: Any) -> str:
    """A cell's text, or a renderable as a 300-column console prints it."""
    if isinstance(value, Text | str):
        return value.plain if isinstance(value, Text) else value
    console = Console(width=300, file=io.StringIO(), record=True, color_system=None)
    console.print(value)
    return console.export_text()


def lines(app: ObservatoryApp) -> list[str]:
    """The writes pane's lines, cells joined by two spaces."""
    rows = app.query_one("#writes-list")
    return ["  ".join(plain(c) for c in rows.get_row(key)) for key in rows.row_keys]


def timeline_rvs(app: ObservatoryApp) -> list[str]:
    rows = app.query_one("#timeline")
    # each frame's resourceVersion and, from the WRITE column, the write that made it
    return [" ".join(filter(None, (plain(rows.get_cell(key, "RV")), plain(rows.get_cell(key, "WRITE")))))
            for key in rows.row_keys]


def shown_detail(app: ObservatoryApp) -> str:
    """The text of the request and response shown under the lines (the displayed block)."""
    pane = app.query_one(ExchangePane)
    out = []
    for block in pane.query("#exchange-detail > Vertical"):
        if block.display:
            for static in block.query("Static"):
                out.append(plain(static.content))
    return "\n".join(out)


def make(source: RecordedSource) -> ObservatoryApp:
    return ObservatoryApp(source, clock=frozen_clock, refresh_interval=0.05)


async def test_the_students_kubectl_bindings_201_then_409_with_kubectls_text() -> None:
    source = AuditedSource()
    app = make(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        pane = app.query_one(ExchangePane)
        await until(pilot, lambda: pane.border_title == f"Writes: {MANUAL}")
        assert app.query_one("#exchange-empty").display and str(app.query_one("#exchange-empty").render()) == \
            EMPTY_HINT  # nobody sent a Binding yet
        source.kubectl_bind()
        await until_painted(pilot, lambda: len(lines(app)) == 1)
        assert lines(app) == ["09:29:01  kubectl  POST binding  201 Created  "]
        assert not app.query_one("#exchange-empty").display  # someone did
        source.kubectl_bind()
        await until_painted(pilot, lambda: len(lines(app)) == 2)
        assert lines(app)[1] == f"09:29:02  kubectl  POST binding  409 Conflict  {ALREADY_ASSIGNED}"
        # the highlighted line (the newest) shows its request and response, the Status message in full
        detail = shown_detail(app)
        assert "→ POST /api/v1/namespaces/sched-lab/pods/manual/binding" in detail
        assert "User-Agent: kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9" in detail
        assert "← 409 Conflict" in detail and f"Status message ▸ {ALREADY_ASSIGNED}" in detail
        # up: the 201's
        app.query_one("#writes-list").focus()
        await pilot.press("up")
        await until_painted(pilot, lambda: "← 201 Created" in shown_detail(app))


async def test_the_timeline_names_the_writer_of_every_frame() -> None:
    source = AuditedSource()
    app = make(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        source.kubectl_bind()
        source.kubelet_status()
        source.kubelet_status(running=True)
        await until_painted(pilot, lambda: len(timeline_rvs(app)) == 4 and len(lines(app)) == 3)
        assert timeline_rvs(app) == [
            "100 no write seen",  # listed before the feed saw anything
            "101 ← POST pods/manual/binding · kubectl · 201 (matched by order)",  # a Binding's answer is a Status
            "102 ← PATCH pods/manual/status · kubelet pair-worker · 200",  # the answer is the pod at RV 102
            "103 ← PATCH pods/manual/status · kubelet pair-worker · 200",
        ]


async def test_observatorys_own_binding_is_one_line_with_its_raw_exchange() -> None:
    source = AuditedSource()
    app = make(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        await pilot.press("b", *"worker", "enter")
        await until_painted(pilot, lambda: len(app.main.exchanges) == 1 and len(app.main.writes.store) == 1)
        assert lines(app) == ["09:29:01  observatory  POST binding  201 Created  "]
        detail = shown_detail(app)  # the raw exchange, as the pane showed it without a feed
        assert "→ POST /api/v1/namespaces/sched-lab/pods/manual/binding HTTP/1.1" in detail
        assert "← HTTP/1.1 201 Created" in detail
        assert "Audit-Id: 00000000-aaaa-4000-8000-000000000001" in detail


async def test_p_shows_every_pods_writes_and_v_twice_puts_two_bindings_side_by_side() -> None:
    source = AuditedSource()
    app = make(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        source.add_pod("web")
        source.scheduler_bind("web", "pair-worker")
        source.kubectl_bind()
        await until_painted(pilot, lambda: len(lines(app)) == 1 and len(app.main.writes.store) == 2)
        rows = app.query_one("#writes-list")
        rows.focus()
        await pilot.press("p")  # every pod in scope
        await until_painted(pilot, lambda: len(lines(app)) == 2)
        assert app.query_one(ExchangePane).border_title == "Writes: every pod"
        assert [line.split("  ")[1:3] for line in lines(app)] == [["kube-scheduler", "POST pods/web/binding"],
                                                                   ["kubectl", "POST pods/manual/binding"]]
        await pilot.press("up", "v", "down", "v")
        await until(pilot, lambda: isinstance(app.screen, CompareScreen), "the side-by-side view")
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        assert (compare.left.event.writer, compare.right.event.writer) == ("kube-scheduler", "kubectl")
        assert compare.differing == {"user", "groups", "user_agent", "source_ips"}  # same POST, same body shape
        title = str(compare.query_one("#compare-title").render())
        assert title == "Side by side: only user, groups, user agent, source IPs differ"
        left = plain(compare.query_one("#compare-left").content)
        assert "user: system:kube-scheduler" in left and "request: POST /api/v1/namespaces/sched-lab/pods/web/binding" \
            in left
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, CompareScreen))
        await pilot.press("p")  # the selected pod's again
        await until_painted(pilot, lambda: len(lines(app)) == 1)
        assert app.query_one(ExchangePane).border_title == f"Writes: {MANUAL}"


async def test_the_mark_survives_selecting_another_pod() -> None:
    source = AuditedSource()
    app = make(source)
    async with app.run_test(size=(120, 40)) as pilot:
        source.add_pod("web")
        source.scheduler_bind("web")
        await until_painted(pilot, lambda: "sched-lab/web" in app.main.state.pods)
        app.main.selected = "sched-lab/web"  # bound by the scheduler: in the nodes pane, not the pending one
        await until_painted(pilot, lambda: len(lines(app)) == 1)
        app.query_one("#writes-list").focus()
        await pilot.press("v")
        await until(pilot, lambda: app.query_one(ExchangePane).marked is not None)
        assert "v on another: beside POST pods/web/binding · kube-scheduler · 201" in str(
            app.query_one("#writes-note").render())
        app.main.selected = MANUAL
        source.kubectl_bind()
        await until_painted(pilot, lambda: lines(app) and "kubectl" in lines(app)[-1])
        app.query_one("#writes-list").focus()
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, CompareScreen), "the side-by-side view")


async def test_the_malformed_count_is_shown_when_not_zero() -> None:
    source = AuditedSource()
    app = make(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        note = app.query_one("#writes-note")
        await until(pilot, lambda: "audit: lab" in str(note.render()))
        assert "malformed" not in str(note.render())
        source.log(malformed=2, problem="not JSON: Expecting value")
        await until_painted(pilot, lambda: "2 malformed: not JSON: Expecting value" in str(note.render()))


async def test_without_an_audit_feed_the_pane_is_observatorys_exchanges_and_says_how_to_see_others() -> None:
    app = make(RecordedSource())
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        pane = app.query_one(ExchangePane)
        assert str(app.query_one("#writes-note").render()) == NO_FEED_HINT
        assert not app.query_one("#writes-list").display and pane.border_title == "HTTP exchange"
        assert app.main.writes.timeline(MANUAL) is None and timeline_rvs(app) == ["100"]  # no writer named
        await pilot.press("b", *"worker", "enter")
        await until_painted(pilot, lambda: len(app.main.exchanges) == 1)
        assert pane.border_title == "HTTP exchange: HTTP/1.1 201 Created"
        assert len(pane.query(".exchange")) == 1 and pane.query_one(".exchange").display
        assert not pane.check_action("toggle_every_pod", ()) and not pane.check_action("compare", ())


async def test_an_exchange_whose_block_was_removed_leaves_the_lines() -> None:
    """The in-process scheduler removes its oldest exchange blocks; their lines go with them."""
    source = AuditedSource()
    app = make(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        await pilot.press("b", *"worker", "enter")
        await until_painted(pilot, lambda: len(lines(app)) == 1)
        pane = app.query_one(ExchangePane)
        await pane.query_one(".exchange").remove()
        source.kubectl_bind()  # a change repaints the lines
        await until_painted(pilot, lambda: [line.split("  ")[1] for line in lines(app)] == ["observatory", "kubectl"]
                            and pane.own == [])
