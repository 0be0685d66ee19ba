"""Shared fixtures: an in-process lab on a random loopback port, and the kubectl binary (required, never skipped)."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator

import aiohttp
import pytest
from hypothesis import HealthCheck, settings

from observatory.embedded import EmbeddedLab
from observatory.settings import LabSettings

pytest_plugins = ["tests.rbac_fixtures"]

settings.register_profile("ci", derandomize=True, database=None, deadline=None,
                          suppress_health_check=list(HealthCheck))
settings.register_profile("explore", deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
"""The property tests draw the same examples on every run ("ci"), so a submission passes or fails on its own code,
never on the luck of the draw. ``HYPOTHESIS_PROFILE=explore`` draws new random examples, ten times as many, and
keeps failures in .hypothesis/ to replay: the way to hunt for new bugs."""


@pytest.fixture
def kubectl() -> str:
    """kubectl's path. Missing kubectl fails the test: CI must never pass without the reference client."""
    path = shutil.which("kubectl")
    if path is None:
        pytest.fail("kubectl is not on PATH; the lab's kubectl tests require it")
    return path


API_ONLY = {"scheduler": False, "kubelet": False, "podgc": False, "node_lifecycle": False}
"""LabSettings overrides that leave the API server alone, for tests of its own semantics."""


@pytest.fixture
def lab_settings() -> LabSettings:
    return LabSettings(bookmark_interval=0.2, **API_ONLY)


@pytest.fixture
def lab_scenario() -> str:
    """The scenario the ``lab`` fixture loads; override it (or parametrize it) for another one."""
    return "manual-binding"


@pytest.fixture
async def lab(tmp_path, lab_settings, lab_scenario) -> AsyncIterator[EmbeddedLab]:
    """A running lab with the ``manual-binding`` scenario (pair + ``sched-lab/manual``) unless a test overrides
    ``lab_scenario`` and, unless a test overrides ``lab_settings``, no simulated components."""
    server = EmbeddedLab(lab_settings, scenario=lab_scenario, kubeconfig_path=tmp_path / "kubeconfig")
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def http(lab) -> AsyncIterator[aiohttp.ClientSession]:
    """A plain HTTP client for the lab, for tests that compare status codes and exact bytes."""
    async with aiohttp.ClientSession(base_url=lab.url) as session:
        yield session
