"""REST strategies of poddisruptionbudgets (defaults, validation, printing)."""

from __future__ import annotations

from observatory.lab.kinds.base import KindStrategy


class PodDisruptionBudgetStrategy(KindStrategy):
    resource = "poddisruptionbudgets"
    has_generation = True


STRATEGIES: tuple[KindStrategy, ...] = (PodDisruptionBudgetStrategy(),)
