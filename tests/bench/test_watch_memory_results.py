"""The recorded watch memory run (bench/results/watch_memory.json): every row's medians are those of its runs, each
tree has one watcher and the larger counts for both kinds of watch, and bench/README.md quotes the Markdown.

These read the committed files only; nothing here measures memory or asserts a time.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results"


def test_the_recorded_watch_memory_run_is_consistent():
    results = json.loads((RESULTS / "watch_memory.json").read_text())
    config = results["config"]
    assert "/" not in results["command"].split("--baseline-tree")[-1].split()[0]  # no path of the machine
    assert set(results["trees"]) == {"this tree", f"baseline {config['baseline']}"}
    for tree in results["trees"].values():
        runs, summary = tree["runs"], tree["summary"]
        assert {(row["kind"], row["watchers"]) for row in summary} == {
            (kind, n) for kind in config["kinds"] for n in config["watchers"]}
        for row in summary:
            mine = [r for r in runs if (r["kind"], r["watchers"]) == (row["kind"], row["watchers"])]
            assert len(mine) == row["runs"] == config["repeats"]
            assert row["growth"] == statistics.median(r["peak"] - r["before"] for r in mine)
            assert row["retained"] == statistics.median(r["after"] - r["before"] for r in mine)
            one = next(o for o in summary if o["kind"] == row["kind"] and o["watchers"] == 1)
            assert row["ratio_to_one"] == row["growth"] / one["growth"]
        assert all(r["peak_reset"] for r in runs)  # each peak is the run's own, not the lab's lifetime peak


def test_the_bench_readme_quotes_the_recorded_report():
    report = (RESULTS / "watch_memory.md").read_text().rstrip("\n").split("\n")
    quoted = "\n".join("##" + line if line.startswith("#") else line for line in report)
    assert quoted in (REPO / "bench" / "README.md").read_text()
