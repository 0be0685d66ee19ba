"""Fixtures for the kube tests: a Connection to the shared ``lab`` fixture, and a scripted fake API server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from observatory.embedded import EmbeddedLab
from observatory.kube.connect import Connection, connect
from observatory.settings import LabSettings
from tests.conftest import API_ONLY
from tests.kube.helpers import FakeAPI


@pytest.fixture
async def tls_lab(tmp_path) -> AsyncIterator[EmbeddedLab]:
    """A lab that wants a bearer token, over HTTPS with a generated CA (bound to every address, so its certificate
    names this machine's host name and addresses, localhost, 127.0.0.1 and ::1); no simulated components."""
    lab = EmbeddedLab(LabSettings(**API_ONLY), host="0.0.0.0", scenario="manual-binding",
                    kubeconfig_path=tmp_path / "tls" / "kc")
    await lab.start()
    try:
        yield lab
    finally:
        await lab.stop()


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
