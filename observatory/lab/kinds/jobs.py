"""REST strategies of jobs, cronjobs (defaults, validation, printing)."""

from __future__ import annotations

from observatory.lab.kinds.base import KindStrategy


class JobStrategy(KindStrategy):
    resource = "jobs"
    has_generation = True


class CronJobStrategy(KindStrategy):
    resource = "cronjobs"
    has_generation = True


STRATEGIES: tuple[KindStrategy, ...] = (JobStrategy(), CronJobStrategy())
