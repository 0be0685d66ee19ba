"""What the user may do and see, as the API server said: SelfSubjectAccessReview answers, 403s on lists, and what
the screen says about them. Pure: no I/O, no Textual.

* :class:`AccessReview` is one SelfSubjectAccessReview's answer (``status.allowed``, ``status.reason``), or why
  there is none (the endpoint missing, refused or unreachable: access unknown, which never blocks anything).
* :func:`scope_fallback_notice` is the banner when listing every namespace was forbidden and the screen fell back
  to one namespace.
* With nodes forbidden, nodes are known only by the pods' ``spec.nodeName``: :func:`node_details_forbidden` keeps a
  bound pod's diagnosis from calling its node "missing", :func:`forbidden_node_warnings` does the same for the
  warnings before a bind.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from .diagnosis import NODE_MISSING, WAITING_KUBELET, Diagnosis
from .fit import bind_warnings
from .records import PodView

__all__ = [
    "NODE_DETAILS_FORBIDDEN",
    "AccessReview",
    "forbidden_node_warnings",
    "node_details_forbidden",
    "scope_fallback_notice",
]

NODE_DETAILS_FORBIDDEN = "node details forbidden"
"""How a node known only by name is marked (the nodes list or watch answered 403)."""


@dataclass(frozen=True, slots=True)
class AccessReview:
    """The answer to "may I ``verb`` ``resource``[/``subresource``] in ``namespace``" (``""``: every namespace).

    ``allowed`` is ``status.allowed`` of the SelfSubjectAccessReview, None when there was no answer; ``denied``
    ``status.denied`` (an authorizer said no outright; RBAC never does, it only fails to allow); ``reason``
    ``status.reason`` verbatim (RBAC: ``RBAC: allowed by ...`` when allowed, empty when not); ``problem`` why
    ``allowed`` is None, one sentence (e.g. ``the API server does not serve SelfSubjectAccessReview (404)``)."""

    verb: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    allowed: bool | None = None
    reason: str = ""
    denied: bool = False
    problem: str = ""

    @property
    def what(self) -> str:
        """``create pods/binding``."""
        return f"{self.verb} {self.resource}/{self.subresource}" if self.subresource else f"{self.verb} {self.resource}"

    @property
    def refused(self) -> bool:
        """True only for an answer that says no; an unknown answer never refuses."""
        return self.allowed is False

    def notice(self, action: str) -> str:
        """One line for the screen: ``Bind disabled: not allowed to create pods/binding in team-a (RBAC)`` (the
        authorizer's reason in brackets; ``RBAC`` when it gives none, as kube-apiserver's RBAC authorizer never
        does for a refusal), ``Bind: access unknown in team-a (<problem>)``, or "" when allowed."""
        where = f"in {self.namespace}" if self.namespace else "in any namespace"
        if self.allowed is False:
            return f"{action} disabled: not allowed to {self.what} {where} ({self.reason or 'RBAC'})"
        if self.allowed is None:
            return f"{action}: access unknown {where} ({self.problem or 'no answer'})"
        return ""


def scope_fallback_notice(kinds: Iterable[str], namespace: str, message: str = "") -> str:
    """The banner after a 403 on a list of every namespace: ``pods: listing all namespaces is forbidden; showing
    namespace team-a`` (``pods, events: ...`` for both), then the API server's message when given."""
    names = ", ".join(kinds)
    text = f"{names}: listing all namespaces is forbidden; showing namespace {namespace}"
    return f"{text} ({message})" if message else text


def node_details_forbidden(diagnosis: Diagnosis) -> Diagnosis:
    """With nodes forbidden, a pod bound to a node observatory cannot see is not "bound to a missing node": it is
    bound, and waiting for a kubelet observatory cannot check. Other diagnoses are returned as they are."""
    if diagnosis.state != NODE_MISSING:
        return diagnosis
    node = diagnosis.node
    return replace(diagnosis, state=WAITING_KUBELET, headline=f"bound to {node}, {NODE_DETAILS_FORBIDDEN}",
                   explanation=(f"spec.nodeName is {node} (the Binding is written); the kubelet there has not "
                                "reported on the pod yet.",
                                f"Whether node {node} exists and is Ready cannot be read: listing nodes is "
                                "forbidden to you."),
                   likely="")


def forbidden_node_warnings(pod_key: str, pod: PodView | None, node_name: str, scope: str | None = None) -> list[str]:
    """The warnings before binding ``pod_key`` to ``node_name`` when nodes are forbidden: what the API server will
    refuse (pod gone, bound, deleting, gated), else that the node cannot be checked (it may not exist, or be
    NotReady, cordoned, tainted or full); never "does not exist"."""
    refused = [w for w in bind_warnings(pod_key, pod, node_name, None, None, None, scope)
               if not w.startswith(f"node {node_name} does not exist")]
    if refused:
        return refused
    return [f"{NODE_DETAILS_FORBIDDEN}: observatory cannot check node {node_name} (whether it exists, is Ready, "
            "untainted and has room); the API server may accept a Binding that nothing will start"]
