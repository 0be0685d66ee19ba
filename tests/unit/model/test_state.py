"""ClusterState: deltas in, pane rows out, on JSON recorded from the lab."""

from __future__ import annotations

import copy
import random
from datetime import UTC, datetime, timedelta

import pytest

from observatory.model.deltas import Deleted, Relisted, Upserted, WatchState
from observatory.model.state import ClusterState

from . import lab_json
from .test_records import kubelet_event, scheduler_event

T0 = datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC)
TOO_MUCH_CPU = (
    "FailedScheduling: 0/8 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) had "
    "untolerated taint {node-role.kubernetes.io/control-plane: }, 1 node(s) had untolerated taint "
    "{node.kubernetes.io/unreachable: }, 1 node(s) were unschedulable, 4 Insufficient cpu. no new claims to "
    "deallocate, preemption: 0/8 nodes are available: 8 Preemption is not helpful for scheduling.")


class Clock:
    """A fake clock: ``clock()`` is the time, ``clock.advance(seconds)`` moves it."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def load(cluster: lab_json.Cluster, clock: Clock | None = None, **kwargs) -> ClusterState:
    state = ClusterState(clock or Clock(), **kwargs)
    for kind in ("nodes", "pods", "events"):
        state.apply(Relisted(kind, getattr(cluster, kind), cluster.resource_version))
    return state


@pytest.fixture
def busy() -> lab_json.Cluster:
    return lab_json.busy()


def rows(state: ClusterState) -> list[tuple[str, str, str | None, bool]]:
    return [(r.pod.key, r.state, r.bound_to, r.default_scheduler) for r in state.pending()]


# -- pending ------------------------------------------------------------------------------------------------------

def states(state: ClusterState) -> dict[str, str]:
    return {r.pod.key: r.diagnosis.state for r in state.pending()}


def test_pending_rows_of_busy(busy):
    got = rows(load(busy))
    refused = ["sched-lab/no-nvme", "sched-lab/only-on-the-cordoned-node", "sched-lab/too-much-cpu",
               "sched-lab/too-much-memory", "sched-lab/wants-a-gpu", "sched-lab/wrong-zone",
               "team-data/train-bert-large-0"]
    assert states(load(busy)) == {
        "default/hello": "no-scheduler",
        "default/pinned-to-missing-node": "node-missing",
        "sched-lab/fits-anywhere": "no-scheduler",
        "sched-lab/for-nobody": "no-scheduler",
        "sched-lab/landed-then-lost": "node-not-ready",
        "sched-lab/only-highmem-fits": "no-scheduler",
        "sched-lab/pinned-to-the-lost-node": "node-not-ready",
        "sched-lab/waits-for-quota": "gated",
        "team-data/bulk-import-2x9fd": "gated",
        "team-data/ingest-7b9c5d8f6-w4n7h": "no-scheduler",
        "team-data/jupyter-5b7d9c8f6-qm7xd": "waiting-kubelet",
        "team-data/report-q4-8gk2m": "gated",
        "team-data/spark-driver-7c4xq": "no-scheduler",
        "team-web/api-5c8f7d9b64-v4n8s": "no-scheduler",
        "team-web/frontend-84d6c9b7f5-l5wq9": "waiting-kubelet",
        "team-web/web-7d9f8b6c5-r6w8k": "no-scheduler",
        **dict.fromkeys(refused, "refused"),
    }
    by_key = {k: (s, b, d) for k, s, b, d in got}
    assert by_key["sched-lab/for-nobody"] == ("no scheduler has looked", None, False)
    assert by_key["team-data/bulk-import-2x9fd"][0] == ("SchedulingGated: example.com/quota-check, "
                                                          "example.com/data-ready")
    assert by_key["default/pinned-to-missing-node"][0] == "bound to missing node busy-general-d"
    assert by_key["team-web/frontend-84d6c9b7f5-l5wq9"][0] == ("bound to busy-general-a, "
                                                                 "kubelet reports ImagePullBackOff")
    assert by_key["sched-lab/too-much-cpu"][0].startswith("0/8 nodes: 4 too little cpu, ")
    cpu = load(busy).diagnosis("sched-lab/too-much-cpu")
    assert "FailedScheduling: " + cpu.raw_message == TOO_MUCH_CPU
    assert [(r.count, r.text) for r in cpu.refusal.reasons] == [
        (1, "node(s) had untolerated taint {dedicated: gpu}"),
        (1, "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"),
        (1, "node(s) had untolerated taint {node.kubernetes.io/unreachable: }"),
        (1, "node(s) were unschedulable"), (4, "Insufficient cpu")]
    assert [k for k, *_ in got] == sorted(k for k, *_ in got)  # (namespace, name) order


def test_pending_state_variants(busy):
    state = load(busy)
    pod = busy.pod("sched-lab/too-much-cpu")
    # SchedulerError (a failed bind) reads as such.
    errored = copy.deepcopy(pod)
    cond = next(c for c in errored["status"]["conditions"] if c["type"] == "PodScheduled")
    cond.update(reason="SchedulerError", message='binding rejected: running Bind plugin "DefaultBinder": boom')
    errored["metadata"]["resourceVersion"] = "9001"
    state.apply(Upserted("pods", errored))
    row = next(r for r in state.pending() if r.pod.key == "sched-lab/too-much-cpu")
    assert (row.diagnosis.state, row.state) == (
        "scheduler-error", 'SchedulerError: binding rejected: running Bind plugin "DefaultBinder": boom')
    # Without the condition, the latest FailedScheduling event gives the message.
    bare = copy.deepcopy(pod)
    bare["status"].pop("conditions")
    bare["metadata"]["resourceVersion"] = "9002"
    state.apply(Upserted("pods", bare))
    assert "FailedScheduling: " + state.diagnosis("sched-lab/too-much-cpu").raw_message == TOO_MUCH_CPU
    later = scheduler_event(metadata={"name": "too-much-cpu.later", "namespace": "sched-lab"},
                            involvedObject={"kind": "Pod", "namespace": "sched-lab", "name": "too-much-cpu",
                                            "uid": pod["metadata"]["uid"]},
                            eventTime="2099-01-01T00:00:00.000000Z", message="0/8 nodes are available: later.")
    assert "pending" in state.apply(Upserted("events", later, "ADDED"))
    assert state.diagnosis("sched-lab/too-much-cpu").raw_message == "0/8 nodes are available: later."
    # Nominated (preemption in progress) comes before the refusal, and keeps its parse.
    nominated = copy.deepcopy(bare)
    nominated["status"]["nominatedNodeName"] = "busy-general-a"
    nominated["metadata"]["resourceVersion"] = "9003"
    state.apply(Upserted("pods", nominated))
    diagnosis = state.diagnosis("sched-lab/too-much-cpu")
    assert (diagnosis.state, diagnosis.nominated_node) == ("nominated", "busy-general-a")
    assert diagnosis.refusal is not None and diagnosis.refusal.total == 8
    # Deleting wins over everything.
    deleting = copy.deepcopy(nominated)
    deleting["metadata"].update(deletionTimestamp="2026-11-29T10:00:00Z", resourceVersion="9004")
    state.apply(Upserted("pods", deleting))
    assert states(state)["sched-lab/too-much-cpu"] == "deleting"


def test_a_node_going_not_ready_changes_the_rows_of_pods_waiting_on_it(busy):
    state = load(busy)
    assert states(state)["team-data/jupyter-5b7d9c8f6-qm7xd"] == "waiting-kubelet"
    node = copy.deepcopy(next(n for n in busy.nodes if n["metadata"]["name"] == "busy-highmem-c"))
    for cond in node["status"]["conditions"]:
        if cond["type"] == "Ready":
            cond["status"] = "Unknown"
    node["metadata"]["resourceVersion"] = "9001"
    assert "pending" in state.apply(Upserted("nodes", node))
    assert states(state)["team-data/jupyter-5b7d9c8f6-qm7xd"] == "node-not-ready"
    assert "pending" in state.apply(Deleted("nodes", node))
    assert states(state)["team-data/jupyter-5b7d9c8f6-qm7xd"] == "node-missing"


def test_gates_removed_is_not_a_scheduler_look(busy):
    state = load(busy)
    pod = busy.pod("sched-lab/waits-for-quota")
    pod["spec"]["schedulingGates"] = []
    pod["metadata"]["resourceVersion"] = "9001"
    state.apply(Upserted("pods", pod))
    assert dict((k, s) for k, s, _, _ in rows(state))["sched-lab/waits-for-quota"] == "no scheduler has looked"
    assert states(state)["sched-lab/waits-for-quota"] == "no-scheduler"


# -- manual binding: recently bound, timeline, events ------------------------------------------------------------

def replay(rec: lab_json.Recording, clock: Clock, state: ClusterState | None = None,
           step: float = 0.5) -> ClusterState:
    state = state or load(rec.initial, clock)
    for _rv, type_, kind, obj in rec.changes:
        clock.advance(step)
        state.apply(Deleted(kind, obj) if type_ == "DELETED" else Upserted(kind, obj, type_))
    return state


def test_manual_binding_timeline_is_empty_then_set_with_nothing_between():
    rec = lab_json.manual_binding()
    # A write that changes none of nodeName, phase, STATUS (a label) right after the bind is not a frame.
    rv, _type, _kind, bound = rec.changes[0]
    labelled = copy.deepcopy(bound)
    labelled["metadata"]["labels"] = {"seen": "yes"}
    labelled["metadata"]["resourceVersion"] = rv + "0"
    rec.changes.insert(1, (rv + "0", "MODIFIED", "pods", labelled))
    clock = Clock()
    state = replay(rec, clock)
    frames = [(f.change, f.node_name, f.phase, f.status) for f in state.timeline("sched-lab/manual")]
    assert frames == [
        ("RELISTED", "", "Pending", "Pending"),
        ("MODIFIED", "pair-worker", "Pending", "Pending"),
        ("MODIFIED", "pair-worker", "Pending", "ContainerCreating"),
        ("MODIFIED", "pair-worker", "Running", "Running"),
    ]
    bind_rv = next(rv for rv, t, kind, obj in rec.changes if kind == "pods" and obj["spec"].get("nodeName"))
    timeline = state.timeline("sched-lab/manual")
    assert timeline[0].resource_version == rec.initial.pod("sched-lab/manual")["metadata"]["resourceVersion"]
    assert timeline[1].resource_version == bind_rv
    assert timeline[0].at == T0 and timeline[1].at == T0 + timedelta(seconds=0.5)
    assert state.timeline("nope/nothing") == []


def test_manual_binding_events_are_the_kubelets_and_no_scheduled():
    state = replay(lab_json.manual_binding(), Clock())
    events = state.events_for("sched-lab/manual")
    assert [(e.reason, e.source) for e in events] == [
        ("Pulling", "kubelet"), ("Pulled", "kubelet"), ("Created", "kubelet"), ("Started", "kubelet")]
    assert [e.message for e in events][2:] == ["Created container: pause", "Started container pause"]


def test_recently_bound_with_a_fake_clock():
    rec = lab_json.manual_binding()
    clock = Clock()
    state = load(rec.initial, clock, recent_seconds=10.0)
    assert state.recently_bound() == {}
    assert rows(state) == [("sched-lab/manual", "no scheduler has looked", None, False)]
    _rv, type_, kind, bound = rec.changes[0]
    assert (type_, kind, bound["spec"]["nodeName"]) == ("MODIFIED", "pods", "pair-worker")
    clock.advance(1)
    assert state.apply(Upserted("pods", bound, "MODIFIED")) == {"pods", "pending", "timeline"}
    assert state.recently_bound() == {"sched-lab/manual": "pair-worker"}
    assert state.recently_bound_expiry() == T0 + timedelta(seconds=11)
    assert rows(state) == [("sched-lab/manual", "bound to pair-worker, waiting for the kubelet", "pair-worker", False)]
    worker = next(p for p in state.placement() if p.node.name == "pair-worker")
    assert worker.recently_bound == {"sched-lab/manual"} and [p.key for p in worker.pods] == ["sched-lab/manual"]
    clock.advance(10)  # exactly the window: still shown
    assert rows(state)[0][2] == "pair-worker"
    clock.advance(0.5)
    # Still phase Pending (no kubelet in this recording yet): listed, no longer highlighted.
    assert state.recently_bound() == {}
    assert rows(state) == [("sched-lab/manual", "bound to pair-worker, waiting for the kubelet", None, False)]
    assert state.recently_bound_expiry() is None
    assert all(not p.recently_bound for p in state.placement())


def test_pods_first_seen_bound_are_not_recently_bound(busy):
    clock = Clock()
    state = load(busy, clock)
    assert state.recently_bound() == {}
    late = copy.deepcopy(busy.pod("default/nginx"))
    late["metadata"].update(name="nginx-2", uid="new", resourceVersion="9001")
    state.apply(Upserted("pods", late, "ADDED"))
    assert state.recently_bound() == {}


# -- events -------------------------------------------------------------------------------------------------------

def test_a_modified_event_replaces_its_row():
    state = ClusterState(Clock())
    first = scheduler_event()
    assert state.apply(Upserted("events", first, "ADDED")) == {"events"}
    again = copy.deepcopy(first)
    again["metadata"]["resourceVersion"] = "31"
    again["series"] = {"count": 2, "lastObservedTime": "2026-11-29T10:01:08.000000Z"}
    state.apply(Upserted("events", again, "MODIFIED"))
    events = state.events_for("default/web")
    assert [(e.key, e.count, e.time) for e in events] == [
        ("default/web.18ec9114b81f5a25", 2, datetime(2026, 11, 29, 10, 1, 8, tzinfo=UTC))]
    assert len(state.events) == 1


def test_events_match_by_uid_when_known_else_by_name():
    state = ClusterState(Clock())
    pod = {"metadata": {"name": "manual", "namespace": "sched-lab", "uid": "p1", "resourceVersion": "5"},
           "spec": {}, "status": {"phase": "Pending"}}
    ours = kubelet_event()
    old_life = kubelet_event(metadata={"name": "manual.old", "namespace": "sched-lab"},
                             involvedObject={"kind": "Pod", "namespace": "sched-lab", "name": "manual", "uid": "p0"})
    no_uid = kubelet_event(metadata={"name": "manual.nouid", "namespace": "sched-lab"},
                           involvedObject={"kind": "Pod", "namespace": "sched-lab", "name": "manual"})
    node_event = kubelet_event(metadata={"name": "manual.node", "namespace": "default"},
                               involvedObject={"kind": "Node", "name": "manual", "uid": "p1"})
    state.apply(Relisted("events", [ours, old_life, no_uid, node_event], "40"))
    assert {e.name for e in state.events_for("sched-lab/manual")} == {"manual.18ec9114b78e6a19", "manual.old",
                                                                      "manual.nouid"}  # pod unknown: by name
    state.apply(Upserted("pods", pod, "ADDED"))
    assert [e.name for e in state.events_for("sched-lab/manual")] == ["manual.18ec9114b78e6a19", "manual.nouid"]
    assert [e.name for e in state.events_for(None)] == ["manual.18ec9114b78e6a19", "manual.nouid"]


def test_events_for_none_are_those_of_pending_pods(busy):
    state = load(busy)
    names = [e.involved_name for e in state.events_for(None)]
    assert sorted(names) == ["no-nvme", "only-on-the-cordoned-node", "too-much-cpu", "too-much-memory",
                             "train-bert-large-0", "wants-a-gpu", "wrong-zone"]
    times = [e.time.replace(microsecond=0) for e in state.events_for(None)]  # ordered to the second, then by name
    assert times == sorted(times)
    assert [e.reason for e in state.events_for("team-web/web-7d9f8b6c5-x2k4p")] == [
        "Pulling", "Pulled", "Created", "Started"]


# -- relist, placement --------------------------------------------------------------------------------------------

def test_relist_removes_ghosts_and_updates_the_rest(busy):
    clock = Clock()
    state = load(busy, clock)
    pods = [p for p in busy.pods if p["metadata"]["name"] not in ("hello", "kafka-1")]
    fits = next(p for p in pods if p["metadata"]["name"] == "fits-anywhere")
    fits["spec"]["nodeName"] = "busy-general-b"
    fits["metadata"]["resourceVersion"] = "9001"
    events = [e for e in busy.events if e["involvedObject"]["name"] != "too-much-cpu"]
    clock.advance(1)
    assert state.apply(Relisted("pods", pods, "9001")) == {"pods", "pending", "timeline"}
    state.apply(Relisted("events", events, "9001"))
    assert "default/hello" not in state.pods and "team-data/kafka-1" not in state.pods
    assert len(state.pods) == 58
    assert "default/hello" not in [r.pod.key for r in state.pending()]
    assert state.recently_bound() == {"sched-lab/fits-anywhere": "busy-general-b"}  # seen going "" -> node
    general_a = next(p for p in state.placement() if p.node.name == "busy-general-a")
    assert "kafka-1" not in [p.name for p in general_a.pods]
    assert (general_a.cpu_requested_milli, general_a.pods_count) == (600, 6)
    assert state.events_for("sched-lab/too-much-cpu") == []
    assert state.timeline("default/hello")[-1].change == "DELETED"
    assert state.resource_versions["pods"] == "9001"
    assert state.apply(Relisted("pods", pods, "9002")) == frozenset()  # nothing changed: nothing to repaint


def test_placement_of_busy(busy):
    state = load(busy)
    placement = {p.node.name: p for p in state.placement()}
    assert list(placement) == sorted(placement)
    highmem = placement["busy-highmem-c"]
    assert [p.name for p in highmem.pods] == [
        "kube-proxy-f4m8d", "etl-nightly-29403960-b4nhz", "etl-nightly-29405400-ks7pq", "jupyter-5b7d9c8f6-qm7xd",
        "postgres-0", "stream-worker-6d5f8c4b7-tx2qn", "redis-0"]
    # The two etl-nightly Job pods are terminal (Failed, Succeeded): listed, but not counted.
    assert (highmem.cpu_requested_milli, highmem.memory_requested_bytes, highmem.pods_count) == (
        3500, 4 * 2**30 + 12 * 2**30 + 128 * 2**20 + 10**9, 5)  # jupyter, postgres, stream-worker, redis (1e9)
    assert (placement["busy-gpu-c"].cpu_requested_milli, placement["busy-gpu-c"].pods_count) == (8000, 3)
    assert [p.key for p in state.orphans()] == ["default/pinned-to-missing-node"]


def test_placement_of_an_unchanged_node_is_the_same_object_and_a_changed_one_is_new(busy):
    """The nodes pane finds what changed by identity, so placement() hands back the same NodePlacement for
    every node a delta did not touch."""
    state = load(busy)
    before = {p.node.name: p for p in state.placement()}
    assert all(p is before[p.node.name] for p in state.placement())  # nothing changed: nothing new
    redis = copy.deepcopy(next(p for p in busy.pods if p["metadata"]["name"] == "redis-0"))
    redis["metadata"]["resourceVersion"] = "99999"
    redis["status"]["phase"] = "Succeeded"  # no longer counted on busy-highmem-c
    state.apply(Upserted("pods", redis, "MODIFIED"))
    after = {p.node.name: p for p in state.placement()}
    changed = {name for name in after if after[name] is not before[name]}
    assert changed == {"busy-highmem-c"}
    assert after["busy-highmem-c"].pods_count == before["busy-highmem-c"].pods_count - 1
    assert after["busy-highmem-c"] != before["busy-highmem-c"]


def test_areas_and_watch_states():
    state = ClusterState(Clock())
    live = WatchState("pods", "live", T0)
    assert state.apply(live) == {"watch"}
    assert state.apply(WatchState("pods", "live", T0)) == frozenset()
    assert state.watch_states == {"pods": live}
    assert state.apply(Upserted("nodes", {"metadata": {"name": "n1", "resourceVersion": "1"}})) == {"nodes"}
    assert state.apply(Deleted("nodes", {"metadata": {"name": "n1"}})) == {"nodes"}
    assert state.apply(Deleted("pods", {"metadata": {"name": "never-seen", "namespace": "x"}})) == frozenset()
    assert state.apply(Upserted("secrets", {"metadata": {"name": "s"}})) == frozenset()


# -- bounded memory -----------------------------------------------------------------------------------------------

def _pod(name: str, rv: int, node: str = "", phase: str = "Pending", uid: str = "u") -> dict:
    return {"metadata": {"name": name, "namespace": "ns", "uid": uid, "resourceVersion": str(rv)},
            "spec": {"nodeName": node, "containers": [{"name": "c"}]}, "status": {"phase": phase}}


def test_timeline_keeps_the_last_frames_and_forgets_deleted_pods():
    clock = Clock()
    state = ClusterState(clock, timeline_length=50, forget_seconds=60, max_forgotten=2)
    for rv in range(120):
        state.apply(Upserted("pods", _pod("p", rv, phase="Running" if rv % 2 else "Pending")))
    frames = state.timeline("ns/p")
    assert len(frames) == 50 and frames[-1].resource_version == "119" and frames[0].resource_version == "70"
    state.apply(Deleted("pods", _pod("p", 120)))
    assert state.timeline("ns/p")[-1].change == "DELETED"
    clock.advance(61)
    state.apply(Upserted("pods", _pod("q", 121)))
    assert state.timeline("ns/p") == [] and len(state.timeline("ns/q")) == 1
    for name in ("a", "b", "c"):
        state.apply(Upserted("pods", _pod(name, 200)))
        state.apply(Deleted("pods", _pod(name, 201)))
    assert [bool(state.timeline(f"ns/{n}")) for n in "abc"] == [False, True, True]


def test_a_new_pod_under_an_old_name_starts_a_new_timeline():
    state = ClusterState(Clock())
    state.apply(Upserted("pods", _pod("p", 1, node="n1", uid="old")))
    state.apply(Deleted("pods", _pod("p", 2, node="n1", uid="old")))
    state.apply(Upserted("pods", _pod("p", 3, uid="new"), "ADDED"))
    assert [(f.change, f.node_name) for f in state.timeline("ns/p")] == [("ADDED", "")]


def test_indexes_agree_with_a_fresh_relist_after_random_deltas(busy):
    """Whatever order deltas come in, the incremental indexes equal what a fresh list would build."""
    rng = random.Random(4)
    state = load(busy)
    current = {f'{p["metadata"]["namespace"]}/{p["metadata"]["name"]}': p for p in busy.pods}
    nodes = [n["metadata"]["name"] for n in busy.nodes] + ["busy-general-d"]
    rv = 10_000
    for _ in range(400):
        key = rng.choice(sorted(current))
        pod = copy.deepcopy(current[key])
        rv += 1
        pod["metadata"]["resourceVersion"] = str(rv)
        action = rng.random()
        if action < 0.15:
            state.apply(Deleted("pods", pod))
            del current[key]
            continue
        if action < 0.5:
            pod["spec"]["nodeName"] = rng.choice([*nodes, ""])
        elif action < 0.8:
            pod.setdefault("status", {})["phase"] = rng.choice(["Pending", "Running", "Succeeded", "Failed"])
        else:
            pod["metadata"]["name"] += f"-{rv}"
            pod["metadata"]["uid"] = f"uid-{rv}"
            key = f'{pod["metadata"]["namespace"]}/{pod["metadata"]["name"]}'
        current[key] = pod
        state.apply(Upserted("pods", pod))
        if rng.random() < 0.1:
            state.pending(), state.placement()  # warm the caches mid-stream
    fresh = load(lab_json.Cluster(list(current.values()), busy.nodes, busy.events, "x"))
    recent = state.recently_bound()  # a relist sees no transitions: compare the other rows
    assert [(r.pod, r.state) for r in state.pending() if r.pod.key not in recent] == [
        (r.pod, r.state) for r in fresh.pending() if r.pod.key not in recent]
    def totals(placement):
        return [(p.node, p.pods, p.cpu_requested_milli, p.memory_requested_bytes, p.pods_count) for p in placement]

    assert totals(state.placement()) == totals(fresh.placement())
    assert state.orphans() == fresh.orphans()


def test_events_of_one_second_keep_creation_order_across_recorders():
    """The scheduler's events/v1 time has microseconds, the kubelet's legacy timestamps only seconds: within the same
    second the ``<pod>.<hex nanoseconds>`` names decide, so Scheduled comes before Pulling, as in kubectl describe."""
    state = ClusterState()
    pod = {"metadata": {"name": "seamb", "namespace": "default", "uid": "u1", "resourceVersion": "1"},
           "spec": {"nodeName": "n1"}, "status": {"phase": "Pending"}}
    state.apply(Upserted("pods", pod, "ADDED"))
    scheduled = {"metadata": {"name": "seamb.187c0a0000000001", "namespace": "default", "resourceVersion": "2"},
                 "involvedObject": {"kind": "Pod", "namespace": "default", "name": "seamb", "uid": "u1"},
                 "reason": "Scheduled", "type": "Normal", "eventTime": "2026-11-29T17:00:33.900000Z",
                 "reportingComponent": "default-scheduler", "source": {}}
    pulling = {"metadata": {"name": "seamb.187c0a0000000002", "namespace": "default", "resourceVersion": "3"},
               "involvedObject": {"kind": "Pod", "namespace": "default", "name": "seamb", "uid": "u1"},
               "reason": "Pulling", "type": "Normal", "lastTimestamp": "2026-11-29T17:00:33Z",
               "source": {"component": "kubelet"}}
    state.apply(Upserted("events", pulling, "ADDED"))
    state.apply(Upserted("events", scheduled, "ADDED"))
    assert [e.reason for e in state.events_for("default/seamb")] == ["Scheduled", "Pulling"]


def test_the_deleted_frame_carries_the_deletion_resource_version():
    state = ClusterState()
    pod = {"metadata": {"name": "p", "namespace": "d", "uid": "u", "resourceVersion": "170"},
           "spec": {"nodeName": "n"}, "status": {"phase": "Running"}}
    state.apply(Upserted("pods", pod, "ADDED"))
    state.apply(Deleted("pods", {**pod, "metadata": {**pod["metadata"], "resourceVersion": "173"}}))
    assert [(f.change, f.resource_version) for f in state.timeline("d/p")][-1] == ("DELETED", "173")
