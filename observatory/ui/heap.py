"""Keeping Python's cyclic garbage collector from stopping the screen once a big cluster is loaded.

A full (generation 2) collection walks every object the process holds. With 10,000 pods that is millions of
objects (records, indexes, table rows, node texts), and under a steady stream of watch events the collector runs a
full pass every few seconds, each one stopping the event loop for a quarter of a second or more
(bench/results/scale.md). What a list brought in lives for as long as it is shown, so after a big list, and again
after the repaint that shows it, those objects are moved to the permanent generation (``gc.freeze()``): full passes
then walk only what came after, and a full pass that still takes long freezes what survived it. Reference counting
still frees every frozen object that is dropped without a cycle, which is how records, API dicts and texts are
replaced.
"""

from __future__ import annotations

import gc
import time

from observatory.model.deltas import Delta, Relisted

FREEZE_AFTER = 1000
"""Objects in a list (:class:`Relisted`) from which the heap is frozen after it was applied and shown."""

_shown_pending = False
SLOW_FULL_PASS = 0.05
"""Seconds: a full collection that took longer freezes what survived it (see :func:`_freeze_survivors`)."""
_pass_started = 0.0


def settle_after(delta: Delta) -> None:
    """Call after applying ``delta``: after a list of :data:`FREEZE_AFTER` objects or more, freeze the heap (and
    again after the next repaint, see :func:`settle_after_repaint`)."""
    global _shown_pending
    if isinstance(delta, Relisted) and len(delta.objs) >= FREEZE_AFTER:
        gc.freeze()
        _shown_pending = True
        if _freeze_survivors not in gc.callbacks:
            gc.callbacks.append(_freeze_survivors)


def settle_after_repaint() -> None:
    """Call after each repaint: the first one after a big list froze what it built (rows, texts)."""
    global _shown_pending
    if _shown_pending:
        _shown_pending = False
        gc.freeze()


def _freeze_survivors(phase: str, info: dict[str, int]) -> None:
    """A ``gc.callbacks`` hook, installed after the first big list: when a full collection took longer than
    :data:`SLOW_FULL_PASS`, what survived it is long-lived (records of a steady cluster, table rows, caches), so it is
    frozen too and the next full pass walks only what came after. The cost: a reference cycle among those survivors
    that becomes garbage later is not collected (records and API dicts hold no cycles)."""
    global _pass_started
    if info.get("generation") != 2:
        return
    if phase == "start":
        _pass_started = time.perf_counter()
    elif time.perf_counter() - _pass_started > SLOW_FULL_PASS:
        gc.freeze()
