"""REST strategies of daemonsets (defaults, validation, printing)."""

from __future__ import annotations

from observatory.lab.kinds.base import KindStrategy


class DaemonSetStrategy(KindStrategy):
    resource = "daemonsets"
    has_generation = True


STRATEGIES: tuple[KindStrategy, ...] = (DaemonSetStrategy(),)
