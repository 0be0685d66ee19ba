"""Fixtures for the kube tests: a Connection to the shared ``lab`` fixture, and a scripted fake API server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from observatory.kube.connect import Connection, connect
from tests.kube.helpers import FakeAPI


@pytest.fixture
async def conn(lab) -> AsyncIterator[Connection]:
    connection = await connect(str(lab.kubeconfig_path))
    try:
        yield connection
    finally:
        await connection.close()


@pytest.fixture
async def fake(tmp_path) -> AsyncIterator[tuple[FakeAPI, Connection]]:
    api = await FakeAPI().start()
    connection = await connect(str(api.kubeconfig(tmp_path / "fake-kc")))
    try:
        yield api, connection
    finally:
        await connection.close()
        await api.stop()
