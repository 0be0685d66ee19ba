"""Column definitions of kube-apiserver's Tables for pods, nodes, events and namespaces.

Copied as data from kubernetes/kubernetes ``pkg/printers/internalversion/printers.go`` ``AddHandlers``: names,
types, formats and priorities (1 = shown by ``kubectl get -o wide`` only), in upstream order. Descriptions are
the swagger docs upstream looks up (k8s.io/api ``types_swagger_doc_generated.go``, apimachinery
``ObjectMeta.SwaggerDoc()``) in their v1.3x wording; ``creationTimestamp`` keeps its ``\n\n`` paragraph break.
Used by :mod:`observatory.lab.printing`.
"""

from __future__ import annotations

from typing import Any

from observatory.lab.kinds import STRATEGIES
from observatory.lab.printcells import DOC_CREATION, DOC_NAME, column
from observatory.lab.volumes.printing import COLUMN_SPECS as _VOLUME_COLUMN_SPECS
from observatory.lab.volumes.printing import description as _volume_description

__all__ = ["DEFAULT_COLUMNS", "POD_FAILED", "POD_SUCCEEDED", "column_definitions"]

# --- swagger docs used as column descriptions (k8s.io/api + apimachinery, v1.3x text) -------------------------
_DOC_NAME = DOC_NAME
_DOC_CREATION = DOC_CREATION
_DOC_POD_IP = "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated."
_DOC_NODE_NAME = (
    "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by "
    "the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible "
    "for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled "
    "on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename"
)
_DOC_NOMINATED = (
    "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right "
    "away as preemption victims receive their graceful termination periods. This field does not guarantee that the "
    "pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become "
    "available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that "
    "is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is "
    "scheduled."
)
_DOC_READINESS_GATES = (
    'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers '
    'are ready AND all conditions specified in the readiness gates have status equal to "True" More info: '
    "https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates"
)
_DOC_ADDRESSES = (
    "List of addresses reachable to the node. Queried from cloud provider, if available. More info: "
    "https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, "
    "but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers "
    "should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should "
    "assume that addresses can change during the lifetime of a Node. However, there are some exceptions where "
    "this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the "
    "downward API (status.hostIP)."
)
_DOC_FIELD_PATH = (
    "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go "
    "field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is "
    'to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to '
    'the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" '
    "(container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing "
    "a part of an object."
)


_col = column


DEFAULT_COLUMNS = (_col("Name", _DOC_NAME, format_="name"), _col("Created At", _DOC_CREATION, type_="date"))
"""``rest.NewDefaultTableConvertor`` (apiserver ``pkg/registry/rest/table.go``): the Table of a kind with no
printer."""

_COLUMNS: dict[str, list[dict[str, Any]]] = {
    "pods": [
        _col("Name", _DOC_NAME, format_="name"),
        _col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
        _col("Status", "The aggregate status of the containers in this pod."),
        _col("Restarts", "The number of times the containers in this pod have been restarted and when the last "
                         "container in this pod has restarted."),
        _col("Age", _DOC_CREATION),
        _col("IP", _DOC_POD_IP, priority=1),
        _col("Node", _DOC_NODE_NAME, priority=1),
        _col("Nominated Node", _DOC_NOMINATED, priority=1),
        _col("Readiness Gates", _DOC_READINESS_GATES, priority=1),
    ],
    "nodes": [
        _col("Name", _DOC_NAME, format_="name"),
        _col("Status", "The status of the node"),
        _col("Roles", "The roles of the node"),
        _col("Age", _DOC_CREATION),
        _col("Version", "Kubelet Version reported by the node."),
        _col("Internal-IP", _DOC_ADDRESSES, priority=1),
        _col("External-IP", _DOC_ADDRESSES, priority=1),
        _col("OS-Image", "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
             priority=1),
        _col("Kernel-Version", "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
             priority=1),
        _col("Container-Runtime", "ContainerRuntime Version reported by the node through runtime remote API (e.g. "
                                  "containerd://1.4.2).", priority=1),
    ],
    "events": [
        _col("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
        _col("Type", "Type of this event (Normal, Warning), new types could be added in the future"),
        _col("Reason", "This should be a short, machine understandable string that gives the reason for the "
                       "transition into the object's current status."),
        _col("Object", "The object that this event is about."),
        _col("Subobject", _DOC_FIELD_PATH, priority=1),
        _col("Source", "The component reporting this event. Should be a short machine understandable string.",
             priority=1),
        _col("Message", "A human-readable description of the status of this operation."),
        _col("First Seen", "The time at which the event was first recorded. (Time of server receipt is in "
                           "TypeMeta.)", priority=1),
        _col("Count", "The number of times this event has occurred.", priority=1),
        _col("Name", _DOC_NAME, format_="name", priority=1),
    ],
    "namespaces": [
        _col("Name", _DOC_NAME, format_="name"),
        _col("Status", "The status of the namespace"),
        _col("Age", _DOC_CREATION),
    ],
    "leases": [
        _col("Name", _DOC_NAME, format_="name"),
        _col("Holder", "holderIdentity contains the identity of the holder of a current lease. If Coordinated "
                       "Leader Election is used, the holder identity must be equal to the elected "
                       "LeaseCandidate.metadata.name field."),
        _col("Age", _DOC_CREATION),
    ],
    "priorityclasses": [
        _col("Name", _DOC_NAME, format_="name"),
        _col("Value", "value represents the integer value of this priority class. This is the actual priority that "
                      "pods receive when they have the name of this class in their pod spec.", type_="integer"),
        _col("Global-Default", "globalDefault specifies whether this PriorityClass should be considered as the "
                               "default priority for pods that do not have any priority class. Only one "
                               "PriorityClass can be marked as `globalDefault`. However, if more than one "
                               "PriorityClasses exists with their `globalDefault` field set to true, the smallest "
                               "value of such global default PriorityClasses will be used as the default priority.",
             type_="boolean"),
        _col("Age", _DOC_CREATION),
        _col("PreemptionPolicy", "preemptionPolicy is the Policy for preempting pods with lower priority. One of "
                                 "Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset."),
    ],
}

for _resource, _specs in _VOLUME_COLUMN_SPECS.items():  # persistentvolumeclaims, persistentvolumes, storageclasses
    _COLUMNS[_resource] = [
        _col(name, {"@name": _DOC_NAME, "@age": _DOC_CREATION}.get(source) or _volume_description(source),
             format_="name" if name == "Name" else "", priority=priority)
        for name, source, priority in _specs
    ]

# Row conditions printPod attaches to terminal pods (printers.go podSuccessConditions / podFailedConditions).
POD_SUCCEEDED = [{"type": "Completed", "status": "True", "reason": "Succeeded",
                   "message": "The pod has completed successfully."}]
POD_FAILED = [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]


def column_definitions(resource: str) -> list[dict[str, Any]]:
    """The TableColumnDefinitions for ``resource`` (one of :data:`RESOURCES`), all columns incl. priority 1.

    Each is ``{"name","type","format","description","priority"}`` (no omitempty upstream). Raises KeyError for
    other resources.
    """
    if resource not in _COLUMNS and resource in STRATEGIES:
        printer = STRATEGIES[resource].printer
        return [dict(c) for c in (printer.columns if printer is not None else DEFAULT_COLUMNS)]
    return [dict(c) for c in _COLUMNS[resource]]
