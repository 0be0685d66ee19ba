"""The lab's memory under many watches grows with the objects watched (M), not with watchers times objects (N x M),
and settles back once the watches close.

Each run starts ``observatory lab serve`` with 1,000 generated pods (M, about 2.5 MB of watch events) in a process
of its own, so its RSS is its own (``bench/watch_memory.py``'s ``serving`` and ``measure``, the same code the
benchmark records with). Budget: three labs, one after the other in one test (about 1 s to start each on a quiet
machine, 6 s on a loaded one) and a few seconds of watching each: under 30 s in all, in parallel with the rest under
xdist.

The margins come from measurements on this machine (``python -m bench watchmem --pods 1000 --watchers 1,25
--repeats 1 --baseline-tree DIR``; a larger run is in ``bench/results/watch_memory.md``): with the shared encodings
the growth of one watcher and of 25 is the same, about 1.5 MiB, and the settled RSS is within 2 MiB of the start;
before them (ae972c5), one watcher grew the lab by 6 MiB and 25 by 66 MiB, 61 MiB of which stayed, and 25 stalled
watchers the same. The bound allowed, three times the growth of one watcher plus 8 MiB (eight of CPython's 1 MiB
object arenas, for allocator noise), is far below what N x M costs and far above what M costs.
"""

from __future__ import annotations

import asyncio

import pytest

from bench.watch_memory import MIB, measure, serving

PODS = 1000
WATCHERS = 25
SLACK = 8 * MIB


def run(tmp_path, watchers: int, kind: str) -> dict:
    with serving(PODS, 20, tmp_path) as lab:
        return asyncio.run(measure(lab, watchers, kind, None, stall=1.0))


@pytest.mark.timeout(150)
def test_many_watchers_cost_what_one_does_and_give_it_back(tmp_path):
    one = run(tmp_path / "one", 1, "initial")  # what M costs
    many = run(tmp_path / "many", WATCHERS, "initial")
    assert many["bytes_per_watcher"] == one["bytes_per_watcher"] > 2_000_000  # every watcher got every pod
    assert many["growth"] <= 3 * one["growth"] + SLACK, (many, one)
    assert many["retained"] <= one["growth"] + SLACK, (many, one)
    stalled = run(tmp_path / "stalled", WATCHERS, "stalled")  # clients that stop reading
    assert stalled["growth"] <= 3 * one["growth"] + SLACK, (stalled, one)
    assert stalled["retained"] <= one["growth"] + SLACK, (stalled, one)
