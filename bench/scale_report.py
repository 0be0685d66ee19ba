"""The scale benchmark's figures: summaries over repetitions, the issue's targets, and the Markdown report."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from bench.lab_report import percentile

TARGETS = (
    # (id, figure, target text, limit, unit)
    ("sync_10k", "initial sync, 10k pods / 1k nodes", "≤ 3 s", 3.0, "s"),
    ("reflect_p99_1000", "reflect latency p99 at 1,000 events/s", "≤ 250 ms", 0.250, "s"),
    ("key_p99_1000", "key latency p99 at 1,000 events/s", "≤ 100 ms", 0.100, "s"),
    ("rss_10k", "peak RSS, 10k pods / 1k nodes", "≤ 400 MB", 400e6, "B"),
    ("sync_50k", "initial sync, 50k pods / 1k nodes (still usable)", "≤ 15 s", 15.0, "s"),
    ("ratio_1000", "reflect-latency median, observatory ÷ kubectl, at 1,000 events/s", "≤ 1.5", 1.5, "x"),
)
"""The scale targets, each read from :func:`headline`."""


def stats(values: Sequence[float]) -> dict[str, Any]:
    """n, median, p95, p99, min, max of ``values`` (NaN when empty)."""
    vals = [v for v in values if v is not None and not math.isnan(v)]
    return {"n": len(vals), "median": percentile(vals, 50), "p95": percentile(vals, 95), "p99": percentile(vals, 99),
            "min": min(vals) if vals else float("nan"), "max": max(vals) if vals else float("nan")}


def _scale(results: dict[str, Any], pods: int) -> dict[str, Any] | None:
    return next((s for s in results["scales"] if s["pods"] == pods), None)


def _level(scale: dict[str, Any] | None, rate: int) -> dict[str, Any] | None:
    if scale is None:
        return None
    return next((lv for lv in scale.get("levels", []) if lv["rate"] == rate), None)


def headline(results: dict[str, Any]) -> dict[str, float | None]:
    """The measured value behind each target (None when this run did not measure it)."""
    s10, s50 = _scale(results, 10_000), _scale(results, 50_000)
    l1000 = _level(s10, 1000)
    return {
        "sync_10k": s10["sync_render_s"]["median"] if s10 else None,
        "reflect_p99_1000": l1000["observatory"]["p99"] if l1000 else None,
        "key_p99_1000": l1000["keys"]["p99"] if l1000 else None,
        "rss_10k": s10["app_peak_rss_bytes"]["median"] if s10 else None,
        "sync_50k": s50["sync_render_s"]["median"] if s50 else None,
        "ratio_1000": l1000["ratio_median"] if l1000 else None,
    }


def _fmt(value: float | None, unit: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if unit == "s":
        return f"{value:,.2f} s" if value >= 1 else f"{value * 1000:,.0f} ms"
    if unit == "B":
        return f"{value / 1e6:,.0f} MB"
    if unit == "x":
        return f"{value:.2f}"
    if unit == "%":
        return f"{value:,.0f}%"
    return f"{value:,.1f}"


def _verdict(value: float | None, limit: float, unit: str) -> str:
    if value is None or math.isnan(value):
        return "not measured in this run"
    if value <= limit:
        return "met"
    over = value - limit
    return f"**missed** by {_fmt(over, unit)} ({value / limit:.1f}x the target)"


def markdown(results: dict[str, Any]) -> str:
    """The report: targets first, then every figure by scale and churn level, then the machine."""
    env, cfg = results["environment"], results["config"]
    head = headline(results)
    out = [f"# Scale benchmark: observatory beside kubectl on the lab ({env['date']})", "",
           f"Mode: {cfg['mode']}; {cfg['repetitions']} repetition(s) per scale; scales (pods/nodes) "
           + ", ".join(f"{p:,}/{n:,}" for n, p in cfg["scales"])
           + f"; reflect and key latency at {cfg['reflect_scale'][1]:,}/{cfg['reflect_scale'][0]:,} under "
           + ", ".join(f"{r:,}" for r in cfg["churn"]) + " watch events/s of background churn; "
           + f"{cfg['probes']} probe pods × 4 writes and {cfg['keys']} key presses per level and repetition.", "",
           "## Targets (issue 8)", "", "| Figure | Target | Measured | Met? |", "|---|---|---:|---|"]
    for key, figure, target, limit, unit in TARGETS:
        out.append(f"| {figure} | {target} | {_fmt(head[key], unit)} | {_verdict(head[key], limit, unit)} |")
    out += ["", "Times are medians over repetitions; latency percentiles pool every sample of every repetition. "
                "Machine: " + _machine(env, results) + ".", ""]
    out += ["## Initial sync", "",
            "| pods / nodes | lab start | kubectl list (peer) | model holds every pod | first full render "
            "(median) | p95 | peak RSS (median) | lab list, plain JSON | lab list, paged by 500 |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in results["scales"]:
        out.append(f"| {s['pods']:,} / {s['nodes']:,} | {_fmt(s['lab_start_s'], 's')} | "
                   f"{_fmt(s['kubectl_list_s']['median'], 's')} | {_fmt(s['sync_model_s']['median'], 's')} | "
                   f"{_fmt(s['sync_render_s']['median'], 's')} | {_fmt(s['sync_render_s']['p95'], 's')} | "
                   f"{_fmt(s['app_peak_rss_bytes']['median'], 'B')} | {_fmt(s['lab_list']['plain']['median'], 's')}"
                   f" | {_fmt(s['lab_list']['paged']['median'], 's')} |")
    scale = _scale(results, cfg["reflect_scale"][1])
    if scale and scale.get("levels"):
        out += ["", f"## Reflect latency at {scale['pods']:,} pods / {scale['nodes']:,} nodes", "",
                "From sending a write to the lab until its row is painted in the pending pane (observatory) or its "
                "line arrives from `kubectl get pods|events -A -w -o name` (kubectl); same writes, same run.", "",
                "| churn target | achieved | observatory p50 | p95 | p99 | kubectl p50 | p95 | p99 | ratio of medians "
                "| key p50 | key p99 | CPU observatory | lab | kubectl (both) | churn writer | repaint median / p99 "
                "| full GCs, longest | missed |",
                "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for lv in scale["levels"]:
            o, k, keys, cpu = lv["observatory"], lv["kubectl"], lv["keys"], lv["cpu_percent"]
            out.append(
                f"| {lv['rate']:,}/s | {lv['achieved_wps']:,.0f}/s | {_fmt(o['median'], 's')} | {_fmt(o['p95'], 's')}"
                f" | {_fmt(o['p99'], 's')} | {_fmt(k['median'], 's')} | {_fmt(k['p95'], 's')} | "
                f"{_fmt(k['p99'], 's')} | {_fmt(lv['ratio_median'], 'x')} | {_fmt(keys['median'], 's')} | "
                f"{_fmt(keys['p99'], 's')} | {_fmt(cpu['observatory'], '%')} | {_fmt(cpu['lab'], '%')} | "
                f"{_fmt(cpu['kubectl'], '%')} | {_fmt(cpu['churn'], '%')} | {_fmt(lv['repaint_s']['median'], 's')} / "
                f"{_fmt(lv['repaint_p99_s'], 's')} | {lv['gc_full']}, {_fmt(lv['gc_full_max_s'], 's')} | "
                f"{lv['missed']} |")
        out += ["", "By kind of write (all churn levels pooled; medians):", "",
                "| write | observatory | kubectl | ratio |", "|---|---:|---:|---:|"]
        for op, row in scale["by_op"].items():
            out.append(f"| {op} | {_fmt(row['observatory'], 's')} | {_fmt(row['kubectl'], 's')} | "
                       f"{_fmt(row['ratio'], 'x')} |")
    fan = scale.get("fan_out") if scale else None
    if fan:
        lat = fan["latency"]
        out += ["", "## The lab's own costs", "",
                f"List of {scale['lab_list']['items']:,} pods: "
                f"plain JSON {_fmt(scale['lab_list']['plain']['median'], 's')}, "
                f"paged by 500 {_fmt(scale['lab_list']['paged']['median'], 's')} (medians, to the last byte). "
                f"Watch fan-out: {fan['watchers']} watchers × {fan['achieved_wps']:,.0f} writes/s achieved "
                f"(target {fan['target_wps']:,}) = {fan['delivered_per_s']:,.0f} events/s delivered; "
                f"send-to-receive latency p50 {_fmt(lat['median'], 's')}, p99 {_fmt(lat['p99'], 's')}; "
                f"lab CPU {_fmt(fan['lab_cpu_percent'], '%')}."]
    if results.get("profile"):
        out += ["", f"## Profile of observatory at {results.get('profile_rate', 1000):,} events/s (py-spy, first "
                    "repetition, while the probes and keys ran)", "", results["profile"]]
    if results.get("notes"):
        out += ["", results["notes"].rstrip()]
    out.append("")
    return "\n".join(out)


def _machine(env: dict[str, Any], results: dict[str, Any]) -> str:
    load0, load1 = env["loadavg_at_start"][0], results.get("loadavg_at_end", [float("nan")])[0]
    return (f"{env['cpu_count']} cores ({env['cpu_model'] or env['machine']}), Python {env['python']}, "
            f"kubectl {env['kubectl']}, commit {(env['git_commit'] or '?')[:10]}"
            + (" with uncommitted changes" if env["uncommitted_lab_changes"] else "")
            + f"; 1-minute load average {load0:.2f} at start, {load1:.2f} at end; whole run "
            f"{results['total_run_s']:.0f} s")
