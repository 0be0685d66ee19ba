"""Validating admission the lab runs on every create, as a default kube-apiserver's plugin chain does.

* NamespaceLifecycle (``plugin/pkg/admission/namespace/lifecycle``): an object of a namespaced kind can only be
  created in a namespace that exists (404 ``namespaces "X" not found``).
"""

from __future__ import annotations

from observatory.lab import errors
from observatory.lab.kinds.base import StoreView
from observatory.lab.resources import ResourceType


def namespace_lifecycle(store: StoreView, rt: ResourceType, namespace: str) -> None:
    """Refuse a create of ``rt`` in ``namespace`` as NamespaceLifecycle does; raises StatusError."""
    if store.get("namespaces", "", namespace) is None:
        raise errors.not_found("namespaces", namespace)
