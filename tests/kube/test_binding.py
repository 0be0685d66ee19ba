"""The Binding POST as data: exact bytes both ways, status lines, headers without credentials, transport failures."""

from __future__ import annotations

import json

import pytest

from observatory.embedded import EmbeddedLab
from observatory.kube.binding import binding_body, post_binding
from observatory.kube.connect import connect
from observatory.lab.kubeconfig import write_kubeconfig
from observatory.settings import LabSettings
from tests.conftest import API_ONLY
from tests.kube.helpers import closed_port, loopback_url, rewrite_kubeconfig, silent_server

CREATED = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}\n'
CONFLICT = ('Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node '
            '"pair-worker"')


async def test_201_then_409_exactly(lab, conn):
    first = await post_binding(conn.api, "sched-lab", "manual", "pair-worker")
    assert (first.status, first.reason, first.http_version, first.error) == (201, "Created", "HTTP/1.1", None)
    assert first.status_line == "HTTP/1.1 201 Created"
    assert first.response_body == CREATED
    assert (first.method, first.path) == ("POST", "/api/v1/namespaces/sched-lab/pods/manual/binding")
    assert first.request_line == "POST /api/v1/namespaces/sched-lab/pods/manual/binding HTTP/1.1"
    assert first.pod == "sched-lab/manual" and first.node == "pair-worker"
    assert json.loads(first.request_body) == {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "manual", "namespace": "sched-lab"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "pair-worker"}}
    headers = dict(first.response_headers)
    assert headers["Content-Type"] == "application/json" and headers["Content-Length"] == str(len(CREATED))
    assert "Date" in headers
    assert first.elapsed_ms > 0 and first.sent_at.tzinfo is not None
    assert lab.store.get("pods", "sched-lab", "manual")["spec"]["nodeName"] == "pair-worker"

    second = await post_binding(conn.api, "sched-lab", "manual", "pair-control-plane")
    assert second.status_line == "HTTP/1.1 409 Conflict"
    body = json.loads(second.response_body)
    assert body["message"] == CONFLICT and body["reason"] == "Conflict" and body["code"] == 409
    assert second.status_message == CONFLICT
    assert second.response_body.endswith(b"\n")


async def test_uid_precondition_is_sent(lab, conn):
    uid = lab.store.get("pods", "sched-lab", "manual")["metadata"]["uid"]
    exchange = await post_binding(conn.api, "sched-lab", "manual", "pair-worker", uid=uid)
    assert exchange.status == 201
    assert json.loads(exchange.request_body)["metadata"] == {"name": "manual", "namespace": "sched-lab", "uid": uid}


async def test_404_for_a_missing_pod_is_data(lab, conn):
    exchange = await post_binding(conn.api, "sched-lab", "nobody", "pair-worker")
    assert exchange.status_line == "HTTP/1.1 404 Not Found"
    assert json.loads(exchange.response_body)["message"] == 'pods "nobody" not found'


async def test_credentials_never_recorded_over_tls_with_a_token(tmp_path):
    lab = EmbeddedLab(LabSettings(**API_ONLY), host="0.0.0.0", scenario="manual-binding",
                      kubeconfig_path=tmp_path / "kc")
    await lab.start()
    try:
        path = rewrite_kubeconfig(lab.kubeconfig_path, tmp_path / "kc-loopback", server=loopback_url(lab.url))
        conn = await connect(str(path))
        try:
            exchange = await post_binding(conn.api, "sched-lab", "manual", "pair-worker")
        finally:
            await conn.close()
        assert exchange.status == 201 and exchange.response_body == CREATED  # the token was sent and accepted
        names = {name.lower() for name, _ in exchange.request_headers}
        assert {"content-type", "accept", "content-length", "host", "user-agent"} <= names
        assert not names & {"authorization", "cookie", "proxy-authorization"}
        flat = repr(exchange)
        assert lab.token not in flat and "Bearer" not in flat
    finally:
        await lab.stop()


async def test_recorded_request_is_what_went_on_the_wire(fake):
    api, conn = fake
    api.post_response = (500, [("Set-Cookie", "session=abc"), ("Warning", '299 - "unknown field"'),
                               ("Audit-Id", "1234"), ("Content-Type", "text/plain")], b"internal \xff error")
    exchange = await post_binding(conn.api, "default", "weird name", "node/1")
    (received_headers, received_body), = api.received
    assert exchange.request_body == received_body
    assert exchange.request_body == json.dumps(binding_body("default", "weird name", "node/1")).encode()
    assert exchange.path == "/api/v1/namespaces/default/pods/weird%20name/binding"
    assert api.requests[-1] == ("POST", "/api/v1/namespaces/default/pods/weird%20name/binding")
    assert received_headers["Authorization"] == "Bearer fake-token-123456"  # sent, but never recorded
    expected = {(k.lower(), v) for k, v in received_headers.items() if k.lower() != "authorization"}
    assert {(k.lower(), v) for k, v in exchange.request_headers} == expected
    assert exchange.status_line == "HTTP/1.1 500 Internal Server Error"
    assert exchange.response_body == b"internal \xff error"
    headers = exchange.response_headers
    assert ("Warning", '299 - "unknown field"') in headers and ("Audit-Id", "1234") in headers
    assert not any(name.lower() == "set-cookie" for name, _ in headers)
    assert "fake-token-123456" not in repr(exchange)


async def test_closed_port_is_status_0_with_an_error(tmp_path):
    port = closed_port()
    conn = await connect(str(write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}", token="tok-xyz-789")))
    try:
        exchange = await post_binding(conn.api, "sched-lab", "manual", "pair-worker")
    finally:
        await conn.close()
    assert exchange.status == 0 and exchange.status_line == "" and exchange.response_body == b""
    assert "refused" in exchange.error and f"127.0.0.1:{port}" in exchange.error
    assert json.loads(exchange.request_body)["target"]["name"] == "pair-worker"
    assert exchange.path == "/api/v1/namespaces/sched-lab/pods/manual/binding"
    assert "tok-xyz-789" not in repr(exchange)


@pytest.mark.timeout(30)
async def test_no_answer_within_the_timeout_is_status_0(tmp_path):
    server, port = await silent_server()
    try:
        conn = await connect(str(write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")))
        try:
            exchange = await post_binding(conn.api, "sched-lab", "manual", "pair-worker", timeout=0.3)
        finally:
            await conn.close()
    finally:
        server.close()
    assert exchange.status == 0 and "did not answer within 0.3 s" in exchange.error
