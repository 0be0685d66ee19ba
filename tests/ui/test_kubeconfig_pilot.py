"""The embedded lab's kubeconfig on screen, so a student can ``export KUBECONFIG=…`` in another terminal and follow
along with kubectl: at the end of the header's first line (without the server when both do not fit), and in the
palette's *Kubeconfig*. A recording's header leaves it out (its replay has no kubeconfig to show)."""

from __future__ import annotations

import shlex

from observatory.kube.connect import connect
from observatory.kube.source import ClusterSource
from observatory.recorder import RecordingSource
from observatory.ui.app import ObservatoryApp
from tests.ui.fakes import RecordedSource
from tests.ui.helpers import MANUAL, pick_in_palette, until


def header(app: ObservatoryApp) -> list[str]:
    return str(app.query_one("#header").render()).splitlines()


def notices(app: ObservatoryApp) -> list[tuple[str, str]]:
    return [(n.title, n.message) for n in app._notifications]


async def test_the_header_shows_the_labs_kubeconfig_to_export(make_app, lab):
    export = f"export KUBECONFIG={shlex.quote(str(lab.kubeconfig_path))}"
    app = await make_app()
    wide = len(f" LAB  observatory-lab · {lab.url} · {export}") + 2
    async with app.run_test(size=(wide, 40)) as pilot:
        await until(pilot, lambda: MANUAL in app.main.state.pods, "the seed's pod")
        await until(pilot, lambda: header(app)[0].endswith(export), "the export line in the header")
        assert header(app)[0] == f" LAB  observatory-lab · {lab.url} · {export}"


async def test_when_the_server_and_the_path_do_not_both_fit_the_path_stays(make_app, lab):
    export = f"export KUBECONFIG={shlex.quote(str(lab.kubeconfig_path))}"
    app = await make_app()
    narrow = len(f" LAB  observatory-lab · {export}") + 2
    async with app.run_test(size=(narrow, 40)) as pilot:
        await until(pilot, lambda: header(app)[0].endswith(export), "the export line in the header")
        assert lab.url not in header(app)[0]


async def test_the_palette_shows_the_kubeconfig_also_while_recording(lab, tmp_path):
    connection = await connect(str(lab.kubeconfig_path), "observatory-lab", None)
    source = RecordingSource(ClusterSource(connection, namespace=None, lab=True), tmp_path / "session.jsonl",
                             secrets=connection.secrets)
    app = ObservatoryApp(source, refresh_interval=0.05)
    try:
        async with app.run_test(size=(200, 40), notifications=True) as pilot:
            await until(pilot, lambda: MANUAL in app.main.state.pods, "the seed's pod")
            assert "KUBECONFIG" not in header(app)[0]  # what the replay of this recording will show, too
            await pick_in_palette(pilot, app, "Kubeconfig", "Kubeconfig")
            export = f"export KUBECONFIG={shlex.quote(str(lab.kubeconfig_path))}"
            await until(pilot, lambda: ("Kubeconfig: follow along with kubectl", export) in notices(app),
                        "the kubeconfig notification")
    finally:
        await source.close()


async def test_no_kubeconfig_is_shown_for_a_cluster_that_is_not_a_lab():
    app = ObservatoryApp(RecordedSource(), refresh_interval=0.05)
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await until(pilot, lambda: MANUAL in app.main.state.pods, "the seed's pod")
        assert "KUBECONFIG" not in header(app)[0]
        await pick_in_palette(pilot, app, "Kubeconfig", "Kubeconfig")
        await until(pilot, lambda: any(title == "Kubeconfig" for title, _ in notices(app)), "the notification")
        assert ("Kubeconfig", "This screen is not on an embedded lab it started: kubectl uses your own "
                "kubeconfig.") in notices(app)
