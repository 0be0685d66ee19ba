"""REST strategies of deployments, replicasets (defaults, validation, printing)."""

from __future__ import annotations

from observatory.lab.kinds.base import KindStrategy


class DeploymentStrategy(KindStrategy):
    resource = "deployments"
    has_generation = True


class ReplicaSetStrategy(KindStrategy):
    resource = "replicasets"
    has_generation = True


STRATEGIES: tuple[KindStrategy, ...] = (DeploymentStrategy(), ReplicaSetStrategy())
