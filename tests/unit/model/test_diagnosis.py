"""One Diagnosis per pod: each state decided from hand-made objects, with the sentences a learner reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from observatory.model.diagnosis import STATES, diagnose
from observatory.model.records import EventView, LeaseView, NodeView, PodView

NOW = datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC)
LEASE = "kube-system/kube-scheduler"


def pod(name: str = "p", *, node: str = "", phase: str = "Pending", scheduler: str | None = None,
        conditions: list | None = None, gates: list[str] | None = None, deleting: bool = False,
        nominated: str = "", statuses: list | None = None) -> PodView:
    meta = {"name": name, "namespace": "team", "uid": f"uid-{name}", "resourceVersion": "5"}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-29T09:59:00Z"
    spec = {"nodeName": node, "containers": [{"name": "c", "image": "x"}]}
    if scheduler:
        spec["schedulerName"] = scheduler
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    status = {"phase": phase, "conditions": conditions or []}
    if nominated:
        status["nominatedNodeName"] = nominated
    if statuses:
        status["containerStatuses"] = statuses
    return PodView.from_api({"metadata": meta, "spec": spec, "status": status})


def node(name: str, ready: str = "True") -> NodeView:
    return NodeView.from_api({"metadata": {"name": name},
                              "status": {"conditions": [{"type": "Ready", "status": ready}]}})


def event(reason: str, message: str, source: str = "default-scheduler", seconds_ago: int = 5, count: int = 1,
          name: str = "p") -> EventView:
    at = (NOW - timedelta(seconds=seconds_ago)).isoformat().replace("+00:00", "Z")
    return EventView.from_api({"metadata": {"name": f"{name}.{reason}", "namespace": "team", "resourceVersion": "9"},
                               "involvedObject": {"kind": "Pod", "namespace": "team", "name": name,
                                                  "uid": f"uid-{name}"},
                               "reason": reason, "message": message, "reportingComponent": source,
                               "eventTime": at,
                               "series": {"count": count, "lastObservedTime": at} if count > 1 else None})


def lease(holder: str = "control-plane_1f2e", renewed_ago: float = 3, duration: int = 15) -> LeaseView:
    renewed = (NOW - timedelta(seconds=renewed_ago)).isoformat().replace("+00:00", "Z")
    return LeaseView.from_api({"metadata": {"namespace": "kube-system", "name": "kube-scheduler"},
                               "spec": {"holderIdentity": holder, "renewTime": renewed,
                                        "leaseDurationSeconds": duration}})


NODES = {"w1": node("w1"), "down": node("down", "Unknown")}


def test_an_unserved_scheduler_name_is_named_as_the_likely_reason():
    d = diagnose(pod(scheduler="my-scheduler"), [], NODES, now=NOW,
                 schedulers_seen={"default-scheduler": NOW - timedelta(seconds=30)}, lease=lease())
    assert (d.state, d.title, d.headline) == ("no-scheduler", "No scheduler has looked", "no scheduler has looked")
    assert "spec.schedulerName: my-scheduler" in d.explanation
    assert "Schedulers seen emitting events in this cluster: default-scheduler (last 30s ago)" in d.explanation
    assert d.likely.startswith("no running scheduler answers to schedulerName 'my-scheduler'")
    assert d.lease is None  # the Lease is kube-scheduler's: not shown for another schedulerName
    assert d.schedulers_seen == ("default-scheduler",)


def test_default_scheduler_pods_get_the_lease_holder():
    live = diagnose(pod(), [], NODES, now=NOW, schedulers_seen={"default-scheduler": NOW}, lease=lease())
    assert f"The {LEASE} Lease is held by control-plane_1f2e (renewed 3s ago)." in live.explanation
    assert live.likely.startswith("default-scheduler is running but has not reached this pod yet")
    stale = diagnose(pod(), [], NODES, now=NOW, lease=lease(renewed_ago=600))
    assert (f"The {LEASE} Lease was last renewed by control-plane_1f2e 10m ago, longer ago than its 15s duration: "
            "no kube-scheduler is renewing it.") in stale.explanation
    assert stale.likely == "kube-scheduler is not running: its Lease is not being renewed."
    assert "No scheduler has been seen emitting events in this cluster." in stale.explanation
    hidden = diagnose(pod(), [], NODES, now=NOW, scope="team",
                      lease=LeaseView.unreadable("kube-system", "kube-scheduler", "forbidden: nope"))
    assert f"The {LEASE} Lease could not be read: forbidden: nope." in hidden.explanation
    assert "No scheduler has been seen emitting events in namespace team." in hidden.explanation
    assert hidden.to_json()["lease"] == {"name": LEASE, "holder": "", "renewTime": None, "leaseDurationSeconds": 0,
                                         "problem": "forbidden: nope"}


def test_refused_from_the_condition_with_buckets_counts_over_n_and_the_preemption_tail():
    message = ("0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu, "
               "2 Insufficient memory. preemption: 0/3 nodes are available: 1 Preemption is not helpful for "
               "scheduling, 2 No preemption victims found for incoming pod.")
    condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
    d = diagnose(pod(conditions=[condition]), [event("FailedScheduling", message, count=4)], NODES, now=NOW)
    assert (d.state, d.refused_by, d.refusals, d.raw_message) == ("refused", "default-scheduler", 4, message)
    assert d.headline == "0/3 nodes: 2 too little cpu, 2 too little memory, 1 untolerated taint dedicated=gpu"
    assert d.explanation[:5] == ("default-scheduler refused it, 4 times, last 5s ago:", "0/3 nodes are available.",
                                 "  1 × node(s) had untolerated taint {dedicated: gpu}", "  2 × Insufficient cpu",
                                 "  2 × Insufficient memory")
    assert "The counts add up to more than the nodes: one node can fail for several reasons at once." in d.explanation
    assert ("preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption "
            "victims found for incoming pod.") in d.explanation
    failed = d.to_json()["failedScheduling"]
    assert (failed["available"], failed["total"], failed["countsExceedTotal"]) == (0, 3, True)
    assert [(r["count"], r["kind"]) for r in failed["reasons"]] == [(1, "taint"), (2, "insufficient"),
                                                                   (2, "insufficient")]
    assert failed["preemption"]["total"] == 3
    assert failed["lastSeen"] == "2026-11-29T09:59:55Z"  # the event's time, absolute


def test_a_truncated_or_unknown_event_message_is_kept_verbatim():
    cut = "0/2 nodes are available: 2 node(s) had volume node affinity conflict, 1 some new reason ..."
    d = diagnose(pod(), [event("FailedScheduling", cut)], NODES, now=NOW)
    assert d.state == "refused" and d.raw_message == cut and d.refusal.truncated
    assert d.refusal.reasons[-1].text == "some new reason" and d.refusal.reasons[-1].kind == "unknown"
    odd = diagnose(pod(), [event("FailedScheduling", "the moon is in the wrong phase")], NODES, now=NOW)
    assert odd.state == "refused" and odd.headline == "the moon is in the wrong phase"
    assert odd.explanation[-1].startswith("The message is not in a form observatory knows")


def test_a_later_scheduled_event_wins_over_an_older_refusal():
    events = [event("FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu.", seconds_ago=20),
              event("Scheduled", "Successfully assigned team/p to w1", seconds_ago=1)]
    d = diagnose(pod(), events, NODES, now=NOW)
    assert (d.state, d.headline) == ("scheduled", "Scheduled: Successfully assigned team/p to w1")


def test_gated_deleting_nominated_and_scheduler_error():
    gated = diagnose(pod(gates=["example.com/quota", "example.com/data"]), [], NODES, now=NOW)
    assert (gated.state, gated.headline, gated.gates) == (
        "gated", "SchedulingGated: example.com/quota, example.com/data", ("example.com/quota", "example.com/data"))
    assert gated.explanation[0] == "spec.schedulingGates: example.com/quota, example.com/data."
    deleting = diagnose(pod(gates=["g"], deleting=True), [], NODES, now=NOW)
    assert (deleting.state, deleting.headline) == ("deleting", "being deleted")
    nominated = diagnose(pod(nominated="w1"), [event("FailedScheduling", "0/1 nodes are available: 1 Insufficient "
                                                                         "cpu. preemption: 0/1 nodes are available: "
                                                                         "1 Insufficient cpu.")], NODES, now=NOW)
    assert (nominated.state, nominated.headline, nominated.nominated_node) == (
        "nominated", "nominated to w1 (preemption)", "w1")
    error = {"type": "PodScheduled", "status": "False", "reason": "SchedulerError",
             "message": 'binding rejected: running Bind plugin "DefaultBinder": Operation cannot be fulfilled'}
    failed = diagnose(pod(conditions=[error]), [], NODES, now=NOW)
    assert failed.state == "scheduler-error" and failed.headline.startswith("SchedulerError: binding rejected")


def test_bound_but_not_running():
    waiting = diagnose(pod(node="w1"), [], NODES, now=NOW)
    assert (waiting.state, waiting.headline) == ("waiting-kubelet", "bound to w1, waiting for the kubelet")
    pulling = diagnose(pod(node="w1", statuses=[{"name": "c", "ready": False,
                                                  "state": {"waiting": {"reason": "ContainerCreating"}}}]),
                       [], NODES, now=NOW)
    assert pulling.headline == "bound to w1, kubelet reports ContainerCreating"
    down = diagnose(pod(node="down"), [], NODES, now=NOW)
    assert (down.state, down.headline) == ("node-not-ready", "bound to down, node NotReady")
    assert "(Ready=Unknown)" in down.explanation[0]
    missing = diagnose(pod(node="ghost"), [], NODES, now=NOW)
    assert (missing.state, missing.headline) == ("node-missing", "bound to missing node ghost")
    assert any("garbage collector deletes" in line for line in missing.explanation)
    running = diagnose(pod(node="w1", phase="Running"), [], NODES, now=NOW)
    assert running.state == "running"
    assert {d.state for d in (waiting, down, missing, running)} <= set(STATES)


def test_lease_liveness():
    assert lease(renewed_ago=14).live(NOW) and not lease(renewed_ago=16).live(NOW)
    assert not lease(holder="").live(NOW)
    assert not LeaseView.unreadable("kube-system", "kube-scheduler", "not found").live(NOW)


def test_a_nomination_to_a_node_that_does_not_exist_is_not_preemption_in_progress():
    d = diagnose(pod(scheduler="nobody", nominated="ghost"), [], NODES, now=NOW)
    assert d.state == "no-scheduler"
