"""Records from API JSON: pods (kubectl STATUS/READY, requests), nodes (state, taints), events (time fallback)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from observatory.lab.printing import row_cells
from observatory.model.records import EventView, NodeView, PodView, Taint

from . import lab_json

UTC = UTC

# (STATUS, READY) of busy pods in every state the scenario has, as `kubectl get pods` prints them.
BUSY_STATUS = {
    "default/nginx": ("Running", "1/1"),
    "default/curl": ("Completed", "0/1"),
    "default/hello": ("Pending", "0/1"),
    "sched-lab/waits-for-quota": ("SchedulingGated", "0/1"),
    "team-data/bulk-import-2x9fd": ("SchedulingGated", "0/1"),
    "team-data/jupyter-5b7d9c8f6-qm7xd": ("ContainerCreating", "0/1"),
    "team-data/stream-worker-6d5f8c4b7-tx2qn": ("CrashLoopBackOff", "0/1"),
    "team-web/api-5c8f7d9b64-q8w2n": ("CrashLoopBackOff", "0/1"),
    "team-web/frontend-84d6c9b7f5-l5wq9": ("ImagePullBackOff", "0/1"),
    "team-web/cache-warmup-29406120-d8rjz": ("Error", "0/1"),
    "team-data/etl-nightly-29403960-b4nhz": ("OOMKilled", "0/1"),
    "team-data/etl-nightly-29405400-ks7pq": ("Completed", "0/1"),
    "sched-lab/too-much-cpu": ("Pending", "0/1"),
    "sched-lab/landed-then-lost": ("Pending", "0/1"),
}


@pytest.fixture(scope="module")
def busy() -> lab_json.Cluster:
    return lab_json.busy()


@pytest.mark.parametrize("key", sorted(BUSY_STATUS))
def test_status_and_ready_of_busy_pods(busy, key):
    view = PodView.from_api(busy.pod(key))
    assert (view.status, view.ready) == BUSY_STATUS[key]


def test_status_agrees_with_the_labs_table_printer_for_every_busy_pod(busy):
    now = datetime.now(UTC)
    for pod in busy.pods:
        cells = row_cells("pods", pod, now)
        view = PodView.from_api(pod)
        assert (view.ready, view.status) == (cells[1], cells[2]), view.key


def _running(**extra_meta) -> dict:
    return {
        "metadata": {"name": "web", "namespace": "default", "uid": "u1", "resourceVersion": "7",
                     "creationTimestamp": "2026-11-29T10:00:00Z", **extra_meta},
        "spec": {"nodeName": "pair-worker", "containers": [{"name": "web", "image": "nginx"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                   "containerStatuses": [{"name": "web", "ready": True, "restartCount": 0,
                                          "state": {"running": {"startedAt": "2026-11-29T10:00:05Z"}}}]},
    }


def _with_init(init_statuses: list[dict], *, initialized: bool = False, init_specs: list[dict] | None = None) -> dict:
    pod = _running()
    pod["spec"]["initContainers"] = init_specs or [{"name": "a", "image": "busybox"}, {"name": "b", "image": "busybox"}]
    pod["status"] = {"phase": "Pending", "initContainerStatuses": init_statuses,
                     "conditions": [{"type": "Initialized", "status": "True" if initialized else "False"}],
                     "containerStatuses": [{"name": "web", "ready": False,
                                            "state": {"waiting": {"reason": "PodInitializing"}}}]}
    return pod


def _init(name: str, state: dict) -> dict:
    return {"name": name, "ready": False, "restartCount": 0, "state": state}


DONE = {"terminated": {"exitCode": 0, "reason": "Completed"}}


@pytest.mark.parametrize(("pod", "expected"), [
    (_running(), ("Running", "1/1")),
    (_running(deletionTimestamp="2026-11-29T10:05:00Z"), ("Terminating", "1/1")),
    (_with_init([_init("a", {"running": {}}), _init("b", {"waiting": {"reason": "PodInitializing"}})]),
     ("Init:0/2", "0/1")),
    (_with_init([_init("a", DONE), _init("b", {"running": {}})]), ("Init:1/2", "0/1")),
    (_with_init([_init("a", {"waiting": {"reason": "CrashLoopBackOff"}})]), ("Init:CrashLoopBackOff", "0/1")),
    (_with_init([_init("a", {"terminated": {"exitCode": 3}})]), ("Init:ExitCode:3", "0/1")),
    (_with_init([_init("a", {"terminated": {"exitCode": 137, "signal": 9}})]), ("Init:Signal:9", "0/1")),
    (_with_init([_init("a", {"terminated": {"exitCode": 1, "reason": "Error"}})]), ("Init:Error", "0/1")),
    (_with_init([_init("a", DONE), _init("b", DONE)], initialized=True), ("PodInitializing", "0/1")),
], ids=["running", "terminating", "init-0-of-2", "init-1-of-2", "init-waiting", "init-exit-code", "init-signal",
        "init-error", "initialized"])
def test_status_text_of_hand_made_states(pod, expected):
    assert pod_status_of(pod) == expected


def pod_status_of(pod: dict) -> tuple[str, str]:
    view = PodView.from_api(pod)
    cells = row_cells("pods", pod, datetime.now(UTC))
    assert (view.status, view.ready) == (cells[2], cells[1])  # the lab's printer is the second opinion
    return view.status, view.ready


def test_status_of_containers_exit_codes_node_lost_and_sidecars():
    pod = _running()
    pod["status"]["containerStatuses"][0]["state"] = {"terminated": {"exitCode": 2}}
    assert pod_status_of(pod) == ("ExitCode:2", "0/1")
    pod["status"]["containerStatuses"][0]["state"] = {"terminated": {"exitCode": 143, "signal": 15}}
    assert pod_status_of(pod) == ("Signal:15", "0/1")
    lost = _running(deletionTimestamp="2026-11-29T10:05:00Z")
    lost["status"]["reason"] = "NodeLost"
    assert pod_status_of(lost) == ("Unknown", "1/1")
    done = _running(deletionTimestamp="2026-11-29T10:05:00Z")
    done["status"] = {"phase": "Succeeded", "containerStatuses": [{"name": "web", "state": DONE}]}
    assert pod_status_of(done) == ("Completed", "0/1")  # terminal pods never show Terminating
    # A Completed container next to a running one: Running when the pod is Ready, else NotReady.
    two = _running()
    two["spec"]["containers"].append({"name": "job", "image": "busybox"})
    two["status"]["containerStatuses"].append({"name": "job", "ready": False, "state": DONE})
    assert pod_status_of(two) == ("Running", "1/2")
    two["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    assert pod_status_of(two) == ("NotReady", "1/2")
    # A started sidecar (restartPolicy Always init container) counts in READY and does not block.
    sidecar = _with_init([_init("proxy", {"running": {}}) | {"started": True, "ready": True}], initialized=True,
                         init_specs=[{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}])
    sidecar["status"]["phase"] = "Running"
    sidecar["status"]["containerStatuses"] = _running()["status"]["containerStatuses"]
    assert pod_status_of(sidecar) == ("Running", "2/2")


def test_pod_fields(busy):
    gated = PodView.from_api(busy.pod("team-data/bulk-import-2x9fd"))
    assert gated.gates == ("example.com/quota-check", "example.com/data-ready")
    assert gated.scheduled == ("False", "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates")
    assert (gated.cpu_request_milli, gated.memory_request_bytes) == (2000, 4 * 2**30)
    assert gated.node_name == "" and gated.phase == "Pending" and not gated.deleting
    assert gated.scheduler_name == "default-scheduler" and gated.key == "team-data/bulk-import-2x9fd"
    assert gated.created is not None and gated.created.utcoffset() == timedelta(0)
    etcd = PodView.from_api(busy.pod("kube-system/etcd-busy-control-plane"))
    assert etcd.priority == 2000001000 and etcd.node_name == "busy-control-plane"
    assert etcd.scheduled == ("True", "", "")
    nobody = PodView.from_api(busy.pod("sched-lab/for-nobody"))
    assert nobody.scheduler_name == "nobody-at-all" and nobody.scheduled is None
    refused = PodView.from_api(busy.pod("sched-lab/too-much-cpu"))
    assert refused.scheduled[:2] == ("False", "Unschedulable")
    assert refused.scheduled[2].startswith("0/8 nodes are available: ")
    assert refused.cpu_request_milli == 64000
    assert PodView.from_api(busy.pod("sched-lab/too-much-memory")).memory_request_bytes == 10**12
    assert PodView.from_api(busy.pod("default/tiny-memory")).memory_request_bytes == 1  # 128m bytes rounds up


def test_requests_default_to_limits_and_take_the_largest_init_step():
    pod = {"metadata": {"name": "p", "namespace": "d"},
           "spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}},
                                   {"name": "b", "resources": {"requests": {"cpu": "250m"},
                                                              "limits": {"cpu": "1", "memory": "256Mi"}}}],
                    "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}]}}
    view = PodView.from_api(pod)
    assert view.cpu_request_milli == 2000  # max(500m + 250m, 2)
    assert view.memory_request_bytes == 2**30 + 256 * 2**20


def test_missing_keys_give_defaults_not_errors():
    view = PodView.from_api({})
    assert view == PodView("", "", "", "", "", "default-scheduler", "", "", "0/0", None, False, (), None, "", 0, 0, 0)
    node = NodeView.from_api({"metadata": {"name": "n"}})
    assert (node.ready, node.state, node.allocatable_pods, node.taints, node.roles) == ("Unknown", "Unknown", 0, (), ())
    event = EventView.from_api({"metadata": {"name": "e"}, "count": None, "series": None, "source": None})
    assert (event.time, event.count, event.source, event.involved_kind) == (None, 1, "", "")
    bad = PodView.from_api({"metadata": {"name": 5, "creationTimestamp": "yesterday"}, "spec": ["x"],
                            "status": {"conditions": "no", "containerStatuses": [None, 3]}})
    assert (bad.name, bad.created, bad.status, bad.scheduled) == ("5", None, "", None)


def test_records_are_frozen_and_small():
    view = PodView.from_api(_running())
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.name = "other"  # type: ignore[misc]
    assert not hasattr(view, "__dict__")  # slots: no room for raw JSON


BUSY_NODES = {
    "busy-control-plane": ("Ready", ("control-plane",), ["node-role.kubernetes.io/control-plane:NoSchedule"],
                           4000, 16 * 2**30, 110),
    "busy-general-c": ("NotReady", (), ["node.kubernetes.io/unreachable:NoSchedule",
                                        "node.kubernetes.io/unreachable:NoExecute"], 8000, 32 * 2**30, 110),
    "busy-compute-a": ("Ready,SchedulingDisabled", (), ["node.kubernetes.io/unschedulable:NoSchedule"],
                       16000, 32 * 2**30, 110),
    "busy-gpu-c": ("Ready", (), ["dedicated=gpu:NoSchedule"], 48000, 192 * 2**30, 110),
}


@pytest.mark.parametrize("name", sorted(BUSY_NODES))
def test_nodes_of_busy(busy, name):
    node = NodeView.from_api(next(n for n in busy.nodes if n["metadata"]["name"] == name))
    state, roles, taints, cpu, memory, pods = BUSY_NODES[name]
    assert node.state == state and node.roles == roles and [str(t) for t in node.taints] == taints
    assert (node.allocatable_cpu_milli, node.allocatable_memory_bytes, node.allocatable_pods) == (cpu, memory, pods)
    assert node.uid and node.resource_version


def test_node_ready_condition_and_taint_text():
    unknown = NodeView.from_api({"metadata": {"name": "n"}, "status": {"conditions": [
        {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown"}]}})
    assert (unknown.ready, unknown.state) == ("Unknown", "NotReady")  # kubectl: NotReady, not Unknown
    cordoned = NodeView.from_api({"metadata": {"name": "n", "labels": {"kubernetes.io/role": "edge"}},
                                  "spec": {"unschedulable": True},
                                  "status": {"conditions": [{"type": "Ready", "status": "False"}]}})
    assert (cordoned.ready, cordoned.state, cordoned.roles) == ("False", "NotReady,SchedulingDisabled", ("edge",))
    assert str(Taint("dedicated", "gpu", "NoSchedule")) == "dedicated=gpu:NoSchedule"
    assert str(Taint("node-role.kubernetes.io/control-plane", "", "NoSchedule")) == \
        "node-role.kubernetes.io/control-plane:NoSchedule"


# -- events: both recorders as core/v1 serves them (reference §4.2) -------------------------------------------------

def kubelet_event(**over) -> dict:
    event = {
        "metadata": {"name": "manual.18ec9114b78e6a19", "namespace": "sched-lab", "uid": "e1",
                     "resourceVersion": "16", "creationTimestamp": "2026-11-29T10:00:03Z"},
        "involvedObject": {"kind": "Pod", "namespace": "sched-lab", "name": "manual", "uid": "p1",
                           "apiVersion": "v1", "resourceVersion": "11", "fieldPath": "spec.containers{pause}"},
        "reason": "Pulling", "message": 'Pulling image "registry.k8s.io/pause:3.9"',
        "source": {"component": "kubelet", "host": "pair-worker"},
        "firstTimestamp": "2026-11-29T10:00:01Z", "lastTimestamp": "2026-11-29T10:00:02Z", "count": 1,
        "type": "Normal", "eventTime": None, "reportingComponent": "kubelet", "reportingInstance": "pair-worker",
    }
    event.update(over)
    return event


def scheduler_event(**over) -> dict:
    event = {
        "metadata": {"name": "web.18ec9114b81f5a25", "namespace": "default", "uid": "e2",
                     "resourceVersion": "30", "creationTimestamp": "2026-11-29T10:00:09Z"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web", "uid": "p2", "apiVersion": "v1",
                           "resourceVersion": "20"},
        "reason": "FailedScheduling",
        "message": "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
                   "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: 0/2 nodes "
                   "are available: 2 Preemption is not helpful for scheduling.",
        "source": {}, "firstTimestamp": None, "lastTimestamp": None, "type": "Warning",
        "eventTime": "2026-11-29T10:00:08.123456Z", "action": "Scheduling",
        "reportingComponent": "default-scheduler", "reportingInstance": "default-scheduler-pair-control-plane",
    }
    event.update(over)
    return event


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_kubelet_event():
    ev = EventView.from_api(kubelet_event())
    assert (ev.key, ev.type, ev.reason, ev.source, ev.count) == ("sched-lab/manual.18ec9114b78e6a19", "Normal",
                                                                  "Pulling", "kubelet", 1)
    assert (ev.involved_kind, ev.involved_key, ev.involved_uid, ev.field_path) == (
        "Pod", "sched-lab/manual", "p1", "spec.containers{pause}")
    assert ev.time == at("2026-11-29T10:00:02")  # lastTimestamp


def test_scheduler_event_uses_event_time_and_reporting_component():
    ev = EventView.from_api(scheduler_event())
    assert (ev.source, ev.count, ev.field_path) == ("default-scheduler", 1, "")
    assert ev.time == datetime(2026, 11, 29, 10, 0, 8, 123456, tzinfo=UTC)


def test_event_time_fallback_order():
    ev = scheduler_event(lastTimestamp="2026-11-29T10:00:20Z",
                         series={"count": 4, "lastObservedTime": "2026-11-29T10:05:00.500000Z"})
    assert EventView.from_api(ev).time == datetime(2026, 11, 29, 10, 5, 0, 500000, tzinfo=UTC)  # series first
    ev["series"] = None
    assert EventView.from_api(ev).time == at("2026-11-29T10:00:20")  # then lastTimestamp
    ev["lastTimestamp"] = None
    assert EventView.from_api(ev).time == datetime(2026, 11, 29, 10, 0, 8, 123456, tzinfo=UTC)  # then eventTime
    ev["eventTime"] = None
    assert EventView.from_api(ev).time == at("2026-11-29T10:00:09")  # then creationTimestamp
    del ev["metadata"]["creationTimestamp"]
    assert EventView.from_api(ev).time is None


def test_event_count_and_source_fallbacks():
    assert EventView.from_api(scheduler_event(series={"count": 4, "lastObservedTime": None}, count=2)).count == 4
    assert EventView.from_api(kubelet_event(count=3)).count == 3
    assert EventView.from_api(kubelet_event(reportingComponent="")).source == "kubelet"  # source.component
    assert EventView.from_api(kubelet_event(reportingComponent="", source={})).source == ""
    no_ns = kubelet_event()
    del no_ns["involvedObject"]["namespace"]
    assert EventView.from_api(no_ns).involved_namespace == "sched-lab"


def test_events_recorded_by_the_lab(busy):
    by_reason = {}
    for raw in busy.events:
        ev = EventView.from_api(raw)
        by_reason.setdefault(ev.reason, []).append(ev)
    failed = by_reason["FailedScheduling"]
    assert {e.involved_name for e in failed} == {
        "no-nvme", "only-on-the-cordoned-node", "too-much-cpu", "too-much-memory", "wants-a-gpu", "wrong-zone",
        "train-bert-large-0"}
    assert all(e.source == "default-scheduler" and e.type == "Warning" and e.time is not None for e in failed)
    started = by_reason["Started"]
    assert [(e.source, e.message, e.field_path) for e in started] == [
        ("kubelet", "Started container web", "spec.containers{web}")]
