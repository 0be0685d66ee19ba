"""The lab as a small cluster: the simulated default-scheduler, kubelets, pod GC and node lifecycle, observed
through the API exactly as a client sees them. Expected texts come from ../shared/k8s-api-reference.md §4-§5."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import aiohttp
import pytest

from observatory.embedded import EmbeddedLab
from observatory.settings import LabSettings
from tests.waiting import eventually

CPU_100 = ("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
           "{node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: 0/2 nodes are "
           "available: 2 Preemption is not helpful for scheduling.")
SSD = ("0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated "
       "taint {node-role.kubernetes.io/control-plane: }. no new claims to deallocate, preemption: 0/2 nodes are "
       "available: 2 Preemption is not helpful for scheduling.")


@pytest.fixture
def lab_settings() -> LabSettings:
    return LabSettings(bind_delay=0.05, kubelet_start_seconds=0.2, termination_grace_cap=0.2, podgc_quarantine=0.3)


@pytest.fixture
async def cluster(tmp_path, lab_settings) -> AsyncIterator[tuple[EmbeddedLab, aiohttp.ClientSession]]:
    lab = EmbeddedLab(lab_settings, scenario="manual-binding", kubeconfig_path=tmp_path / "kubeconfig")
    await lab.start()
    try:
        async with aiohttp.ClientSession(base_url=lab.url) as http:
            yield lab, http
    finally:
        await lab.stop()


def pod(name: str, **spec) -> dict:
    container = {"name": "web", "image": "nginx:1.27"}
    if "resources" in spec:
        container["resources"] = spec.pop("resources")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container], **spec}}


async def create(http, body: dict, ns: str = "default") -> dict:
    async with http.post(f"/api/v1/namespaces/{ns}/pods", json=body) as resp:
        assert resp.status == 201, await resp.text()
        return await resp.json()


async def events_for(http, name: str, ns: str = "default") -> list[dict]:
    async with http.get(f"/api/v1/namespaces/{ns}/events?fieldSelector=involvedObject.name%3D{name}") as resp:
        return (await resp.json())["items"]


def stored(lab, name, ns="default"):
    return lab.store.get("pods", ns, name)


async def test_too_much_cpu_gets_the_exact_failed_scheduling_event_and_condition(cluster):
    lab, http = cluster
    await create(http, pod("big", resources={"requests": {"cpu": "100"}}))
    [event] = await eventually(lambda: [e for e in lab.store.iter("events", "default")
                                        if e["involvedObject"]["name"] == "big"])
    assert event["message"] == CPU_100
    assert (event["type"], event["reason"], event["action"]) == ("Warning", "FailedScheduling", "Scheduling")
    assert event["reportingComponent"] == "default-scheduler"
    assert event["reportingInstance"] == "default-scheduler-pair-control-plane"
    assert event["source"] == {} and event["firstTimestamp"] is None and event["lastTimestamp"] is None
    assert event["eventTime"].endswith("Z") and "count" not in event
    condition = await eventually(lambda: next((c for c in stored(lab, "big")["status"].get("conditions", [])
                                               if c["type"] == "PodScheduled"), None))
    assert (condition["status"], condition["reason"], condition["message"]) == ("False", "Unschedulable", CPU_100)


async def test_node_selector_miss_gets_the_exact_message(cluster):
    lab, http = cluster
    await create(http, pod("ssd", nodeSelector={"disktype": "ssd"}))
    [event] = await eventually(lambda: [e for e in lab.store.iter("events", "default")
                                        if e["involvedObject"]["name"] == "ssd"])
    assert event["message"] == SSD


async def test_a_repeated_refusal_updates_the_series_of_one_event(cluster):
    """client-go's events/v1 recorder joins isomorphic events into a series, keyed by the whole ``regarding``
    reference, resourceVersion included (``getKey`` in ``tools/events/event_broadcaster.go``). The first refusal's
    PodScheduled=False patch gives the pod a new resourceVersion, so the second refusal is a new event; the third
    (no status change between) joins it: ``kubectl describe`` shows one line and one ``(x2 over …)`` line."""
    lab, http = cluster
    await create(http, pod("ssd", nodeSelector={"disktype": "ssd"}))

    def refusals() -> list[dict]:
        return [e for e in lab.store.iter("events", "default") if e["reason"] == "FailedScheduling"]

    await eventually(refusals)
    for attempt in (2, 3):
        # pair-control-plane gaining disktype=ssd is a label change NodeAffinity's QueueingHint queues on (unmatched to
        # matched); its taint still refuses the pod first, so the text stays the same. Removing the label first is
        # a change the hint skips.
        for disktype in (None, "ssd"):
            async with http.patch("/api/v1/nodes/pair-control-plane",
                                  data=json.dumps({"metadata": {"labels": {"disktype": disktype}}}),
                                  headers={"Content-Type": "application/strategic-merge-patch+json"}) as resp:
                assert resp.status == 200
        if attempt == 2:
            await eventually(lambda: len(refusals()) == 2, "the second refusal's event")
    [event] = await eventually(lambda: [e for e in refusals() if e.get("series")], "the series", 20)
    assert event["series"]["count"] == 2 and event["series"]["lastObservedTime"].endswith("Z")
    assert len(refusals()) == 2 and all(e["message"] == SSD for e in refusals())
    async with http.patch("/api/v1/nodes/pair-control-plane", data=json.dumps({"metadata": {"labels": {
            "disktype": None}}}), headers={"Content-Type": "application/strategic-merge-patch+json"}) as resp:
        assert resp.status == 200  # the module's other tests see the pair cluster as it was


async def test_gated_pod_gets_no_event_and_keeps_scheduling_gated(cluster):
    lab, http = cluster
    await create(http, pod("gated", schedulingGates=[{"name": "example.com/quota"}]))
    await create(http, pod("after"))  # scheduled after the gated one would have been
    await eventually(lambda: stored(lab, "after")["spec"].get("nodeName"))
    assert [e for e in lab.store.iter("events", "default") if e["involvedObject"]["name"] == "gated"] == []
    [cond] = stored(lab, "gated")["status"]["conditions"]
    assert cond["reason"] == "SchedulingGated"


async def test_scheduled_pod_runs_with_kubelet_status_and_events_in_order(cluster):
    lab, http = cluster
    await create(http, pod("seamb"))
    running = await eventually(
        lambda: stored(lab, "seamb")["status"].get("phase") == "Running" and stored(lab, "seamb"))
    assert running["spec"]["nodeName"] == "pair-worker"
    status = running["status"]
    assert [c["type"] for c in status["conditions"]] == [
        "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    assert all(c["status"] == "True" for c in status["conditions"])
    assert status["hostIP"] == "172.18.0.3" and status["podIP"].startswith("10.244.")
    [container] = status["containerStatuses"]
    assert container["ready"] and "running" in container["state"]
    events = await events_for(http, "seamb")
    for _ in range(200):  # the scheduler's event may still be on its way
        if len(events) >= 5:
            break
        await asyncio.sleep(0.05)
        events = await events_for(http, "seamb")
    events.sort(key=lambda e: e["metadata"]["resourceVersion"].zfill(12))
    # The scheduler's Scheduled event is posted by its event broadcaster, after the Binding and apart from it, so
    # (as on a real cluster) it may land after the kubelet's first events; the kubelet's own come in order.
    [scheduled] = [e for e in events if e["reason"] == "Scheduled"]
    assert scheduled["reportingComponent"] == "default-scheduler"
    kubelet = [e for e in events if e is not scheduled]
    assert [(e["reason"], e["reportingComponent"]) for e in kubelet] == [
        ("Pulling", "kubelet"), ("Pulled", "kubelet"), ("Created", "kubelet"), ("Started", "kubelet")]
    pulling, pulled, created, started = kubelet
    assert scheduled["message"] == "Successfully assigned default/seamb to pair-worker"
    assert (scheduled["type"], scheduled["action"]) == ("Normal", "Binding")
    assert pulling["message"] == 'Pulling image "nginx:1.27"'
    assert pulled["message"].startswith('Successfully pulled image "nginx:1.27" in ')
    assert pulled["message"].endswith(" bytes.") and " including waiting). Image size: " in pulled["message"]
    size = int(pulled["message"].rsplit("Image size: ", 1)[1].removesuffix(" bytes."))
    images = await eventually(lambda: lab.store.get("nodes", "", "pair-worker")["status"].get("images"))
    assert images == [{"names": [container["imageID"], "docker.io/library/nginx:1.27"], "sizeBytes": size}]
    assert container["imageID"].startswith("docker.io/library/nginx@sha256:")
    assert created["message"] == "Created container: web"
    assert started["message"] == "Started container web"
    for e in (pulling, pulled, created, started):
        assert e["source"] == {"component": "kubelet", "host": "pair-worker"}
        assert e["involvedObject"]["fieldPath"] == "spec.containers{web}"
        assert e["reportingInstance"] == "pair-worker" and e["count"] == 1 and e["eventTime"] is None


async def test_manual_pod_gets_no_event_until_hand_bound_then_only_kubelet_events(cluster):
    lab, http = cluster
    await create(http, pod("other"))  # let the scheduler do some work meanwhile
    await eventually(lambda: stored(lab, "other")["status"].get("phase") == "Running")
    assert await events_for(http, "manual", "sched-lab") == []
    assert "conditions" not in stored(lab, "manual", "sched-lab")["status"]
    binding = {"metadata": {"name": "manual"}, "target": {"name": "pair-worker"}}
    async with http.post("/api/v1/namespaces/sched-lab/pods/manual/binding", json=binding) as resp:
        assert resp.status == 201
    await eventually(lambda: stored(lab, "manual", "sched-lab")["status"].get("phase") == "Running")
    reasons = [e["reason"] for e in await events_for(http, "manual", "sched-lab")]
    assert "Scheduled" not in reasons
    assert sorted(reasons) == sorted(["Pulling", "Pulled", "Created", "Started"])


@pytest.mark.parametrize("lab_settings", [LabSettings(bind_delay=1.0, kubelet=False)])
async def test_race_hand_bind_wins_and_the_scheduler_records_scheduler_error(cluster):
    lab, http = cluster
    created = await create(http, pod("race"))
    # The hand-bind lands inside the scheduler's bind delay: after its decision, before its Binding.
    await eventually(lambda: lab.scheduler is not None and ("default", "race") in lab.scheduler.cache.assumed,
                     "the scheduler's decision")
    binding = {"metadata": {"name": "race", "uid": created["metadata"]["uid"]}, "target": {"name": "pair-worker"}}
    async with http.post("/api/v1/namespaces/default/pods/race/binding", json=binding) as resp:
        assert resp.status == 201
    condition = await eventually(lambda: next((c for c in stored(lab, "race")["status"].get("conditions", [])
                                               if c.get("reason") == "SchedulerError"), None))
    assert condition["status"] == "False"
    assert condition["message"] == (
        'binding rejected: running Bind plugin "DefaultBinder": Operation cannot be fulfilled on pods/binding '
        '"race": pod race is already assigned to node "pair-worker"')
    reasons = [e["reason"] for e in await events_for(http, "race")]
    assert "Scheduled" not in reasons
    assert stored(lab, "race")["spec"]["nodeName"] == "pair-worker"


@pytest.mark.parametrize("lab_settings", [LabSettings(bind_delay=0.0, kubelet=False)])
async def test_race_scheduler_wins_and_the_hand_bind_gets_409(cluster):
    lab, http = cluster
    await create(http, pod("race"))
    node = await eventually(lambda: stored(lab, "race")["spec"].get("nodeName"))
    binding = {"metadata": {"name": "race"}, "target": {"name": "pair-control-plane"}}
    async with http.post("/api/v1/namespaces/default/pods/race/binding", json=binding) as resp:
        assert resp.status == 409
        assert (await resp.json())["message"] == (
            f'Operation cannot be fulfilled on pods/binding "race": pod race is already assigned to node "{node}"')
    # the scheduler writes its Scheduled event once its Binding is answered, a moment after nodeName is set
    await eventually(lambda: [e for e in lab.store.iter("events", "default") if e["involvedObject"]["name"] == "race"])
    assert [e["reason"] for e in await events_for(http, "race")] == ["Scheduled"]


async def test_pod_bound_to_a_missing_node_is_failed_then_garbage_collected(cluster):
    lab, http = cluster
    seen: list[dict] = []
    lab.store.listeners.append(lambda c: seen.append(c.obj) if c.key[2] == "manual" else None)
    binding = {"metadata": {"name": "manual"}, "target": {"name": "node-that-does-not-exist"}}
    async with http.post("/api/v1/namespaces/sched-lab/pods/manual/binding", json=binding) as resp:
        assert resp.status == 201
    await eventually(lambda: stored(lab, "manual", "sched-lab") is None)
    failed = next(o for o in seen if o["status"].get("phase") == "Failed")
    [disruption] = [c for c in failed["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert (disruption["status"], disruption["reason"], disruption["message"]) == (
        "True", "DeletionByPodGC", "PodGC: node no longer exists")
    assert await events_for(http, "manual", "sched-lab") == []


async def test_delete_makes_a_running_pod_terminating_then_gone(cluster):
    lab, http = cluster
    await create(http, pod("web"))
    await eventually(lambda: stored(lab, "web")["status"].get("phase") == "Running")
    async with http.delete("/api/v1/namespaces/default/pods/web") as resp:
        body = await resp.json()
    assert body["metadata"]["deletionTimestamp"] and body["metadata"]["deletionGracePeriodSeconds"] == 30
    await eventually(lambda: stored(lab, "web") is None)
    assert "Killing" in [e["reason"] for e in await events_for(http, "web")]


async def test_not_ready_node_starts_nothing_and_gets_the_not_ready_taint(cluster):
    lab, http = cluster
    not_ready = {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                                            "message": "lesson: the kubelet stopped posting"}]}}
    async with http.patch("/api/v1/nodes/pair-worker/status", data=json.dumps(not_ready),
                          headers={"Content-Type": "application/strategic-merge-patch+json"}) as resp:
        assert resp.status == 200
        conditions = {c["type"]: c["status"] for c in (await resp.json())["status"]["conditions"]}
    assert conditions["Ready"] == "False" and conditions["MemoryPressure"] == "False"  # merged by type
    await eventually(lambda: any(t["key"] == "node.kubernetes.io/not-ready"
                                 for t in lab.store.get("nodes", "", "pair-worker")["spec"].get("taints", [])))
    binding = {"metadata": {"name": "manual"}, "target": {"name": "pair-worker"}}
    async with http.post("/api/v1/namespaces/sched-lab/pods/manual/binding", json=binding) as resp:
        assert resp.status == 201
    await create(http, pod("waits"))  # both nodes now refuse it by taint
    await eventually(lambda: list(lab.store.iter("events", "default")))
    await asyncio.sleep(0.5)  # give a kubelet time it would have used; nothing may happen on a NotReady node
    assert "containerStatuses" not in stored(lab, "manual", "sched-lab")["status"]


async def test_scheduler_holds_its_lease(cluster):
    lab, _http = cluster
    lease = await eventually(lambda: lab.store.get("leases", "kube-system", "kube-scheduler"))
    assert lease["spec"]["holderIdentity"].startswith("pair-control-plane_")
    assert lease["spec"]["leaseDurationSeconds"] == 15


async def test_removing_the_last_gate_lets_the_scheduler_place_the_pod(cluster):
    lab, http = cluster
    await create(http, pod("gated", schedulingGates=[{"name": "example.com/quota"}]))
    current = stored(lab, "gated")
    ungated = {**current, "spec": {**current["spec"], "schedulingGates": []}}
    async with http.put("/api/v1/namespaces/default/pods/gated", json=ungated) as resp:
        assert resp.status == 200, await resp.text()
    assert await eventually(lambda: stored(lab, "gated")["spec"].get("nodeName")) == "pair-worker"


@pytest.mark.parametrize("lab_settings", [LabSettings(scheduler_names=["default-scheduler", "my-scheduler"],
                                                      bind_delay=0.0, kubelet=False)])
async def test_extra_scheduler_names_are_profiles_of_the_lab_scheduler(cluster):
    lab, http = cluster
    await create(http, pod("mine", schedulerName="my-scheduler"))
    await eventually(lambda: stored(lab, "mine")["spec"].get("nodeName"))
    [event] = await eventually(lambda: [e for e in lab.store.iter("events", "default")
                                        if e["involvedObject"]["name"] == "mine"])
    assert (event["reason"], event["reportingComponent"], event["reportingInstance"]) == (
        "Scheduled", "my-scheduler", "my-scheduler-pair-control-plane")


@pytest.mark.parametrize("lab_settings", [LabSettings(scheduler=False, kubelet=False)])
async def test_without_the_scheduler_pods_stay_pending_with_no_events(cluster):
    lab, http = cluster
    await create(http, pod("alone"))
    await asyncio.sleep(0.3)  # a negative: nothing may happen, so there is no condition to wait for
    assert not stored(lab, "alone")["spec"].get("nodeName")
    assert list(lab.store.iter("events", "default")) == []


async def test_the_kubelet_rejects_a_hand_bound_pod_the_node_has_no_room_for(cluster):
    """``pkg/kubelet/lifecycle/predicate.go``: OutOfcpu with the InsufficientResourceError text (cpu in millicores),
    phase Failed and ``Pod was rejected: `` before the message (``kubelet.go`` ``rejectPod``); the API server had
    accepted the Binding."""
    lab, http = cluster
    await create(http, pod("greedy", schedulerName="nobody", resources={"requests": {"cpu": "5"}}))
    binding = {"metadata": {"name": "greedy"}, "target": {"name": "pair-worker"}}
    async with http.post("/api/v1/namespaces/default/pods/greedy/binding", json=binding) as resp:
        assert resp.status == 201
    await eventually(lambda: stored(lab, "greedy")["status"].get("phase") == "Failed")
    status = stored(lab, "greedy")["status"]
    message = "Node didn't have enough resource: cpu, requested: 5000, used: 0, capacity: 4000"
    assert (status["reason"], status["message"]) == ("OutOfcpu", "Pod was rejected: " + message)
    events = await events_for(http, "greedy")
    assert [(e["type"], e["reason"], e["message"], e["source"]) for e in events] == [
        ("Warning", "OutOfcpu", message, {"component": "kubelet", "host": "pair-worker"})]


async def test_the_kubelet_counts_admitted_pods_and_checks_the_node_selector(cluster):
    lab, http = cluster
    await create(http, pod("first", schedulerName="nobody", resources={"requests": {"cpu": "3"}}))
    await create(http, pod("second", schedulerName="nobody", resources={"requests": {"cpu": "1500m"}}))
    await create(http, pod("picky", schedulerName="nobody", nodeSelector={"disktype": "ssd"}))
    for name in ("first", "second", "picky"):
        async with http.post(f"/api/v1/namespaces/default/pods/{name}/binding",
                             json={"metadata": {"name": name}, "target": {"name": "pair-worker"}}) as resp:
            assert resp.status == 201
        await eventually(lambda n=name: stored(lab, n)["status"].get("phase") in ("Running", "Failed"))
    assert stored(lab, "first")["status"]["phase"] == "Running"
    second = stored(lab, "second")["status"]
    assert (second["phase"], second["reason"], second["message"]) == (
        "Failed", "OutOfcpu",
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 1500, used: 3000, capacity: 4000")
    picky = stored(lab, "picky")["status"]
    assert (picky["phase"], picky["reason"], picky["message"]) == (
        "Failed", "NodeAffinity",
        "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector")
