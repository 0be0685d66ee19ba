"""The recorded cost of ``--state`` (bench/results/durable.json) and crash soak (bench/results/crash_soak.json):
each holds its command and figures, and the README quotes them. These read the committed files only; nothing here
measures or asserts a time."""

from __future__ import annotations

import json
import math
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results"


def finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def test_the_recorded_cost_per_write_has_every_mode_and_its_ratio():
    results = json.loads((RESULTS / "durable.json").read_text())
    assert results["command"].startswith("python -m bench.durable_bench")
    seconds, ratios = results["seconds"], results["ratio_to_no_state"]
    assert set(seconds) == {"none", "normal", "full"}
    for mode, kinds in seconds.items():
        for kind in ("registry", "http"):
            assert kinds[kind]["n"] == results["config"]["writes"] * results["config"]["repeats"], (mode, kind)
            assert finite(kinds[kind]["median"]) and finite(kinds[kind]["p99"]), (mode, kind)
    for mode in ("normal", "full"):
        for kind in ("registry", "http"):
            assert ratios[mode][kind] == seconds[mode][kind]["median"] / seconds["none"][kind]["median"]


def test_the_readme_quotes_the_recorded_cost_per_write():
    results = json.loads((RESULTS / "durable.json").read_text())
    seconds, ratios = results["seconds"], results["ratio_to_no_state"]
    readme = (REPO / "README.md").read_text()
    for mode in ("none", "normal", "full"):
        registry, http = seconds[mode]["registry"]["median"], seconds[mode]["http"]["median"]
        ratio = (f"{ratios[mode]['registry']:.2f}, {ratios[mode]['http']:.2f}" if mode in ratios else "1, 1")
        assert f"| {registry * 1e6:,.0f} µs | {http * 1e3:.2f} ms | {ratio} |" in readme, mode


def test_the_readme_quotes_the_recorded_crash_soak():
    soak = json.loads((RESULTS / "crash_soak.json").read_text())
    assert soak["restarts"] >= 3 and soak["acknowledged_writes"] > 0
    assert soak["acknowledged_lost"] == soak["acknowledged_deletes_back"] == soak["reused_resource_versions"] == 0
    assert soak["observer_ghosts"] == soak["observer_lost"] == 0
    readme = (REPO / "README.md").read_text()
    assert f"seed {soak['seed']};" in readme
    assert f"| restarts after `kill -9` | {soak['restarts']} |" in readme
    assert f"| {soak['acknowledged_writes']:,} |" in readme
    assert f"| wall time | {soak['seconds']} s |" in readme
