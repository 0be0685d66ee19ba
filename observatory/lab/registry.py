"""REST semantics on top of the store: what kube-apiserver's generic registry and pod storage do per verb.

Input bodies are decoded JSON; results are stored objects (without kind/apiVersion) or Status dicts. Every API error
is a :class:`~observatory.lab.errors.StatusError` with upstream's code, reason and message. HTTP framing lives in
:mod:`observatory.lab.api`; list queries, selection and continue tokens in :mod:`observatory.lab.listing`.

Sources: apiserver ``pkg/registry/generic/registry/store.go`` (create, update, delete, finalizers),
``pkg/endpoints/handlers/{create,update,patch,get}.go``, kubernetes ``pkg/registry/core/pod/storage/storage.go``
(binding, reference §1).
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from observatory.lab import (
    admission,
    errors,
    gotypes,
    gozero,
    patch,
    priority,
    priorityclass,
    schema,
    strategicpatch,
    strategy,
)
from observatory.lab.kinds import STRATEGIES
from observatory.lab.listing import (
    ListQuery,
    ListResult,
    _decode_continue,
    _encode_continue,
    check_resource_version,
    make_predicate,
)
from observatory.lab.resources import ALL, CORE_V1, ResourceType
from observatory.lab.store import Store, now_rfc3339
from observatory.lab.validation import kinds
from observatory.lab.validation import meta as meta_validation
from observatory.lab.validation.field import invalid_error
from observatory.lab.volumes import strategy as volume_strategy

NAMESPACE_MISMATCH = "the namespace of the provided object does not match the namespace sent on the request"
BINDING_NAME_MISMATCH = "name in URL does not match name in Binding object"
BINDING_SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter."
)


def _rfc3339_in(seconds: int) -> str:
    """RFC 3339 time ``seconds`` from now, as a deletionTimestamp."""
    return (datetime.now(UTC) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


class Registry:
    """The lab's REST storage for every served resource, over one :class:`Store`."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- helpers -------------------------------------------------------------------------------------------------

    def _require_namespace(self, rt: ResourceType, namespace: str) -> None:
        """Admission's NamespaceLifecycle on a create of a namespaced ``rt`` (:mod:`observatory.lab.admission`)."""
        admission.namespace_lifecycle(self.store, rt, namespace)

    @staticmethod
    def _ensure_namespace(rt: ResourceType, body: dict[str, Any], namespace: str) -> None:
        """``rest.EnsureObjectNamespaceMatchesRequestNamespace`` (apiserver ``pkg/registry/rest/meta.go``)."""
        meta = body.setdefault("metadata", {})
        if not rt.namespaced:
            meta.pop("namespace", None)
            return
        if not meta.get("namespace"):
            meta["namespace"] = namespace
        elif meta["namespace"] != namespace:
            raise errors.bad_request(NAMESPACE_MISMATCH)

    @staticmethod
    def _check_types(rt: ResourceType, body: dict[str, Any]) -> None:
        """Refuse a body whose fields have the wrong JSON type, with the decoder's 400 (never store it)."""
        if rt.kind in schema.KIND_MODELS:
            message = gotypes.type_error(rt.kind, body, version=rt.version)
            if message is not None:
                raise errors.bad_request(message)

    def _priority_classes(self) -> dict[str, dict[str, Any]]:
        """name -> PriorityClass, what the Priority admission plugin's lister sees."""
        return {pc["metadata"]["name"]: pc for pc in self.store.iter("priorityclasses")}

    def get(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        obj = self.store.get(rt.name, namespace, name)
        if obj is None:
            raise errors.not_found(rt.group_resource, name)
        return obj

    # -- list ----------------------------------------------------------------------------------------------------

    def list(self, rt: ResourceType, query: ListQuery) -> ListResult:
        """A list page. ``limit`` 0 means everything; the continue token resumes after the last key of a page."""
        store = self.store
        rv = store.resource_version
        after = None
        if query.continue_token:
            rv, after = _decode_continue(query.continue_token, rt.name)
        check_resource_version(query, store.resource_version)  # 400/500/504 for versions the storage refuses
        if query.continue_token and rv < store.compacted_rv(rt.name):
            raise errors.expired(CONTINUE_EXPIRED)
        predicate = make_predicate(rt, query)
        items: list[dict[str, Any]] = []
        more = False
        for obj in store.iter(rt.name, query.namespace, after):
            if predicate is not None and not predicate(obj):
                continue
            if query.limit and len(items) == query.limit:
                more = True
                break
            items.append(obj)
        token, remaining = "", None
        if more:
            last = items[-1]["metadata"]
            token = _encode_continue(rv, (rt.name, last.get("namespace", ""), last["name"]))
            if not query.filtered:
                remaining = self._count_after(rt, query.namespace, (rt.name, last.get("namespace", ""), last["name"]))
        return ListResult(items, str(rv), token, remaining)

    def _count_after(self, rt: ResourceType, namespace: str | None, key: tuple[str, str, str]) -> int:
        return self.store.count_after(rt.name, namespace, key)

    # -- create / update -----------------------------------------------------------------------------------------

    def create(
        self, rt: ResourceType, namespace: str, body: dict[str, Any], *, dry_run: bool = False
    ) -> dict[str, Any]:
        """POST a new object: group/version/kind and types (400), namespace check, generateName, defaulting,
        validation (422), existence (409)."""
        self._check_decodable(rt, body)
        self._check_types(rt, body)
        body = copy.deepcopy(body)
        self._ensure_namespace(rt, body, namespace)
        meta = body["metadata"]
        if rt.name == "pods":
            priority.admit_pod(body, self._priority_classes())  # mutating admission: before names are generated
        kind = STRATEGIES.get(rt.name)
        if kind is not None:  # decoding's defaults, then mutating admission
            kind.default(body)
            kind.admit(body, self.store)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = strategy.generate_name(meta["generateName"])
        if rt.name == "priorityclasses":
            body = priorityclass.prepare_create(body)
            meta = body["metadata"]
        for system in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink",
                       "resourceVersion", "managedFields"):
            meta.pop(system, None)
        volumes = rt.name in volume_strategy.RESOURCES
        if rt.name == "persistentvolumeclaims":  # the DefaultStorageClass admission plugin
            body = volume_strategy.set_default_class(body, self.store.iter("storageclasses"))
        if kind is not None:
            kind.prepare_for_create(body)
            causes = strategy.validate_object_meta(meta, rt.namespaced) + kind.validate(body)
        elif volumes:
            causes = volume_strategy.validate_create(rt.name, body)
        elif rt.name == "priorityclasses":
            causes = priorityclass.validate_create(body)
        else:  # rest.BeforeCreate: PrepareForCreate (on the defaulted object), then Validate
            body = strategy.prepare_create(rt.name, body)
            causes = strategy.validate_create(rt.name, body, rt.namespaced)
        if causes:
            raise invalid_error(rt.kind, meta.get("name", ""), causes, rt.group)
        if rt.name == "priorityclasses":
            priority.validate_priority_class(body, self._priority_classes(), update=False)
        if rt.namespaced:
            self._require_namespace(rt, namespace)
        obj = volume_strategy.prepare_create(rt.name, body) if volumes else body
        return self.store.create(rt.name, obj, dry_run=dry_run)

    def update(self, rt: ResourceType, namespace: str, name: str, body: dict[str, Any], *,
               dry_run: bool = False) -> dict[str, Any]:
        """PUT: the whole object, optimistic on ``metadata.resourceVersion`` when given (409 Conflict if stale),
        a name it gives the URL's (400; the HTTP handler has refused a body without one), a uid it gives the
        stored one (409, a storage precondition), then validated as
        ``rest.BeforeUpdate`` does (422)."""
        self._check_decodable(rt, body)
        self._check_types(rt, body)
        body = copy.deepcopy(body)
        body.setdefault("metadata", {}).setdefault("name", name)
        kinds.check_name(body, name, namespace if rt.namespaced else "")
        self._ensure_namespace(rt, body, namespace)
        meta = body["metadata"]
        old = self.get(rt, namespace, name)
        kinds.check_uid_precondition(rt.name, rt.group_resource, meta.get("namespace", ""), name, meta.get("uid"),
                                     old["metadata"].get("uid"))
        if meta.get("resourceVersion") and meta["resourceVersion"] != old["metadata"].get("resourceVersion"):
            raise errors.conflict(rt.group_resource, name, errors.OPTIMISTIC_LOCK_MESSAGE)
        kind = STRATEGIES.get(rt.name)
        unconditional = kind.unconditional_update if kind is not None else rt.name in (
            "pods", "nodes", "namespaces", "events", *volume_strategy.RESOURCES, "priorityclasses")
        if not meta.get("resourceVersion") and not unconditional:
            raise errors.invalid(rt.kind, name, [("FieldValueInvalid", "metadata.resourceVersion",
                                                  "Invalid value: 0x0: must be specified for an update")], rt.group)
        new = self._prepare_update(rt, body, old)
        return self._commit_update(rt, new, old, expect_rv=meta.get("resourceVersion"), dry_run=dry_run)

    def _prepare_update(self, rt: ResourceType, new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
        """``rest.BeforeUpdate``: the kind's ``PrepareForUpdate`` (the main resource keeps the stored status; pods
        are defaulted as the decoder defaults them), the system metadata kept from the stored object, then the
        common ObjectMeta checks and the kind's own update validation (422)."""
        kind = STRATEGIES.get(rt.name)
        if kind is not None:
            kind.default(new)
            kind.prepare_for_update(new, old)
        elif "status" in old:
            new["status"] = copy.deepcopy(old["status"])
        if rt.name == "pods":
            new = strategy.default_pod(new)
        meta_validation.before_update(new, old)
        checked = self._with_resource_version(new, old)
        if kind is not None:
            causes = meta_validation.common_update(checked.get("metadata"), old.get("metadata"), rt.namespaced)
            causes += kind.validate_update(new, old)
            if causes:
                raise invalid_error(rt.kind, new["metadata"]["name"], causes, rt.group)
        elif rt.name in volume_strategy.RESOURCES:
            new = volume_strategy.prepare_update(rt.name, new)
            causes = meta_validation.common_update(checked.get("metadata"), old.get("metadata"), rt.namespaced)
            causes += volume_strategy.validate_update(rt.name, new, old)
            if causes:
                raise invalid_error(rt.kind, new["metadata"]["name"], causes, rt.group)
        elif rt.name == "priorityclasses":
            new = priorityclass.prepare_create(new)
            causes = meta_validation.common_update(checked.get("metadata"), old.get("metadata"), rt.namespaced)
            causes += priorityclass.validate_create(new) + priorityclass.validate_update(new, old)
            if causes:
                raise invalid_error(rt.kind, new["metadata"]["name"], causes, rt.group)
            priority.validate_priority_class(new, self._priority_classes(), update=True)
        else:
            causes = strategy.validate_update(rt.name, checked, old, rt.namespaced)
            if causes:
                raise invalid_error(rt.kind, new["metadata"]["name"], causes, rt.group)
        return new

    @staticmethod
    def _with_resource_version(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
        """``new`` as validation sees it: an unconditional update carries the stored resourceVersion."""
        meta = new.get("metadata") or {}
        if meta.get("resourceVersion"):
            return new
        return {**new, "metadata": {**meta, "resourceVersion": old["metadata"].get("resourceVersion")}}

    def _check_decodable(self, rt: ResourceType, body: dict[str, Any]) -> None:
        """The decoder's group/version/kind check for core/v1 kinds (400, :mod:`observatory.lab.validation.kinds`)."""
        if rt.group == "" and rt.kind in kinds.CORE_V1_KINDS:
            kinds.check_decodable(rt.kind, body)

    def _commit_update(self, rt: ResourceType, new: dict[str, Any], old: dict[str, Any], *, expect_rv: str | None,
                       dry_run: bool) -> dict[str, Any]:
        meta = new["metadata"]
        if (old["metadata"].get("finalizers") and not meta.get("finalizers") and "deletionTimestamp" in old["metadata"]
                and not old["metadata"].get("deletionGracePeriodSeconds")):
            # The last finalizer is gone from an object being deleted: the store removes it now.
            if expect_rv and expect_rv != old["metadata"]["resourceVersion"]:
                raise errors.conflict(rt.group_resource, meta["name"], errors.OPTIMISTIC_LOCK_MESSAGE)
            return self.store.delete(rt.name, meta.get("namespace", ""), meta["name"], dry_run=dry_run)
        return self.store.update(rt.name, new, expect_rv=expect_rv, dry_run=dry_run,
                                 conflict_resource=rt.group_resource)

    def update_status(self, rt: ResourceType, namespace: str, name: str, body: dict[str, Any], *,
                      dry_run: bool = False) -> dict[str, Any]:
        """PUT .../status: only ``status`` (and labels/annotations) change; spec is reset to the stored one. The
        name it gives must be the URL's (400) and the result passes the status strategy's validation (422)."""
        self._check_decodable(rt, body)
        self._check_types(rt, body)
        body = copy.deepcopy(body)
        body.setdefault("metadata", {}).setdefault("name", name)
        kinds.check_name(body, name, namespace if rt.namespaced else "")
        self._ensure_namespace(rt, body, namespace)
        old = self.get(rt, namespace, name)
        kinds.check_uid_precondition(rt.name, rt.group_resource, body["metadata"].get("namespace", ""), name,
                                     body["metadata"].get("uid"), old["metadata"].get("uid"))
        expect_rv = body["metadata"].get("resourceVersion")
        if expect_rv and expect_rv != old["metadata"].get("resourceVersion"):
            raise errors.conflict(rt.group_resource, name, errors.OPTIMISTIC_LOCK_MESSAGE)
        new = copy.deepcopy(old)
        new["status"] = body.get("status") or {}
        for k in ("labels", "annotations"):
            if k in body.get("metadata", {}):
                new["metadata"][k] = body["metadata"][k]
        return self._commit_status(rt, new, old, expect_rv=expect_rv, dry_run=dry_run)

    def _commit_status(self, rt: ResourceType, new: dict[str, Any], old: dict[str, Any], *, expect_rv: str | None,
                       dry_run: bool) -> dict[str, Any]:
        """Store a status update after the status strategy's ``PrepareForUpdate`` and validation (422)."""
        kind = STRATEGIES.get(rt.name)
        volume_strategy.prepare_status_update(rt.name, new, old)
        if kind is not None:
            kind.prepare_for_status_update(new, old)
        causes = strategy.validate_status_update(rt.name, self._with_resource_version(new, old), old, rt.namespaced)
        if kind is not None:
            causes += kind.validate_status_update(new, old)
        if causes:
            raise invalid_error(rt.kind, new["metadata"]["name"], causes, rt.group)
        return self.store.update(rt.name, new, expect_rv=expect_rv, dry_run=dry_run,
                                 conflict_resource=rt.group_resource)

    def patch(self, rt: ResourceType, namespace: str, name: str, content_type: str, raw: bytes, *,
              subresource: str = "", dry_run: bool = False) -> dict[str, Any]:
        """PATCH with JSON patch, merge patch or strategic merge patch (reference §2; apiserver ``patch.go``).

        As the patcher does: apply the patch to the stored object, decode the result (a JSON or merge patch that
        changes the group/version/kind is a 422 on ``patch``), check its name and namespace against the URL
        (``checkName``, 400: removing ``/metadata`` or ``{"$patch": "delete"}`` leaves no name), refuse a
        resourceVersion other than the stored one (409), then update through ``rest.BeforeUpdate`` (422 for a
        changed uid, invalid labels or anything the kind's validation refuses)."""
        old = self.get(rt, namespace, name)
        current = {"kind": rt.kind, "apiVersion": rt.api_version, **old}
        appliers = {
            "application/json-patch+json": patch.json_patch,
            "application/merge-patch+json": patch.json_merge_patch,
            "application/strategic-merge-patch+json": lambda target, body: strategicpatch.strategic_merge_patch(
                target, body, rt.kind),
        }
        apply = appliers.get(content_type)
        if apply is None:
            raise errors.unsupported_media_type(", ".join(appliers))
        try:
            patched = apply(current, raw)
        except patch.PatchError as exc:
            raise exc.status_error() from None
        if not isinstance(patched, dict):
            raise errors.bad_request("patched object is not a JSON object")
        if rt.name == "pods":
            gozero.restore_pod_condition_times(patched)  # the typed decode's zero times (lab/gozero.py)
        if content_type == "application/strategic-merge-patch+json":
            patched.pop("apiVersion", None)  # the versioned object's TypeMeta is dropped converting to the hub
            patched.pop("kind", None)
        elif rt.group == "" and rt.kind in kinds.CORE_V1_KINDS:
            kinds.check_patched(rt.kind, patched)
        self._check_types(rt, patched)
        if patched.get("metadata") is None:
            patched["metadata"] = {}
        patched_meta = patched["metadata"]
        if not isinstance(patched_meta, dict):
            raise errors.bad_request(f"{rt.kind} in version \"{rt.version}\" cannot be handled as a {rt.kind}: "
                                     "metadata must be an object")
        kinds.check_name(patched, name, namespace if rt.namespaced else "")
        if rt.namespaced:
            patched_meta["namespace"] = namespace
        # A resourceVersion the patch sets is the optimistic update's precondition.
        expect_rv = patched_meta.get("resourceVersion")
        if expect_rv == old["metadata"].get("resourceVersion"):
            expect_rv = None
        elif expect_rv:
            raise errors.conflict(rt.group_resource, name, errors.OPTIMISTIC_LOCK_MESSAGE)
        if subresource == "status":
            new = copy.deepcopy(old)
            new["status"] = patched.get("status") or {}
            for k in ("labels", "annotations"):
                new["metadata"].pop(k, None)
                if patched["metadata"].get(k):
                    new["metadata"][k] = patched["metadata"][k]
            return self._commit_status(rt, new, old, expect_rv=expect_rv, dry_run=dry_run)
        new = self._prepare_update(rt, patched, old)
        return self._commit_update(rt, new, old, expect_rv=expect_rv, dry_run=dry_run)

    # -- delete --------------------------------------------------------------------------------------------------

    def delete(self, rt: ResourceType, namespace: str, name: str, *, dry_run: bool = False,
               preconditions: dict[str, Any] | None = None, grace_period: int | None = None,
               propagation_policy: str | None = None) -> dict[str, Any]:
        """DELETE, as the generic store's ``BeforeDelete``/``deletionFinalizersForGarbageCollection`` decide.

        A pod bound to a node and not terminal is deleted gracefully: ``deletionTimestamp`` becomes now plus the
        grace period (``grace_period``, else ``spec.terminationGracePeriodSeconds``, else 30) and the kubelet
        removes it (pod strategy ``CheckGracefulDelete``). An object with finalizers gets ``deletionTimestamp`` and
        stays until they are removed. Anything else goes at once; a namespace takes what it holds with it.
        ``propagation_policy`` is DeleteOptions' ``propagationPolicy`` (``Orphan``, ``Background``, ``Foreground``;
        None: the kind's default). Returns the object as last stored.
        """
        if rt.name == "priorityclasses":
            priorityclass.check_delete(name)
        old = self.get(rt, namespace, name)
        meta = old["metadata"]
        pre = preconditions or {}
        if pre.get("uid") and pre["uid"] != meta.get("uid"):
            raise errors.conflict(rt.group_resource, name, f"Precondition failed: UID in precondition: {pre['uid']}, "
                                  f"UID in object meta: {meta.get('uid')}")
        if pre.get("resourceVersion") and pre["resourceVersion"] != meta["resourceVersion"]:
            raise errors.conflict(rt.group_resource, name, errors.OPTIMISTIC_LOCK_MESSAGE)
        grace = 0
        if rt.name == "pods" and (old.get("spec") or {}).get("nodeName") and \
                (old.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            grace = grace_period if grace_period is not None else (old.get("spec") or {}).get(
                "terminationGracePeriodSeconds", 30)
            grace = max(int(grace or 0), 0)
        if grace > 0 or meta.get("finalizers"):
            current = meta.get("deletionGracePeriodSeconds")
            if "deletionTimestamp" in meta and (current is None or grace >= current):
                return old  # already terminating with a grace period no longer than this one
            new = copy.deepcopy(old)
            new["metadata"]["deletionTimestamp"] = _rfc3339_in(grace)
            new["metadata"]["deletionGracePeriodSeconds"] = grace
            return self.store.update(rt.name, new, dry_run=dry_run)
        if rt.name == "namespaces" and not dry_run:
            for other in ALL.values():
                if other.namespaced:
                    for obj in list(self.store.iter(other.name, name)):
                        self.store.delete(other.name, name, obj["metadata"]["name"])
        return self.store.delete(rt.name, namespace, name, dry_run=dry_run)

    # -- binding -------------------------------------------------------------------------------------------------

    def bind(
        self, namespace: str, url_name: str | None, body: dict[str, Any], *, dry_run: bool = False
    ) -> dict[str, Any]:
        """POST pods/{name}/binding (``url_name``) or the legacy ``bindings`` endpoint (``url_name`` None).

        Runs kube-apiserver's checks in order (reference §1.3): namespace (400), name (400), ValidatePodBinding
        (500, empty reason), missing pod (404 on ``pods``), uid/resourceVersion preconditions (409 on ``pods``),
        then deleting / already assigned / gated (409 on ``pods/binding``). On success sets ``spec.nodeName``,
        replaces the PodScheduled condition, merges annotations, creates no Event, and returns the 201 Status.
        """
        message = gotypes.type_error("Binding", body)
        if message is not None:
            raise errors.bad_request(message)
        body = copy.deepcopy(body)
        api_version = body.get("apiVersion")
        if api_version and api_version != "v1":
            raise errors.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version (v1)"
            )
        if body.get("kind") and body["kind"] != "Binding":
            raise errors.bad_request(f"not a Binding object: {body['kind']}")
        self._ensure_namespace(CORE_V1["pods"], body, namespace)
        meta = body["metadata"]
        name = meta.get("name") or ""
        if url_name is not None and url_name != name:
            raise errors.bad_request(BINDING_NAME_MISMATCH)
        target = body.get("target") or {}
        if not isinstance(target, dict):
            target = {}
        problems = []
        if target.get("kind") and target["kind"] != "Node":
            problems.append(f'target.kind: Unsupported value: "{target["kind"]}": supported values: "Node", "<empty>"')
        if not target.get("name"):
            problems.append("target.name: Required value")
        if problems:
            raise errors.unknown(problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")
        pod = self.store.get("pods", namespace, name)
        if pod is None:
            raise errors.not_found("pods", name)
        key = f"/registry/pods/{namespace}/{name}"
        for field, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
            want, have = meta.get(field), pod["metadata"].get(field)
            if want and want != have:
                raise errors.conflict("pods", name, f"StorageError: invalid object, Code: 4, Key: {key}, "
                                      f"ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: "
                                      f"{label} in precondition: {want}, {label} in object meta: {have}")
        node = target["name"]
        if "deletionTimestamp" in pod["metadata"]:
            raise errors.conflict("pods/binding", name, f"pod {name} is being deleted, cannot be assigned to a host")
        assigned = (pod.get("spec") or {}).get("nodeName")
        if assigned:
            raise errors.conflict("pods/binding", name, f'pod {name} is already assigned to node "{assigned}"')
        if (pod.get("spec") or {}).get("schedulingGates"):
            raise errors.conflict("pods/binding", name, f"pod {name} has non-empty .spec.schedulingGates")
        new = copy.deepcopy(pod)
        new["spec"]["nodeName"] = node
        if meta.get("annotations"):
            new["metadata"].setdefault("annotations", {}).update(meta["annotations"])
        status = new.setdefault("status", {})
        scheduled = {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                     "lastTransitionTime": now_rfc3339()}
        conditions = status.get("conditions") or []
        for i, cond in enumerate(conditions):
            if cond.get("type") == "PodScheduled":
                if cond.get("status") == "True":
                    scheduled["lastTransitionTime"] = cond.get("lastTransitionTime")
                conditions[i] = scheduled
                break
        else:
            conditions.append(scheduled)
        status["conditions"] = conditions
        self.store.update("pods", new, dry_run=dry_run)
        return dict(BINDING_SUCCESS)
