"""bench/scale_audit.py: the audit variant's table puts each churn level's CPU without and with audit side by side,
from the scale benchmark's own summary (no benchmark is run here)."""

from __future__ import annotations

from bench.scale_audit import _levels, markdown


def measured(observatory_cpu: float, lab_cpu: float, read: int | None) -> dict:
    level = {"rate": 1000, "achieved_wps": 950.0, "cpu_percent": {"observatory": observatory_cpu, "lab": lab_cpu},
             "observatory": {"median": 0.25}}
    raw = {"rate": 1000, **({"audit_read": read} if read is not None else {})}
    return {"scales": [{"pods": 1000, "nodes": 100, "levels": [level], "runs": [{"levels": [raw]}]}]}


def test_each_level_shows_both_processes_without_and_with_audit():
    results = {"command": "python -m bench scale --quick --audit", "environment": {"git_commit": "abc",
                                                                                  "loadavg_at_start": [0.5]},
               "config": {"repetitions": 1}, "loadavg_at_end": [0.7],
               "without_audit": _levels(measured(20.0, 30.0, None)), "with_audit": _levels(measured(24.0, 41.0, 1900))}
    row = next(line for line in markdown(results).splitlines() if line.startswith("| 1000 |"))
    assert row == "| 1000 | 950 | 20% | 24% | 30% | 41% | 250 ms | 250 ms | 1900 |"
    assert "`python -m bench scale --quick --audit`" in markdown(results)
