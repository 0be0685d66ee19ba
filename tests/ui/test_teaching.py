"""Teaching: the equivalent commands (``c``), the lab transcript (``e``), screenshots (``s``), the display
themes and the key-cast overlay.

Acceptance: the transcript holds the full 409 message and ``spec.nodeName`` before and after (against a real lab);
with a token-auth kubeconfig the token never appears in the transcript, the recording or the screen. Expected texts
come from ../shared/k8s-api-reference.md (the 409 Status of pods/binding), the issue (file names, the kubectl
command) and the Okabe–Ito palette, never from what the program printed.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.color_triplet import ColorTriplet
from rich.console import Console
from textual.command import CommandPalette
from textual.widgets import Input, TextArea

from observatory.embedded import EmbeddedLab
from observatory.kube.connect import connect
from observatory.kube.source import ClusterSource
from observatory.model.transcript import LessonProgress, StepProgress
from observatory.recorder import RecordingSource
from observatory.settings import LabSettings, Settings
from observatory.ui.app import ObservatoryApp
from observatory.ui.screens.commands import CommandsScreen
from observatory.ui.screens.export import ExportScreen
from observatory.ui.themes import theme_problem
from observatory.ui.widgets.keycast import KeyCast, KeyCastBar
from observatory.ui.widgets.pending_pods import PendingPodsPane
from tests.ui.fakes import RecordedSource, frozen_clock
from tests.ui.helpers import pick_in_palette, until

ALREADY_ASSIGNED = ('Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node '
                    '"pair-worker"')
"""k8s-api-reference.md §1.4: the 409 Status message of a second Binding of the seed's pod."""
KUBECTL_CREATE_RAW = "create --raw /api/v1/namespaces/sched-lab/pods/manual/binding -f binding.json"
"""The seed exercise's command, from the issue: ``kubectl … create --raw <binding path> -f binding.json``."""
MD_NAME = re.compile(r"observatory-transcript-\d{8}-\d{6}\.md")
SVG_NAME = re.compile(r"observatory-\d{8}-\d{6}(-\d+)?\.svg")
OKABE_ITO_SKY_BLUE = ColorTriplet(0x56, 0xB4, 0xE9)
OKABE_ITO_VERMILLION = ColorTriplet(0xD5, 0x5E, 0x00)


@pytest.fixture
def lab_settings() -> LabSettings:
    """The seed's pod waits for a hand-bind (schedulerName nobody-at-all); no kubelet, so after the Binding nothing
    but the Binding changes the pod, and its resourceVersion after is the Binding's."""
    return LabSettings(kubelet=False, podgc=False, bookmark_interval=0.2)


@pytest.fixture
async def token_lab(tmp_path):
    """A lab that wants a bearer token (HTTPS, generated CA); its kubeconfig carries both."""
    server = EmbeddedLab(LabSettings(token=True, kubelet=False, podgc=False, bookmark_interval=0.2),
                       scenario="manual-binding", kubeconfig_path=tmp_path / "token-kubeconfig")
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def sources():
    made: list[Any] = []
    yield made
    for source in made:
        await source.close()


def plain(renderable: Any) -> str:
    console = Console(width=300, file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def notifications(app: ObservatoryApp) -> list[tuple[str, str]]:
    return [(n.severity, n.message) for n in app._notifications]


async def select_manual(pilot, app: ObservatoryApp) -> None:
    await until(pilot, lambda: "sched-lab/manual" in app.query_one(PendingPodsPane).rows, "the seed's pod listed")
    app.query_one(PendingPodsPane).select("sched-lab/manual")
    await until(pilot, lambda: app.main.selected == "sched-lab/manual", "the seed's pod selected")


async def bind(pilot, app: ObservatoryApp, typed: str, confirm: bool = False) -> None:
    count = len(app.main.teaching.bind_records)
    await pilot.press("b", *typed, "enter")
    if confirm:
        await until(pilot, lambda: app.screen.__class__.__name__ == "ConfirmScreen", "the warning")
        await pilot.press("y")
    await until(pilot, lambda: len(app.main.teaching.bind_records) > count, "the Binding's answer")


async def export_with_keys(pilot, app: ObservatoryApp, path: Path | str) -> None:
    await pilot.press("e")
    await until(pilot, lambda: isinstance(app.screen, ExportScreen), "the transcript window")
    box = app.screen.query_one(Input)
    assert MD_NAME.fullmatch(box.value), box.value  # prefilled with the default name
    box.value = str(path)
    await pilot.press("enter")


# -- acceptance: the transcript against a real lab --------------------------------------------------------------------

async def test_transcript_holds_the_full_409_message_and_node_name_before_and_after(lab, tmp_path, sources):
    connection = await connect(str(lab.kubeconfig_path), "observatory-lab", None)
    source = ClusterSource(connection, namespace=None, lab=True)
    sources.append(source)
    app = ObservatoryApp(source, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot, app)
        await bind(pilot, app, "worker")
        await until(pilot, lambda: app.main.state.pods["sched-lab/manual"].node_name == "pair-worker", "the watch")
        await bind(pilot, app, "control", confirm=True)
        assert [r.exchange.status for r in app.main.teaching.bind_records] == [201, 409]

        # the HTTP exchange pane shows the kubectl that sends the same Binding
        shown = plain(app.query(".exchange-response").last().content)
        assert f"kubectl … {KUBECTL_CREATE_RAW}" in shown

        target = tmp_path / "lesson.md"
        await export_with_keys(pilot, app, target)
        await until(pilot, lambda: not isinstance(app.screen, ExportScreen), "the window to close")
        assert any(str(target) in message for _, message in notifications(app))
        frames = app.main.state.timeline("sched-lab/manual")

    markdown = target.read_text()
    twin = json.loads((tmp_path / "lesson.json").read_text())
    first, second = twin["binds"]

    # the full 409: status line and Status message, verbatim, in both files
    assert second["statusLine"] == "HTTP/1.1 409 Conflict"
    assert second["message"] == ALREADY_ASSIGNED
    assert json.loads(second["exchange"]["responseBody"])["message"] == ALREADY_ASSIGNED
    assert "## Bind 2: sched-lab/manual to pair-control-plane: HTTP/1.1 409 Conflict" in markdown
    assert f"\n{ALREADY_ASSIGNED}\n" in markdown  # the Message block
    assert markdown.count(json.dumps(ALREADY_ASSIGNED)[1:-1]) >= 1  # and inside the response body
    assert first["statusLine"] == "HTTP/1.1 201 Created"

    # spec.nodeName before and after, with resourceVersions: empty, then pair-worker at the Binding's frame
    bound_frame = next(f for f in frames if f.node_name == "pair-worker")
    assert first["nodeName"]["before"]["value"] == ""
    assert first["nodeName"]["after"]["value"] == "pair-worker"
    assert first["nodeName"]["after"]["resourceVersion"] == bound_frame.resource_version
    assert int(first["nodeName"]["before"]["resourceVersion"]) < int(bound_frame.resource_version)
    assert second["nodeName"]["before"]["value"] == second["nodeName"]["after"]["value"] == "pair-worker"
    assert second["nodeName"]["after"]["resourceVersion"] == bound_frame.resource_version  # the 409 changed nothing
    before_rv = first["nodeName"]["before"]["resourceVersion"]
    assert f"| before | `<empty>` | {before_rv} |" in markdown
    assert f"| after | `pair-worker` | {bound_frame.resource_version} |" in markdown
    for side in ("before", "after"):
        assert first["nodeName"][side]["at"].endswith("Z")

    # the request, the diagnosis at that moment, the commands
    assert first["exchange"]["path"] == "/api/v1/namespaces/sched-lab/pods/manual/binding"
    assert json.loads(first["exchange"]["requestBody"])["target"]["name"] == "pair-worker"
    assert first["diagnosis"]["state"] == "no-scheduler"
    assert second["diagnosis"]["state"] == "waiting-kubelet"  # bound to pair-worker by then, and no kubelet
    assert KUBECTL_CREATE_RAW in first["commands"]["kubectl"]


# -- acceptance: redaction with a token-auth kubeconfig ---------------------------------------------------------------

async def test_the_token_never_appears_in_the_transcript_the_recording_or_the_screen(token_lab, tmp_path, sources):
    kubeconfig = yaml.safe_load(token_lab.kubeconfig_path.read_text())
    token = kubeconfig["users"][0]["user"]["token"]
    assert len(token) >= 16 and token in token_lab.kubeconfig_path.read_text()

    connection = await connect(str(token_lab.kubeconfig_path), "observatory-lab", None)
    recording = tmp_path / "session.jsonl"
    source = RecordingSource(ClusterSource(connection, namespace=None, lab=True), recording,
                             secrets=connection.secrets)
    sources.append(source)
    shots = tmp_path / "shots"
    shots.mkdir()
    app = ObservatoryApp(source, refresh_interval=0.05, screenshot_dir=shots, keycast=True)
    screens: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot, app)
        await bind(pilot, app, "worker")
        assert app.main.teaching.bind_records[-1].exchange.status == 201  # the token was sent, and accepted
        await until(pilot, lambda: app.main.state.pods["sched-lab/manual"].node_name == "pair-worker", "the watch")
        screens.append(app.export_screenshot())

        await export_with_keys(pilot, app, tmp_path / "token-lab.md")
        await until(pilot, lambda: (tmp_path / "token-lab.json").exists(), "the transcript")
        await pilot.press("s")
        await until(pilot, lambda: list(shots.glob("*.svg")), "the screenshot")

        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, CommandsScreen), "the commands window")
        text = app.screen.query_one(TextArea).text
        screens.append(app.export_screenshot())

    # the commands: the kubectl line, and a placeholder where the token would go
    assert KUBECTL_CREATE_RAW in text
    assert 'Authorization: Bearer $TOKEN' in text
    assert "$CA_CERT" in text  # the lab's generated CA: curl needs it too

    written = {"transcript": (tmp_path / "token-lab.md").read_text(),
               "transcript JSON": (tmp_path / "token-lab.json").read_text(),
               "recording": recording.read_text(),
               "screenshot file": next(shots.glob("*.svg")).read_text(),
               "commands window": text,
               "screen after the bind": screens[0],
               "screen with the commands": screens[1]}
    assert "sched-lab/manual" in written["recording"] and "pair-worker" in written["transcript"]
    for where, content in written.items():
        assert token not in content, f"the token appears in the {where}"


# -- c: the equivalent commands ---------------------------------------------------------------------------------------

async def test_c_shows_both_commands_for_the_last_binding_and_nothing_before_one():
    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot, app)
        await pilot.press("c")
        await pilot.pause(0.1)
        assert app.screen is app.screen_stack[0]  # no window: nothing sent yet
        assert any("No Binding sent yet" in message for _, message in notifications(app))

        await bind(pilot, app, "worker")
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, CommandsScreen), "the commands window")
        text = app.screen.query_one(TextArea).text
        assert app.screen.query_one(TextArea).read_only
        assert f"kubectl --context observatory-lab {KUBECTL_CREATE_RAW}" in text
        assert ("curl -sS -i -X POST -H 'Content-Type: application/json' --data-binary @binding.json "
                "http://127.0.0.1:6443/api/v1/namespaces/sched-lab/pods/manual/binding") in text
        assert "cat > binding.json <<'EOF'" in text
        assert '"target":{"apiVersion":"v1","kind":"Node","name":"pair-worker"}' in text
        assert "Authorization" not in text  # the lab without a token has no credential to stand in for
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.screen_stack[0], "the window to close")


# -- e: the transcript ------------------------------------------------------------------------------------------------

async def test_e_with_a_path_that_cannot_be_written_says_so_and_the_app_keeps_running(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot, app)
        for bad in (tmp_path / "no-such-folder" / "t.md", blocker / "t.md", tmp_path / "t.json"):
            app.clear_notifications()
            await export_with_keys(pilot, app, bad)
            await until(pilot, lambda: any(s == "error" for s, _ in notifications(app)), f"an error for {bad}")
            assert isinstance(app.screen, ExportScreen)  # still open, the path can be corrected
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is app.screen_stack[0], "the window to close")
        assert app.is_running
        await bind(pilot, app, "worker")  # still working
        assert not list(tmp_path.glob("*.md")) and not (tmp_path / "t.json").exists()


async def test_export_transcript_default_path_and_a_lesson(tmp_path, monkeypatch, utc_local_time):
    monkeypatch.chdir(tmp_path)
    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05)
    lesson = LessonProgress("manual-binding", "Bind a pod by hand",
                            (StepProgress("Find the pod nobody schedules", frozen_clock(), "sched-lab/manual"),
                             StepProgress("Bind it to pair-worker")))
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot, app)
        await bind(pilot, app, "worker")
        written = app.main.teaching.export_transcript(lesson=lesson)
    # FROZEN is 2026-11-29 09:30:00 UTC; the name: ./observatory-transcript-YYYYmmdd-HHMMSS.md
    assert written == (tmp_path / "observatory-transcript-20261129-093000.md",
                       tmp_path / "observatory-transcript-20261129-093000.json")
    markdown = written[0].read_text()
    assert "## Lesson `manual-binding`: Bind a pod by hand (not finished)" in markdown
    twin = json.loads(written[1].read_text())
    assert twin["lesson"]["steps"][0]["title"] == "Find the pod nobody schedules"
    assert [b["nodeName"]["after"]["value"] for b in twin["binds"]] == ["pair-worker"]


# -- s: screenshots ---------------------------------------------------------------------------------------------------

async def test_s_saves_an_svg_of_the_screen_in_the_screenshot_folder(tmp_path, utc_local_time):
    folder = tmp_path / "shots"
    folder.mkdir()
    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05, screenshot_dir=folder)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot, app)
        await pilot.press("s")
        await until(pilot, lambda: list(folder.glob("*.svg")), "the screenshot")
        await pilot.press("s")
        await until(pilot, lambda: len(list(folder.glob("*.svg"))) == 2, "the second screenshot")
        said = [message for _, message in notifications(app)]
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["observatory-20261129-093000-2.svg", "observatory-20261129-093000.svg"]
    assert all(SVG_NAME.fullmatch(name) for name in names)
    svg = (folder / names[1]).read_text()
    assert svg.lstrip().startswith("<svg") and "sched-lab/manual" in svg.replace("&#160;", " ")
    assert any(str(folder / names[1]) in message for message in said)


async def test_s_makes_a_missing_folder_and_says_when_it_cannot(tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05,
                         screenshot_dir=tmp_path / "class" / "shots")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("s")
        await until(pilot, lambda: list((tmp_path / "class" / "shots").glob("*.svg")), "the screenshot")
        app.main.teaching.screenshot_dir = tmp_path / "a-file" / "shots"
        await pilot.press("s")
        await until(pilot, lambda: any(s == "error" for s, _ in notifications(app)), "the error")
        assert app.is_running


# -- themes -----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["observatory-projector", "observatory-colorblind"])
async def test_a_theme_chosen_by_setting(name):
    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05, theme=name)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot, app)
        assert {"observatory-projector", "observatory-colorblind"} <= set(app.available_themes)
        assert app.theme == name and f"-theme-{name}" in app.classes
        if name == "observatory-projector":
            assert app.current_theme.background.upper() == "#000000"
            assert app.current_theme.foreground.upper() == "#FFFFFF"
            assert app.query_one("#why").styles.border_top[0] == "heavy"
        else:
            # Okabe–Ito: good news in sky blue, bad news in vermillion, and the panes' green and red follow them
            assert app.current_theme.success.upper() == "#56B4E9"
            assert app.current_theme.error.upper() == "#D55E00"
            assert app.ansi_theme.ansi_colors[2] == OKABE_ITO_SKY_BLUE  # ANSI green: Ready, fits, 2xx
            assert app.ansi_theme.ansi_colors[1] == OKABE_ITO_VERMILLION  # ANSI red: refused, NotReady, 4xx
            await until(pilot, lambda: app.query_one("#why").fit_text("pair-worker"), "the fit preview")
            await pilot.pause(0.1)  # and its repaint
            svg = app.export_screenshot().lower()
            assert "#56b4e9" in svg and "#d55e00" in svg  # "✓ pair-worker fits", "✗ … TaintToleration"


async def test_the_default_theme_keeps_textual_colours():
    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)):
        assert app.theme == "textual-dark"
        assert app.ansi_theme is app.ansi_theme_dark


async def test_the_command_palette_picks_an_observatory_theme():
    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot, app)
        await pick_in_palette(pilot, app, "theme", "Change the current theme")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the theme picker")
        await pick_in_palette(pilot, app, "projector", "observatory-projector")
        await until(pilot, lambda: app.theme == "observatory-projector", "the projector theme")


async def test_an_unknown_theme_is_a_clear_error(capsys, monkeypatch, tmp_path):
    assert theme_problem("observatory-colorblind") is None and theme_problem("nord") is None
    problem = theme_problem("projector")
    assert problem is not None and "'projector'" in problem and "observatory-projector" in problem

    monkeypatch.setenv("OBSERVATORY_UI__THEME", "projector")
    assert Settings().ui.theme == "projector"
    from observatory.cli import main

    # refused before anything starts: the kubeconfig (which does not exist) is never read
    assert main(["--kubeconfig", str(tmp_path / "no-such-kubeconfig")]) == 2
    err = capsys.readouterr().err
    assert "OBSERVATORY_UI__THEME" in err and "'projector'" in err and "observatory-projector" in err

    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05, theme="projector")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: any(s == "error" and "projector" in m for s, m in notifications(app)), "the error")
        assert app.theme == "textual-dark"


# -- the key-cast overlay ---------------------------------------------------------------------------------------------

async def test_keycast_shows_the_last_keys_and_toggles_from_the_palette():
    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05, keycast=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await select_manual(pilot, app)
        cast = app.query_one(KeyCast)
        assert app.query_one(KeyCastBar).display
        await pilot.press("b", "down", "escape", "question_mark", "escape")
        await until(pilot, lambda: app.screen is app.screen_stack[0], "the windows to close")
        assert cast.text == "b ↓ Esc ? Esc"
        await pilot.press("slash", *"abcdefg")  # typed into the filter; only the last six stay
        assert cast.text == "b c d e f g"
        assert "b c d e f g" in app.export_screenshot().replace("&#160;", " ")
        await pilot.press("escape")

        await pick_in_palette(pilot, app, "key-cast", "Toggle key-cast overlay")
        await until(pilot, lambda: not app.query_one(KeyCastBar).display, "the overlay to hide")
        shown = cast.text
        await pilot.press("m", "escape")
        assert cast.text == shown  # nothing is cast while it is off


async def test_keycast_is_off_by_default():
    app = ObservatoryApp(RecordedSource(), clock=frozen_clock, refresh_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("down")
        assert not app.query_one(KeyCastBar).display
        assert app.query_one(KeyCast).text == ""


# -- the pieces -------------------------------------------------------------------------------------------------------

def test_the_exchange_pane_shortens_only_the_connection_flags_of_the_kubectl_line():
    from observatory.model.commands import EquivalentCommands
    from observatory.ui.widgets.exchange_pane import kubectl_line

    def commands(line: str) -> EquivalentCommands:
        return EquivalentCommands("{}", f"cat > binding.json <<'EOF'\n{{}}\nEOF\n{line}", "curl …")

    flagged = f"kubectl --kubeconfig /home/t/.kube/config --context kind-kind {KUBECTL_CREATE_RAW}"
    assert kubectl_line(commands(flagged)) == f"kubectl … {KUBECTL_CREATE_RAW}"
    assert kubectl_line(commands(f"kubectl {KUBECTL_CREATE_RAW}")) == f"kubectl {KUBECTL_CREATE_RAW}"


def test_key_labels():
    from observatory.ui.widgets.keycast import key_label

    pressed = [("b", "b"), ("down", None), ("enter", "\r"), ("escape", "\x1b"), ("tab", "\t"), ("ctrl+p", None),
               ("question_mark", "?"), ("space", " "), ("B", "B")]
    assert [key_label(k, c) for k, c in pressed] == ["b", "↓", "⏎", "Esc", "⇥", "^p", "?", "␣", "B"]
