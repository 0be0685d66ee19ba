"""The lab store: one global resourceVersion, bounded history, selector-aware watch fan-out, snapshots."""

from __future__ import annotations

import pytest

from observatory.lab import errors
from observatory.lab.store import Store


def pod(name: str, node: str = "", ns: str = "default") -> dict:
    return {"metadata": {"name": name, "namespace": ns}, "spec": {"nodeName": node}, "status": {"phase": "Pending"}}


def drain(watcher) -> list[tuple[str, str, str]]:
    out = []
    while not watcher.queue.empty():
        change = watcher.queue.get_nowait()
        out.append((change.type, change.obj["metadata"]["name"], change.obj["metadata"]["resourceVersion"]))
    return out


def test_every_write_bumps_one_global_counter():
    store = Store()
    a = store.create("pods", pod("a"))
    n = store.create("nodes", {"metadata": {"name": "n1"}})
    a2 = store.update("pods", {**a, "spec": {"nodeName": "n1"}})
    gone = store.delete("nodes", "", "n1")
    assert [a["metadata"]["resourceVersion"], n["metadata"]["resourceVersion"],
            a2["metadata"]["resourceVersion"], gone["metadata"]["resourceVersion"]] == ["1", "2", "3", "4"]
    assert store.resource_version == 4
    assert a2["metadata"]["uid"] == a["metadata"]["uid"]
    assert "kind" not in a2


def test_stale_resource_version_conflicts():
    store = Store()
    a = store.create("pods", pod("a"))
    store.update("pods", a, expect_rv="1")
    with pytest.raises(errors.StatusError) as exc:
        store.update("pods", a, expect_rv="1")
    assert exc.value.code == 409
    assert exc.value.message.endswith(errors.OPTIMISTIC_LOCK_MESSAGE)


def test_iter_is_in_key_order_and_resumes_after_a_key():
    store = Store()
    for ns, name in [("b", "x"), ("a", "z"), ("a", "y"), ("c", "w")]:
        store.create("pods", pod(name, ns=ns))
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in store.iter("pods")] == [
        ("a", "y"), ("a", "z"), ("b", "x"), ("c", "w")]
    assert [o["metadata"]["name"] for o in store.iter("pods", "a")] == ["y", "z"]
    assert [o["metadata"]["name"] for o in store.iter("pods", after=("pods", "a", "z"))] == ["x", "w"]


def test_watch_resumes_after_a_resource_version():
    store = Store()
    store.create("pods", pod("a"))
    store.create("pods", pod("b"))
    store.create("pods", pod("c"))
    watcher = store.watch("pods", None, None, since_rv=1)
    assert drain(watcher) == [("ADDED", "b", "2"), ("ADDED", "c", "3")]
    store.delete("pods", "default", "a")
    assert drain(watcher) == [("DELETED", "a", "4")]


def test_watch_older_than_history_is_410_expired_with_upstream_text():
    store = Store(history_size=2)
    for name in "abcd":
        store.create("pods", pod(name))
    # rv 1 and 2 fell out of the window; the oldest kept is 3, so oldest-1 is 2.
    with pytest.raises(errors.StatusError) as exc:
        store.watch("pods", None, None, since_rv=1)
    assert exc.value.status == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                "message": "too old resource version: 1 (2)", "reason": "Expired", "code": 410}
    assert drain(store.watch("pods", None, None, since_rv=2)) == [("ADDED", "c", "3"), ("ADDED", "d", "4")]


def test_selector_watch_sees_added_and_deleted_when_the_match_flips():
    store = Store()
    unbound = store.watch("pods", None, lambda o: not o["spec"].get("nodeName"), since_rv=None)
    on_node = store.watch("pods", None, lambda o: o["spec"].get("nodeName") == "n1", since_rv=None)
    a = store.create("pods", pod("a"))
    store.update("pods", {**a, "spec": {"nodeName": "n1"}})
    assert [t for t, *_ in drain(unbound)] == ["ADDED", "DELETED"]
    assert [t for t, *_ in drain(on_node)] == ["ADDED"]


def test_namespace_scoped_watch_ignores_other_namespaces():
    store = Store()
    watcher = store.watch("pods", "sched-lab", None, since_rv=None)
    store.create("pods", pod("a", ns="default"))
    store.create("pods", pod("b", ns="sched-lab"))
    assert drain(watcher) == [("ADDED", "b", "2")]


def test_compact_makes_every_resume_expire():
    store = Store()
    store.create("pods", pod("a"))
    store.create("pods", pod("b"))
    store.compact()
    with pytest.raises(errors.StatusError) as exc:
        store.watch("pods", None, None, since_rv=1)
    assert exc.value.reason == "Expired"


def test_snapshot_and_restore_continue_the_resource_version():
    store = Store()
    store.create("namespaces", {"metadata": {"name": "default"}})
    store.create("pods", pod("a"))
    again = Store()
    again.restore(store.snapshot())
    assert again.get("pods", "default", "a") == store.get("pods", "default", "a")
    b = again.create("pods", pod("b"))
    assert b["metadata"]["resourceVersion"] == "3"


def test_slow_watcher_is_closed_not_left_to_grow():
    """A watcher whose queue is full is closed and what it had queued is dropped (cacheWatcher's forced close with
    graceful = false): the stream ends, and the client watches again from the last resourceVersion it saw."""
    store = Store(watch_queue_limit=3)
    watcher = store.watch("pods", None, None, since_rv=None)
    for name in "abcde":
        store.create("pods", pod(name))
    assert watcher.closed
    items = [watcher.queue.get_nowait() for _ in range(watcher.queue.qsize())]
    assert items == [None]


def test_count_after_matches_iteration():
    store = Store()
    for ns, name in [("a", "x"), ("a", "y"), ("b", "x"), ("b", "z"), ("c", "w")]:
        store.create("pods", pod(name, ns=ns))
    for namespace in (None, "a", "b", "c"):
        for after in [("pods", "a", "x"), ("pods", "b", "x"), ("pods", "a", "")]:
            expected = sum(1 for _ in store.iter("pods", namespace, after)
                           if namespace is None or _["metadata"]["namespace"] == namespace)
            assert store.count_after("pods", namespace, after) == expected, (namespace, after)


def test_history_is_per_resource_like_the_watch_cache():
    store = Store(history_size=2)
    store.create("pods", pod("a"))
    for i in range(5):
        store.create("nodes", {"metadata": {"name": f"n{i}"}})
    # Node churn has not pushed the pod's change out of the pods' own window.
    assert [t for t, *_ in drain(store.watch("pods", None, None, since_rv=0))] == ["ADDED"]
