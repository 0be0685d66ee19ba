"""One lab per test module: an API-only :class:`~observatory.embedded.EmbeddedLab` on a random loopback port with
the ``manual-binding`` scenario, and a plain aiohttp session for exact status codes and bytes.

Mark the module's async tests ``pytest.mark.asyncio(loop_scope="module")`` and define the fixtures::

    lab = module_lab_fixture()
    http = module_http_fixture()
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest_asyncio

from observatory.embedded import EmbeddedLab
from observatory.settings import LabSettings
from tests.conftest import API_ONLY


def module_lab_fixture(scenario: str = "manual-binding") -> Any:
    @pytest_asyncio.fixture(scope="module", loop_scope="module")
    async def lab(tmp_path_factory) -> AsyncIterator[EmbeddedLab]:
        server = EmbeddedLab(LabSettings(bookmark_interval=0.2, **API_ONLY), scenario=scenario,
                             kubeconfig_path=tmp_path_factory.mktemp("lab") / "kubeconfig")
        await server.start()
        try:
            yield server
        finally:
            await server.stop()
    return lab


def module_http_fixture() -> Any:
    @pytest_asyncio.fixture(scope="module", loop_scope="module")
    async def http(lab: EmbeddedLab) -> AsyncIterator[aiohttp.ClientSession]:
        async with aiohttp.ClientSession(base_url=lab.url) as session:
            yield session
    return http
