"""``s`` saves an SVG of the screen as drawn, after the PrintableFilter: cluster text holding a title sequence, an
OSC 52 clipboard write, a screen clear and C1 controls reaches the file without one raw ESC, BEL or C1 control."""

from __future__ import annotations

from observatory.ui.app import ObservatoryApp
from tests.ui.fakes import RecordedSource, frozen_clock
from tests.ui.helpers import MANUAL, until, until_painted
from tests.unit.test_clean_output import HOSTILE, raw_controls


async def test_the_screenshot_file_holds_no_raw_control(tmp_path):
    source = RecordedSource()
    pod = source.objects["pods"][MANUAL]
    pod["spec"]["schedulerName"] = f"evil{HOSTILE}"
    source._refuse(pod, f"0/1 nodes are available: {HOSTILE}")
    app = ObservatoryApp(source, clock=frozen_clock, refresh_interval=0.05, screenshot_dir=tmp_path)
    async with app.run_test(size=(140, 45)) as pilot:
        await until_painted(pilot, lambda: MANUAL in app.query_one("#pending").rows, "the pod listed")
        app.query_one("#pending").select(MANUAL)
        await until_painted(pilot, lambda: app.main.selected == MANUAL, "the pod selected")
        await pilot.press("s")
        await until(pilot, lambda: list(tmp_path.glob("*.svg")), "the screenshot")
    data = next(tmp_path.glob("*.svg")).read_bytes()
    assert raw_controls(data) == []
    assert b"TITLE" in data  # the planted text is on the screen, shown without its control characters
