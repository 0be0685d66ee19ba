"""The lab's connection layer answers as kube-apiserver's Go ``net/http`` server does, and every request that reaches
its handlers answers with a Status: header limits (``MaxHeaderBytes: 1 << 20``, 431 in plain text), Go's 400s for
what it cannot read, the header read timeout, HTTP/1.0 watches, a non-UTF-8 bearer token, bad continue tokens."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest
from aiohttp import web

from observatory.embedded import EmbeddedLab
from observatory.lab import api, gohttp
from observatory.lab.api import _aiohttp_refusal
from observatory.settings import LabSettings
from tests.conftest import API_ONLY
from tests.lab.raw_http import ThreadedLab, exchange, read_all, request

# net/http server.go conn.serve: errorHeaders, then the text again as the body; close-delimited.
GO_431 = (b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
          b"Connection: close\r\n\r\n431 Request Header Fields Too Large")
GO_400 = (b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
          b"400 Bad Request")
UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Unauthorized",
                "reason": "Unauthorized", "code": 401}


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Iterator[ThreadedLab]:
    lab = EmbeddedLab(LabSettings(**API_ONLY), scenario="manual-binding",
                      kubeconfig_path=tmp_path_factory.mktemp("plain") / "kubeconfig")
    with ThreadedLab(lab) as threaded:
        yield threaded


@pytest.fixture(scope="module")
def token(tmp_path_factory) -> Iterator[ThreadedLab]:
    lab = EmbeddedLab(LabSettings(token=True, **API_ONLY), scenario="manual-binding",
                      kubeconfig_path=tmp_path_factory.mktemp("token") / "kubeconfig")
    with ThreadedLab(lab) as threaded:
        yield threaded


def status_of(answer) -> dict:
    assert answer.headers.get("content-type") == "application/json", answer.raw[:300]
    status = json.loads(answer.body)
    assert (status["kind"], status["apiVersion"], status["code"]) == ("Status", "v1", answer.status)
    return status


# -- header limits: Go's MaxHeaderBytes, not aiohttp's 8190 bytes ----------------------------------------------------


def test_a_request_line_longer_than_8190_bytes_is_served(plain):
    answer = exchange(plain, request("GET", "/api/v1/namespaces/" + "a" * 20_000 + "/pods"))
    assert answer.status == 200  # an empty PodList of a namespace nobody made, as kube-apiserver answers
    assert json.loads(answer.body)["items"] == []


def test_a_header_longer_than_8190_bytes_is_served(plain):
    answer = exchange(plain, request("GET", "/version", headers={"X-Long": "v" * 100_000}))
    assert answer.status == 200


def test_a_request_line_over_max_header_bytes_gets_gos_431(plain):
    assert read_all(plain, request("GET", "/" + "a" * (gohttp.HEADER_READ_LIMIT + 10))) == GO_431


def test_headers_over_max_header_bytes_in_total_get_gos_431(plain):
    many = {f"X-{i}": "v" * 10_000 for i in range(120)}  # each well under the limit, 1.2 MB together
    assert read_all(plain, request("GET", "/version", headers=many)) == GO_431


# -- what Go's readRequest refuses, in its plain text ------------------------------------------------------------------


def test_an_unreadable_request_gets_gos_400(plain):
    assert read_all(plain, b"GARBAGE\r\n\r\n") == GO_400


@pytest.mark.parametrize(("data", "detail"), [
    (b"GET /version HTTP/1.1\r\nConnection: close\r\n\r\n", b"missing required Host header"),
    (b"GET /version HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", b"too many Host headers"),
])
def test_host_header_refusals_carry_gos_detail(plain, data, detail):
    line = b"400 Bad Request: " + detail
    assert read_all(plain, data) == (b"HTTP/1.1 " + line + b"\r\nContent-Type: text/plain; charset=utf-8\r\n"
                                     b"Connection: close\r\n\r\n" + line)


def test_http_1_0_without_host_is_served(plain):
    answer = exchange(plain, b"GET /version HTTP/1.0\r\n\r\n")
    assert answer.status == 200


def test_headers_that_never_finish_are_closed_without_an_answer(plain, monkeypatch):
    """ReadHeaderTimeout (32 s upstream, shortened here): the connection is closed and nothing is written. Without
    the timeout the server keeps the connection open and the read fails with TimeoutError after 10 s of silence."""
    monkeypatch.setattr(gohttp, "READ_HEADER_TIMEOUT", 0.3)
    assert read_all(plain, b"GET /version HTTP/1.1\r\nHost: a\r\nX-Slow: ", timeout=10) == b""


def test_the_header_timeout_spares_a_request_being_served(plain, monkeypatch):
    """A watch outlives the header deadline and still ends as its timeoutSeconds says, with the last chunk. (The
    deadline is 1 s so that a loaded machine still reads the headers in time; the watch lasts 2 s.)"""
    monkeypatch.setattr(gohttp, "READ_HEADER_TIMEOUT", 1.0)
    raw = read_all(plain, request("GET", "/api/v1/pods?watch=1&timeoutSeconds=2"), timeout=10)
    assert raw.startswith(b"HTTP/1.1 200 OK\r\n") and raw.endswith(b"\r\n0\r\n\r\n")
    assert b'"type":"ADDED"' in raw


# -- what reaches the handlers answers with a Status ---------------------------------------------------------------


def test_an_http_1_0_watch_streams_without_chunks_and_ends_by_closing(plain):
    raw = read_all(plain, b"GET /api/v1/pods?watch=1&timeoutSeconds=1 HTTP/1.0\r\n\r\n", timeout=10)
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200 OK\r\n")
    assert b"transfer-encoding" not in head.lower() and b"content-length" not in head.lower()
    events = [json.loads(line) for line in body.splitlines()]
    assert events and {e["type"] for e in events} == {"ADDED"}


def test_a_bearer_token_that_is_not_utf8_is_unauthorized(token):
    answer = exchange(token, request("GET", "/api/v1/pods", headers={"Authorization": b"Bearer \xff\xfe\x80"}))
    assert (answer.status, status_of(answer)) == (401, UNAUTHORIZED)


def test_a_bearer_token_that_is_not_utf8_is_unauthorized_on_a_health_check_too(token):
    answer = exchange(token, request("GET", "/healthz", headers={"Authorization": b"Bearer \xc3\x28"}))
    assert answer.status == 401


def token_of(doc: bytes) -> str:
    return base64.urlsafe_b64encode(doc).decode().rstrip("=")


def test_a_continue_token_with_infinity_is_a_400_status_on_the_wire(plain):
    answer = exchange(plain, request("GET", "/api/v1/pods?limit=1&continue=" + token_of(
        b'{"v":"meta.k8s.io/v1","rv":Infinity,"start":"a"}')))
    assert (answer.status, status_of(answer)["reason"]) == (400, "BadRequest")


@pytest.mark.parametrize(("raised", "code", "message"), [
    (web.HTTPMethodNotAllowed("PUT", ["GET"]), 405, "the server does not allow this method on the requested resource"),
    (web.HTTPNotFound(), 404, "the server could not find the requested resource"),
    (web.HTTPRequestEntityTooLarge(3145728, 3145729), 413, "Request entity too large: limit is 3145728"),
])
def test_aiohttps_own_refusals_become_statuses(raised, code, message):
    status = _aiohttp_refusal(raised)
    assert (status.code, status.message, status.status["kind"]) == (code, message, "Status")


def test_an_expect_other_than_100_continue_gets_gos_empty_417(plain):
    answer = exchange(plain, request("POST", "/api/v1/namespaces/default/pods", headers={"Expect": b"\x80junk"},
                                     body=b"{}"))
    assert (answer.status, answer.body, answer.headers.get("connection")) == (417, b"", "close")


def test_expect_100_continue_is_answered_before_the_body(plain):
    answer = exchange(plain, request("GET", "/version", headers={"Expect": "100-Continue"}, body=b"x"))
    assert answer.status_line == "HTTP/1.1 100 Continue"


@pytest.mark.parametrize("encoding", [b"gzip", b"gzip, chunked"])
def test_a_transfer_encoding_other_than_chunked_gets_gos_501(plain, encoding):
    data = b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: " + encoding + \
        b"\r\n\r\n0\r\n\r\n"
    assert read_all(plain, data) == (b"HTTP/1.1 501 Not Implemented\r\nContent-Type: text/plain; charset=utf-8\r\n"
                                     b"Connection: close\r\n\r\nUnsupported transfer encoding")


@pytest.mark.parametrize("content_type", ["application/json-patch+json", "application/merge-patch+json",
                                          "application/strategic-merge-patch+json"])
def test_a_patch_nested_too_deep_to_parse_is_a_400_status(plain, content_type):
    answer = exchange(plain, request("PATCH", "/api/v1/namespaces/sched-lab/pods/manual", headers={
        "Content-Type": content_type}, body=b"[" * 20000 + b"]" * 20000))
    assert (answer.status, status_of(answer)["message"]) == (400, "the body is nested deeper than the lab accepts "
                                                                  "(100 levels)")


def test_a_request_whose_body_never_arrives_gets_the_timeout_filters_504(plain, monkeypatch):
    """--request-timeout (60 s upstream, shortened here) for a request that is not a watch."""
    monkeypatch.setattr(api, "REQUEST_TIMEOUT", 0.3)
    data = request("POST", "/api/v1/namespaces/default/pods", headers={"Content-Type": "application/json"},
                   body=b"{}").replace(b"Content-Length: 2", b"Content-Length: 200")
    answer = exchange(plain, data, timeout=10)
    assert (answer.status, status_of(answer)) == (504, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Timeout: request did not complete within the allotted timeout", "reason": "Timeout",
        "details": {}, "code": 504})


def test_a_watch_is_long_running_and_not_cut_by_the_request_timeout(plain, monkeypatch):
    monkeypatch.setattr(api, "REQUEST_TIMEOUT", 0.3)
    raw = read_all(plain, request("GET", "/api/v1/pods?watch=1&timeoutSeconds=1"), timeout=10)
    assert raw.startswith(b"HTTP/1.1 200 OK\r\n") and raw.endswith(b"\r\n0\r\n\r\n")


def test_an_unexpected_exception_is_the_last_resort_500_internal_error_status(plain, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(plain.lab.registry, "list", broken)
    answer = exchange(plain, request("GET", "/api/v1/pods"))
    assert (answer.status, status_of(answer)) == (500, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Internal error occurred: boom", "reason": "InternalError",
        "details": {"causes": [{"message": "boom"}]}, "code": 500})
