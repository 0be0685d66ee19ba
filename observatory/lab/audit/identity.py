"""The users the lab's writers authenticate as, as on a kubeadm (kind) cluster.

- kube-scheduler's client certificate has CN ``system:kube-scheduler`` and no organisation, so its groups are just
  ``system:authenticated`` (added to every authenticated user by apiserver's ``authenticatedgroup`` wrapper);
- a kubelet's has CN ``system:node:<node>`` and O ``system:nodes`` (the Node authorizer's convention);
- kube-controller-manager runs each controller with its own service account
  (``--use-service-account-credentials``, kind's default): ``system:serviceaccount:kube-system:<controller>`` in
  ``system:serviceaccounts`` and ``system:serviceaccounts:kube-system``;
- kind's admin kubeconfig (``kubernetes-admin``) has O ``kubeadm:cluster-admins`` since kubeadm v1.29;
- kind's local-path-provisioner runs as ``local-path-storage/local-path-provisioner-service-account`` (kind's
  ``local-path-storage`` manifest: ``serviceAccountName: local-path-provisioner-service-account``).

User agents are client-go's (:mod:`observatory.model.useragent`), as each program's clients send them:

- kubelet: ``DefaultKubernetesUserAgent()`` unchanged (``cmd/kubelet/app/server.go`` builds its API, heartbeat and
  event clients from one ``rest.Config`` and never calls ``AddUserAgent``), for pod status, node status, the node
  Lease and Events alike;
- kube-scheduler: ``createClients`` (``cmd/kube-scheduler/app/options/options.go``) calls
  ``restclient.AddUserAgent(kubeConfig, "scheduler")``, which sets the agent on ``kubeConfig`` itself, so the event
  client made from it next also says ``/scheduler``; the Lease client is made by ``resourcelock.NewFromKubeconfig``
  (``client-go/tools/leaderelection/resourcelock/interface.go``) with ``AddUserAgent(&config, "leader-election")``;
- kube-controller-manager with ``--use-service-account-credentials``: ``DynamicControllerClientBuilder``'s
  ``constructClient`` (``k8s.io/controller-manager/pkg/clientbuilder/client_builder_dynamic.go``) calls
  ``AddUserAgent(&ret, "system:serviceaccount:<ns>:<name>")``;
- local-path-provisioner: a plain ``rest.InClusterConfig()`` client of a binary not built by Kubernetes' scripts,
  so client-go's ``pkg/version`` defaults (``gitVersion`` ``v0.0.0-master+$Format:%H$``, ``gitCommit``
  ``$Format:%H$``) give ``local-path-provisioner/v0.0.0 (linux/amd64) kubernetes/$Format``.

The ``kubernetes/<commit>`` of the lab's own components (kubelet, kube-scheduler, kube-controller-manager) is
``adjustCommit`` of the lab's ``/version`` ``gitCommit`` (``observatory-lab-<version>``, so ``observa``): a real
component sends its own binary's commit, which for a v1.34.1 cluster is the commit its ``/version`` reports; the
lab's components are built with the lab, whose ``/version`` names observatory's build rather than an upstream
commit it was not built from, so the agents agree with ``/version`` instead of claiming an upstream hash. The
version and platform (``v1.34.1``, ``linux/amd64``) are ``/version``'s too.
"""

from __future__ import annotations

from observatory.lab.audit.types import Requester, UserInfo
from observatory.lab.resources import LAB_KUBERNETES_VERSION, version_info
from observatory.model.useragent import user_agent

__all__ = [
    "AUTHENTICATED",
    "CLUSTER_ADMIN",
    "CRONJOB_CONTROLLER",
    "DAEMON_SET_CONTROLLER",
    "DEPLOYMENT_CONTROLLER",
    "DISRUPTION_CONTROLLER",
    "ENDPOINTSLICE_CONTROLLER",
    "ENDPOINT_CONTROLLER",
    "GENERIC_GARBAGE_COLLECTOR",
    "JOB_CONTROLLER",
    "KUBELET_AGENT",
    "KUBE_SCHEDULER",
    "LAB_GIT_COMMIT",
    "LOCAL_PATH_NAMESPACE",
    "LOCAL_PATH_PROVISIONER_AGENT",
    "LOCAL_PATH_SERVICE_ACCOUNT",
    "NAMESPACE_CONTROLLER",
    "NODE_CONTROLLER",
    "PERSISTENT_VOLUME_BINDER",
    "POD_GARBAGE_COLLECTOR",
    "PVC_PROTECTION_CONTROLLER",
    "PV_PROTECTION_CONTROLLER",
    "REPLICASET_CONTROLLER",
    "ROOT_CA_CERT_PUBLISHER",
    "SCHEDULER_AGENT",
    "SCHEDULER_LEADER_ELECTION_AGENT",
    "SERVICE_ACCOUNT_CONTROLLER",
    "STATEFULSET_CONTROLLER",
    "component_agent",
    "controller",
    "controller_agent",
    "kubelet",
    "local_path_provisioner",
    "node_user",
    "service_account_user",
]

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


_VERSION = version_info()
GOOS, GOARCH = _VERSION["platform"].split("/", 1)
LAB_GIT_COMMIT: str = _VERSION["gitCommit"]


def component_agent(command: str, suffix: str = "") -> str:
    """The agent of one of the lab's Kubernetes components: ``kubelet/v1.34.1 (linux/amd64) kubernetes/observa``,
    with ``/suffix`` as ``AddUserAgent`` appends it."""
    return user_agent(command, LAB_KUBERNETES_VERSION[2], LAB_GIT_COMMIT, goos=GOOS, goarch=GOARCH, suffix=suffix)


KUBELET_AGENT = component_agent("kubelet")
SCHEDULER_AGENT = component_agent("kube-scheduler", "scheduler")
"""kube-scheduler's informers, Bindings, status patches and events."""
SCHEDULER_LEADER_ELECTION_AGENT = component_agent("kube-scheduler", "leader-election")
"""kube-scheduler's leader-election Lease client."""
LOCAL_PATH_PROVISIONER_AGENT = user_agent("local-path-provisioner", "v0.0.0-master+$Format:%H$", "$Format:%H$",
                                          goos=GOOS, goarch=GOARCH)
LOCAL_PATH_NAMESPACE, LOCAL_PATH_SERVICE_ACCOUNT = "local-path-storage", "local-path-provisioner-service-account"

NODE_CONTROLLER = "node-controller"
"""The node lifecycle controller's service account (``ClientOrDie("node-controller")`` in
``cmd/kube-controller-manager/app/core.go``)."""
POD_GARBAGE_COLLECTOR = "pod-garbage-collector"
PERSISTENT_VOLUME_BINDER = "persistent-volume-binder"
PVC_PROTECTION_CONTROLLER = "pvc-protection-controller"
PV_PROTECTION_CONTROLLER = "pv-protection-controller"
"""The service accounts ``cmd/kube-controller-manager/app/core.go`` names for PodGC, the PersistentVolume binder
and the PVC and PV protection controllers."""
DEPLOYMENT_CONTROLLER = "deployment-controller"
REPLICASET_CONTROLLER = "replicaset-controller"
DAEMON_SET_CONTROLLER = "daemon-set-controller"
STATEFULSET_CONTROLLER = "statefulset-controller"
JOB_CONTROLLER = "job-controller"
CRONJOB_CONTROLLER = "cronjob-controller"
DISRUPTION_CONTROLLER = "disruption-controller"
SERVICE_ACCOUNT_CONTROLLER = "service-account-controller"
ROOT_CA_CERT_PUBLISHER = "root-ca-cert-publisher"
ENDPOINT_CONTROLLER = "endpoint-controller"
ENDPOINTSLICE_CONTROLLER = "endpointslice-controller"
NAMESPACE_CONTROLLER = "namespace-controller"
GENERIC_GARBAGE_COLLECTOR = "generic-garbage-collector"
"""The kube-system service accounts ``cmd/kube-controller-manager/app/{apps,batch,policy,core}.go`` name for the
workload, disruption, ServiceAccount, root CA, endpoints, namespace and garbage collector controllers."""


def controller_agent(service_account: str) -> str:
    """kube-controller-manager's agent for the controller running as ``kube-system/<service_account>``."""
    return component_agent("kube-controller-manager", f"system:serviceaccount:kube-system:{service_account}")


def kubelet(node: str, internal_ip: str) -> Requester:
    """The kubelet of ``node``, connecting from the node's ``InternalIP`` (no address: no source IP)."""
    return Requester(node_user(node), KUBELET_AGENT, (internal_ip,) if internal_ip else ())


def controller(service_account: str, source_ip: str) -> Requester:
    """A kube-controller-manager controller with its own service account, from the control-plane node's address
    (kube-controller-manager runs there with the host's network)."""
    return Requester(service_account_user("kube-system", service_account), controller_agent(service_account),
                     (source_ip,) if source_ip else ())


def local_path_provisioner(source_ip: str) -> Requester:
    """kind's local-path-provisioner, from its pod's address."""
    return Requester(service_account_user(LOCAL_PATH_NAMESPACE, LOCAL_PATH_SERVICE_ACCOUNT),
                     LOCAL_PATH_PROVISIONER_AGENT, (source_ip,) if source_ip else ())
