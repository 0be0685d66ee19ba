"""The selectors PodTopologySpread's system default constraints spread by (``helper.DefaultSelector``).

Reproduces ``pkg/scheduler/framework/plugins/helper/spread.go`` of kube-scheduler v1.34.1: for a pod without
``topologySpreadConstraints``, the default constraints select the pods matched by

* the ``spec.selector`` of every Service in the pod's namespace whose (non-null) selector matches the pod's labels
  (``GetPodServices``), merged;
* and, when the pod's controller (the ownerReference with ``controller: true``) is a ``v1`` ReplicationController,
  its ``spec.selector`` merged in; an ``apps/v1`` ReplicaSet or StatefulSet, the requirements of its
  ``spec.selector`` added.

An empty result (no Service, no such controller) means no default spreading (``buildDefaultConstraints`` returns
no constraints). kube-scheduler reads these objects through informers; here they are an input of the
:class:`~.nodeinfo.Snapshot` (``snapshot.spread_selectors.set(obj)`` / ``.remove(obj)``), empty unless the caller
feeds them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._json import listed
from .labelselector import EVERYTHING, LabelSelector, compile_label_selector

if TYPE_CHECKING:
    from .nodeinfo import PodInfo

__all__ = ["SpreadSelectors", "controller_ref"]

_KINDS = {("v1", "ReplicationController"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")}


def controller_ref(meta: Any) -> tuple[str, str, str] | None:
    """``metav1.GetControllerOf``: ``(apiVersion, kind, name)`` of the ownerReference with ``controller: true``."""
    if not isinstance(meta, Mapping):
        return None
    for ref in listed(meta.get("ownerReferences")):
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""), str(ref.get("name") or "")
    return None


def _string_map(value: Any) -> dict[str, str] | None:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else None


class SpreadSelectors:
    """Services (namespace -> name -> ``spec.selector`` map) and the ReplicationControllers, ReplicaSets and
    StatefulSets (``(apiVersion, kind, namespace, name)`` -> selector) known to the scheduler."""

    __slots__ = ("controllers", "services")

    def __init__(self) -> None:
        self.services: dict[str, dict[str, dict[str, str]]] = {}
        self.controllers: dict[tuple[str, str, str, str], dict[str, str] | LabelSelector] = {}

    def __bool__(self) -> bool:
        return bool(self.services or self.controllers)

    def set(self, obj: Mapping[str, Any]) -> None:
        """Add or replace a Service, ReplicationController, ReplicaSet or StatefulSet (other kinds are ignored)."""
        kind, meta, spec = str(obj.get("kind") or ""), obj.get("metadata") or {}, obj.get("spec") or {}
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        if kind == "Service":
            selector = _string_map(spec.get("selector"))
            if selector is None:  # a Service without a selector selects no pods
                self.services.get(namespace, {}).pop(name, None)
            else:
                self.services.setdefault(namespace, {})[name] = selector
            return
        api_version = str(obj.get("apiVersion") or "")
        if (api_version, kind) not in _KINDS:
            return
        key = (api_version, kind, namespace, name)
        if kind == "ReplicationController":
            self.controllers[key] = _string_map(spec.get("selector")) or {}
        else:
            self.controllers[key] = compile_label_selector(spec.get("selector"))

    def remove(self, obj: Mapping[str, Any]) -> None:
        kind, meta = str(obj.get("kind") or ""), obj.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        if kind == "Service":
            self.services.get(namespace, {}).pop(name, None)
        else:
            self.controllers.pop((str(obj.get("apiVersion") or ""), kind, namespace, name), None)

    def default_selector(self, pod: PodInfo) -> LabelSelector:
        """``DefaultSelector`` for ``pod``; :data:`~.labelselector.EVERYTHING` stands for the empty selector
        (no default spreading)."""
        merged: dict[str, str] = {}
        for selector in self.services.get(pod.namespace, {}).values():
            if all(pod.labels.get(k) == v for k, v in selector.items()):
                merged.update(selector)
        extra: tuple[tuple[str, str, frozenset[str]], ...] = ()
        if pod.controller is not None:
            api_version, kind, name = pod.controller
            found = self.controllers.get((api_version, kind, pod.namespace, name))
            if isinstance(found, dict):
                merged.update(found)
            elif isinstance(found, LabelSelector) and not (found.nothing or found.error or found.everything):
                extra = found.requirements
        requirements = tuple((k, "=", frozenset((v,))) for k, v in merged.items()) + extra
        if not requirements:
            return EVERYTHING
        return LabelSelector(tuple(sorted(requirements, key=lambda r: r[0])))
