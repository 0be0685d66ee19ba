"""REST strategies of configmaps, secrets (defaults, validation, printing)."""

from __future__ import annotations

from observatory.lab.kinds.base import KindStrategy


class ConfigMapStrategy(KindStrategy):
    resource = "configmaps"
    has_status = False


class SecretStrategy(KindStrategy):
    resource = "secrets"
    has_status = False


STRATEGIES: tuple[KindStrategy, ...] = (ConfigMapStrategy(), SecretStrategy())
