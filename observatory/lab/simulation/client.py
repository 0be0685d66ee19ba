"""The audited in-process client of the lab's simulated components: the registry, with every write audited as the
HTTP request the real component would have sent.

A simulated kubelet or controller writes through the registry, not over HTTP, but kube-apiserver's audit log sees
its real counterpart's requests. :class:`AuditedClient` describes each write as that request
(:class:`~observatory.lab.audit.types.AuditedRequest`): the verb (``create``, ``update``, ``patch``, ``delete``; a
Binding POST is ``create`` of ``pods/binding``), the ``requestURI`` a client-go typed client sends (its typed calls
with empty options add no query), the RequestInfo fields (resource, subresource, namespace, name, API group and
version) and the body as the JSON it would send: the object with ``kind`` and ``apiVersion`` first for a create or
update, the patch document for a patch, ``DeleteOptions`` for a delete. The request is begun on the
:class:`~observatory.lab.audit.types.Auditor` with the component's
:class:`~observatory.lab.audit.types.Requester`, the registry serves it, and the handle is finished with the answer:
``201`` (create) or ``200`` and the object as the response would carry it, or a refusal's Status and code, after
which the :class:`~observatory.lab.errors.StatusError` is raised again as before. Reads pass straight through.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from observatory.lab import errors
from observatory.lab.audit import identity
from observatory.lab.audit.types import AuditedRequest, Auditor, Requester
from observatory.lab.encoding import with_kind
from observatory.lab.listing import ListQuery, ListResult
from observatory.lab.registry import Registry
from observatory.lab.resources import CORE_V1, ResourceType
from observatory.lab.simulation.addresses import control_plane_node, node_internal_ip, pod_ip
from observatory.lab.simulation.statuspatch import wire
from observatory.lab.store import Store

__all__ = ["AuditedClient", "Client", "Clients", "resource_path"]

STRATEGIC_MERGE = "application/strategic-merge-patch+json"
LOOPBACK = "127.0.0.1"
"""The source address of a component when the lab has no control-plane node: the API server's own host."""


def resource_path(rt: ResourceType, namespace: str, name: str = "", subresource: str = "") -> str:
    """The REST path of ``rt`` (``/api/v1/namespaces/NS/pods/NAME/status``, ``/apis/GROUP/VERSION/...``)."""
    path = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    if rt.namespaced and namespace:
        path += f"/namespaces/{namespace}"
    path += f"/{rt.name}"
    if name:
        path += f"/{name}"
    if subresource:
        path += f"/{subresource}"
    return path


def _delete_options(grace_period: int | None, preconditions: dict[str, Any] | None) -> dict[str, Any]:
    """``metav1.DeleteOptions`` as a typed client encodes it for the core group (``kind`` and ``apiVersion`` set,
    empty fields left out)."""
    body: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if grace_period is not None:
        body["gracePeriodSeconds"] = grace_period
    if preconditions:
        body["preconditions"] = dict(preconditions)
    return body


class AuditedClient:
    """The registry as one component's client: writes audited as ``requester``'s requests on ``auditor``."""

    def __init__(self, registry: Registry, requester: Requester, auditor: Auditor) -> None:
        self.registry = registry
        self.requester = requester
        self.auditor = auditor

    @property
    def store(self) -> Store:
        return self.registry.store

    # -- reads ---------------------------------------------------------------------------------------------------

    def get(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        return self.registry.get(rt, namespace, name)

    def list(self, rt: ResourceType, query: ListQuery) -> ListResult:
        return self.registry.list(rt, query)

    # -- writes --------------------------------------------------------------------------------------------------

    def _run(self, rt: ResourceType, verb: str, namespace: str, name: str, subresource: str, body: Any,
             code: int, serve: Any, uri_name: str | None = None) -> Any:
        request = AuditedRequest(
            requester=self.requester, verb=verb,
            request_uri=resource_path(rt, namespace, name if uri_name is None else uri_name, subresource),
            resource=rt.name, subresource=subresource, namespace=namespace if rt.namespaced else "", name=name,
            api_group=rt.group, api_version=rt.version, request_object=body, received=datetime.now(UTC))
        handle = self.auditor.begin(request)
        try:
            result = serve()
        except errors.StatusError as exc:
            handle.finish(exc.code, exc.status)
            raise
        if subresource == "binding":
            handle.finish(code, result)
        else:
            handle.finish(code, with_kind(result, rt.kind, rt.api_version))
        return result

    def create(self, rt: ResourceType, namespace: str, body: dict[str, Any], *,
               dry_run: bool = False) -> dict[str, Any]:
        """POST the collection (``verb`` create, 201)."""
        sent = with_kind(body, rt.kind, rt.api_version)
        return self._run(rt, "create", namespace, "", "", sent, 201,
                         lambda: self.registry.create(rt, namespace, body, dry_run=dry_run))

    def update(self, rt: ResourceType, namespace: str, name: str, body: dict[str, Any], *,
               dry_run: bool = False) -> dict[str, Any]:
        """PUT the object (``verb`` update, 200)."""
        sent = with_kind(body, rt.kind, rt.api_version)
        return self._run(rt, "update", namespace, name, "", sent, 200,
                         lambda: self.registry.update(rt, namespace, name, body, dry_run=dry_run))

    def update_status(self, rt: ResourceType, namespace: str, name: str, body: dict[str, Any], *,
                      dry_run: bool = False) -> dict[str, Any]:
        """PUT ``.../status`` (``verb`` update, subresource status, 200)."""
        sent = with_kind(body, rt.kind, rt.api_version)
        return self._run(rt, "update", namespace, name, "status", sent, 200,
                         lambda: self.registry.update_status(rt, namespace, name, body, dry_run=dry_run))

    def patch(self, rt: ResourceType, namespace: str, name: str, content_type: str, raw: bytes, *,
              subresource: str = "", dry_run: bool = False) -> dict[str, Any]:
        """PATCH the object or ``subresource`` (``verb`` patch, 200). A strategic merge patch is logged with its
        keys sorted, as the Go components marshal the ``map[string]interface{}`` ``CreateTwoWayMergePatch``
        returns (the bytes applied keep the component's own order; the JSON value is the same)."""
        document = json.loads(raw)
        if content_type == STRATEGIC_MERGE:
            document = wire(document)
        return self._run(rt, "patch", namespace, name, subresource, document, 200,
                         lambda: self.registry.patch(rt, namespace, name, content_type, raw,
                                                     subresource=subresource, dry_run=dry_run))

    def delete(self, rt: ResourceType, namespace: str, name: str, *, dry_run: bool = False,
               preconditions: dict[str, Any] | None = None, grace_period: int | None = None) -> dict[str, Any]:
        """DELETE the object with ``DeleteOptions`` in the body (``verb`` delete, 200)."""
        return self._run(rt, "delete", namespace, name, "", _delete_options(grace_period, preconditions), 200,
                         lambda: self.registry.delete(rt, namespace, name, dry_run=dry_run,
                                                      preconditions=preconditions, grace_period=grace_period))

    def bind(self, namespace: str, url_name: str | None, body: dict[str, Any], *,
             dry_run: bool = False) -> dict[str, Any]:
        """POST ``pods/NAME/binding`` (``verb`` create, subresource binding, 201 with a Success Status); with
        ``url_name`` None, the Binding's own name is the pod's, as the legacy ``bindings`` collection takes it."""
        sent = with_kind(body, "Binding", "v1")
        name = url_name or str((body.get("metadata") or {}).get("name") or "")
        result: dict[str, Any] = self._run(CORE_V1["pods"], "create", namespace, name, "binding", sent, 201,
                                           lambda: self.registry.bind(namespace, url_name, body, dry_run=dry_run))
        return result


Client = Registry | AuditedClient
"""What a simulated component writes through: the registry itself when nothing is audited, else its client."""


class Clients:
    """Each simulated component's client (:class:`AuditedClient` with its identity from
    :mod:`observatory.lab.audit.identity`); with no ``auditor``, the registry itself, so nothing costs more."""

    def __init__(self, registry: Registry, auditor: Auditor | None = None) -> None:
        self.registry = registry
        self.auditor = auditor
        self._kubelets: dict[str, Client] = {}

    def _client(self, requester: Requester) -> Client:
        return self.registry if self.auditor is None else AuditedClient(self.registry, requester, self.auditor)

    def _control_plane(self) -> dict[str, Any] | None:
        return control_plane_node(self.registry.store.iter("nodes"))

    def kubelet(self, node: str) -> Client:
        """The kubelet of ``node`` (one client per node, from its InternalIP when the node first writes)."""
        client = self._kubelets.get(node)
        if client is None:
            stored = self.registry.store.get("nodes", "", node) or {}
            client = self._kubelets[node] = self._client(identity.kubelet(node, node_internal_ip(stored)))
        return client

    def controller(self, service_account: str) -> Client:
        """The kube-controller-manager controller running as ``kube-system/<service_account>``."""
        plane = self._control_plane()
        return self._client(identity.controller(service_account,
                                                node_internal_ip(plane) if plane else LOOPBACK))

    def local_path_provisioner(self) -> Client:
        """kind's local-path-provisioner, from a pod IP on the control-plane node (where kind's single-node
        cluster runs it)."""
        plane = self._control_plane()
        source = pod_ip({"metadata": {"name": "local-path-provisioner"}}, plane) if plane else LOOPBACK
        return self._client(identity.local_path_provisioner(source))
