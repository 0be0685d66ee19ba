"""The users the lab's writers authenticate as, as on a kubeadm (kind) cluster.

- kube-scheduler's client certificate has CN ``system:kube-scheduler`` and no organisation, so its groups are just
  ``system:authenticated`` (added to every authenticated user by apiserver's ``authenticatedgroup`` wrapper);
- a kubelet's has CN ``system:node:<node>`` and O ``system:nodes`` (the Node authorizer's convention);
- kube-controller-manager runs each controller with its own service account
  (``--use-service-account-credentials``, kind's default): ``system:serviceaccount:kube-system:<controller>`` in
  ``system:serviceaccounts`` and ``system:serviceaccounts:kube-system``;
- kind's admin kubeconfig (``kubernetes-admin``) has O ``kubeadm:cluster-admins`` since kubeadm v1.29.
"""

from __future__ import annotations

from observatory.lab.audit.types import UserInfo

__all__ = ["AUTHENTICATED", "CLUSTER_ADMIN", "KUBE_SCHEDULER", "node_user", "service_account_user"]

AUTHENTICATED = "system:authenticated"
KUBE_SCHEDULER = UserInfo("system:kube-scheduler", (AUTHENTICATED,))
CLUSTER_ADMIN = UserInfo("kubernetes-admin", ("kubeadm:cluster-admins", AUTHENTICATED))
"""Who the lab's own kubeconfig authenticates as (kind's admin kubeconfig)."""


def node_user(node: str) -> UserInfo:
    """A kubelet of ``node``: ``system:node:<node>`` in ``system:nodes``."""
    return UserInfo(f"system:node:{node}", ("system:nodes", AUTHENTICATED))


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    """A service account's user, as the service-account token authenticator names it."""
    return UserInfo(f"system:serviceaccount:{namespace}:{name}",
                    ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED), uid)
