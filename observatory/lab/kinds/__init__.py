"""Per-kind REST strategies (:class:`~observatory.lab.kinds.base.KindStrategy`) of the kinds the lab serves
beyond the core ones wired into :mod:`observatory.lab.strategy`: apps/v1, batch/v1, policy/v1, discovery.k8s.io/v1
and the everyday core kinds (ConfigMap, Secret, ServiceAccount, Service, Endpoints).

:data:`STRATEGIES` maps a plural resource name to its strategy; the registry consults it on every create, update
and status update, and :mod:`observatory.lab.printing` takes each strategy's Table printer.
"""

from __future__ import annotations

from observatory.lab.kinds import (
    configmaps,
    controllerrevisions,
    daemonsets,
    deployments,
    jobs,
    poddisruptionbudgets,
    serviceaccounts,
    services,
    statefulsets,
)
from observatory.lab.kinds.base import KindStrategy

__all__ = ["STRATEGIES", "KindStrategy"]

STRATEGIES: dict[str, KindStrategy] = {
    s.resource: s
    for module in (configmaps, controllerrevisions, daemonsets, deployments, jobs, poddisruptionbudgets,
                   serviceaccounts, services, statefulsets)
    for s in module.STRATEGIES
}
"""resource name -> strategy."""
