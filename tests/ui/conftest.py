"""Fixtures shared by the pilot tests that run the app against a real lab (the ``lab`` fixture of tests/conftest.py,
``rbac_lab`` of tests/rbac_fixtures.py). Helpers are in helpers.py, recorded sources in fakes.py."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from observatory.kube.connect import connect
from observatory.kube.source import ClusterSource
from observatory.scheduler.host import InProcessScheduler
from observatory.ui.app import ObservatoryApp


@pytest.fixture
async def make_app(lab) -> AsyncIterator[Callable[..., Awaitable[ObservatoryApp]]]:
    """``await make_app(read_only=False)``: an ObservatoryApp over the lab's kubeconfig, every namespace, repainting
    every 50 ms, able to run a scheduler (``r``); its connections are closed after the test. A module may define its
    own ``make_app`` instead."""
    sources = []

    async def make(*, read_only: bool = False) -> ObservatoryApp:
        connection = await connect(str(lab.kubeconfig_path), "observatory-lab", None)
        source = ClusterSource(connection, namespace=None, lab=True, read_only=read_only)
        sources.append(source)
        return ObservatoryApp(source, refresh_interval=0.05, scheduler=InProcessScheduler(source))

    yield make
    for source in sources:
        await source.close()


@pytest.fixture
def utc_local_time(monkeypatch):
    """Local time is UTC for the test (``TZ=UTC``), so the clock times a pane shows are the same on every machine."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.delenv("TZ")
    time.tzset()
