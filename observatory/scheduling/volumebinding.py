"""The VolumeBinding plugin's PreFilter, Filter and Reserve, and the check its PreBind waits on.

Reproduces ``pkg/scheduler/framework/plugins/volumebinding/volume_binding.go`` and ``binder.go`` of kube-scheduler
v1.34.1 (``podHasPVCs``, ``GetPodVolumeClaims``, ``FindPodVolumes``, ``checkBoundClaims``, ``findMatchingVolumes``,
``checkVolumeProvisions``, ``AssumePodVolumes``, ``checkBindings``) and ``FindMatchingVolume`` /
``GetBindVolumeToClaim`` of ``k8s.io/component-helpers/storage/volume/pv_helpers.go``:

* **PreFilter**, every claim of the pod in volume order (``persistentVolumeClaim`` and generic ``ephemeral``
  volumes), each an UnschedulableAndUnresolvable rejection of the whole pod: ``persistentvolumeclaim "X" not
  found`` (the lister's text), ``waiting for ephemeral volume controller to create the persistentvolumeclaim
  "X"``, ``persistentvolumeclaim "X" bound to non-existent persistentvolume "Y"`` (phase Lost),
  ``persistentvolumeclaim "X" is being deleted``, ``PVC NS/X was not created for pod NS/P (pod is not owner)``.
  Then claims are split: *bound* (``spec.volumeName`` and ``pv.kubernetes.io/bind-completed``), *delayed* (class
  WaitForFirstConsumer and no volumeName) and *immediate* (the rest, pre-bound ones included); any immediate one
  rejects with ``pod has unbound immediate PersistentVolumeClaims``. A pod without claims is skipped.
* **Filter**, UnschedulableAndUnresolvable, reasons in this order: ``node(s) didn't match PersistentVolume's node
  affinity`` (a bound claim's PV; PR #129887 renamed ``node(s) had volume node affinity conflict``, and v1.34's
  ``binder.go`` carries the new text), ``node(s) didn't find available persistent volumes to bind`` (a delayed
  claim whose ``volume.kubernetes.io/selected-node`` names another node, or that neither matches an available PV
  reachable from the node nor has a class that provisions there), ``node(s) unavailable due to one or more pvc(s)
  bound to non-existent pv(s)``. (``node(s) did not have enough free storage`` needs CSIStorageCapacity, which is
  not modelled.)
* **Reserve** (``AssumePodVolumes``): for the chosen node, each statically matched PV gets ``spec.claimRef`` (kind,
  namespace, name, uid, apiVersion, resourceVersion of the claim) and ``pv.kubernetes.io/bound-by-controller:
  "yes"`` when it was not bound to the claim already; each claim to provision gets
  ``volume.kubernetes.io/selected-node: NODE``. The PV controller finishes the binding; PreBind writes these
  objects (PUT) and polls :func:`check_bindings` until every claim is bound (``BindTimeoutSeconds`` 600).

The reasons are exact upstream text; :class:`~.verdicts.VolumeConflict` details say which claim and PV.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .verdicts import VolumeConflict
from .volumes import ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE, ClaimRecord, VolumeCatalog, VolumeRecord

if TYPE_CHECKING:
    from .nodeinfo import NodeInfo, PodInfo

__all__ = [
    "BIND_TIMEOUT_SECONDS", "ERR_BIND_CONFLICT", "ERR_NODE_CONFLICT", "ERR_PV_NOT_EXIST", "ERR_UNBOUND_IMMEDIATE",
    "VOLUME_BINDING", "BindingState", "PodVolumes", "StaticBinding", "check_bindings", "find_matching_volume",
    "prefilter", "reserve",
]

VOLUME_BINDING = "VolumeBinding"
BIND_TIMEOUT_SECONDS = 600
"""``VolumeBindingArgs.BindTimeoutSeconds`` default: how long PreBind waits for the claims to be bound."""
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
AVAILABLE, LOST = "Available", "Lost"


@dataclass(frozen=True, slots=True)
class StaticBinding:
    """A delayed claim matched to an existing PV on one node (``BindingInfo``)."""

    claim: ClaimRecord
    volume: VolumeRecord


@dataclass(frozen=True, slots=True)
class PodVolumes:
    """What the pod's delayed claims need on one node: PVs to bind, claims to provision."""

    static: tuple[StaticBinding, ...] = ()
    provisions: tuple[ClaimRecord, ...] = ()


def find_matching_volume(claim: ClaimRecord, volumes: list[VolumeRecord], labels: Mapping[str, str] | None,
                         excluded: set[str]) -> VolumeRecord | None:
    """``FindMatchingVolume`` in the scheduler's path (``delayBinding`` true, a node given): a PV pre-bound to the
    claim wins (or, if the node fails its node affinity, nothing does); otherwise the smallest Available PV of the
    claim's class with enough capacity, the same volumeMode, matching the claim's selector, every requested access
    mode, not being deleted, and reachable from the node. ``labels`` None skips the node-affinity check."""
    smallest: VolumeRecord | None = None
    for pv in volumes:
        if pv.name in excluded or (pv.claim_ref is not None and not pv.bound_to(claim)):
            continue
        if pv.capacity < claim.requested or pv.volume_mode != claim.volume_mode or pv.deleting:
            continue
        reachable = labels is None or pv.node_affinity_matches(labels)
        if pv.bound_to(claim):
            return pv if reachable else None
        if pv.phase != AVAILABLE:
            continue
        if claim.selector is not None and not claim.selector.matches(pv.labels):
            continue
        if pv.storage_class != claim.storage_class or not reachable:
            continue
        if not all(mode in pv.access_modes for mode in claim.access_modes):
            continue
        if smallest is None or smallest.capacity > pv.capacity:
            smallest = pv
    return smallest


@dataclass(slots=True)
class BindingState:
    """The PreFilter state: the pod's ``bound`` and ``delayed`` claims, and per node what Filter found
    (``podVolumesByNode``), which Reserve reads for the chosen node. ``eligible``: the PreFilterResult, the node
    names the bound claims' local PVs allow (``GetEligibleNodes``), None for every node."""

    catalog: VolumeCatalog
    bound: tuple[ClaimRecord, ...]
    delayed: tuple[ClaimRecord, ...]
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    eligible: frozenset[str] | None = None

    def filter(self, node: NodeInfo) -> tuple[tuple[str, ...], tuple[VolumeConflict, ...]] | None:
        """``FindPodVolumes`` for one node: None when the node fits, else the reasons and the claims behind them."""
        labels = node.labels
        catalog = self.catalog
        bound_ok, pvs_found, unbound_ok = True, True, True
        details: list[VolumeConflict] = []
        static: list[StaticBinding] = []
        provisions: list[ClaimRecord] = []
        for claim in self.bound:
            pv = catalog.volume(claim.volume_name)
            if pv is None:
                pvs_found = False
                details.append(VolumeConflict("pv-missing", claim.key, claim.volume_name))
                break
            if not pv.node_affinity_matches(labels):
                bound_ok = False
                details.append(VolumeConflict("node-affinity", claim.key, pv.name))
                break
        if self.delayed:
            to_match, to_provision = [], []
            for claim in self.delayed:
                selected = claim.selected_node
                if selected is None:
                    to_match.append(claim)
                elif selected != node.name:
                    unbound_ok = False
                    details.append(VolumeConflict("selected-node", claim.key, key=selected))
                    return _reasons(bound_ok, unbound_ok, pvs_found), tuple(details)
                else:
                    to_provision.append(claim)
            if to_match:
                chosen: set[str] = set()
                for claim in sorted(to_match, key=lambda c: c.requested):
                    pv = find_matching_volume(claim, sorted(catalog.volumes_of_class(claim.storage_class),
                                                            key=lambda v: v.name), labels, chosen)
                    if pv is None:
                        unbound_ok = False
                        to_provision.append(claim)
                    else:
                        chosen.add(pv.name)
                        static.append(StaticBinding(claim, pv))
            if to_provision:
                # checkVolumeProvisions replaces findMatchingVolumes' verdict: a claim without a PV is fine when its
                # class provisions on this node.
                unbound_ok = True
                for claim in to_provision:
                    cls = catalog.storage_class(claim.storage_class)
                    if cls is None or not cls.provisions or not cls.topology_matches(labels):
                        unbound_ok = False
                        details.append(VolumeConflict("no-volume", claim.key, key=claim.storage_class))
                        provisions = []
                        break
                    provisions.append(claim)
        if bound_ok and unbound_ok and pvs_found:
            self.by_node[node.name] = PodVolumes(tuple(static), tuple(provisions))
            return None
        return _reasons(bound_ok, unbound_ok, pvs_found), tuple(details)


def _reasons(bound_ok: bool, unbound_ok: bool, pvs_found: bool) -> tuple[str, ...]:
    return tuple(r for r, failed in ((ERR_NODE_CONFLICT, not bound_ok), (ERR_BIND_CONFLICT, not unbound_ok),
                                     (ERR_PV_NOT_EXIST, not pvs_found)) if failed)


def _pod_name(pod: PodInfo) -> str:
    return pod.key.split("/", 1)[-1]


def prefilter(pod: PodInfo, catalog: VolumeCatalog) -> BindingState | str | None:
    """VolumeBinding's PreFilter: the state, None for Skip (no claims), or the rejection text."""
    name = _pod_name(pod)
    claims: list[ClaimRecord] = []
    for volume in pod.volumes:
        if not volume.claim and not volume.ephemeral:
            continue
        claim_name = volume.claim_name(name)
        claim = catalog.claim(pod.namespace, claim_name)
        if claim is None:
            if volume.ephemeral:
                return f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{claim_name}"'
            return f'persistentvolumeclaim "{claim_name}" not found'
        if claim.phase == LOST:
            return (f'persistentvolumeclaim "{claim.name}" bound to non-existent persistentvolume '
                    f'"{claim.volume_name}"')
        if claim.deleting:
            return f'persistentvolumeclaim "{claim.name}" is being deleted'
        if volume.ephemeral and (not pod.uid or claim.owner_uid != pod.uid):
            return f"PVC {claim.key} was not created for pod {pod.key} (pod is not owner)"
        claims.append(claim)
    if not claims:
        return None
    bound, delayed = [], []
    for claim in claims:
        if claim.fully_bound:
            bound.append(claim)
            continue
        cls = catalog.storage_class(claim.storage_class) if claim.storage_class else None
        if cls is not None and cls.delay_binding and not claim.volume_name:
            delayed.append(claim)
        else:
            return ERR_UNBOUND_IMMEDIATE
    return BindingState(catalog, tuple(bound), tuple(delayed), eligible=eligible_nodes(bound, catalog))


def eligible_nodes(bound: list[ClaimRecord], catalog: VolumeCatalog) -> frozenset[str] | None:
    """``GetEligibleNodes``: the intersection, over the bound claims whose PV names nodes by hostname
    (:meth:`~.volumes.VolumeRecord.local_node_names`), of those names; None (every node) when no such PV, or when a
    bound claim's PV is missing (upstream logs the error and does not narrow)."""
    eligible: frozenset[str] | None = None
    for claim in bound:
        pv = catalog.volume(claim.volume_name)
        if pv is None:
            return None
        names = pv.local_node_names()
        if names:
            eligible = names if eligible is None else eligible & names
    return eligible


def _claim_ref(claim: ClaimRecord) -> dict[str, Any]:
    """``reference.GetReference`` of the claim."""
    ref = {"kind": "PersistentVolumeClaim", "namespace": claim.namespace, "name": claim.name, "uid": claim.uid,
           "apiVersion": "v1", "resourceVersion": claim.resource_version}
    return {k: v for k, v in ref.items() if v}


def _with_annotation(obj: Mapping[str, Any], key: str, value: str) -> dict[str, Any]:
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    meta["annotations"] = {**(meta.get("annotations") or {}), key: value}
    out["metadata"] = meta
    return out


def bind_volume_to_claim(pv: VolumeRecord, claim: ClaimRecord) -> dict[str, Any] | None:
    """``GetBindVolumeToClaim``: the PV with its claimRef set to the claim and, unless it was bound to the claim
    already, ``pv.kubernetes.io/bound-by-controller: "yes"``; None when nothing changes (not "dirty")."""
    out: dict[str, Any] = dict(pv.obj)
    dirty = False
    ref = pv.claim_ref
    if ref is None or ref != (claim.namespace, claim.name, claim.uid):
        out["spec"] = {**(out.get("spec") or {}), "claimRef": _claim_ref(claim)}
        dirty = True
    annotations = (out.get("metadata") or {}).get("annotations") or {}
    if not pv.bound_to(claim) and ANN_BOUND_BY_CONTROLLER not in annotations:
        out = _with_annotation(out, ANN_BOUND_BY_CONTROLLER, "yes")
        dirty = True
    return out if dirty else None


@dataclass(frozen=True, slots=True)
class VolumePlan:
    """Reserve's result for the chosen node: ``volumes`` are the PV objects to PUT (claimRef set), ``claims`` the
    PVC objects to PUT (selected-node set); ``bindings`` and ``provisions`` the claims PreBind waits on."""

    node: str
    bindings: tuple[StaticBinding, ...]
    volumes: tuple[dict[str, Any], ...]
    claims: tuple[dict[str, Any], ...]

    @property
    def provisions(self) -> tuple[str, ...]:
        return tuple(f"{(c.get('metadata') or {}).get('namespace')}/{(c.get('metadata') or {}).get('name')}"
                     for c in self.claims)


def reserve(state: BindingState, node: str) -> VolumePlan | None:
    """``AssumePodVolumes`` for ``node``: None when every claim is bound already (PreBind has nothing to do);
    otherwise the plan, whose objects are assumed into the catalog (later cycles see the PV as taken and the claim
    as selected) until the watch shows their new versions or :func:`unreserve` is called."""
    podvolumes = state.by_node.get(node)
    if podvolumes is None or (not podvolumes.static and not podvolumes.provisions):
        return None
    volumes, bindings = [], []
    for binding in podvolumes.static:
        updated = bind_volume_to_claim(binding.volume, binding.claim)
        if updated is not None:
            state.catalog.assume_volume(updated)
            volumes.append(updated)
        bindings.append(binding)
    claims = []
    for claim in podvolumes.provisions:
        updated_claim = _with_annotation(claim.obj, ANN_SELECTED_NODE, node)
        state.catalog.assume_claim(updated_claim)
        claims.append(updated_claim)
    return VolumePlan(node, tuple(bindings), tuple(volumes), tuple(claims))


def unreserve(catalog: VolumeCatalog, plan: VolumePlan) -> None:
    """``RevertAssumedPodVolumes``: forget what :func:`reserve` assumed."""
    for binding in plan.bindings:
        catalog.restore_volume(binding.volume.name)
    for key in plan.provisions:
        catalog.restore_claim(key)


def _rv(value: str) -> int:
    return int(value) if value.isdigit() else 0


def check_bindings(plan: VolumePlan, catalog: VolumeCatalog, node_labels: Mapping[str, str],
                   written: Mapping[str, str] | None = None) -> bool | str:
    """``checkBindings`` over the watched versions: True when every claim of the plan is bound, False to keep
    waiting, or the error text that ends the wait. ``written`` maps ``pv/NAME`` and ``pvc/NS/NAME`` to the
    resourceVersion the PUT returned: an older watched version means the watch has not caught up yet."""
    written = written or {}
    for binding in plan.bindings:
        pv = catalog.api_volume(binding.volume.name)
        pvc = catalog.api_claim(binding.claim.key)
        if pv is None or pvc is None:
            return False
        if _rv(written.get(f"pv/{pv.name}", "")) > _rv(pv.resource_version):
            return False
        if not pv.node_affinity_matches(node_labels):
            return f'pv "{pv.name}" node affinity doesn\'t match node "{plan.node}": no matching NodeSelectorTerms'
        if pv.claim_ref is None or not pv.claim_ref[2]:
            return f'ClaimRef got reset for pv "{pv.name}"'
        if not pvc.fully_bound:
            return False
    for key in plan.provisions:
        pvc = catalog.api_claim(key)
        if pvc is None or _rv(written.get(f"pvc/{key}", "")) > _rv(pvc.resource_version):
            return False
        if not pvc.annotations:
            return f'selectedNode annotation reset for PVC "{pvc.name}"'
        if pvc.selected_node != plan.node:
            return f'provisioning failed for PVC "{pvc.name}"'
        if pvc.volume_name:
            pv = catalog.api_volume(pvc.volume_name)
            if pv is None:
                return False
            if not pv.node_affinity_matches(node_labels):
                return (f'pv "{pv.name}" node affinity doesn\'t match node "{plan.node}": no matching '
                        "NodeSelectorTerms")
        if not pvc.fully_bound:
            return False
    return True
