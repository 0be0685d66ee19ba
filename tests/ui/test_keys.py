"""Keys other than bind, over the recorded source: namespace, all namespaces, filter, pane focus, help, quit,
and the warning before a bind the API server will refuse."""

from __future__ import annotations

from observatory.ui.app import ObservatoryApp
from observatory.ui.screens.help import HelpScreen
from observatory.ui.widgets.pending_pods import PendingPodsPane
from tests.ui.fakes import RecordedSource, frozen_clock
from tests.ui.helpers import select_manual, until_painted


def make_app(**kw) -> ObservatoryApp:
    return ObservatoryApp(RecordedSource(**kw), clock=frozen_clock, refresh_interval=0.05)


async def test_namespace_chooser_and_all_namespaces_toggle():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        await pilot.press("n", *"sched", "enter")
        await until_painted(pilot, lambda: app.main.source.namespace == "sched-lab")
        assert "scope sched-lab" in str(app.query_one("#header").render())
        await pilot.press("a")
        await until_painted(pilot, lambda: app.main.source.namespace is None)
        await pilot.press("a")
        await until_painted(pilot, lambda: app.main.source.namespace == "sched-lab")


async def test_filter_narrows_the_pending_pods_and_escape_clears_it():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        await pilot.press("slash", *"nothing-matches")
        await until_painted(pilot, lambda: len(app.query_one(PendingPodsPane).rows) == 0)
        # the selected pod is hidden, so nothing is selected: b must not bind a pod the user cannot see
        await until_painted(pilot, lambda: app.main.selected is None)
        await pilot.press("escape")
        await until_painted(pilot, lambda: len(app.query_one(PendingPodsPane).rows) == 1)
        await until_painted(pilot, lambda: app.main.selected == "sched-lab/manual")


async def test_tab_moves_between_panes():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        first = app.focused
        await pilot.press("tab")
        assert app.focused is not first
        await pilot.press("shift+tab")
        assert app.focused is first


async def test_help_lists_every_binding_with_its_id():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        await pilot.press("question_mark")
        await until_painted(pilot, lambda: isinstance(app.screen, HelpScreen))
        ids = {b.id for b in app.screen.bindings}
        assert {"bind", "namespace", "all-namespaces", "filter", "help", "quit"} <= ids
        await pilot.press("escape")
        await until_painted(pilot, lambda: not isinstance(app.screen, HelpScreen))


async def test_binding_a_bound_pod_warns_and_n_sends_nothing():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        await pilot.press("b", *"worker", "enter")
        await until_painted(pilot, lambda: len(app.main.exchanges) == 1)
        await pilot.press("b", *"control", "enter")
        await until_painted(pilot, lambda: app.screen.__class__.__name__ == "ConfirmScreen")
        assert "already assigned to pair-worker: the API server will refuse" in app.screen.warnings
        await pilot.press("n")
        await until_painted(pilot, lambda: app.screen.__class__.__name__ != "ConfirmScreen")
        assert len(app.main.exchanges) == 1


async def test_keys_can_be_remapped_by_binding_id():
    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05, keymap={"bind": "B"})
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        await pilot.press("B", *"worker", "enter")
        await until_painted(pilot, lambda: len(app.main.exchanges) == 1)


async def test_q_quits():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        await pilot.press("q")
        await until_painted(pilot, lambda: not app.is_running)


async def test_a_fast_double_enter_in_the_chooser_does_not_pop_the_screen_below():
    """Break-it finding: ``b Down Enter Enter`` typed faster than the chooser closes crashed the app
    (ScreenStackError) or silently closed the warning that followed."""
    from observatory.ui.screens.chooser import ChooserScreen
    from observatory.ui.screens.confirm import ConfirmScreen

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot)
        await pilot.press("b")
        await until_painted(pilot, lambda: isinstance(app.screen, ChooserScreen))
        chooser = app.screen
        await pilot.press("down", "enter", "enter")
        await pilot.pause(0.2)
        assert app.is_running and chooser not in app.screen_stack
        # The second Enter reached the warning (the chosen node is refused for a bound pod) or nothing: the
        # warning, if any, is still there to be answered.
        assert len(app.screen_stack) >= 1
        if isinstance(app.screen, ConfirmScreen):
            await pilot.press("n")
        first = ChooserScreen("pick", [("a", "a")])
        await app.push_screen(first)
        first.dismiss("a")
        assert first.dismiss("a") is None  # ignored: already dismissing
        await pilot.pause(0.1)
        assert app.is_running and len(app.screen_stack) == 1
