"""Shared fixtures: an in-process lab on a random loopback port, and the kubectl binary (required, never skipped).

Also, for every run: a HOME and XDG folders of the run's own (one per xdist worker), so nothing reads or writes the
user's ``~/.kube`` or ``~/.cache/observatory`` and parallel workers never share the lab's default kubeconfig; and the
markers ``e2e``, ``lab``, ``pilot`` and ``snapshot`` put on each test by its folder and fixtures, so that
``pytest -m "not e2e"`` is the fast inner loop."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from hypothesis import HealthCheck, settings

from observatory.embedded import EmbeddedLab
from observatory.settings import LabSettings

pytest_plugins = ["tests.rbac_fixtures"]

TESTS = Path(__file__).resolve().parent

FOLDER_MARKS = {"e2e": "e2e", "lab": "lab", "ui": "pilot"}
"""The first folder under tests/ -> the marker every test in it gets."""

FILE_MARKS = {"bench/test_bench_smoke.py": "e2e"}
"""Files outside those folders that run the installed programs as subprocesses."""

FIXTURE_MARKS = {"snap_compare": "snapshot", "lab": "lab", "http": "lab", "rbac_lab": "lab", "token_lab": "lab",
                 "tls_lab": "lab"}
"""A test using one of these fixtures gets the marker: SVG snapshots, and the fixtures that start a lab."""


_HOME = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    """Give the run (each xdist worker) its own HOME and XDG folders, and no KUBECONFIG."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    home = Path(tempfile.mkdtemp(prefix=f"observatory-tests-{worker}-"))
    config.stash[_HOME] = home
    os.environ["HOME"] = str(home)
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        folder = home / name.removeprefix("XDG_").removesuffix("_HOME").lower()
        folder.mkdir()
        os.environ[name] = str(folder)
    os.environ.pop("KUBECONFIG", None)


def pytest_unconfigure(config: pytest.Config) -> None:
    home = config.stash.get(_HOME, None)
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        try:
            relative = Path(item.path).resolve().relative_to(TESTS)
        except ValueError:
            continue
        marks = {FOLDER_MARKS.get(relative.parts[0]), FILE_MARKS.get(relative.as_posix())}
        marks |= {FIXTURE_MARKS.get(name) for name in getattr(item, "fixturenames", ())}
        for mark in sorted(m for m in marks if m):
            item.add_marker(mark)

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


API_ONLY = {"scheduler": False, "kubelet": False, "podgc": False, "node_lifecycle": False, "pv_controller": False,
            "controllers": False}
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
