"""REST strategies of controllerrevisions (defaults, validation, printing)."""

from __future__ import annotations

from observatory.lab.kinds.base import KindStrategy


class ControllerRevisionStrategy(KindStrategy):
    resource = "controllerrevisions"
    has_status = False


STRATEGIES: tuple[KindStrategy, ...] = (ControllerRevisionStrategy(),)
