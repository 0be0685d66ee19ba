"""Server-side Table printing against upstream printers.go / duration.go behaviour."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from observatory.lab import printing
from observatory.lab.printing import column_definitions, human_duration, row_cells, table, translate_timestamp_since

NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)


def ago(**kw: float) -> str:
    return (NOW - timedelta(**kw)).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- HumanDuration: apimachinery pkg/util/duration/duration_test.go ------------------------------------------
MS = 0.001
H = 3600
D = 24 * H
Y = 365 * D


@pytest.mark.parametrize(("seconds", "want"), [
    (1, "1s"), (70, "70s"), (190, "3m10s"), (70 * 60, "70m"), (47 * H, "47h"), (49 * H, "2d1h"),
    ((8 * 24 + 2) * H, "8d"), (367 * D, "367d"), ((365 * 2 * 24 + 25) * H, "2y1d"), ((365 * 8 * 24 + 2) * H, "8y"),
])
def test_human_duration(seconds: float, want: str) -> None:
    assert human_duration(seconds) == want


@pytest.mark.parametrize(("seconds", "want"), [
    (-2, "<invalid>"), (-2 + 1e-9, "0s"), (0, "0s"), (1 - MS, "0s"), (120 - MS, "119s"), (120, "2m"),
    (121, "2m1s"), (600 - MS, "9m59s"), (600, "10m"), (601, "10m"), (3 * H - MS, "179m"), (3 * H, "3h"),
    (3 * H + 60, "3h1m"), (8 * H - MS, "7h59m"), (8 * H, "8h"), (8 * H + 59 * 60, "8h"), (2 * D - MS, "47h"),
    (2 * D, "2d"), (2 * D + H, "2d1h"), (8 * D - MS, "7d23h"), (8 * D, "8d"), (8 * D + 23 * H, "8d"),
    (2 * Y - MS, "729d"), (2 * Y, "2y"), (2 * Y + 23 * H, "2y"), (2 * Y + 23 * H + 59 * 60, "2y"),
    (2 * Y + D - MS, "2y"), (2 * Y + D, "2y1d"), (3 * Y, "3y"), (4 * Y, "4y"), (5 * Y, "5y"), (6 * Y, "6y"),
    (7 * Y, "7y"), (8 * Y - MS, "7y364d"), (8 * Y, "8y"), (8 * Y + 364 * D, "8y"), (9 * Y, "9y"),
])
def test_human_duration_boundaries(seconds: float, want: str) -> None:
    assert human_duration(seconds) == want


def test_translate_timestamp_since() -> None:
    assert translate_timestamp_since(None, NOW) == "<unknown>"
    assert translate_timestamp_since("", NOW) == "<unknown>"
    assert translate_timestamp_since(ago(seconds=190), NOW) == "3m10s"
    assert translate_timestamp_since(ago(minutes=5), NOW) == "5m"
    # MicroTime strings and naive "now" (taken as UTC)
    assert translate_timestamp_since("2025-06-01T11:59:30.123456Z", NOW) == "29s"
    assert translate_timestamp_since(ago(hours=3), NOW.replace(tzinfo=None)) == "3h"
    # clock skew of up to 2s prints 0s, beyond is <invalid>
    assert translate_timestamp_since("2025-06-01T12:00:01Z", NOW) == "0s"
    assert translate_timestamp_since("2025-06-01T12:00:05Z", NOW) == "<invalid>"


# --- column definitions: printers.go AddHandlers ---------------------------------------------------------------
def names(resource: str) -> list[tuple[str, int]]:
    return [(c["name"], c["priority"]) for c in column_definitions(resource)]


def test_pod_columns() -> None:
    assert names("pods") == [("Name", 0), ("Ready", 0), ("Status", 0), ("Restarts", 0), ("Age", 0), ("IP", 1),
                             ("Node", 1), ("Nominated Node", 1), ("Readiness Gates", 1)]
    cols = column_definitions("pods")
    assert cols[0] == {"name": "Name", "type": "string", "format": "name", "description": cols[0]["description"],
                       "priority": 0}
    assert cols[0]["description"].startswith("Name must be unique within a namespace.")
    assert cols[1]["description"] == "The aggregate readiness state of this pod for accepting traffic."
    assert cols[3]["type"] == "string"  # Restarts became a string column with "N (Xm ago)"
    assert "in UTC.\n\nPopulated by the system." in cols[4]["description"]
    assert all(list(c) == ["name", "type", "format", "description", "priority"] for c in cols)


def test_other_columns() -> None:
    assert names("nodes") == [("Name", 0), ("Status", 0), ("Roles", 0), ("Age", 0), ("Version", 0),
                              ("Internal-IP", 1), ("External-IP", 1), ("OS-Image", 1), ("Kernel-Version", 1),
                              ("Container-Runtime", 1)]
    assert names("events") == [("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0), ("Subobject", 1),
                               ("Source", 1), ("Message", 0), ("First Seen", 1), ("Count", 1), ("Name", 1)]
    assert [c["format"] for c in column_definitions("events")][-1] == "name"
    assert names("namespaces") == [("Name", 0), ("Status", 0), ("Age", 0)]
    assert column_definitions("namespaces")[1]["description"] == "The status of the namespace"
    with pytest.raises(KeyError):
        column_definitions("widgets")


# --- pods: printPod ------------------------------------------------------------------------------------------
def pod(status: dict | None = None, spec: dict | None = None, **meta: object) -> dict:
    return {
        "metadata": {"name": "nginx", "namespace": "default", "creationTimestamp": ago(minutes=7, seconds=15),
                     **meta},
        "spec": {"containers": [{"name": "nginx", "image": "nginx"}], **(spec or {})},
        "status": status if status is not None else {"phase": "Pending"},
    }


def cells(obj: dict) -> list:
    return row_cells("pods", obj, NOW)


def test_pod_pending_bound_creating_running() -> None:
    assert cells(pod()) == ["nginx", "0/1", "Pending", "0", "7m15s", "<none>", "<none>", "<none>", "<none>"]
    bound = pod(spec={"nodeName": "node-1"})
    assert cells(bound)[2:7] == ["Pending", "0", "7m15s", "<none>", "node-1"]
    creating = pod({"phase": "Pending", "containerStatuses": [
        {"name": "nginx", "ready": False, "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}]},
        spec={"nodeName": "node-1"})
    assert cells(creating)[1:3] == ["0/1", "ContainerCreating"]
    running = pod({"phase": "Running", "podIP": "10.1.0.6", "podIPs": [{"ip": "10.1.0.6"}], "containerStatuses": [
        {"name": "nginx", "ready": True, "restartCount": 0, "state": {"running": {"startedAt": ago(minutes=7)}}}]},
        spec={"nodeName": "docker-desktop"})
    assert cells(running) == ["nginx", "1/1", "Running", "0", "7m15s", "10.1.0.6", "docker-desktop", "<none>",
                              "<none>"]
    only_pod_ip = pod({"phase": "Running", "podIP": "10.0.0.9"})
    assert cells(only_pod_ip)[5] == "10.0.0.9"


def test_pod_reason_gated_nominated_and_gates() -> None:
    gated = pod({"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]})
    assert cells(gated)[2] == "SchedulingGated"
    evicted = pod({"phase": "Failed", "reason": "Evicted"})
    assert cells(evicted)[2] == "Evicted"
    nominated = pod({"phase": "Pending", "nominatedNodeName": "node-2"})
    assert cells(nominated)[7] == "node-2"
    gates = pod({"phase": "Running", "conditions": [{"type": "a", "status": "True"}, {"type": "b", "status": "False"}]},
                spec={"readinessGates": [{"conditionType": "a"}, {"conditionType": "b"}]})
    assert cells(gates)[8] == "1/2"


@pytest.mark.parametrize(("init_status", "want"), [
    ({"state": {"waiting": {"reason": "PodInitializing"}}}, "Init:0/2"),
    ({"state": {"waiting": {"reason": "CrashLoopBackOff"}}}, "Init:CrashLoopBackOff"),
    ({"state": {"terminated": {"exitCode": 1}}}, "Init:ExitCode:1"),
    ({"state": {"terminated": {"exitCode": 137, "signal": 9}}}, "Init:Signal:9"),
    ({"state": {"terminated": {"exitCode": 1, "reason": "Error"}}}, "Init:Error"),
])
def test_pod_init_containers(init_status: dict, want: str) -> None:
    p = pod({"phase": "Pending", "initContainerStatuses": [{"name": "init-1", "restartCount": 0, **init_status}],
             "containerStatuses": [{"name": "nginx", "state": {"waiting": {"reason": "PodInitializing"}}}]},
            spec={"initContainers": [{"name": "init-1"}, {"name": "init-2"}]})
    assert cells(p)[1:3] == ["0/1", want]


def test_pod_init_done_moves_to_containers_and_sidecars_count() -> None:
    done = pod({"phase": "Pending",
                "initContainerStatuses": [{"name": "init-1", "state": {"terminated": {"exitCode": 0}}}],
                "containerStatuses": [{"name": "nginx", "state": {"waiting": {"reason": "PodInitializing"}}}]},
               spec={"initContainers": [{"name": "init-1"}]})
    assert cells(done)[1:3] == ["0/1", "PodInitializing"]
    sidecar = pod({"phase": "Running",
                   "initContainerStatuses": [{"name": "side", "started": True, "ready": True, "restartCount": 2,
                                              "state": {"running": {}}}],
                   "containerStatuses": [{"name": "nginx", "ready": True, "restartCount": 1,
                                          "state": {"running": {}}}]},
                  spec={"initContainers": [{"name": "side", "restartPolicy": "Always"}]})
    assert cells(sidecar)[1:4] == ["2/2", "Running", "3"]


def test_pod_completed_terminating_nodelost() -> None:
    completed = pod({"phase": "Succeeded", "containerStatuses": [
        {"name": "nginx", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]})
    assert cells(completed)[1:3] == ["0/1", "Completed"]
    exit_code = pod({"phase": "Failed",
                     "containerStatuses": [{"name": "nginx", "state": {"terminated": {"exitCode": 2}}}]})
    assert cells(exit_code)[2] == "ExitCode:2"
    two = {"containers": [{"name": "a"}, {"name": "b"}]}
    mixed = [{"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
             {"name": "b", "ready": True, "state": {"running": {}}}]
    ready = pod({"phase": "Running", "containerStatuses": mixed, "conditions": [{"type": "Ready", "status": "True"}]},
                spec=two)
    assert cells(ready)[1:3] == ["1/2", "Running"]
    assert cells(pod({"phase": "Running", "containerStatuses": mixed}, spec=two))[2] == "NotReady"
    terminating = pod({"phase": "Running"}, deletionTimestamp=ago(seconds=5))
    assert cells(terminating)[2] == "Terminating"
    assert cells(pod({"phase": "Succeeded"}, deletionTimestamp=ago(seconds=5)))[2] == "Succeeded"
    lost = pod({"phase": "Running", "reason": "NodeLost"}, deletionTimestamp=ago(seconds=5))
    assert cells(lost)[2] == "Unknown"


def test_pod_restarts_with_last_termination() -> None:
    p = pod({"phase": "Running", "containerStatuses": [{
        "name": "nginx", "ready": False, "restartCount": 12,
        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
        "lastState": {"terminated": {"exitCode": 1, "finishedAt": ago(seconds=114)}}}]})
    assert cells(p)[1:4] == ["0/1", "CrashLoopBackOff", "12 (114s ago)"]


# --- nodes, events, namespaces -------------------------------------------------------------------------------
def node(conditions: list, labels: dict | None = None, unschedulable: bool = False, **status: object) -> dict:
    return {"metadata": {"name": "node-1", "labels": labels or {}, "creationTimestamp": ago(days=3)},
            "spec": {"unschedulable": True} if unschedulable else {},
            "status": {"conditions": conditions, **status}}


def test_node_cells() -> None:
    ready = [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}]
    n = node(ready, {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "master"},
             nodeInfo={"kubeletVersion": "v1.34.1", "osImage": "Debian GNU/Linux 12 (bookworm)",
                       "kernelVersion": "6.8.0", "containerRuntimeVersion": "containerd://1.7.0"},
             addresses=[{"type": "Hostname", "address": "node-1"}, {"type": "InternalIP", "address": "172.18.0.2"}])
    assert row_cells("nodes", n, NOW) == ["node-1", "Ready", "control-plane,master", "3d", "v1.34.1", "172.18.0.2",
                                          "<none>", "Debian GNU/Linux 12 (bookworm)", "6.8.0", "containerd://1.7.0"]
    cordoned = node([{"type": "Ready", "status": "False"}], unschedulable=True)
    assert row_cells("nodes", cordoned, NOW)[1:3] == ["NotReady,SchedulingDisabled", "<none>"]
    assert row_cells("nodes", node([]), NOW)[1] == "Unknown"
    assert row_cells("nodes", node([{"type": "Ready", "status": "Unknown"}]), NOW)[1] == "NotReady"
    assert row_cells("nodes", node([]), NOW)[4:] == ["", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"]


def test_event_cells() -> None:
    ev = {"metadata": {"name": "nginx.17f", "namespace": "default"},
          "involvedObject": {"kind": "Pod", "name": "nginx", "namespace": "default"},
          "reason": "Scheduled", "message": "Successfully assigned default/nginx to node-1\n", "type": "Normal",
          "source": {}, "reportingComponent": "default-scheduler", "reportingInstance": "",
          "eventTime": "2025-06-01T11:58:00.000000Z", "firstTimestamp": None, "lastTimestamp": None}
    assert row_cells("events", ev, NOW) == ["2m", "Normal", "Scheduled", "pod/nginx", "", "default-scheduler",
                                            "Successfully assigned default/nginx to node-1", "2m", 1, "nginx.17f"]
    kubelet = {"metadata": {"name": "e2"}, "involvedObject": {"kind": "Pod", "name": "nginx",
                                                              "fieldPath": "spec.containers{nginx}"},
               "reason": "Pulled", "message": "x", "type": "Normal",
               "source": {"component": "kubelet", "host": "node-1"},
               "firstTimestamp": ago(minutes=53), "lastTimestamp": ago(seconds=9), "count": 3}
    assert row_cells("events", kubelet, NOW)[:9] == ["9s", "Normal", "Pulled", "pod/nginx", "spec.containers{nginx}",
                                                     "kubelet, node-1", "x", "53m", 3]
    series = dict(ev, series={"count": 5, "lastObservedTime": "2025-06-01T11:59:50.000000Z"})
    assert row_cells("events", series, NOW)[0] == "10s"
    assert row_cells("events", series, NOW)[8] == 5
    no_name = dict(ev, involvedObject={"kind": "Node"})
    assert row_cells("events", no_name, NOW)[3] == "node"
    assert row_cells("events", {"metadata": {"name": "e"}}, NOW)[0] == "<unknown>"


def test_namespace_cells() -> None:
    ns = {"metadata": {"name": "default", "creationTimestamp": ago(minutes=35)}, "status": {"phase": "Active"}}
    assert row_cells("namespaces", ns, NOW) == ["default", "Active", "35m"]


# --- the Table envelope --------------------------------------------------------------------------------------
MANAGED = [{"manager": "kubectl-run", "operation": "Update", "apiVersion": "v1"}]


def test_table_metadata_rows_and_partial_object_metadata() -> None:
    p = pod(resourceVersion="2715", uid="u-1", managedFields=MANAGED)
    t = table("pods", [p], NOW, resource_version="7905", kind="Pod", api_version="v1")
    assert list(t) == ["kind", "apiVersion", "metadata", "columnDefinitions", "rows"]
    assert t["kind"] == "Table" and t["apiVersion"] == "meta.k8s.io/v1"
    assert t["metadata"] == {"resourceVersion": "7905"}
    assert t["columnDefinitions"] == column_definitions("pods")
    row = t["rows"][0]
    assert list(row) == ["cells", "object"]
    assert row["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": p["metadata"]}
    assert row["object"]["metadata"]["managedFields"] == MANAGED  # AsPartialObjectMetadata keeps managedFields
    json.dumps(t)


def test_table_include_object_variants_and_paging() -> None:
    p = pod({"phase": "Succeeded"})
    full = table("pods", [p], NOW, resource_version="1", include_object="Object", kind="Pod", api_version="v1")
    obj = full["rows"][0]["object"]
    assert (obj["kind"], obj["apiVersion"], obj["spec"]) == ("Pod", "v1", p["spec"])
    assert full["rows"][0]["conditions"] == [{"type": "Completed", "status": "True", "reason": "Succeeded",
                                              "message": "The pod has completed successfully."}]
    none = table("pods", [p], NOW, resource_version="1", include_object="None", kind="Pod", api_version="v1",
                 include_column_definitions=False)
    assert none["rows"][0]["object"] is None
    assert none["columnDefinitions"] is None
    paged = table("pods", [], NOW, resource_version="10", continue_token="tok", remaining=3, kind="Pod",
                  api_version="v1")
    assert paged["metadata"] == {"resourceVersion": "10", "continue": "tok", "remainingItemCount": 3}
    assert paged["rows"] == []
    assert table("namespaces", [], NOW, resource_version="", kind="Namespace", api_version="v1")["metadata"] == {}


def test_table_rejects_bad_include_object() -> None:
    assert printing.include_object_error("Metadata") is None
    msg = ("Unable to convert to Table as requested: includeObject: Invalid value: \"Foo\": must be 'Metadata', "
           "'Object', 'None', or empty")
    assert printing.include_object_error("Foo") == msg
    with pytest.raises(ValueError, match="includeObject: Invalid value"):
        table("pods", [], NOW, resource_version="1", include_object="Foo", kind="Pod", api_version="v1")
