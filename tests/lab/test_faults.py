"""The lab's fault endpoint (``/lab/faults``) on the wire, and ``observatory lab fault``.

Expected bodies are upstream's: the 429 of kube-apiserver's max-in-flight / priority-and-fairness filters
(``staging/src/k8s.io/apiserver/pkg/server/filters/maxinflight.go`` ``tooManyRequests``: Go's ``http.Error`` with
``Retry-After: 1``), ``NewInternalError`` (reference §2.2), etcd3's watch Expired text and the watch cache's
``too old resource version`` (reference §2.2, §3.2). Waits are on conditions or on reads with deadlines far below
the fault's duration, never fixed sleeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os

import aiohttp
import pytest

from observatory.cli import main
from observatory.embedded import EmbeddedLab
from observatory.settings import LabSettings
from tests.conftest import API_ONLY

EXPIRED_WATCH = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                 "message": "The resourceVersion for the provided watch is too old.", "reason": "Expired",
                 "code": 410}


def pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}


async def fault(http, **body) -> dict:
    async with http.post("/lab/faults", json=body) as resp:
        assert resp.status == 200, await resp.text()
        return await resp.json()


async def next_line(resp, timeout: float) -> bytes:
    """The next watch line, or b"" at the end of the stream; TimeoutError when nothing came within ``timeout``."""
    async with asyncio.timeout(timeout):
        return await resp.content.readline()


def create_pod(lab, name: str, ns: str = "default") -> dict:
    from observatory.lab.resources import ALL

    return lab.registry.create(ALL["pods"], ns, pod(name))


async def test_get_lists_no_faults_then_what_is_active(http):
    async with http.get("/lab/faults") as resp:
        assert resp.status == 200
        doc = await resp.json()
    assert doc["kind"] == "LabFaults" and doc["active"] == [] and doc["openWatches"] == 0
    await fault(http, kind="errors", rate=0.25, code=429)
    await fault(http, kind="latency", ms=5)
    async with http.get("/lab/faults") as resp:
        active = (await resp.json())["active"]
    assert {"kind": "errors", "rate": 0.25, "code": 429, "retryAfterSeconds": 1} in active
    assert {"kind": "latency", "ms": 5} in active
    cleared = await fault(http, kind="clear")
    assert cleared["active"] == [] and cleared["message"].startswith("cleared")


@pytest.mark.parametrize("body, words", [
    ({"kind": "meltdown"}, "unknown fault kind 'meltdown'"),
    ({"kind": "stall-watches"}, "stall-watches needs seconds"),
    ({"kind": "stall-watches", "seconds": 0}, "seconds must be more than 0"),
    ({"kind": "errors", "rate": 1.5}, "rate must be from 0 to 1"),
    ({"kind": "errors", "rate": 0.5, "code": 503}, "code must be 500 or 429"),
    ({"kind": "latency", "ms": "slow"}, "ms must be a whole number"),
    ({"kind": "compact", "seconds": 3}, "compact takes no seconds"),
    (["drop-watches"], "the body must be a JSON object"),
])
async def test_bad_requests_get_a_bad_request_status(http, body, words):
    async with http.post("/lab/faults", json=body) as resp:
        assert resp.status == 400
        status = await resp.json()
    assert status["reason"] == "BadRequest" and words in status["message"]


async def test_errors_500_answer_the_internal_error_status_and_spare_health_and_lab(http):
    await fault(http, kind="errors", rate=1, code=500)
    async with http.get("/api/v1/pods") as resp:
        assert resp.status == 500
        status = await resp.json()
    assert status["reason"] == "InternalError" and status["code"] == 500
    assert status["message"].startswith("Internal error occurred: ")
    assert status["details"] == {"causes": [{"message": status["message"].removeprefix("Internal error occurred: ")}]}
    async with http.get("/healthz") as resp:
        assert resp.status == 200
    async with http.get("/lab/faults") as resp:
        assert resp.status == 200 and (await resp.json())["counts"]["errorsInjected"] == 1
    await fault(http, kind="clear")
    async with http.get("/api/v1/pods") as resp:
        assert resp.status == 200


async def test_errors_429_answer_what_the_max_in_flight_filter_writes(http):
    await fault(http, kind="errors", rate=1, code=429)
    async with http.get("/api/v1/namespaces/default/pods") as resp:
        assert resp.status == 429
        assert await resp.read() == b"Too many requests, please try again later.\n"
        assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
        assert resp.headers["Retry-After"] == "1"
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
    await fault(http, kind="errors", rate=1, code=429, retryAfterSeconds=7)
    async with http.post("/api/v1/namespaces/default/pods", json=pod("refused")) as resp:
        assert resp.status == 429 and resp.headers["Retry-After"] == "7"


async def test_errors_rate_refuses_a_fraction_reproducibly(http):
    async def refused(seed: int) -> list[int]:
        await fault(http, kind="errors", rate=0.5, code=500, seed=seed)
        codes = []
        for _ in range(40):
            async with http.get("/version") as resp:
                codes.append(resp.status)
        return codes

    first, again = await refused(7), await refused(7)
    assert first == again
    assert set(first) == {200, 500}


async def test_latency_delays_requests_and_watch_writes_until_cleared(http, lab):
    rv = lab.store.resource_version
    async with http.get(f"/api/v1/namespaces/default/pods?watch=1&resourceVersion={rv}") as watch:
        await fault(http, kind="latency", ms=30_000)
        with pytest.raises(TimeoutError):  # no answer can come before 30 s
            async with http.get("/api/v1/nodes", timeout=aiohttp.ClientTimeout(total=1.0)):
                pass
        create_pod(lab, "slow")
        with pytest.raises(TimeoutError):
            await next_line(watch, 1.0)
        async with http.post("/lab/faults", json={"kind": "clear"}) as resp:
            assert resp.status == 200  # /lab/ itself is never delayed
        event = json.loads(await next_line(watch, 20.0))
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "slow")


async def test_stall_sends_nothing_then_delivers_what_queued(http, lab):
    rv = lab.store.resource_version
    url = f"/api/v1/namespaces/default/pods?watch=1&allowWatchBookmarks=true&resourceVersion={rv}"
    async with http.get(url) as watch:
        assert json.loads(await next_line(watch, 20.0))["type"] == "BOOKMARK"  # every 0.2 s in the test settings
        done = await fault(http, kind="stall-watches", seconds=600)
        assert done["openWatches"] == 1 and done["active"][0]["kind"] == "stall-watches"
        create_pod(lab, "first")
        create_pod(lab, "second")
        with pytest.raises(TimeoutError):  # neither the events nor a bookmark for a whole second
            await next_line(watch, 1.0)
        await fault(http, kind="clear")
        lines = [json.loads(await next_line(watch, 20.0)) for _ in range(2)]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in lines] == [("ADDED", "first"), ("ADDED", "second")]


async def test_a_stall_ends_by_itself(http, lab):
    rv = lab.store.resource_version
    async with http.get(f"/api/v1/namespaces/default/pods?watch=1&resourceVersion={rv}") as watch:
        await fault(http, kind="stall-watches", seconds=0.5)
        create_pod(lab, "later")
        event = json.loads(await next_line(watch, 20.0))
    assert event["object"]["metadata"]["name"] == "later"


async def test_drop_watches_cuts_the_connection(http, lab):
    rv = lab.store.resource_version
    async with http.get(f"/api/v1/pods?watch=1&resourceVersion={rv}") as watch:
        done = await fault(http, kind="drop-watches")
        assert done["message"].startswith("dropped 1 open watch")
        with pytest.raises(aiohttp.ClientPayloadError):  # not a clean end of the chunked stream
            async with asyncio.timeout(20.0):
                await watch.read()
    async with http.get("/lab/faults") as resp:
        doc = await resp.json()
    assert doc["openWatches"] == 0 and doc["counts"]["watchesDropped"] == 1


async def test_compact_sends_open_watches_410_and_expires_older_resource_versions(http, lab):
    rv = lab.store.resource_version
    async with http.get(f"/api/v1/namespaces/default/pods?watch=1&resourceVersion={rv}") as watch:
        create_pod(lab, "before")
        assert json.loads(await next_line(watch, 20.0))["type"] == "ADDED"
        done = await fault(http, kind="compact")
        assert "1 open watch got 410 Expired" in done["message"]
        error = json.loads(await next_line(watch, 20.0))
        assert error == {"type": "ERROR", "object": EXPIRED_WATCH}
        assert await next_line(watch, 20.0) == b""  # then the stream ends
    compacted = lab.store.resource_version
    async with http.get(f"/api/v1/namespaces/default/pods?watch=1&resourceVersion={rv}") as resume:
        events = [json.loads(line) for line in (await resume.read()).splitlines()]
    assert events == [{"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f"too old resource version: {rv} ({compacted})", "reason": "Expired", "code": 410}}]


async def test_compact_ends_a_table_watch_without_an_error_event(http, lab):
    rv = lab.store.resource_version
    table = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
    async with http.get(f"/api/v1/pods?watch=1&resourceVersion={rv}", headers=table) as watch:
        done = await fault(http, kind="compact")
        assert "0 open watches got 410 Expired (1 Table watch just ended)" in done["message"]
        assert await next_line(watch, 20.0) == b""


async def test_a_token_lab_authenticates_the_fault_endpoint(tmp_path):
    lab = EmbeddedLab(LabSettings(token=True, **API_ONLY), scenario="pair", kubeconfig_path=tmp_path / "kc")
    await lab.start()
    try:
        ssl_ok = aiohttp.TCPConnector(ssl=False)
        async with aiohttp.ClientSession(base_url=lab.url, connector=ssl_ok) as http:
            async with http.get("/lab/faults") as resp:
                assert resp.status == 401
            async with http.post("/lab/faults", json={"kind": "clear"},
                                 headers={"Authorization": "Bearer wrong"}) as resp:
                assert resp.status == 401
            async with http.get("/lab/faults", headers={"Authorization": f"Bearer {lab.token}"}) as resp:
                assert resp.status == 200
    finally:
        await lab.stop()


# -- the command line ------------------------------------------------------------------------------------------------


async def run_cli(*argv: str) -> int:
    """``observatory lab fault ...`` in a thread, while the lab keeps serving on this loop."""
    return await asyncio.to_thread(main, ["lab", "fault", *argv])


async def test_cli_drives_each_kind_through_the_lab_kubeconfig(lab, capsys):
    kc = ["--kubeconfig", str(lab.kubeconfig_path)]
    assert await run_cli("errors", "0.5", "--code", "429", *kc) == 0
    assert await run_cli("latency", "20", *kc) == 0
    assert await run_cli("stall-watches", "0.1", *kc) == 0
    assert await run_cli("show", *kc) == 0
    assert await run_cli("compact", *kc) == 0
    assert await run_cli("drop-watches", *kc) == 0
    assert await run_cli("clear", *kc) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 7  # one line of fact each
    assert out[0] == "answering 50% of Kubernetes API requests with 429 Too Many Requests (Retry-After: 1)"
    assert out[1] == "delaying every Kubernetes API request and every watch write by 20 ms"
    assert "errors 50% 429, latency 20 ms; 0 open watches" in out[3]  # after a stall, if it is not over yet
    assert out[6].startswith("cleared")
    async with aiohttp.ClientSession(base_url=lab.url) as http:
        async with http.get("/lab/faults") as resp:
            doc = await resp.json()
    assert doc["active"] == [] and doc["counts"]["compactions"] == 1


async def test_cli_with_server_and_token_from_the_kubeconfig(tmp_path, capsys):
    lab = EmbeddedLab(LabSettings(token=True, **API_ONLY), scenario="pair", kubeconfig_path=tmp_path / "kc")
    await lab.start()
    try:
        assert await run_cli("latency", "10", "--server", lab.url, "--kubeconfig", str(lab.kubeconfig_path)) == 0
        assert capsys.readouterr().out.startswith("delaying every")
        # the kubeconfig of another server lends neither its token nor its CA
        assert await run_cli("clear", "--server", lab.url, "--kubeconfig", str(tmp_path / "none")) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err and "TLS to the lab" in err
    finally:
        await lab.stop()


async def test_cli_follows_a_lab_kubeconfig_named_by_kubeconfig(lab, tmp_path, monkeypatch, capsys):
    """New-user finding: with KUBECONFIG pointing at the lab, lab fault read the default lab kubeconfig, which
    another `observatory --lab` had rewritten, and reached no lab."""
    from observatory.lab.fault_cli import target
    from observatory.lab.kubeconfig import write_kubeconfig

    stale = write_kubeconfig(tmp_path / "default-kc", "http://127.0.0.1:1")  # a lab that is gone
    monkeypatch.setattr("observatory.lab.kubeconfig.default_kubeconfig_path", lambda: stale)
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(tmp_path / "missing"), str(lab.kubeconfig_path)]))
    assert target().server == lab.url
    assert await run_cli("latency", "5") == 0
    assert capsys.readouterr().out.startswith("delaying every")
    assert await run_cli("clear") == 0
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))  # no lab kubeconfig named: the default path
    assert target().server == "http://127.0.0.1:1"


@pytest.mark.parametrize("argv, code, words", [
    (["stall-watches"], 2, "stall-watches needs SECONDS"),
    (["errors", "lots"], 2, "RATE must be a fraction"),
    (["latency", "5", "--code", "429"], 2, "--code and --retry-after go with errors only"),
    (["drop-watches", "3"], 2, "drop-watches takes no argument"),
    (["errors", "2"], 2, "the lab refused the fault: errors: rate must be from 0 to 1"),
    (["show", "--server", "http://[::1"], 2, "--server must be an http:// or https:// URL"),  # was a traceback
    (["show", "--server", "http://127.0.0.1:99999"], 2, "--server must be an http:// or https:// URL"),
])
async def test_cli_bad_input_is_one_sentence_and_exit_2(lab, capsys, argv, code, words):
    assert await run_cli(*argv, "--kubeconfig", str(lab.kubeconfig_path)) == code
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err


async def test_cli_unreachable_lab_is_one_sentence_and_exit_1(tmp_path, capsys):
    import socket

    with contextlib.closing(socket.socket()) as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert await run_cli("clear", "--server", f"http://127.0.0.1:{port}",
                         "--kubeconfig", str(tmp_path / "none")) == 1
    err = capsys.readouterr().err
    assert "cannot reach the lab" in err and err.count("\n") == 1
    assert await run_cli("clear", "--kubeconfig", str(tmp_path / "none")) == 2
    assert "no lab kubeconfig at" in capsys.readouterr().err
