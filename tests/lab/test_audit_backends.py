"""The audit backends: the log file rotated as lumberjack rotates kube-apiserver's audit log (backup names in
``backupTimeFormat`` ``2006-01-02T15-04-05.000``, UTC; ``MaxBackups``, ``MaxAge``), and the webhook posting
``audit.k8s.io/v1`` EventList batches (at most ``--audit-webhook-batch-max-size`` events, in order) to the receiver
its kubeconfig names; a webhook that is down drops events after its retries, logged once, and never blocks."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import jsonschema
import pytest
import yaml
from aiohttp import web

from observatory.embedded import EmbeddedLab
from observatory.lab.audit.backends import RotatingFile, WebhookBackend, WebhookConfig, load_webhook_config
from observatory.settings import LabSettings
from tests.conftest import API_ONLY

SCHEMA = json.loads((Path(__file__).parent / "data" / "audit_event_v1.schema.json").read_text())
MB = 1024 * 1024


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 2, 3, 4, 5, 678901, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_the_log_rotates_to_lumberjacks_backup_names(tmp_path):
    clock = Clock()
    log = RotatingFile(tmp_path / "logs" / "audit.log", max_size_mb=1, now=clock)
    line = b"x" * (MB // 2 - 1) + b"\n"
    log.write(line)
    log.write(line)  # exactly 1 MB: still fits
    assert not log.backups()
    log.write(b"{}\n")  # would pass 1 MB: the file is renamed first
    assert [p.name for _, p in log.backups()] == ["audit-2026-12-02T03-04-05.678.log"]
    assert (tmp_path / "logs" / "audit.log").read_bytes() == b"{}\n"
    assert (tmp_path / "logs" / "audit-2026-12-02T03-04-05.678.log").stat().st_size == MB
    assert (tmp_path / "logs" / "audit.log").stat().st_mode & 0o777 == 0o600
    with pytest.raises(ValueError, match=f"^write length {MB + 1} exceeds maximum file size {MB}$"):
        log.write(b"x" * (MB + 1))
    log.close()


def test_maxbackup_and_maxage_remove_the_oldest_backups(tmp_path):
    clock = Clock()
    log = RotatingFile(tmp_path / "audit.log", max_size_mb=1, max_backups=2, now=clock)
    for _ in range(4):
        clock.now += timedelta(days=1)
        log.write(b"y" * 10)
        log.rotate()
    assert [p.name for _, p in log.backups()] == ["audit-2026-12-06T03-04-05.678.log",
                                                  "audit-2026-12-05T03-04-05.678.log"]
    log.close()
    aged = RotatingFile(tmp_path / "audit.log", max_size_mb=1, max_age_days=1, now=clock)
    clock.now += timedelta(hours=30)
    aged.rotate()
    assert [p.name for _, p in aged.backups()] == ["audit-2026-12-07T09-04-05.678.log"]
    aged.close()


def _kubeconfig(path: Path, server: str) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "webhook",
        "clusters": [{"name": "receiver", "cluster": {"server": server}}],
        "users": [{"name": "lab", "user": {"token": "webhook-token"}}],
        "contexts": [{"name": "webhook", "context": {"cluster": "receiver", "user": "lab"}}]}))
    return path


async def test_the_webhook_posts_event_list_batches_in_order(tmp_path):
    batches: list[dict[str, Any]] = []
    auth: list[str] = []

    async def receive(request: web.Request) -> web.Response:
        auth.append(request.headers.get("Authorization", ""))
        batches.append(await request.json())
        return web.json_response({})

    app = web.Application()
    app.router.add_post("/audit", receive)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    config = _kubeconfig(tmp_path / "webhook.yaml", f"http://127.0.0.1:{port}/audit")
    lab = EmbeddedLab(LabSettings(audit_webhook_config_file=config, audit_webhook_batch_max_size=3,
                                  audit_webhook_batch_max_wait=0.2, **API_ONLY), scenario="pair",
                      kubeconfig_path=tmp_path / "kubeconfig")
    emitted: list[dict[str, Any]] = []
    lab.auditor.subscribe(emitted.append)
    await lab.start()
    try:
        async with aiohttp.ClientSession(base_url=lab.url) as http:
            for i in range(4):
                body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
                        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}}
                async with http.post("/api/v1/namespaces/default/pods", json=body) as answer:
                    assert answer.status == 201
        for _ in range(200):  # bounded wait for the last batch (max wait 0.2 s)
            if sum(len(b["items"]) for b in batches) >= len(emitted):
                break
            await asyncio.sleep(0.05)
    finally:
        await lab.stop()
        await runner.cleanup()
    assert len(emitted) == 8  # RequestReceived and ResponseComplete of each create
    for batch in batches:
        jsonschema.validate(batch, SCHEMA)
        assert batch["kind"] == "EventList" and 1 <= len(batch["items"]) <= 3
    assert [e for b in batches for e in b["items"]] == emitted
    assert set(auth) == {"Bearer webhook-token"}


async def test_a_webhook_that_is_down_drops_after_retries_logged_once(tmp_path, caplog, unused_tcp_port):
    backend = WebhookBackend(WebhookConfig(f"http://127.0.0.1:{unused_tcp_port}/audit"), max_batch_size=2,
                             max_batch_wait=0.05, initial_backoff=0.01)
    caplog.set_level(logging.DEBUG, logger="observatory.lab.audit.backends")
    for i in range(4):
        backend.process({"auditID": str(i)}, b"")  # returns at once: nothing waits for the receiver
    for _ in range(400):
        if backend.dropped == 4:
            break
        await asyncio.sleep(0.05)
    await backend.close()
    assert (backend.dropped, backend.sent) == (4, 0)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].getMessage().startswith("Error in audit plugin 'webhook' affecting 2 audit events: ")


def test_a_webhook_kubeconfig_without_a_server_is_refused(tmp_path):
    from observatory.lab.audit.backends import WebhookConfigError

    path = tmp_path / "bad.yaml"
    path.write_text("apiVersion: v1\nkind: Config\nclusters: []\n")
    with pytest.raises(WebhookConfigError, match="no server found"):
        load_webhook_config(path)


async def test_blocking_mode_sends_each_event_on_its_own_in_order(unused_tcp_port):
    received: list[dict[str, Any]] = []

    async def receive(request: web.Request) -> web.Response:
        received.append(await request.json())
        return web.json_response({})

    app = web.Application()
    app.router.add_post("/", receive)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", unused_tcp_port).start()
    backend = WebhookBackend(WebhookConfig(f"http://127.0.0.1:{unused_tcp_port}/"), mode="blocking")
    try:
        for i in range(3):
            backend.process({"auditID": str(i)}, b"")
        for _ in range(200):  # bounded wait for the third POST
            if len(received) == 3:
                break
            await asyncio.sleep(0.02)
    finally:
        await backend.close()
        await runner.cleanup()
    assert [[e["auditID"] for e in batch["items"]] for batch in received] == [["0"], ["1"], ["2"]]
    assert backend.sent == 3


async def test_a_log_closed_with_its_lab_writes_on_when_the_lab_starts_again(tmp_path):
    from observatory.lab.audit.backends import LogBackend

    backend = LogBackend(str(tmp_path / "audit.log"))
    backend.process({}, b'{"a":1}\n')
    await backend.close()
    backend.process({}, b'{"b":2}\n')
    await backend.close()
    assert (tmp_path / "audit.log").read_bytes() == b'{"a":1}\n{"b":2}\n'
    assert backend.errors == 0
