"""Watch events encoded once for every watcher (the cacher's cachingObject), and a bounded queue per watcher.

Pure tests on the store and the encoder: no HTTP. Identity (``is``) of the bytes two streams get shows that one
encoding served both.
"""

from __future__ import annotations

import json
import logging

from observatory.lab import events_v1
from observatory.lab.resources import CORE_V1, EVENTS_V1
from observatory.lab.store import Store
from observatory.lab.watch_encoding import Encoder, SharedInitialEvents, identifier

PODS = CORE_V1["pods"]


def pod(name: str, node: str = "") -> dict:
    return {"metadata": {"name": name, "namespace": "default", "labels": {"app": "a"}}, "spec": {"nodeName": node}}


def test_one_change_is_encoded_once_for_every_stream_of_its_group_version():
    store = Store()
    watchers = [store.watch("pods", None, None, None) for _ in range(3)]
    store.create("pods", pod("a"))
    changes = [w.queue.get_nowait() for w in watchers]
    assert changes[0] is changes[1] is changes[2]  # the store's own Change, shared, not copied per watcher
    lines = [Encoder(PODS).change(c) for c in changes]
    assert lines[0] is lines[1] is lines[2]
    doc = json.loads(lines[0])
    assert (doc["type"], doc["object"]["kind"], doc["object"]["apiVersion"]) == ("ADDED", "Pod", "v1")


def test_another_group_version_gets_its_own_encoding_of_the_same_change():
    store = Store()
    watcher = store.watch("events", None, None, None)
    store.create("events", {"metadata": {"name": "e", "namespace": "default"}, "involvedObject": {"kind": "Pod"},
                            "reason": "R", "message": "m"})
    change = watcher.queue.get_nowait()
    core = json.loads(Encoder(CORE_V1["events"]).change(change))["object"]
    v1 = json.loads(Encoder(EVENTS_V1["events"], wire=events_v1.wire).change(change))["object"]
    assert (core["apiVersion"], "involvedObject" in core) == ("v1", True)
    assert (v1["apiVersion"], "regarding" in v1) == ("events.k8s.io/v1", True)


def test_initial_added_events_are_shared_while_streams_send_them_and_dropped_after():
    store = Store()
    objs = [store.create("pods", pod(name)) for name in "abc"]
    shared = SharedInitialEvents()
    first, second = Encoder(PODS), Encoder(PODS)
    with shared.share("pods", "v1") as table_1, shared.share("pods", "v1") as table_2:
        assert table_1 is table_2 and shared.open_tables() == {("pods", "v1"): 2}
        lines_1 = [first.added(o, table_1) for o in objs]
        lines_2 = [second.added(o, table_2) for o in objs]
        assert all(a is b for a, b in zip(lines_1, lines_2, strict=True))
        newer = store.update("pods", {**objs[0], "spec": {"nodeName": "n1"}})
        fresh = second.added(newer, table_2)  # a newer version of the object is encoded again, not served stale
        assert fresh is not lines_1[0] and json.loads(fresh)["object"]["spec"]["nodeName"] == "n1"
    assert shared.open_tables() == {}
    assert [json.loads(line)["type"] for line in lines_1] == ["ADDED"] * 3


def test_table_streams_encode_their_own_events():
    store = Store()
    obj = store.create("pods", pod("a"))
    shared = SharedInitialEvents()
    with shared.share("pods", "v1") as table:
        encoder = Encoder(PODS, table=True)
        first, second = json.loads(encoder.added(obj, table)), json.loads(encoder.added(obj, table))
    assert first["object"]["kind"] == "Table" and first["object"]["columnDefinitions"]
    assert second["object"]["columnDefinitions"] is None  # only the first Table event of a stream has them


def test_a_flipped_match_becomes_one_shared_added_or_deleted():
    store = Store()
    unbound = [store.watch("pods", None, lambda o: not o["spec"].get("nodeName"), None) for _ in range(2)]
    created = store.create("pods", pod("a"))
    store.update("pods", {**created, "spec": {"nodeName": "n1"}})
    (added_1, deleted_1), (added_2, deleted_2) = ([w.queue.get_nowait(), w.queue.get_nowait()] for w in unbound)
    assert added_1 is added_2 and deleted_1 is deleted_2
    # DELETED carries the last state that matched, with the change's resourceVersion (convertToWatchEvent).
    assert deleted_1.type == "DELETED" and deleted_1.obj["spec"] == {"nodeName": ""}
    assert deleted_1.obj["metadata"]["resourceVersion"] == "2"


def test_a_watcher_that_falls_behind_is_closed_once_with_the_cachers_log_line(caplog):
    caplog.set_level(logging.INFO, logger="observatory.lab.store")
    store = Store(watch_queue_limit=100)
    calls: list[str] = []
    slow = store.watch("pods", "default", None, None,
                       identifier=identifier(PODS, "default", "app=a", ""))
    slow.on_overflow = lambda: calls.append("overflow")
    fast = store.watch("pods", None, None, None)
    for i in range(150):
        store.create("pods", pod(f"p{i}"))
        while not fast.queue.empty():  # a watcher that keeps up is never closed
            fast.queue.get_nowait()
    assert slow.closed and not fast.closed
    assert calls == ["overflow"]
    assert slow.queue.qsize() == 1 and slow.queue.get_nowait() is None  # queued changes dropped, then the end
    assert [r.getMessage() for r in caplog.records] == [
        'Forcing pods watcher close due to unresponsiveness: key: "/pods/default", labels: "app=a", fields: "". '
        "len(c.input) = 100, len(c.result) = 0, graceful = false"]


def test_the_queue_limit_of_a_watch_can_be_its_own():
    store = Store(watch_queue_limit=100_000)
    watcher = store.watch("pods", None, None, None, limit=2)
    for name in "abc":
        store.create("pods", pod(name))
    assert watcher.closed


def test_a_resume_is_not_closed_for_the_history_it_replays():
    """Resuming from an old resourceVersion queues the history after it; that is not falling behind (the cacher
    reads it from the watch cache's interval), so the limit counts from what the replay queued."""
    store = Store(watch_queue_limit=100)
    for i in range(250):
        store.create("pods", pod(f"p{i}"))
    watcher = store.watch("pods", None, None, since_rv=0)
    assert not watcher.closed and watcher.queue.qsize() == 250
    for _ in range(200):
        watcher.queue.get_nowait()
    store.create("pods", pod("more"))
    assert not watcher.closed and watcher.queue.qsize() == 51
    for i in range(200):
        store.create("pods", pod(f"q{i}"))
    assert watcher.closed  # past max(limit, replayed) it is a watcher that does not keep up


def test_encodings_cached_on_the_history_go_when_the_last_watch_stream_of_the_resource_closes():
    store = Store()
    informer = store.watch("pods", None, None, None)  # in-process: no identifier, encodes nothing
    streams = [store.watch("pods", None, None, None, identifier=identifier(PODS, None, "", "")) for _ in range(2)]
    store.create("pods", pod("a"))
    change = streams[0].queue.get_nowait()
    Encoder(PODS).change(change)
    assert change.encoded
    store.stop_watch(streams[0])
    assert change.encoded  # another stream of pods may still need it
    store.stop_watch(streams[1])
    assert change.encoded == {} and not informer.closed
