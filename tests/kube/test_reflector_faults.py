"""The reflector against a scripted API server: answers the lab never gives (403, 429 with Retry-After, 5xx,
HTTP 410 on a watch, ERROR events, garbage) and the exact requests it makes."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import parse_qs, urlsplit

from aiohttp import web

from observatory.kube.reflector import Reflector
from tests.kube.helpers import Collector, until


class RecordingReflector(Reflector):
    """Records each retry delay and waits only a moment, so tests never sleep for real backoffs."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.pauses: list[float] = []

    async def _pause(self, seconds: float) -> None:
        self.pauses.append(seconds)
        await asyncio.sleep(0.01)


def pod_obj(name: str, rv: str) -> dict:
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": rv,
                         "managedFields": [{"manager": "kubectl", "operation": "Update"}]}}


def status(code: int, reason: str, message: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


def query(path_qs: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(path_qs).query)


def watches(api) -> list[dict[str, list[str]]]:
    return [query(p) for m, p in api.requests if "watch=true" in p]


async def test_list_and_watch_requests_and_managed_fields_dropped(fake):
    api, conn = fake
    api.items = [pod_obj("a", "90")]
    api.watch_script = [[{"type": "ADDED", "object": pod_obj("b", "101")},
                         {"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1",
                                                         "metadata": {"resourceVersion": "105"}}}]]
    reflector = RecordingReflector(conn.api, "pods", "default", page_size=7, watch_timeout=42)
    collector = Collector(reflector.run())
    try:
        await until(lambda: len(watches(api)) >= 2, "a re-watch after the clean end")
        first_list = query(api.requests[0][1])
        assert urlsplit(api.requests[0][1]).path == "/api/v1/namespaces/default/pods"
        assert first_list == {"limit": ["7"]}
        assert watches(api)[0] == {"watch": ["true"], "resourceVersion": ["100"], "allowWatchBookmarks": ["true"],
                                   "timeoutSeconds": ["42"]}
        assert watches(api)[1]["resourceVersion"] == ["105"]  # resumed from the bookmark, not relisted
        assert len(collector.relists()) == 1
        assert "managedFields" not in collector.relists()[0].objs[0]["metadata"]
        added = collector.deltas[3]
        assert added.change == "ADDED" and "managedFields" not in added.obj["metadata"]
    finally:
        await collector.stop()


async def test_forbidden_list_then_allowed(fake):
    api, conn = fake
    message = 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope'
    api.list_script = [(403, {}, status(403, "Forbidden", message)), (403, {}, status(403, "Forbidden", message))]
    reflector = RecordingReflector(conn.api, "pods", None, backoff_max=30)
    collector = Collector(reflector.run())
    try:
        await until(lambda: collector.relists(), "the list once allowed")
        await until(lambda: collector.last_state().state == "live", "live")
        assert collector.states() == ["connecting", "forbidden", "live"]  # the same 403 twice is one state
        forbidden = collector.deltas[1]
        assert forbidden.detail == message
        assert len(reflector.pauses) == 2 and all(24 <= p <= 30 for p in reflector.pauses)  # retried slowly
    finally:
        await collector.stop()


async def test_429_honours_retry_after_and_5xx_backs_off(fake):
    api, conn = fake
    api.list_script = [(429, {"Retry-After": "7"}, status(429, "TooManyRequests", "too many requests")),
                       (500, {}, status(500, "InternalError", "etcd is sad")),
                       (503, {}, b"upstream connect error")]
    reflector = RecordingReflector(conn.api, "pods", None, backoff_initial=0.5, backoff_max=30)
    collector = Collector(reflector.run())
    try:
        await until(lambda: collector.relists() and collector.last_state().state == "live", "live")
        stale = [d for d in collector.deltas if getattr(d, "state", "") == "stale"]
        assert len({s.since for s in stale}) == 1  # stale since the first failure
        assert "429" in stale[0].detail and "etcd is sad" in stale[1].detail and "503" in stale[2].detail
        assert reflector.pauses[0] == 7.0
        assert 0.5 <= reflector.pauses[1] <= 1.0 and 1.0 <= reflector.pauses[2] <= 2.0  # jittered, doubling
        assert collector.states()[-2:] == ["stale", "live"]
    finally:
        await collector.stop()


async def test_http_410_on_the_watch_relists(fake):
    api, conn = fake
    api.items = [pod_obj("old", "90")]

    async def gone(request: web.Request) -> web.Response:
        api.items = [pod_obj("new", "120")]
        api.rv = "120"
        return web.json_response(status(410, "Expired", "too old resource version: 100 (110)"), status=410)

    api.watch_script = [gone]
    collector = Collector(RecordingReflector(conn.api, "pods", None).run())
    try:
        await until(lambda: len(collector.relists()) == 2, "the relist")
        await until(lambda: collector.last_state().state == "live", "live")
        assert collector.states() == ["connecting", "live", "resyncing", "live"]
        assert set(collector.model()) == {"default/new"}
        assert watches(api)[-1]["resourceVersion"] == ["120"]
    finally:
        await collector.stop()


async def test_error_events_and_garbage_make_it_stale_and_resume(fake):
    api, conn = fake
    api.watch_script = [
        [{"type": "ADDED", "object": pod_obj("a", "101")},
         {"type": "ERROR", "object": status(500, "InternalError", "watch chan error: etcdserver: no leader")}],
        web_garbage,
        [{"type": "MODIFIED", "object": pod_obj("a", "102")}],
    ]
    reflector = RecordingReflector(conn.api, "pods", None)
    collector = Collector(reflector.run())
    try:
        await until(lambda: ("MODIFIED", "a") in collector.events(), "the event after the errors")
        states = [d for d in collector.deltas if getattr(d, "state", "") == "stale"]
        assert "no leader" in states[0].detail and "not a watch event" in states[1].detail
        assert [w["resourceVersion"] for w in watches(api)[:3]] == [["100"], ["101"], ["101"]]
        assert collector.events() == [("ADDED", "a"), ("MODIFIED", "a")]
        assert collector.last_state().state == "live" and len(collector.relists()) == 1
    finally:
        await collector.stop()


async def web_garbage(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    await response.prepare(request)
    await response.write(b"<html>proxy error</html>\n")
    await response.write_eof()
    return response


async def test_a_watch_forbidden_after_the_list(fake):
    api, conn = fake
    message = 'pods is forbidden: User "bob" cannot watch resource "pods"'
    api.watch_script = [(403, {}, status(403, "Forbidden", message))]
    collector = Collector(RecordingReflector(conn.api, "pods", None).run())
    try:
        await until(lambda: len(watches(api)) >= 2, "the retried watch")
        await until(lambda: collector.last_state().state == "live", "live again")
        assert collector.states() == ["connecting", "live", "forbidden", "live"]
        assert len(collector.relists()) == 1
    finally:
        await collector.stop()


async def test_silence_is_judged_by_the_servers_bookmark_rhythm(fake):
    """New-user finding: the lab bookmarks every 5 s, but a stalled watch was called stale only after the 90 s read
    timeout. Once bookmarks show their rhythm, three median gaps of silence (within [min_silence, read_timeout])
    make the watch stale, and the state says why."""
    api, conn = fake
    gap = 0.1

    async def bookmarks_then_silence(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        for rv in range(101, 106):
            bookmark = {"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1",
                                                       "metadata": {"resourceVersion": str(rv)}}}
            await response.write(json.dumps(bookmark).encode() + b"\n")
            await asyncio.sleep(gap)
        await asyncio.sleep(60)  # stalled: the socket stays open and sends nothing
        return response

    api.watch_script = [bookmarks_then_silence]
    reflector = RecordingReflector(conn.api, "pods", "default", read_timeout=60, min_silence=0.2)
    collector = Collector(reflector.run())
    try:
        await until(lambda: "stale" in collector.states(), "the stalled watch called stale", timeout=20)
    finally:
        await collector.stop()
    stale = collector.last_state()
    assert reflector.silence_limit() < 60  # judged by the rhythm, not by the 60 s read timeout
    assert stale.detail.startswith("The watch of pods sent nothing (no events, no bookmarks) for ")
    assert "(bookmarks had come every " in stale.detail


async def test_a_list_that_repeats_its_continue_token_stops_with_a_clear_error(fake):
    """The reflector lists through the one pager: a server that hands back a continue token already followed makes
    the list trouble (stale, retried after a backoff), not a list that pages forever."""
    api, conn = fake
    looping = {"kind": "PodList", "apiVersion": "v1", "metadata": {"continue": "again", "resourceVersion": "5"},
               "items": [pod_obj("a", "5")]}
    api.items = [pod_obj("a", "90")]
    api.list_script = [(200, {}, looping), (200, {}, looping)]
    reflector = RecordingReflector(conn.api, "pods", None, page_size=1)
    collector = Collector(reflector.run())
    try:
        await until(lambda: collector.relists() and collector.last_state().state == "live", "the list once it ends")
        assert collector.states() == ["connecting", "stale", "live"]
        stale = [d for d in collector.deltas if getattr(d, "state", "") == "stale"]
        assert stale[0].detail == ("The list of pods from the API server cannot be used: the answer to GET "
                                   "/api/v1/pods repeats the continue token 'again'.")
        lists = [qs for _, qs in api.requests if "watch=true" not in qs]
        assert lists == ["/api/v1/pods?limit=1", "/api/v1/pods?limit=1&continue=again", "/api/v1/pods?limit=1"]
        assert len(reflector.pauses) == 1 and len(collector.relists()) == 1
    finally:
        await collector.stop()
