"""The resource types the lab serves, and the discovery documents built from them.

Names, kinds, verbs, shortNames, categories and storageVersionHash values are those of real kube-apiserver
``/api/v1`` discovery (reference §6, v1.31 ``-v=9`` captures; persistentvolumeclaims, persistentvolumes and
storageclasses from v1.31 ``kubectl -v=9`` discovery responses). Documents are plain dicts in upstream field order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from observatory import __version__

CRUD_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ResourceType:
    """One served resource: ``name`` is the plural URL segment (``pods``), ``kind`` the object kind (``Pod``)."""

    name: str
    singular: str
    kind: str
    namespaced: bool
    verbs: tuple[str, ...] = CRUD_VERBS
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    storage_version_hash: str = ""
    group: str = ""
    version: str = "v1"
    subresources: dict[str, tuple[str, tuple[str, ...]] | tuple[str, tuple[str, ...], str, str]] = field(
        default_factory=dict)
    """subresource name -> (kind, verbs) or (kind, verbs, group, version) when the subresource's kind is of another
    group, e.g. ``{"status": ("Pod", ("get", "patch", "update")), "eviction": ("Eviction", ("create",), "policy",
    "v1")}``."""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def group_resource(self) -> str:
        """``GroupResource.String()``: ``pods`` for the core group, ``leases.coordination.k8s.io`` otherwise."""
        return f"{self.name}.{self.group}" if self.group else self.name

    def discovery_entries(self) -> list[dict[str, Any]]:
        """This resource's APIResource entries, the resource first and then its subresources by name."""
        entry: dict[str, Any] = {
            "name": self.name,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": list(self.verbs),
        }
        if self.short_names:
            entry["shortNames"] = list(self.short_names)
        if self.categories:
            entry["categories"] = list(self.categories)
        if self.storage_version_hash:
            entry["storageVersionHash"] = self.storage_version_hash
        out = [entry]
        for sub, spec in sorted(self.subresources.items()):
            kind, verbs = spec[0], spec[1]
            sub_entry: dict[str, Any] = {"name": f"{self.name}/{sub}", "singularName": "",
                                         "namespaced": self.namespaced}
            if len(spec) == 4:  # APIResource.group/version: the subresource's kind is of another group
                sub_entry["group"], sub_entry["version"] = spec[2], spec[3]
            sub_entry.update({"kind": kind, "verbs": list(verbs)})
            out.append(sub_entry)
        return out


_STATUS = ("get", "patch", "update")
_CONNECT = ("create", "get")
_PROXY = ("create", "delete", "get", "patch", "update")
_SCALE = ("Scale", _STATUS, "autoscaling", "v1")

CORE_V1: dict[str, ResourceType] = {
    r.name: r
    for r in (
        ResourceType(
            "pods", "pod", "Pod", True, short_names=("po",), categories=("all",),
            storage_version_hash="xPOwRZ+Yhw8=",
            subresources={"attach": ("PodAttachOptions", _CONNECT), "binding": ("Binding", ("create",)),
                          "ephemeralcontainers": ("Pod", _STATUS),
                          "eviction": ("Eviction", ("create",), "policy", "v1"),
                          "exec": ("PodExecOptions", _CONNECT), "log": ("Pod", ("get",)),
                          "portforward": ("PodPortForwardOptions", _CONNECT), "proxy": ("PodProxyOptions", _PROXY),
                          "status": ("Pod", _STATUS)},
        ),
        ResourceType("nodes", "node", "Node", False, short_names=("no",), storage_version_hash="XwShjMxG9Fs=",
                     subresources={"status": ("Node", _STATUS)}),
        ResourceType(
            "namespaces", "namespace", "Namespace", False,
            verbs=("create", "delete", "get", "list", "patch", "update", "watch"), short_names=("ns",),
            storage_version_hash="Q3oi5N2YM8M=", subresources={"status": ("Namespace", _STATUS)},
        ),
        ResourceType("events", "event", "Event", True, short_names=("ev",), storage_version_hash="r2yiGXH7wu8="),
        ResourceType("persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", True,
                     short_names=("pvc",), storage_version_hash="QWTyNDq0dC4=",
                     subresources={"status": ("PersistentVolumeClaim", _STATUS)}),
        ResourceType("persistentvolumes", "persistentvolume", "PersistentVolume", False, short_names=("pv",),
                     storage_version_hash="HN/zwEC+JgM=", subresources={"status": ("PersistentVolume", _STATUS)}),
        ResourceType("configmaps", "configmap", "ConfigMap", True, short_names=("cm",),
                     storage_version_hash="qFsyl6wFWjQ="),
        ResourceType("secrets", "secret", "Secret", True, storage_version_hash="S6u1pOWzb84="),
        ResourceType("serviceaccounts", "serviceaccount", "ServiceAccount", True, short_names=("sa",),
                     storage_version_hash="pbx9ZvyFpBE=", subresources={"token": ("TokenRequest", ("create",),
                                                                                  "authentication.k8s.io", "v1")}),
        ResourceType("services", "service", "Service", True, short_names=("svc",), categories=("all",),
                     storage_version_hash="0/CO1lhkEBI=",
                     subresources={"proxy": ("ServiceProxyOptions", _PROXY), "status": ("Service", _STATUS)}),
        ResourceType("endpoints", "endpoints", "Endpoints", True, short_names=("ep",),
                     storage_version_hash="fWeeMqaN/OA="),
    )
}

APPS_V1: dict[str, ResourceType] = {
    r.name: r
    for r in (
        ResourceType("controllerrevisions", "controllerrevision", "ControllerRevision", True,
                     storage_version_hash="85nkx63pcBU=", group="apps"),
        ResourceType("daemonsets", "daemonset", "DaemonSet", True, short_names=("ds",), categories=("all",),
                     storage_version_hash="dd7pWHUlMKQ=", group="apps",
                     subresources={"status": ("DaemonSet", _STATUS)}),
        ResourceType("deployments", "deployment", "Deployment", True, short_names=("deploy",), categories=("all",),
                     storage_version_hash="8aSe+NMegvE=", group="apps",
                     subresources={"scale": _SCALE, "status": ("Deployment", _STATUS)}),
        ResourceType("replicasets", "replicaset", "ReplicaSet", True, short_names=("rs",), categories=("all",),
                     storage_version_hash="P1RzHs8/mWQ=", group="apps",
                     subresources={"scale": _SCALE, "status": ("ReplicaSet", _STATUS)}),
        ResourceType("statefulsets", "statefulset", "StatefulSet", True, short_names=("sts",), categories=("all",),
                     storage_version_hash="H+vl74LkKdo=", group="apps",
                     subresources={"scale": _SCALE, "status": ("StatefulSet", _STATUS)}),
    )
}
"""apps/v1: the workload controllers' kinds (:mod:`observatory.lab.kinds`, :mod:`observatory.lab.simulation`)."""

BATCH_V1: dict[str, ResourceType] = {
    r.name: r
    for r in (
        ResourceType("cronjobs", "cronjob", "CronJob", True, short_names=("cj",), categories=("all",),
                     storage_version_hash="sd5LIXh4Fjs=", group="batch",
                     subresources={"status": ("CronJob", _STATUS)}),
        ResourceType("jobs", "job", "Job", True, categories=("all",), storage_version_hash="mudhfqk/qZY=",
                     group="batch", subresources={"status": ("Job", _STATUS)}),
    )
}
"""batch/v1: Job and CronJob."""

POLICY_V1: dict[str, ResourceType] = {
    "poddisruptionbudgets": ResourceType("poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", True,
                                         short_names=("pdb",), storage_version_hash="EVWiDmWqyJw=", group="policy",
                                         subresources={"status": ("PodDisruptionBudget", _STATUS)}),
}
"""policy/v1: PodDisruptionBudget (``pods/eviction`` is a core subresource whose kind, Eviction, is policy/v1)."""

DISCOVERY_V1: dict[str, ResourceType] = {
    "endpointslices": ResourceType("endpointslices", "endpointslice", "EndpointSlice", True,
                                   storage_version_hash="Nx3SIv6I0mE=", group="discovery.k8s.io"),
}
"""discovery.k8s.io/v1: EndpointSlice, kept by the lab's EndpointSlice controller."""

COORDINATION_V1: dict[str, ResourceType] = {
    "leases": ResourceType("leases", "lease", "Lease", True, group="coordination.k8s.io"),
}

SCHEDULING_V1: dict[str, ResourceType] = {
    "priorityclasses": ResourceType("priorityclasses", "priorityclass", "PriorityClass", False, short_names=("pc",),
                                    storage_version_hash="1QwjyaZjj3Y=", group="scheduling.k8s.io"),
}
"""scheduling.k8s.io/v1: PriorityClass (:mod:`observatory.lab.priorityclass`, :mod:`observatory.lab.priority`)."""

EVENTS_V1: dict[str, ResourceType] = {
    "events": ResourceType("events", "event", "Event", True, short_names=("ev",), storage_version_hash="r2yiGXH7wu8=",
                           group="events.k8s.io"),
}
"""events.k8s.io/v1: the core/v1 events storage (same store key) served through its own schema
(:mod:`observatory.lab.events_v1_api`); not in :data:`ALL`, whose plural names are unique."""

AUTHORIZATION_V1: dict[str, ResourceType] = {
    "selfsubjectaccessreviews": ResourceType("selfsubjectaccessreviews", "selfsubjectaccessreview",
                                             "SelfSubjectAccessReview", False, verbs=("create",),
                                             group="authorization.k8s.io"),
}
"""authorization.k8s.io/v1: SelfSubjectAccessReview only, answered by :mod:`observatory.lab.rbac` (a POST route of
its own in :mod:`observatory.lab.api`); not in :data:`ALL`: nothing is stored."""

STORAGE_V1: dict[str, ResourceType] = {
    "storageclasses": ResourceType("storageclasses", "storageclass", "StorageClass", False, short_names=("sc",),
                                   storage_version_hash="K+m6uJwbjGY=", group="storage.k8s.io"),
}
"""storage.k8s.io/v1: StorageClass only (the group's CSI kinds are not served)."""

GROUP_VERSIONS: dict[str, dict[str, ResourceType]] = {"apps/v1": APPS_V1,
                                                      "events.k8s.io/v1": EVENTS_V1,
                                                      "authorization.k8s.io/v1": AUTHORIZATION_V1,
                                                      "batch/v1": BATCH_V1,
                                                      "policy/v1": POLICY_V1,
                                                      "storage.k8s.io/v1": STORAGE_V1,
                                                      "scheduling.k8s.io/v1": SCHEDULING_V1,
                                                      "coordination.k8s.io/v1": COORDINATION_V1,
                                                      "discovery.k8s.io/v1": DISCOVERY_V1}
"""Served API groups: ``group/version`` -> resources, each answered under ``/apis/<group>/<version>``, in
kube-apiserver's group priority order (apps 17800, events.k8s.io 17750, authorization.k8s.io 17600, batch 17400,
policy 17100, storage.k8s.io 16800, scheduling.k8s.io 16600, coordination.k8s.io 16500, discovery.k8s.io 16200)."""

ALL: dict[str, ResourceType] = {**CORE_V1, **APPS_V1, **BATCH_V1, **POLICY_V1, **DISCOVERY_V1, **STORAGE_V1,
                                **COORDINATION_V1, **SCHEDULING_V1}
"""Every served resource by its (unique) plural name."""

LEGACY_BINDINGS = {"name": "bindings", "singularName": "binding", "namespaced": True, "kind": "Binding",
                   "verbs": ["create"]}
"""The deprecated namespaced ``bindings`` endpoint (``LegacyBindingREST``)."""


def api_resource_list() -> dict[str, Any]:
    """``GET /api/v1``: APIResourceList, which on real servers has no ``apiVersion`` key."""
    entries = [LEGACY_BINDINGS]
    for r in CORE_V1.values():
        entries.extend(r.discovery_entries())
    entries.sort(key=lambda e: str(e["name"]))
    return {"kind": "APIResourceList", "groupVersion": "v1", "resources": entries}


def api_versions(server_address: str) -> dict[str, Any]:
    """``GET /api``: APIVersions (``serverAddressByClientCIDRs`` has no omitempty upstream)."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def api_group(group_version: str) -> dict[str, Any]:
    """One APIGroup entry: its only version is also the preferred one."""
    group, version = group_version.split("/")
    gv = {"groupVersion": group_version, "version": version}
    return {"name": group, "versions": [gv], "preferredVersion": gv}


def api_group_list() -> dict[str, Any]:
    """``GET /apis``: APIGroupList. client-go requires this path to answer (reference §6)."""
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [api_group(gv) for gv in GROUP_VERSIONS]}


def group_resource_list(group_version: str) -> dict[str, Any]:
    """``GET /apis/<group>/<version>``: APIResourceList, which for named groups carries ``apiVersion: v1``."""
    entries = [e for r in GROUP_VERSIONS[group_version].values() for e in r.discovery_entries()]
    entries.sort(key=lambda e: e["name"])
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": entries}


LAB_KUBERNETES_VERSION = ("1", "34", "v1.34.1")
"""The kube-apiserver release whose behaviour and wording the lab pins (reference §4.3a)."""


def version_info() -> dict[str, Any]:
    """``GET /version``: ``version.Info`` of the pinned release; ``gitCommit`` names observatory's version."""
    major, minor, git = LAB_KUBERNETES_VERSION
    return {
        "major": major,
        "minor": minor,
        "emulationMajor": major,
        "emulationMinor": minor,
        "minCompatibilityMajor": major,
        "minCompatibilityMinor": str(int(minor) - 1),
        "gitVersion": git,
        "gitCommit": f"observatory-lab-{__version__}",
        "gitTreeState": "clean",
        "buildDate": "2025-09-09T19:44:50Z",
        "goVersion": "go1.24.6",
        "compiler": "gc",
        "platform": "linux/amd64",
    }
