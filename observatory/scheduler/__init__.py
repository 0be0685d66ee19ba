"""observatory's one scheduler, for any schedulerName: ``observatory schedule``, the screen's, and the lab's
default-scheduler (:mod:`observatory.embedded`).

* :mod:`.loop`: :class:`~.loop.Scheduler`, the program (reflectors, queue, scheduling and binding cycles, events,
  the PodScheduled condition); ``Scheduler(api, options).decisions()`` yields one
  :class:`~observatory.model.decisions.SchedulingDecision` per attempt. The TUI reaches it through
  :mod:`.host` (the :class:`~.host.SchedulerHost` capability) and never imports the I/O modules itself.
* :mod:`.options` (pure): :class:`~.options.SchedulerOptions` and their validation.
* :mod:`.policies` (pure): the ``--policy`` choices among the feasible nodes.
* the scheduling queue with its backoff (pure) is :mod:`observatory.scheduling.queue`.
* :mod:`.objects` (pure): the events, the status patch and the Lease as JSON.
* :mod:`.events`: the events/v1 recorder; :mod:`.election`: leader election through a Lease.
* :mod:`.host`: :class:`~.host.InProcessScheduler`, the scheduler run over a ``ClusterSource``'s connection.
* the ``schedule`` subcommand is :mod:`observatory.schedule`, an entry point beside ``why``.

Importing this package loads only the pure modules.
"""

from .options import SchedulerOptions
from .policies import DEFAULT_POLICY, POLICIES

__all__ = ["DEFAULT_POLICY", "POLICIES", "SchedulerOptions"]
