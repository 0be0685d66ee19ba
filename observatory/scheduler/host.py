"""Running observatory's scheduler inside the screen: the :class:`SchedulerHost` capability, and
:class:`InProcessScheduler`, which runs :class:`observatory.scheduler.loop.Scheduler` (``observatory schedule``)
over a :class:`~observatory.kube.source.ClusterSource`'s connection.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from observatory.model.decisions import SchedulingDecision
from observatory.scheduler.options import SchedulerOptions

if TYPE_CHECKING:
    from observatory.kube.source import ClusterSource

__all__ = ["InProcessScheduler", "SchedulerHost"]


class SchedulerHost(Protocol):
    """A scheduler that can be run for one schedulerName and scope."""

    def run_scheduler(self, options: SchedulerOptions, *, namespace: str | None,
                      log: Callable[[str], None] | None = None) -> AsyncIterator[SchedulingDecision]:
        """Run a scheduler for ``options.scheduler_name`` in ``namespace`` (None: every namespace), yielding one
        SchedulingDecision per attempt until the iteration is closed or cancelled (then its watches stop and a held
        Lease is released). Raises ValueError for invalid ``options``; the iterator raises ``SchedulerStopped`` when
        a leader-election Lease is lost. ``log`` gets the lines that are not decisions (synced, a watch in
        trouble)."""
        ...


class InProcessScheduler:
    """:class:`~observatory.scheduler.loop.Scheduler` over ``source``'s connection, with its reflector options.
    A read-only ``source`` forces a dry run without leader election."""

    def __init__(self, source: ClusterSource) -> None:
        self.source = source

    def run_scheduler(self, options: SchedulerOptions, *, namespace: str | None,
                      log: Callable[[str], None] | None = None) -> AsyncIterator[SchedulingDecision]:
        from observatory.scheduler.loop import Scheduler

        if self.source.read_only and not options.dry_run:
            options = replace(options, dry_run=True, leader_elect=False)
        scheduler = Scheduler(self.source.connection.api, options, namespace=namespace, log=log,
                              reflector_options=self.source.reflector_options)
        return scheduler.decisions()
