"""The scale benchmark at a few hundred pods, so it cannot rot: every figure is produced and finite.

It runs the real thing (``python -m bench scale --quick``: the lab as a subprocess, observatory headless in its own
process, kubectl as the peer, the churn writer) at 300 pods / 30 nodes with a handful of probes and two key presses
per level (Textual's ``Pilot.press`` returns once every widget on the screen has handled what was queued before it:
under churn, seconds), writing to a temporary folder. It asserts only that the figures exist and are numbers, never a
time.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@pytest.mark.timeout(600)
def test_quick_scale_benchmark_produces_every_figure(tmp_path, kubectl):
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "scale", "--quick", "--scales", "300/30", "--probes", "3", "--keys", "2",
         "--warmup", "0.5", "--out-dir", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = json.loads((tmp_path / "scale.json").read_text())
    markdown = (tmp_path / "scale.md").read_text()

    (scale,) = results["scales"]
    assert (scale["pods"], scale["nodes"]) == (300, 30)
    for figure in ("sync_model_s", "sync_render_s", "kubectl_list_s", "app_peak_rss_bytes"):
        assert finite(scale[figure]["median"]), figure
    assert finite(scale["lab_start_s"])
    assert scale["lab_list"]["items"] == 300
    assert finite(scale["lab_list"]["plain"]["median"]) and finite(scale["lab_list"]["paged"]["median"])

    assert [level["rate"] for level in scale["levels"]] == [0, 100, 1000]
    for level in scale["levels"]:
        for who in ("observatory", "kubectl"):
            assert level[who]["n"] == 3 * 4, (level["rate"], who)  # 3 probes x create, event, status, bind
            for q in ("median", "p95", "p99"):
                assert finite(level[who][q]), (level["rate"], who, q)
        assert finite(level["ratio_median"])
        assert level["keys"]["n"] > 0 and finite(level["keys"]["p99"])
        for process in ("observatory", "lab", "kubectl"):
            assert finite(level["cpu_percent"][process]), (level["rate"], process)
        if level["rate"]:
            assert finite(level["achieved_wps"]) and level["achieved_wps"] > 0
    assert set(scale["by_op"]) == {"create", "event", "status", "bind"}

    fan = scale["fan_out"]
    assert fan["watchers"] == 3 and fan["delivered"] > 0
    assert finite(fan["delivered_per_s"]) and finite(fan["latency"]["p99"]) and finite(fan["lab_cpu_percent"])

    env = results["environment"]
    assert env["cpu_count"] and env["python"] and env["date"]
    assert "| initial sync, 10k pods / 1k nodes | ≤ 3 s |" in markdown
    assert "## Reflect latency at 300 pods / 30 nodes" in markdown
