"""A bounded crash soak: ``observatory lab serve --state`` under churn, killed with SIGKILL at random (seeded)
moments and restarted on the same state and port, about 30 s of cycles (the whole test stays within about a
minute; it runs beside the rest under xdist).

Each cycle: four writers create, update (a label ``gen``) and delete pods through the HTTP API, each on pods of its
own, sequentially; at a random moment the lab is killed; the writers' requests still in flight are *unknown* (the
lab may or may not have committed them), every answered one is *acknowledged*. The lab restarts with the same
``--state`` and, before churn resumes, the test checks:

* every acknowledged write is there: acknowledged creates exist, acknowledged deletes stay deleted, acknowledged
  updates kept their ``gen`` (an unknown write's pod is taken as the list shows it);
* no resourceVersion was handed out twice: every RV the lab ever returned (in an answer, or to the observer's
  watch) names one write, and every RV after a restart is above every RV seen before the crash;
* a headless observer fed as the screen's model is (the project's :class:`~observatory.kube.reflector.Reflector`,
  its deltas applied to a :class:`~observatory.model.state.ClusterState`) equals a fresh list within the
  reflector's read timeout: 0 ghosts, 0 lost, every resourceVersion current. It resumes its watch across the
  restart; when it is behind the restored RV the lab answers 410 and it relists.

The seed is printed (``OBSERVATORY_SOAK_SEED=N`` replays the kill moments); the figures (restarts, writes,
unknown writes, relists, the slowest convergence) are printed, and with ``OBSERVATORY_SOAK_RECORD=1`` written to
``bench/results/crash_soak.json``, which the README quotes. Nothing is timed in an assertion except the
convergence bound the issue sets (the read timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import socket
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp

from observatory.kube.connect import connect
from observatory.kube.reflector import Reflector
from observatory.model.deltas import Deleted, Upserted, WatchState
from observatory.model.state import ClusterState
from tests.lab.test_durable_crash import Served, serve
from tests.waiting import eventually

CYCLES_SECONDS = 30.0
"""Wall time for churn, kill and restart cycles; with the final checks the test takes about a minute."""
WRITERS = 4
READ_TIMEOUT = 5.0
"""The observer's read timeout (s): the bound within which it must equal a fresh list after each restart."""
REFLECTOR = {"read_timeout": READ_TIMEOUT, "min_silence": 1.0, "watch_timeout": 30, "backoff_initial": 0.05,
             "backoff_max": 0.4, "page_size": 25}
NAMESPACE = "default"
PODS = f"/api/v1/namespaces/{NAMESPACE}/pods"
RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results" / "crash_soak.json"


@dataclass
class Ledger:
    """What the writers know: per pod its acknowledged state (a ``gen`` label, or None once deleted), the pods
    whose last write is unknown, and every resourceVersion handed out (RV -> what it named)."""

    expected: dict[str, int | None] = field(default_factory=dict)
    unknown: set[str] = field(default_factory=set)
    rvs: dict[int, str] = field(default_factory=dict)
    floor = 0
    """The highest RV seen by anyone before the latest crash: every later RV must be above it."""
    problems: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    """Problems by kind: ``lost``, ``back`` (a deleted pod returned), ``outdated``, ``invented``, ``reused``."""
    acknowledged = 0
    unknown_total = 0

    def problem(self, kind: str, text: str) -> None:
        self.counts[kind] += 1
        self.problems.append(text)

    def saw(self, rv: int, name: str, *, new: bool = True) -> None:
        """An RV came back on pod ``name``: in an answer or a watch event (``new``: issued since the latest
        restart, or before it and seen already), or on an object a restarted lab kept (``new=False``)."""
        if new and rv <= self.floor and rv not in self.rvs:
            self.problem("reused", f"RV {rv} ({name}) issued again: before the crash RVs up to {self.floor} were seen")
        elif self.rvs.setdefault(rv, name) != name:
            self.problem("reused", f"RV {rv} named pod {self.rvs[rv]} and then pod {name}")


def pod(name: str, gen: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"gen": str(gen)}},
            "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "nginx"}]}}


async def writer(http: aiohttp.ClientSession, rng: random.Random, me: int, ledger: Ledger, serial: list[int]) -> None:
    """Sequential writes on pods of this writer's own, until a request fails (the lab was killed)."""
    mine: list[str] = [n for n, gen in ledger.expected.items() if gen is not None and n.startswith(f"w{me}-")
                       and n not in ledger.unknown]
    while True:
        op = rng.choices(("create", "update", "delete"),
                         weights=(3 if len(mine) < 12 else 0, 3 if mine else 0, 2 if mine else 0))[0]
        if op == "create":
            serial[0] += 1
            name = f"w{me}-{serial[0]}"
            method, path, body, ctype = "POST", PODS, pod(name, 0), "application/json"
        else:
            name = rng.choice(mine)
            if op == "update":
                gen = (ledger.expected[name] or 0) + 1
                method, path, ctype = "PATCH", f"{PODS}/{name}", "application/merge-patch+json"
                body = {"metadata": {"labels": {"gen": str(gen)}}}
            else:
                method, path, body, ctype = "DELETE", f"{PODS}/{name}?gracePeriodSeconds=0", None, "application/json"
        ledger.unknown.add(name)
        try:
            async with http.request(method, path, data=json.dumps(body) if body else None,
                                    headers={"Content-Type": ctype}) as resp:
                status, answer = resp.status, await resp.json()
        except (TimeoutError, aiohttp.ClientError, ConnectionError):
            ledger.unknown_total += 1
            return  # unknown: the lab is gone; the pod stays in ledger.unknown until the next check
        ledger.unknown.discard(name)
        if status not in (200, 201):
            ledger.problem("refused", f"{method} {name}: {status} {answer.get('message')}")
            return
        ledger.acknowledged += 1
        rv = int(answer["metadata"]["resourceVersion"])
        if op == "create":
            ledger.expected[name] = 0
            mine.append(name)
        elif op == "update":
            ledger.expected[name] = int(answer["metadata"]["labels"]["gen"])
        else:
            ledger.expected[name] = None
            mine.remove(name)
        ledger.saw(rv, name)
        await asyncio.sleep(rng.uniform(0.0, 0.02))  # the pace of the churn (it shares two cores with CI)


class Observer:
    """The screen's model, headless: a pods reflector whose deltas go into a ClusterState."""

    def __init__(self, api: Any, ledger: Ledger) -> None:
        self.reflector = Reflector(api, "pods", NAMESPACE, **REFLECTOR)  # type: ignore[arg-type]
        self.state = ClusterState()
        self.ledger = ledger
        self.watch = "connecting"
        """The reflector's latest WatchState."""
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async for delta in self.reflector.run():
            self.state.apply(delta)
            if isinstance(delta, Upserted | Deleted):
                meta = delta.obj["metadata"]
                self.ledger.saw(int(meta["resourceVersion"]), meta["name"])
            elif isinstance(delta, WatchState):
                self.watch = delta.state

    def pods(self) -> dict[str, str]:
        return {key.split("/", 1)[1]: view.resource_version for key, view in self.state.pods.items()}

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


async def fresh_list(http: aiohttp.ClientSession) -> dict[str, dict[str, Any]]:
    async with http.get(PODS) as resp:
        assert resp.status == 200, await resp.text()
        return {p["metadata"]["name"]: p for p in (await resp.json())["items"]}


def check_acknowledged(ledger: Ledger, listed: dict[str, dict[str, Any]], restart: int) -> None:
    """Every acknowledged write is in ``listed``; unknown pods are settled to what the lab kept."""
    for name, gen in ledger.expected.items():
        if name in ledger.unknown:
            continue
        have = listed.get(name)
        if gen is None and have is not None:
            ledger.problem("back", f"restart {restart}: {name} was deleted (acknowledged) and is back")
        elif gen is not None and have is None:
            ledger.problem("lost", f"restart {restart}: {name} was written (acknowledged, gen {gen}) and is lost")
        elif gen is not None and have is not None and have["metadata"]["labels"].get("gen") != str(gen):
            ledger.problem("outdated", f"restart {restart}: {name} has gen {have['metadata']['labels'].get('gen')}, "
                                   f"acknowledged {gen}")
    for name in ledger.unknown:
        have = listed.get(name)
        ledger.expected[name] = None if have is None else int(have["metadata"]["labels"]["gen"])
    ledger.unknown.clear()
    for name in listed.keys() - ledger.expected.keys():
        ledger.problem("invented", f"restart {restart}: {name} exists but was never written")


def start(tmp: Path, state: Path, port: int) -> Served:
    """The lab with its kubelets (their heartbeats take RVs nobody here sees) but no scheduler (a restarted one
    would wait out the killed one's Lease), bookmarking every half second."""
    return serve(tmp, state, port=port, components=("--no-scheduler",),
                 env={"OBSERVATORY_LAB__BOOKMARK_INTERVAL": "0.5"})


def session(lab: Served) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(lab.url, timeout=aiohttp.ClientTimeout(total=10))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_kill_9_at_random_moments_loses_nothing_and_reissues_no_resource_version(tmp_path):
    seed = int(os.environ.get("OBSERVATORY_SOAK_SEED", random.randrange(1 << 30)))
    print(f"crash soak seed {seed} (OBSERVATORY_SOAK_SEED={seed} replays the kill moments)", file=sys.stderr)
    rng = random.Random(seed)
    state, port = tmp_path / "state.db", free_port()
    lab: Served = await asyncio.to_thread(start, tmp_path, state, port)
    ledger = Ledger()
    conn = await connect(str(lab.kubeconfig))
    observer = Observer(conn.api, ledger)
    http = session(lab)
    serial = [0]
    restarts, slowest, started = 0, 0.0, time.monotonic()
    ghosts: set[str] = set()
    lost: set[str] = set()
    loop = asyncio.get_running_loop()
    try:
        deadline = loop.time() + CYCLES_SECONDS
        while loop.time() < deadline:
            writers = [asyncio.create_task(writer(http, random.Random(rng.random()), i, ledger, serial))
                       for i in range(WRITERS)]
            await asyncio.sleep(rng.uniform(0.2, 2.0))  # the seeded kill moment, not a wait for a condition
            await asyncio.to_thread(lab.kill)
            await asyncio.gather(*writers)  # each ends at its first failed request
            # the observer has read its watch to the end once it is no longer live: every RV it was sent is known
            await eventually(lambda: observer.watch != "live", "the observer to see the lab go", READ_TIMEOUT)
            ledger.floor = max(ledger.rvs, default=0)
            await http.close()
            lab = await asyncio.to_thread(start, tmp_path, state, port)
            http = session(lab)
            restarts += 1
            listed = await fresh_list(http)
            check_acknowledged(ledger, listed, restarts)
            for name, obj in listed.items():  # the objects the lab kept name their RVs, too
                ledger.saw(int(obj["metadata"]["resourceVersion"]), name, new=False)
            want = {name: obj["metadata"]["resourceVersion"] for name, obj in listed.items()}
            began = loop.time()
            try:
                await eventually(lambda: observer.pods() == want,  # noqa: B023
                                 f"the observer to equal a fresh list after restart {restarts}", READ_TIMEOUT)
            except AssertionError:
                have = observer.pods()
                ghosts.update(have.keys() - want.keys())
                lost.update(want.keys() - have.keys())
                raise AssertionError(f"after restart {restarts} the observer shows ghosts {sorted(ghosts)}, misses "
                                     f"{sorted(lost)}, is outdated on "
                                     f"{sorted(k for k in want.keys() & have.keys() if want[k] != have[k])}") from None
            slowest = max(slowest, loop.time() - began)
            assert not ledger.problems, ledger.problems[:10]
        figures = {
            "seed": seed, "restarts": restarts, "acknowledged_writes": ledger.acknowledged,
            "unknown_writes": ledger.unknown_total, "resource_versions": len(ledger.rvs),
            "observer_relists": observer.reflector.relists, "observer_reconnects": observer.reflector.reconnects,
            "slowest_convergence_s": round(slowest, 2), "seconds": round(time.monotonic() - started, 1),
            "acknowledged_lost": ledger.counts["lost"] + ledger.counts["outdated"],
            "acknowledged_deletes_back": ledger.counts["back"],
            "reused_resource_versions": ledger.counts["reused"],
            "observer_ghosts": len(ghosts), "observer_lost": len(lost),
        }
        print(f"crash soak figures: {json.dumps(figures)}", file=sys.stderr)
        assert restarts >= 3 and ledger.acknowledged > 0
        if os.environ.get("OBSERVATORY_SOAK_RECORD") == "1":
            figures["recorded"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            figures["command"] = ("OBSERVATORY_SOAK_RECORD=1 python -m pytest -q -s "
                                  "tests/e2e/test_crash_soak.py")
            RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    finally:
        await observer.stop()
        await http.close()
        await conn.close()
        await asyncio.to_thread(lab.stop)
