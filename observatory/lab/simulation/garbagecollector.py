"""Simulated the garbage collector (ownerReferences), as kube-controller-manager runs it."""

from __future__ import annotations

from typing import Any

from observatory.lab.simulation.client import Clients
from observatory.settings import LabSettings


def components(clients: Clients, settings: LabSettings) -> list[Any]:
    """The components to start: objects with an async ``run()`` that runs until cancelled."""
    return []
