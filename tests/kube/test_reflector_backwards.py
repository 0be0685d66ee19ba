"""The reflector against a server whose resourceVersions go backwards (restored from an older state after a crash,
then handing out the same RVs again): it relists, replaces what it holds, and is never ``live`` over the stale
state in between."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from observatory.kube.continuity import went_backwards
from observatory.model.deltas import Relisted, Upserted, WatchState
from observatory.model.state import ClusterState
from tests.kube.helpers import Collector, until
from tests.kube.test_reflector_faults import RecordingReflector


def pod_obj(name: str, rv: int, node: str = "") -> dict:
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": str(rv), "uid": f"uid-{name}"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]}, "status": {}}


def pod_list(items: list[dict], rv: int) -> tuple[int, dict, dict]:
    return 200, {}, {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": str(rv)}, "items": items}


def bookmark(rv: int) -> dict:
    return {"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": str(rv)}}}


def names(objs) -> set[str]:
    return {o["metadata"]["name"] for o in objs}


def not_live_between_detection_and_relist(deltas: list) -> bool:
    """After the first ``resyncing``, no ``live`` comes before the next Relisted, and the Relisted is there."""
    start = next(i for i, d in enumerate(deltas) if isinstance(d, WatchState) and d.state == "resyncing")
    for d in deltas[start:]:
        if isinstance(d, Relisted):
            return True
        if (isinstance(d, WatchState) and d.state == "live") or isinstance(d, Upserted):
            return False
    return False


async def test_a_server_restored_to_older_rvs_is_relisted_with_no_ghosts_and_nothing_missing(fake):
    """The issue's repro: the watch resumes at 467; the restarted server went back to 443 and now hands out
    444..495 again. What the reflector built on is stale: it relists, and the consumer's state equals the
    server's list, 0 ghosts and 0 missing, including an object whose reissued RV equals the one held."""
    api, conn = fake
    kept = [pod_obj(f"kept-{i}", 400 + i) for i in range(10)]
    lost = [pod_obj(f"lost-{i}", 450 + i) for i in range(5)]  # created before the crash, gone after the restore
    held_twin = pod_obj("twin", 460)  # modified before the crash at 460 ...
    api.list_script = [pod_list([*kept, *lost, held_twin], 467)]
    back = [pod_obj(f"back-{i}", 410 + i) for i in range(5)]  # deleted before the crash, restored by the restart
    reissued = [pod_obj(f"new-{i}", 444 + i) for i in range(52) if 444 + i != 460]
    twin_now = pod_obj("twin", 460, node="worker-1")  # ... and 460 was issued again for another change of it
    api.watch_script = [[{"type": "ADDED", "object": p} for p in reissued[:16]]
                        + [{"type": "MODIFIED", "object": twin_now}]
                        + [{"type": "ADDED", "object": p} for p in reissued[16:]]]
    truth = [*kept, *back, *reissued, twin_now]
    api.items, api.rv = truth, "495"
    reflector = RecordingReflector(conn.api, "pods", "default", backoff_initial=0.01, backoff_max=0.02)
    collector = Collector(reflector.run())
    try:
        await until(lambda: len(collector.relists()) == 2 and collector.last_state().state == "live",
                    "the relist after the RV went backwards")
        assert collector.events() == []  # the 444.. events were never passed on as if they were new
        assert reflector.backwards == 1
        second = collector.relists()[1]
        assert second.rvs_reused and second.resource_version == "495"
        assert not_live_between_detection_and_relist(collector.deltas)
        assert "444" in next(d.detail for d in collector.deltas if getattr(d, "state", "") == "resyncing")
        model = collector.model()
        assert set(model) == {f"default/{n}" for n in names(truth)}  # 0 ghosts, 0 missing
        state = ClusterState(lambda: datetime(2026, 1, 1, tzinfo=UTC))
        for delta in collector.deltas:
            state.apply(delta)
        assert set(state.pods) == set(model)
        assert state.pods["default/twin"].node_name == "worker-1"  # an equal RV after a reuse is not "unchanged"
        assert state.watch_states["pods"].state == "live"
    finally:
        await collector.stop()


async def test_a_resumed_watch_whose_first_event_is_older_than_what_it_holds_relists(fake):
    """The first watch brings 101 and 102 and ends; the resumed one (from 102) starts with 90."""
    api, conn = fake
    api.list_script = [pod_list([pod_obj("a", 100)], 100)]
    api.watch_script = [[{"type": "ADDED", "object": pod_obj("b", 101)},
                         {"type": "MODIFIED", "object": pod_obj("a", 102)}],
                        [{"type": "MODIFIED", "object": pod_obj("a", 90)},
                         {"type": "ADDED", "object": pod_obj("c", 103)}]]
    api.items, api.rv = [pod_obj("a", 95), pod_obj("d", 99)], "99"
    reflector = RecordingReflector(conn.api, "pods", "default", backoff_initial=0.01, backoff_max=0.02)
    collector = Collector(reflector.run())
    try:
        await until(lambda: len(collector.relists()) == 2 and collector.last_state().state == "live", "relisted")
        assert collector.events() == [("ADDED", "b"), ("MODIFIED", "a")]  # nothing from the stale stream
        assert set(collector.model()) == {"default/a", "default/d"}
        assert collector.model()["default/a"]["metadata"]["resourceVersion"] == "95"
        assert not_live_between_detection_and_relist(collector.deltas)
        assert reflector.resource_version == "99"  # the watch resumes from the new list, not from 102
    finally:
        await collector.stop()


async def test_an_event_older_than_the_one_held_for_that_object_relists(fake):
    """Within one stream: ``a`` is at 105, then the server sends ``a`` at 104."""
    api, conn = fake
    api.list_script = [pod_list([pod_obj("a", 100)], 100)]
    api.watch_script = [[{"type": "MODIFIED", "object": pod_obj("a", 105)},
                         {"type": "MODIFIED", "object": pod_obj("a", 104)}]]
    api.items, api.rv = [pod_obj("a", 104)], "104"
    reflector = RecordingReflector(conn.api, "pods", "default", backoff_initial=0.01, backoff_max=0.02)
    collector = Collector(reflector.run())
    try:
        await until(lambda: len(collector.relists()) == 2 and collector.last_state().state == "live", "relisted")
        assert collector.events() == [("MODIFIED", "a")]
        assert collector.model()["default/a"]["metadata"]["resourceVersion"] == "104"
    finally:
        await collector.stop()


async def test_a_bookmark_behind_the_list_rv_relists(fake):
    """A BOOKMARK is the server's own RV: one below the list RV the watch resumed from means it went back."""
    api, conn = fake
    api.list_script = [pod_list([pod_obj("a", 300), pod_obj("ghost", 467)], 467)]
    api.watch_script = [[bookmark(443)]]
    api.items, api.rv = [pod_obj("a", 300)], "443"
    reflector = RecordingReflector(conn.api, "pods", "default", backoff_initial=0.01, backoff_max=0.02)
    collector = Collector(reflector.run())
    try:
        await until(lambda: len(collector.relists()) == 2 and collector.last_state().state == "live", "relisted")
        assert set(collector.model()) == {"default/a"}
    finally:
        await collector.stop()


async def test_equal_and_growing_rvs_never_relist(fake):
    """A BOOKMARK repeating the RV held and events that only grow are a healthy stream: one list, no resync."""
    api, conn = fake
    api.items, api.rv = [pod_obj("a", 9)], "9"
    api.watch_script = [[bookmark(9), {"type": "MODIFIED", "object": pod_obj("a", 10)}, bookmark(10),
                         {"type": "DELETED", "object": pod_obj("a", 11)}, bookmark(11)]]
    reflector = RecordingReflector(conn.api, "pods", "default", backoff_initial=0.01, backoff_max=0.02)
    collector = Collector(reflector.run())
    try:
        await until(lambda: reflector.resource_version == "11" and len(reflector_watches(api)) >= 2, "re-watch")
        assert len(collector.relists()) == 1 and "resyncing" not in collector.states()
        assert reflector.backwards == 0
    finally:
        await collector.stop()


async def test_a_restored_server_that_reached_the_old_rv_again_is_caught_by_an_unknown_object(fake):
    """The restored server (443) had issued 444..470 again by the time the watch resumed at 467, so it accepted
    the resume and sends only 468..: the resourceVersions grow, but a MODIFIED arrives for a pod this reflector
    never listed nor saw ADDED (created at 450 after the restore), which a consistent stream never does."""
    api, conn = fake
    api.list_script = [pod_list([pod_obj("kept", 400), pod_obj("ghost", 460)], 467)]
    api.watch_script = [[{"type": "MODIFIED", "object": pod_obj("kept", 468)},
                         {"type": "MODIFIED", "object": pod_obj("unseen", 469, node="worker-1")}]]
    api.items, api.rv = [pod_obj("kept", 468), pod_obj("unseen", 469, node="worker-1")], "470"
    reflector = RecordingReflector(conn.api, "pods", "default", backoff_initial=0.01, backoff_max=0.02)
    collector = Collector(reflector.run())
    try:
        await until(lambda: len(collector.relists()) == 2 and collector.last_state().state == "live", "relisted")
        assert collector.events() == [("MODIFIED", "kept")]
        assert set(collector.model()) == {"default/kept", "default/unseen"}  # the ghost is gone
        assert collector.relists()[1].rvs_reused and reflector.backwards == 1
        assert "never listed or added" in next(d.detail for d in collector.deltas
                                               if getattr(d, "state", "") == "resyncing")
    finally:
        await collector.stop()


async def test_a_deleted_event_for_an_object_never_held_relists(fake):
    api, conn = fake
    api.list_script = [pod_list([pod_obj("a", 100)], 100)]
    api.watch_script = [[{"type": "DELETED", "object": pod_obj("never-seen", 101)}]]
    api.items, api.rv = [pod_obj("a", 100)], "101"
    reflector = RecordingReflector(conn.api, "pods", "default", backoff_initial=0.01, backoff_max=0.02)
    collector = Collector(reflector.run())
    try:
        await until(lambda: len(collector.relists()) == 2 and collector.last_state().state == "live", "relisted")
        assert collector.events() == []
    finally:
        await collector.stop()


async def test_objects_added_on_the_stream_may_be_modified_and_deleted(fake):
    api, conn = fake
    api.items, api.rv = [], "9"
    api.watch_script = [[{"type": "ADDED", "object": pod_obj("b", 10)},
                         {"type": "MODIFIED", "object": pod_obj("b", 11)},
                         {"type": "DELETED", "object": pod_obj("b", 12)},
                         {"type": "ADDED", "object": pod_obj("b", 13)}]]
    reflector = RecordingReflector(conn.api, "pods", "default", backoff_initial=0.01, backoff_max=0.02)
    collector = Collector(reflector.run())
    try:
        await until(lambda: reflector.resource_version == "13" and len(reflector_watches(api)) >= 2, "re-watch")
        assert collector.events() == [("ADDED", "b"), ("MODIFIED", "b"), ("DELETED", "b"), ("ADDED", "b")]
        assert len(collector.relists()) == 1 and reflector.backwards == 0
    finally:
        await collector.stop()


def reflector_watches(api) -> list[str]:
    return [p for _, p in api.requests if "watch=true" in p]


@pytest.mark.parametrize(("held", "seen", "expected"), [
    ("467", "444", True),
    ("10", "9", True),  # numeric, not string order ("10" < "9" as text)
    ("9", "10", False),
    ("467", "467", False),
    ("", "5", False),  # nothing held yet
    ("abc", "5", False),  # an opaque RV: never compared, as client-go never compares
    ("467", "+5", False),
    ("467", "1_0", False),
    ("467", "0444", False),
    ("467", "\u0664\u0664", False),  # Arabic-Indic digits: not a decimal RV
])
def test_went_backwards_compares_only_canonical_decimal_rvs(held, seen, expected):
    assert went_backwards(held, seen) is expected
