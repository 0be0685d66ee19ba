"""REST strategies of serviceaccounts (defaults, validation, printing)."""

from __future__ import annotations

from observatory.lab.kinds.base import KindStrategy


class ServiceAccountStrategy(KindStrategy):
    resource = "serviceaccounts"
    has_status = False


STRATEGIES: tuple[KindStrategy, ...] = (ServiceAccountStrategy(),)
