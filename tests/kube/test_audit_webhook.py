"""observatory.kube.audit_webhook: the receiver kube-apiserver's audit webhook backend POSTs EventList batches to,
answered as upstream's own test receiver answers (webhook_test.go: 200 ``{}``), and the kubeconfig it writes for
--audit-webhook-config-file, read back by kubernetes-asyncio's kubeconfig loader."""

from __future__ import annotations

import asyncio
import json
import socket

import aiohttp
import pytest
import yaml
from kubernetes_asyncio.config.kube_config import KubeConfigLoader

from observatory.kube.audit_feed import AuditOriginError
from observatory.kube.audit_webhook import AuditWebhookFeed, parse_listen_address
from tests.kube.audit_events import CONFLICT, binding_event, event_list


@pytest.mark.parametrize(("text", "address"), [
    ("127.0.0.1:9444", ("127.0.0.1", 9444)), ("localhost:0", ("localhost", 0)), ("[::1]:9444", ("::1", 9444)),
    (":9444", ("", 9444)),
])
def test_listen_addresses_are_host_and_port(text, address):
    assert parse_listen_address(text) == address


@pytest.mark.parametrize(("text", "says"), [
    ("9444", "expected HOST:PORT"), ("127.0.0.1:http", "is not a port number"),
    ("127.0.0.1:70000", "is not a port number"), ("::1:9444", "in brackets"), ("127.0.0.1:", "is not a port"),
])
def test_bad_listen_addresses_are_one_sentence(text, says):
    with pytest.raises(AuditOriginError, match=says):
        parse_listen_address(text)


@pytest.fixture
async def webhook(tmp_path):
    feed = AuditWebhookFeed("127.0.0.1", 0, config_path=tmp_path / "webhook.kubeconfig", flush_seconds=0)
    async with feed:
        yield feed


async def post(feed: AuditWebhookFeed, body: bytes, content_type: str = "application/json") -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, \
            session.post(feed.url, data=body, headers={"Content-Type": content_type}) as resp:
        return resp.status, await resp.text()


async def test_a_good_batch_is_answered_200_and_its_events_delivered(webhook):
    stream = webhook.audit_stream()
    assert (await anext(stream)).events == ()
    status, text = await post(webhook, json.dumps(event_list(binding_event(201), binding_event(409))).encode())
    assert (status, text) == (200, "{}")
    update = await asyncio.wait_for(anext(stream), 10)
    assert [(e.code, e.message) for e in update.events] == [(201, ""), (409, CONFLICT)]
    await stream.aclose()


@pytest.mark.parametrize(("body", "problem"), [
    (b"{\"kind\": \"EventList\"", "a webhook batch is not JSON"),
    (json.dumps(binding_event()).encode(), "a webhook batch is not an audit.k8s.io/v1 EventList"),
    (json.dumps(event_list(binding_event(), {"kind": "Event", "apiVersion": "audit.k8s.io/v1"})).encode(),
     "a webhook batch: audit event without"),
])
async def test_a_malformed_batch_is_answered_400_and_counted(webhook, body, problem):
    status, text = await post(webhook, body)
    assert status == 400 and text.startswith(problem)
    assert (webhook.malformed, webhook.received) == (1, 0)
    assert webhook.problem.startswith(problem)


async def test_a_body_that_is_not_json_content_is_answered_415_and_counted(webhook):
    status, text = await post(webhook, json.dumps(event_list(binding_event())).encode(), "text/plain")
    assert status == 415 and "Content-Type text/plain, not application/json" in text
    assert (webhook.malformed, webhook.received) == (1, 0)


async def test_another_method_is_405_and_not_counted(webhook):
    async with aiohttp.ClientSession() as session, session.get(webhook.url) as resp:
        assert (resp.status, resp.headers["Allow"]) == (405, "POST")
    assert webhook.malformed == 0


async def test_the_kubeconfig_names_the_receiver_and_the_origin_names_the_flags(webhook, tmp_path):
    path = tmp_path / "webhook.kubeconfig"
    assert webhook.url == f"http://127.0.0.1:{webhook.port}/audit"
    doc = yaml.safe_load(path.read_text())
    loader = KubeConfigLoader(doc)  # the official client's reader of the same format
    assert loader.current_context["context"]["cluster"] == "observatory-audit"
    assert doc["clusters"][0]["cluster"]["server"] == webhook.url
    flags = f"--audit-webhook-config-file={path} --audit-webhook-batch-max-wait=1s"
    assert webhook.origin == f"webhook 127.0.0.1:{webhook.port} · {flags}"
    assert any(flags in line for line in webhook.announcement())
    assert str(path) in "\n".join(webhook.announcement())


async def test_an_address_in_use_is_one_sentence(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        feed = AuditWebhookFeed("127.0.0.1", port, config_path=tmp_path / "k")
        with pytest.raises(AuditOriginError, match=f"127.0.0.1:{port}: cannot listen there: Address already in use"):
            await feed.start()
    assert not (tmp_path / "k").exists()
