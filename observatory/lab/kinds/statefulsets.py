"""REST strategies of statefulsets (defaults, validation, printing)."""

from __future__ import annotations

from observatory.lab.kinds.base import KindStrategy


class StatefulSetStrategy(KindStrategy):
    resource = "statefulsets"
    has_generation = True


STRATEGIES: tuple[KindStrategy, ...] = (StatefulSetStrategy(),)
