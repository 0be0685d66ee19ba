"""The kubelet's admission of a pod bound to its node: the checks a hand-bind skips and the kubelet still makes.

Reproduces ``pkg/kubelet/lifecycle/predicate.go`` (``predicateAdmitHandler.Admit``, ``generalFilter``) over
``pkg/scheduler`` ``AdmissionCheck`` (kube v1.34):

1. NodeResourcesFit's ``fitsRequest`` against the pods the kubelet already admitted: each shortfall is an
   ``InsufficientResourceError``; the reason is ``OutOfcpu``, ``OutOfmemory``, ``OutOfephemeral-storage``,
   ``OutOfpods`` or ``OutOf<resource>``, the message ``Node didn't have enough resource: <resource>, requested: <n>,
   used: <n>, capacity: <n>`` (cpu in millicores, memory in bytes, pods a count);
2. required node affinity and ``nodeSelector``: reason ``NodeAffinity``;
3. ``spec.nodeName`` naming another node: reason ``NodeName``;
4. host ports in use: reason ``NodePorts``;
5. then, outside AdmissionCheck, an untolerated ``NoExecute`` taint (the only effect the kubelet looks at): reason
   ``TaintToleration``.

Predicate failures read ``Predicate <name> failed: <reason>``. Only the first failure is reported, as ``Admit``
does. Cordoned nodes and NoSchedule taints are not the kubelet's business: a hand-bound pod runs there.
"""

from __future__ import annotations

from dataclasses import dataclass

from .filters import ERR_NODE_AFFINITY, ERR_NODE_NAME, ERR_NODE_PORTS, fits_request
from .nodeinfo import NodeInfo, PodInfo
from .taints import find_untolerated_taint

__all__ = ["ERR_TAINTS_NOT_TOLERATED", "AdmissionFailure", "admission_check"]

ERR_TAINTS_NOT_TOLERATED = "node(s) had taints that the pod didn't tolerate"
"""``tainttoleration.ErrReasonNotMatch``."""
_OUT_OF = {"cpu": "OutOfcpu", "memory": "OutOfmemory", "ephemeral-storage": "OutOfephemeral-storage",
           "pods": "OutOfpods"}


@dataclass(frozen=True, slots=True)
class AdmissionFailure:
    """Why the kubelet rejects the pod: ``reason`` (the event reason and ``status.reason``) and ``message`` (the
    event message; ``status.message`` is ``"Pod was rejected: " + message``)."""

    reason: str
    message: str


def _predicate(name: str, reason: str) -> AdmissionFailure:
    return AdmissionFailure(name, f"Predicate {name} failed: {reason}")


def admission_check(pod: PodInfo, node: NodeInfo) -> AdmissionFailure | None:
    """The kubelet's verdict on ``pod`` arriving at ``node`` (whose ``pods`` are the ones already admitted), or
    None when it is admitted."""
    short = fits_request(pod, node)
    if short:
        first = short[0]
        reason = _OUT_OF.get(first.resource, f"OutOf{first.resource}")
        return AdmissionFailure(reason, f"Node didn't have enough resource: {first.resource}, requested: "
                                        f"{first.requested}, used: {first.used}, capacity: {first.allocatable}")
    if not pod.affinity.matches(node.labels, node.name):
        return _predicate("NodeAffinity", ERR_NODE_AFFINITY)
    if pod.node_name and pod.node_name != node.name:
        return _predicate("NodeName", ERR_NODE_NAME)
    if any(node.port_conflict(*p) for p in pod.host_ports):
        return _predicate("NodePorts", ERR_NODE_PORTS)
    if node.taints and find_untolerated_taint(node.taints, pod.tolerations, ("NoExecute",)) is not None:
        return _predicate("TaintToleration", ERR_TAINTS_NOT_TOLERATED)
    return None
