"""BindingExchange: the raw HTTP exchange of a Binding POST, with credentials never kept."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from observatory.model.records import BindingExchange

from . import lab_json

SENT = datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC)
PATH = "/api/v1/namespaces/sched-lab/pods/manual/binding"
REQUEST = (b'{"apiVersion":"v1","kind":"Binding","metadata":{"name":"manual","namespace":"sched-lab"},'
           b'"target":{"apiVersion":"v1","kind":"Node","name":"pair-worker"}}')
CREATED = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}\n'
CONFLICT_MESSAGE = ('Operation cannot be fulfilled on pods/binding "manual": '
                    'pod manual is already assigned to node "pair-worker"')


def exchange(**over) -> BindingExchange:
    fields = dict(
        pod="sched-lab/manual", node="pair-worker", method="POST", path=PATH,
        request_headers=(("Content-Type", "application/json"), ("Accept", "application/json"),
                         ("Authorization", "Bearer s3cr3t-token"), ("User-Agent", "observatory/0.1")),
        request_body=REQUEST, http_version="HTTP/1.1", status=201, reason="Created",
        response_headers=(("Audit-Id", "1d1f7c38"), ("Content-Type", "application/json"), ("Content-Length", "80")),
        response_body=CREATED, sent_at=SENT, elapsed_ms=4.2,
    )
    fields.update(over)
    return BindingExchange(**fields)


def test_credentials_are_dropped_whatever_the_producer_passes():
    ex = exchange(request_headers=[("authorization", "Bearer abc"), ("Cookie", "session=1"),
                                   ("Proxy-Authorization", "Basic eA=="), ("Content-Type", "application/json")],
                  response_headers={"Set-Cookie": "x=1", "Content-Type": "application/json"})
    assert ex.request_headers == (("Content-Type", "application/json"),)
    assert ex.response_headers == (("Content-Type", "application/json"),)
    assert "abc" not in repr(ex) and "session" not in repr(ex)
    default = exchange()
    assert [name for name, _ in default.request_headers] == ["Content-Type", "Accept", "User-Agent"]
    assert "s3cr3t" not in repr(default)


def test_201_created():
    ex = exchange()
    assert ex.request_line == f"POST {PATH} HTTP/1.1"
    assert ex.status_line == "HTTP/1.1 201 Created"
    assert ex.ok and ex.status_message is None  # the Success Status has no message
    assert ex.pretty_response == (
        '{\n  "kind": "Status",\n  "apiVersion": "v1",\n  "metadata": {},\n  "status": "Success",\n  "code": 201\n}')
    assert ex.pretty_request.splitlines()[:3] == ['{', '  "apiVersion": "v1",', '  "kind": "Binding",']


def test_409_conflict_with_the_labs_status_body():
    status = lab_json.manual_binding().conflict
    body = json.dumps(status, separators=(",", ":")).encode() + b"\n"
    ex = exchange(node="pair-control-plane", status=409, reason="Conflict", response_body=body)
    assert ex.status_line == "HTTP/1.1 409 Conflict"
    assert ex.status_message == CONFLICT_MESSAGE
    assert not ex.ok
    assert json.loads(ex.pretty_response)["reason"] == "Conflict"


def test_status_line_without_reason_phrase_and_without_answer():
    assert exchange(http_version="HTTP/2", reason="", status=409).status_line == "HTTP/2 409 Conflict"
    failed = exchange(status=0, reason="", response_headers=(), response_body=b"", http_version="HTTP/1.1",
                      error="The connection to 127.0.0.1:6443 was refused.")
    assert failed.status_line == "" and failed.status_message is None and failed.pretty_response == ""
    assert failed.error == "The connection to 127.0.0.1:6443 was refused."


def test_non_json_and_non_status_bodies():
    text = exchange(status=502, reason="Bad Gateway", response_body=b"upstream connect error \xff")
    assert text.pretty_response == "upstream connect error \ufffd" and text.status_message is None
    other = exchange(response_body=b'{"kind":"Binding","message":"not a Status"}')
    assert other.status_message is None
    assert exchange(response_body='{"kind":"Status","message":"str body"}').response_body == \
        b'{"kind":"Status","message":"str body"}'
