"""Constants and helpers shared by the score plugins (``pkg/scheduler/framework/plugins/helper``)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["MAX_NODE_SCORE", "default_normalize_score"]

MAX_NODE_SCORE = 100
"""``fwk.MaxNodeScore``: every normalised plugin score lies in [0, 100]."""


def default_normalize_score(scores: Sequence[int], reverse: bool) -> list[int]:
    """``helper.DefaultNormalizeScore(MaxNodeScore, reverse, scores)``: ``score * 100 // max``, reversed as
    ``100 - that``; when every score is 0, reversed scores all become 100 (else 0)."""
    highest = max(scores, default=0)
    if highest == 0:
        return [MAX_NODE_SCORE if reverse else 0 for _ in scores]
    out = [MAX_NODE_SCORE * s // highest for s in scores]
    return [MAX_NODE_SCORE - s for s in out] if reverse else out
