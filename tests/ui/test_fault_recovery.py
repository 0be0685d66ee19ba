"""Each lab fault against the TUI, one test per fault kind.

A lab runs in-process; the app runs headless over a real connection, with short reflector timeouts. Each test
drives one fault through the lab (``/lab/faults`` or ``observatory lab fault``), changes the cluster while the fault
lasts (creates, binds, deletes pods, posts events, from the lab's side as its controllers do), and checks that

a. the header showed a watch as ``stale since …`` or ``resyncing`` while the fault lasted, and
b. after ``clear`` the model (pods, nodes and events by key, with their resourceVersions) and the screen (the
   pending pane's rows, the nodes pane's blocks) equal what a fresh list from the server gives.

Waits poll conditions with deadlines, never fixed sleeps. The helpers are shared with ``tests/e2e/test_soak.py``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest

from observatory.cli import main
from observatory.kube.connect import connect
from observatory.kube.source import ClusterSource
from observatory.lab.resources import ALL
from observatory.lab.simulation.events import EventWriter
from observatory.model.deltas import Relisted
from observatory.model.state import ClusterState
from observatory.ui.app import ObservatoryApp
from observatory.ui.widgets.header_bar import HeaderBar
from observatory.ui.widgets.nodes_pane import NodesPane, render_node, render_orphans
from observatory.ui.widgets.pending_pods import PendingPodsPane, with_selected_row

REFLECTOR = {"read_timeout": 1.0, "watch_timeout": 2, "backoff_initial": 0.2, "backoff_max": 1.0}
"""Short timeouts so every fault shows within seconds: a watch silent for 1 s is stale, watches end every 2 s (so
request faults reach them), retries within a second."""
TROUBLE = ("stale since", "resyncing")
KINDS = ("pods", "nodes", "events")


# -- shared helpers (also used by the soak test) ------------------------------------------------------------------


async def open_app(lab, **reflector: Any) -> ObservatoryApp:
    """The app over a real connection to ``lab`` (every namespace), with the given reflector options."""
    connection = await connect(str(lab.kubeconfig_path), "observatory-lab", None)
    source = ClusterSource(connection, namespace=None, lab=True, reflector_options={**REFLECTOR, **reflector})
    return ObservatoryApp(source, refresh_interval=0.05, recent_seconds=0.5)


def record_header(app: ObservatoryApp) -> list[str]:
    """Every text the header is given from now on (its plain text), in order."""
    header = app.query_one(HeaderBar)
    seen: list[str] = []
    update = header.update

    def recording(content: Any = "", **kwargs: Any) -> None:
        seen.append(getattr(content, "plain", str(content)))
        update(content, **kwargs)

    header.update = recording  # type: ignore[method-assign]
    return seen


def trouble_shown(seen: list[str]) -> str | None:
    """The first header text that showed a watch stale or resyncing, if any."""
    return next((text for text in seen if any(word in text for word in TROUBLE)), None)


async def fresh_lists(http: aiohttp.ClientSession) -> dict[str, tuple[list[dict], str]]:
    """``GET /api/v1/{pods,nodes,events}``: the items and list resourceVersion of each."""
    out = {}
    for kind in KINDS:
        async with http.get(f"/api/v1/{kind}") as resp:
            assert resp.status == 200, await resp.text()
            doc = await resp.json()
        out[kind] = (doc["items"], doc["metadata"]["resourceVersion"])
    return out


def _key(kind: str, obj: dict) -> str:
    meta = obj["metadata"]
    return meta["name"] if kind == "nodes" else f"{meta.get('namespace', '')}/{meta['name']}"


def model_differences(app: ObservatoryApp, lists: dict[str, tuple[list[dict], str]]) -> dict[str, set[str]]:
    """What the app's model gets wrong against ``lists``: ``lost`` (listed, not in the model), ``ghosts`` (in the
    model, not listed) and ``outdated`` (another resourceVersion), as ``kind:key`` strings."""
    views = {"pods": app.main.state.pods, "nodes": app.main.state.nodes, "events": app.main.state.events}
    out: dict[str, set[str]] = {"lost": set(), "ghosts": set(), "outdated": set()}
    for kind in KINDS:
        want = {_key(kind, obj): obj["metadata"]["resourceVersion"] for obj in lists[kind][0]}
        have = {key: view.resource_version for key, view in views[kind].items()}
        out["lost"] |= {f"{kind}:{k}" for k in want.keys() - have.keys()}
        out["ghosts"] |= {f"{kind}:{k}" for k in have.keys() - want.keys()}
        out["outdated"] |= {f"{kind}:{k}" for k in want.keys() & have.keys() if want[k] != have[k]}
    return out


def screen_differences(app: ObservatoryApp, lists: dict[str, tuple[list[dict], str]]) -> list[str]:
    """Where the panes differ from what a fresh state built from ``lists`` shows: the pending rows (by pod key)
    and the nodes pane (each block's text)."""
    fresh = ClusterState()
    for kind in KINDS:
        fresh.apply(Relisted(kind, lists[kind][0], lists[kind][1]))
    selected = app.main.selected if app.main.selected in fresh.pods else None
    problems = []
    want_rows = {row.pod.key for row in with_selected_row(fresh, selected)}
    have_rows = set(app.query_one(PendingPodsPane).rows)
    if want_rows != have_rows:
        problems.append(f"pending rows: missing {sorted(want_rows - have_rows)}, extra {sorted(have_rows - want_rows)}")
    want_blocks = [render_node(place, app.main.selected).plain for place in fresh.placement()]
    orphans: dict[str, list] = {}
    for pod in fresh.orphans():
        orphans.setdefault(pod.node_name, []).append(pod)
    want_blocks += [render_orphans(node, pods, app.main.selected).plain for node, pods in orphans.items()]
    have_blocks = [block.content.plain for block in app.query_one(NodesPane).query(".node")]
    if sorted(want_blocks) != sorted(have_blocks):
        problems.append(f"nodes pane: want {sorted(want_blocks)}, have {sorted(have_blocks)}")
    return problems


async def converged(pause: Callable[[], Any], app: ObservatoryApp, http: aiohttp.ClientSession,
                    timeout: float = 60.0, *, screen: bool = True) -> dict[str, tuple[list[dict], str]]:
    """Poll until the model (and the screen) equal a fresh list; return that list. AssertionError with the
    differences after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        lists = await fresh_lists(http)
        model = model_differences(app, lists)
        problems = [f"{what}: {sorted(keys)}" for what, keys in model.items() if keys]
        if not problems and screen:
            problems = screen_differences(app, lists)
        if not problems:
            return lists
        if loop.time() > deadline:
            raise AssertionError(f"not equal to a fresh list after {timeout} s: {'; '.join(problems)}")
        await pause()


class Churn:
    """Changes to the cluster made from the lab's side (as its controllers do), so request faults never refuse
    them: pods created, bound by hand, deleted; events posted."""

    def __init__(self, lab, namespace: str = "sched-lab") -> None:
        self.lab = lab
        self.namespace = namespace
        self.events = EventWriter(lab.registry)
        self._names = itertools.count()

    def create(self, prefix: str = "churn") -> dict:
        name = f"{prefix}-{next(self._names)}"
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"churn": "yes"}},
                "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "nginx:1.27"}]}}
        return self.lab.registry.create(ALL["pods"], self.namespace, body)

    def bind(self, name: str, node: str = "pair-worker") -> None:
        self.lab.registry.bind(self.namespace, name, {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                                                      "target": {"apiVersion": "v1", "kind": "Node", "name": node}})

    def delete(self, name: str) -> None:
        self.lab.registry.delete(ALL["pods"], self.namespace, name, grace_period=0)

    def event(self, pod: dict, reason: str = "Pulling") -> None:
        self.events.kubelet_event(pod, "pair-worker", reason, f'Pulling image "nginx:1.27" ({reason})')

    def round(self, doomed: list[str]) -> list[str]:
        """One of everything: a pod left pending with an event, one bound, one created and deleted at once, and
        the ``doomed`` pods (made by an earlier round) deleted. Returns this round's survivors' names."""
        pending, bound, gone = self.create(), self.create(), self.create()
        self.event(pending)
        self.bind(bound["metadata"]["name"])
        self.event(bound, "Pulled")
        self.delete(gone["metadata"]["name"])
        for name in doomed:
            self.delete(name)
        return [pending["metadata"]["name"], bound["metadata"]["name"]]


# -- fixtures ---------------------------------------------------------------------------------------------------


@pytest.fixture
async def app_and_http(lab) -> AsyncIterator[tuple[ObservatoryApp, aiohttp.ClientSession]]:
    app = await open_app(lab)
    async with aiohttp.ClientSession(base_url=lab.url) as http:
        try:
            yield app, http
        finally:
            await app.main.source.close()


async def post_fault(http: aiohttp.ClientSession, **body: Any) -> dict:
    async with http.post("/lab/faults", json=body) as resp:
        assert resp.status == 200, await resp.text()
        return await resp.json()


async def run_case(lab, app: ObservatoryApp, http: aiohttp.ClientSession, start_fault: Callable[[], Any]) -> str:
    """Start the app, churn, start the fault, churn while it lasts, see it shown, clear, see everything equal a
    fresh list. Returns the header text that showed the trouble."""
    churn = Churn(lab)
    async with app.run_test(size=(140, 45)) as pilot:
        pause = lambda: pilot.pause(0.05)  # noqa: E731
        doomed = churn.round([])
        await converged(pause, app, http)
        seen = record_header(app)
        await start_fault()
        doomed = churn.round(doomed)  # while the fault lasts
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while not trouble_shown(seen):
            assert loop.time() < deadline, f"the header never showed {' or '.join(TROUBLE)}: {seen[-3:]}"
            await pause()
        churn.round(doomed)  # still during the fault (for compact: after the resync it caused)
        await post_fault(http, kind="clear")
        await converged(pause, app, http)
        return trouble_shown(seen) or ""


# -- one test per fault kind -----------------------------------------------------------------------------------


async def test_drop_watches_through_the_cli(lab, app_and_http):
    app, http = app_and_http

    async def drop() -> None:
        code = await asyncio.to_thread(main, ["lab", "fault", "drop-watches", "--kubeconfig", str(lab.kubeconfig_path)])
        assert code == 0

    shown = await run_case(lab, app, http, drop)
    assert "stale since" in shown


async def test_stall_watches(lab, app_and_http):
    app, http = app_and_http
    shown = await run_case(lab, app, http, lambda: post_fault(http, kind="stall-watches", seconds=600))
    assert "stale since" in shown
    assert "sent nothing (no events, no bookmarks)" in shown  # the header says why, in the reflector's words


async def test_compact(lab, app_and_http):
    app, http = app_and_http
    shown = await run_case(lab, app, http, lambda: post_fault(http, kind="compact"))
    assert "resyncing" in shown


@pytest.mark.parametrize("code", [500, 429])
async def test_errors(lab, app_and_http, code):
    app, http = app_and_http
    shown = await run_case(lab, app, http, lambda: post_fault(http, kind="errors", rate=1, code=code))
    assert "stale since" in shown


async def test_latency(lab, app_and_http):
    app, http = app_and_http
    # longer than the reflectors' 1 s read timeout: to them the lab looks dead
    shown = await run_case(lab, app, http, lambda: post_fault(http, kind="latency", ms=3000))
    assert "stale since" in shown
