"""The reflector against the lab: the initial list, live deltas, resumes without loss or duplicates, 410 relists
without ghosts, paging, bookmarks, a silent watch and a server that goes away and comes back."""

from __future__ import annotations

import json

import pytest

from observatory.embedded import EmbeddedLab
from observatory.kube.reflector import Reflector
from observatory.lab.resources import ALL
from observatory.model.deltas import Relisted, Upserted, WatchState
from observatory.settings import LabSettings
from tests.conftest import API_ONLY
from tests.kube.helpers import Collector, pod, until

PODS = ALL["pods"]


async def server_pods(http, namespace: str | None = None) -> tuple[set[str], str]:
    path = f"/api/v1/namespaces/{namespace}/pods" if namespace else "/api/v1/pods"
    async with http.get(path) as resp:
        doc = json.loads(await resp.read())
    return {f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in doc["items"]}, \
        doc["metadata"]["resourceVersion"]


def create(lab: EmbeddedLab, name: str, namespace: str = "sched-lab") -> dict:
    return lab.registry.create(PODS, namespace, pod(name, namespace))


async def test_initial_list_is_one_relisted_then_live(lab, conn, http):
    expected, _ = await server_pods(http)
    reflector = Reflector(conn.api, "pods", None)
    collector = Collector(reflector.run())
    try:
        await until(lambda: collector.states() == ["connecting", "live"], "live")
        relisted = collector.relists()
        assert len(relisted) == 1
        assert [type(d).__name__ for d in collector.deltas] == ["WatchState", "Relisted", "WatchState"]
        assert set(collector.model()) == expected
        assert relisted[0].resource_version == str(lab.store.resource_version) == reflector.resource_version
        assert all("managedFields" not in o["metadata"] for o in relisted[0].objs)
        assert isinstance(collector.deltas[0].since, type(collector.deltas[-1].since))
    finally:
        await collector.stop()


async def test_namespaced_and_cluster_scoped(lab, conn, http):
    pods = Collector(Reflector(conn.api, "pods", "sched-lab").run())
    nodes = Collector(Reflector(conn.api, "nodes", "sched-lab").run())  # the namespace is ignored for nodes
    try:
        await until(lambda: pods.relists() and nodes.relists(), "both lists")
        assert set(pods.model()) == (await server_pods(http, "sched-lab"))[0] == {"sched-lab/manual"}
        assert set(nodes.model()) == {"/pair-control-plane", "/pair-worker"}
    finally:
        await pods.stop()
        await nodes.stop()


async def test_create_patch_delete_arrive_as_deltas(lab, conn, http):
    reflector = Reflector(conn.api, "pods", "sched-lab")
    collector = Collector(reflector.run())
    try:
        await until(lambda: collector.last_state() and collector.last_state().state == "live", "live")
        async with http.post("/api/v1/namespaces/sched-lab/pods", json=pod("web")) as resp:
            assert resp.status == 201
        async with http.patch("/api/v1/namespaces/sched-lab/pods/web", data=json.dumps({"metadata": {
                "labels": {"tier": "front"}}}), headers={"Content-Type": "application/merge-patch+json"}) as resp:
            assert resp.status == 200
        async with http.delete("/api/v1/namespaces/sched-lab/pods/web") as resp:
            assert resp.status == 200
        await until(lambda: ("DELETED", "web") in collector.events(), "the delete")
        assert collector.events() == [("ADDED", "web"), ("MODIFIED", "web"), ("DELETED", "web")]
        upserts = [d for d in collector.deltas if isinstance(d, Upserted)]
        assert upserts[1].obj["metadata"]["labels"] == {"tier": "front"}
        assert upserts[0].obj["kind"] == "Pod"
        assert int(upserts[0].obj["metadata"]["resourceVersion"]) < int(upserts[1].obj["metadata"]["resourceVersion"])
        await until(lambda: reflector.resource_version == str(lab.store.resource_version), "the RV to catch up")
        assert set(collector.model()) == (await server_pods(http, "sched-lab"))[0]
    finally:
        await collector.stop()


async def test_resume_after_dropped_watches_loses_and_repeats_nothing(lab, conn, http):
    reflector = Reflector(conn.api, "pods", "sched-lab")
    collector = Collector(reflector.run())
    try:
        await until(lambda: lab.store.watcher_count == 1, "the watch")
        for round_ in range(3):
            create(lab, f"before-{round_}")
            lab.store.close_all_watches()
            create(lab, f"between-{round_}")  # written while no watch is open: must come from history
            await until(lambda r=round_: ("ADDED", f"between-{r}") in collector.events(), f"round {round_}")
        names = [name for _, name in collector.events()]
        assert names == ["before-0", "between-0", "before-1", "between-1", "before-2", "between-2"]
        assert len(collector.relists()) == 1
        assert "stale" not in collector.states() and "resyncing" not in collector.states()
        assert set(collector.model()) == (await server_pods(http, "sched-lab"))[0]
    finally:
        await collector.stop()


async def test_410_relists_with_no_ghosts(lab, conn, http):
    create(lab, "victim")
    reflector = Reflector(conn.api, "pods", "sched-lab")
    collector = Collector(reflector.run())
    try:
        await until(lambda: lab.store.watcher_count == 1, "the watch")
        assert set(collector.model()) == {"sched-lab/manual", "sched-lab/victim"}
        # All in one step, before the reflector can re-watch: drop the watch, change things, compact history.
        lab.store.close_all_watches()
        lab.registry.delete(PODS, "sched-lab", "victim", grace_period=0)
        create(lab, "newcomer")
        lab.store.compact()
        await until(lambda: len(collector.relists()) == 2 and collector.last_state().state == "live", "the relist")
        assert collector.states() == ["connecting", "live", "resyncing", "live"]
        resync = next(d for d in collector.deltas if isinstance(d, WatchState) and d.state == "resyncing")
        assert "too old resource version" in resync.detail
        assert collector.events() == []  # nothing arrived as a watch event: the relist carries it all
        assert set(collector.model()) == {"sched-lab/manual", "sched-lab/newcomer"}  # victim gone: no ghost
        assert set(collector.model()) == (await server_pods(http, "sched-lab"))[0]
        create(lab, "after")
        await until(lambda: ("ADDED", "after") in collector.events(), "a watch event after the relist")
    finally:
        await collector.stop()


async def test_paging_with_page_size_2(lab, conn, http):
    for i in range(5):
        create(lab, f"p{i}")
    calls = []
    original = lab.registry.list

    def spy(rt, query):
        if rt.name == "pods":
            calls.append((query.limit, bool(query.continue_token)))
        return original(rt, query)

    lab.registry.list = spy
    collector = Collector(Reflector(conn.api, "pods", "sched-lab", page_size=2).run())
    try:
        await until(lambda: collector.relists(), "the list")
        assert calls == [(2, False), (2, True), (2, True)]
        assert set(collector.model()) == {"sched-lab/manual", *(f"sched-lab/p{i}" for i in range(5))}
        assert len(collector.relists()) == 1
    finally:
        await collector.stop()


async def test_expired_continue_token_restarts_the_list(lab, conn):
    for i in range(5):
        create(lab, f"p{i}")
    original = lab.registry.list
    pages = []

    def compact_after_first_page(rt, query):
        if rt.name == "pods":
            pages.append(bool(query.continue_token))
        result = original(rt, query)  # raises 410 Expired for the stale continue token
        if rt.name == "pods":
            if len(pages) == 1:
                create(lab, "mid-list")
                lab.store.compact()  # the first page's continue token is now too old
        return result

    lab.registry.list = compact_after_first_page
    collector = Collector(Reflector(conn.api, "pods", "sched-lab", page_size=2).run())
    try:
        await until(lambda: collector.relists(), "the list")
        # page 1, its continue token expired, then the whole list again from page 1 (4 pages of 2 for 7 pods)
        assert pages == [False, True, False, True, True, True]
        assert set(collector.model()) == {"sched-lab/manual", "sched-lab/mid-list",
                                          *(f"sched-lab/p{i}" for i in range(5))}
    finally:
        await collector.stop()


async def test_bookmarks_advance_the_resource_version(lab, conn):
    reflector = Reflector(conn.api, "pods", "sched-lab")
    collector = Collector(reflector.run())
    try:
        await until(lambda: lab.store.watcher_count == 1, "the watch")
        listed = reflector.resource_version
        create(lab, "elsewhere", namespace="default")  # moves the global RV; not an event of this watch
        await until(lambda: reflector.resource_version == str(lab.store.resource_version), "a bookmark")
        assert int(reflector.resource_version) > int(listed)
        assert collector.events() == []
        # A resume from the bookmark's RV works and misses nothing.
        lab.store.close_all_watches()
        create(lab, "next")
        await until(lambda: ("ADDED", "next") in collector.events(), "the event after the resume")
        assert collector.events() == [("ADDED", "next")]
    finally:
        await collector.stop()


@pytest.mark.parametrize("lab_settings", [LabSettings(bookmark_interval=3600, **API_ONLY)])
async def test_a_silent_watch_is_stale_until_bytes_flow_again(lab, conn):
    reflector = Reflector(conn.api, "pods", "sched-lab", read_timeout=0.3, backoff_initial=0.05,
                          backoff_max=0.2)
    collector = Collector(reflector.run())
    try:
        await until(lambda: "stale" in collector.states(), "stale after 0.3 s of silence")
        stale = collector.last_state()
        assert stale.state == "stale" and "sent nothing" in stale.detail and stale.since is not None
        await until(lambda: reflector.reconnects >= 2, "a second silent watch")
        assert collector.states() == ["connecting", "live", "stale"]  # reopened watches stay stale while silent
        create(lab, "wake-up")
        await until(lambda: ("ADDED", "wake-up") in collector.events(), "the event")
        await until(lambda: collector.last_state().state == "live", "live again")
        assert len(collector.relists()) == 1
    finally:
        await collector.stop()


async def test_server_gone_and_back_is_stale_then_live(tmp_path):
    settings = LabSettings(bookmark_interval=0.2, **API_ONLY)
    state = tmp_path / "state.json"
    first = EmbeddedLab(settings, scenario="manual-binding", kubeconfig_path=tmp_path / "kc", state_path=state)
    await first.start()
    port = int(first.url.rsplit(":", 1)[1])
    from observatory.kube.connect import connect

    conn = await connect(str(first.kubeconfig_path))
    reflector = Reflector(conn.api, "pods", "sched-lab", backoff_initial=0.05, backoff_max=0.2)
    collector = Collector(reflector.run())
    second = None
    try:
        await until(lambda: first.store.watcher_count == 1, "the watch")
        first.registry.create(PODS, "sched-lab", pod("saved"))
        await until(lambda: ("ADDED", "saved") in collector.events(), "the event")
        await first.stop()
        await until(lambda: "stale" in collector.states(), "stale")
        stale = collector.last_state()
        assert "refused" in stale.detail and stale.since is not None
        await until(lambda: reflector.reconnects >= 3, "retries")
        assert [s for s in collector.states()].count("stale") == 1  # one stale state, same since, while it lasts
        second = EmbeddedLab(settings, port=port, scenario="manual-binding", kubeconfig_path=tmp_path / "kc2",
                           state_path=state)
        await second.start()
        second.registry.create(PODS, "sched-lab", pod("after-restart"))
        await until(lambda: collector.last_state().state == "live"
                    and "sched-lab/after-restart" in collector.model(), "live again with the new pod")
        assert set(collector.model()) == {"sched-lab/manual", "sched-lab/saved", "sched-lab/after-restart"}
    finally:
        await collector.stop()
        await conn.close()
        if second is not None:
            await second.stop()


async def test_unknown_kind_is_refused(conn):
    with pytest.raises(ValueError, match="cannot watch 'deployments'"):
        Reflector(conn.api, "deployments", None)


async def test_relisted_is_a_tuple(lab, conn):
    collector = Collector(Reflector(conn.api, "pods", "sched-lab").run())
    try:
        relisted = await until(lambda: collector.relists(), "the list")
        assert isinstance(relisted[0], Relisted) and isinstance(relisted[0].objs, tuple)
    finally:
        await collector.stop()


async def test_cancelling_the_consumer_closes_the_watch(lab, conn):
    collector = Collector(Reflector(conn.api, "pods", "sched-lab").run())
    await until(lambda: lab.store.watcher_count == 1, "the watch")
    await collector.stop()
    await until(lambda: lab.store.watcher_count == 0, "the lab to see the watch closed")
    assert collector.states() == ["connecting", "live"]


async def test_aclose_while_suspended_in_the_watch_closes_it(lab, conn):
    stream = Reflector(conn.api, "pods", "sched-lab").run()
    async for delta in stream:
        if isinstance(delta, WatchState) and delta.state == "live":
            create(lab, "trigger")  # the next delta comes from the open watch
        elif isinstance(delta, Upserted):
            break
    assert lab.store.watcher_count == 1
    await stream.aclose()
    await until(lambda: lab.store.watcher_count == 0, "the lab to see the watch closed")


async def test_a_server_restarted_without_its_state_is_relisted_and_leaves_no_ghosts(tmp_path):
    """The new server's resourceVersion is behind ours: it answers 504 Too large resource version, and the reflector
    relists (as client-go does) instead of showing the lost pods as live."""
    settings = LabSettings(bookmark_interval=0.2, **API_ONLY)
    first = EmbeddedLab(settings, scenario="manual-binding", kubeconfig_path=tmp_path / "kc")
    await first.start()
    port = int(first.url.rsplit(":", 1)[1])
    from observatory.kube.connect import connect

    conn = await connect(str(first.kubeconfig_path))
    reflector = Reflector(conn.api, "pods", "sched-lab", backoff_initial=0.05, backoff_max=0.2)
    collector = Collector(reflector.run())
    second = None
    try:
        await until(lambda: first.store.watcher_count == 1, "the watch")
        for i in range(5):
            first.registry.create(PODS, "sched-lab", pod(f"lost-{i}"))
        await until(lambda: "sched-lab/lost-4" in collector.model(), "the pods")
        await first.stop()
        await until(lambda: "stale" in collector.states(), "stale")
        second = EmbeddedLab(settings, port=port, scenario="pair", kubeconfig_path=tmp_path / "kc2")
        await second.start()
        await until(lambda: collector.last_state().state == "live" and "resyncing" in collector.states()
                    and not any(k.startswith("sched-lab/lost") for k in collector.model()), "relisted, no ghosts")
        assert set(collector.model()) == set()
    finally:
        await collector.stop()
        await conn.close()
        if second is not None:
            await second.stop()
