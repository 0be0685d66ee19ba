"""What the volume plugins read: the pod's claims, and a catalog of PersistentVolumeClaims, PersistentVolumes and
StorageClasses, parsed once into small frozen records.

Reproduces the helpers kube-scheduler v1.34.1's volume plugins call:

* ``k8s.io/component-helpers/storage/volume/pv_helpers.go``: ``GetPersistentVolumeClaimClass`` /
  ``GetPersistentVolumeClass`` (the beta annotation ``volume.beta.kubernetes.io/storage-class`` wins over
  ``spec.storageClassName``), ``IsDelayBindingMode`` (a class that is not found is not delay binding),
  ``CheckNodeAffinity`` (the PV's required ``nodeSelectorTerms`` against the node's labels only, so a
  ``matchFields`` term sees an empty ``metadata.name``), ``CheckAccessModes``, ``CheckVolumeModeMismatches``
  (an unset volumeMode is ``Filesystem``), and the annotations ``volume.kubernetes.io/selected-node``,
  ``pv.kubernetes.io/bind-completed`` and ``pv.kubernetes.io/bound-by-controller``;
* ``k8s.io/component-helpers/storage/ephemeral/ephemeral.go``: a generic ephemeral volume's claim is named
  ``<pod name>-<volume name>`` and must be controlled by the pod, else ``PVC NS/NAME was not created for pod
  NS/POD (pod is not owner)``;
* the listers' NotFound texts (``client-go`` listers over ``Resource("persistentvolumeclaim")`` etc.):
  ``persistentvolumeclaim "X" not found``, ``persistentvolume "X" not found``,
  ``storageclass.storage.k8s.io "X" not found``.

A :class:`VolumeCatalog` is mutable like the Snapshot it hangs on (``Snapshot.volumes``): the scheduler feeds it
from its reflectors and *assumes* the PV and PVC updates of a Reserve (``AssumeCache.Assume``) until the watch shows
a newer version or the binding cycle gives up (``Restore``). Quantities are bytes (``Quantity.Value()``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ._json import listed
from .nodeaffinity import METADATA_NAME, NodeSelectorTerm, _term
from .quantity import InvalidQuantity, parse
from .quantity import value as value_of

__all__ = [
    "ANN_BIND_COMPLETED", "ANN_BOUND_BY_CONTROLLER", "ANN_SELECTED_NODE", "BETA_STORAGE_CLASS",
    "NOT_SUPPORTED_PROVISIONER", "READ_WRITE_ONCE_POD", "ClaimRecord", "ClassRecord", "PodVolume", "VolumeCatalog",
    "VolumeRecord", "parse_pod_volumes", "volume_shape",
]

ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
HOSTNAME_LABEL = "kubernetes.io/hostname"
FILESYSTEM = "Filesystem"
_DISK_KINDS = ("gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd")


class PodVolume(NamedTuple):
    """One entry of ``spec.volumes`` that a volume plugin looks at: ``claim`` is the PVC's ``claimName`` (``""`` for
    an ephemeral volume, whose claim is named after the pod, see :meth:`claim_name`); ``ephemeral`` marks a generic
    ephemeral volume; ``disk`` is an in-tree disk ``(kind, identity, read_only)`` for VolumeRestrictions' disk
    conflicts (``identity``: the PD name, EBS volume ID, iSCSI IQN, or ``(monitors, pool, image)`` for RBD)."""

    name: str
    claim: str = ""
    ephemeral: bool = False
    disk: tuple[str, Any, bool] | None = None

    def claim_name(self, pod_name: str) -> str:
        """The PVC this volume uses (``ephemeral.VolumeClaimName``: ``<pod>-<volume>`` for an ephemeral one)."""
        return f"{pod_name}-{self.name}" if self.ephemeral else self.claim


def _disk(raw: Mapping[str, Any]) -> tuple[str, Any, bool] | None:
    for kind in _DISK_KINDS:
        src = raw.get(kind)
        if not isinstance(src, Mapping):
            continue
        read_only = src.get("readOnly") is True
        if kind == "gcePersistentDisk":
            return kind, str(src.get("pdName") or ""), read_only
        if kind == "awsElasticBlockStore":
            return kind, str(src.get("volumeID") or ""), read_only
        if kind == "iscsi":
            return kind, str(src.get("iqn") or ""), read_only
        monitors = frozenset(str(m) for m in listed(src.get("monitors")))
        return kind, (monitors, str(src.get("pool") or "rbd"), str(src.get("image") or "")), read_only
    return None


def parse_pod_volumes(spec: Mapping[str, Any]) -> tuple[PodVolume, ...]:
    """The volumes of ``spec.volumes`` the volume plugins read (PVCs, generic ephemeral volumes, in-tree disks);
    ``()`` for a pod with none of them, so such a pod costs the plugins nothing."""
    out = []
    for raw in listed(spec.get("volumes")):
        if not isinstance(raw, Mapping):
            continue
        name = str(raw.get("name") or "")
        pvc = raw.get("persistentVolumeClaim")
        if isinstance(pvc, Mapping):
            out.append(PodVolume(name, str(pvc.get("claimName") or "")))
        elif isinstance(raw.get("ephemeral"), Mapping):
            out.append(PodVolume(name, "", True))
        else:
            disk = _disk(raw)
            if disk is not None:
                out.append(PodVolume(name, disk=disk))
    return tuple(out)


def volume_shape(spec: Mapping[str, Any]) -> str:
    """The part of ``spec.volumes`` :func:`parse_pod_volumes` reads, as text: a cache key for pods of one shape
    (a projected service-account token volume, different in every pod, leaves it empty)."""
    return repr(parse_pod_volumes(spec)) if spec.get("volumes") else ""


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _field(obj: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = obj.get(name)
    return value if isinstance(value, Mapping) else {}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return _field(obj, "spec")


def _str_map(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


def _storage(value: Any) -> int:
    """``requests.storage`` / ``capacity.storage`` in bytes (0 when absent or malformed)."""
    if not isinstance(value, Mapping) or value.get("storage") is None:
        return 0
    parsed = parse(value["storage"])
    return 0 if isinstance(parsed, InvalidQuantity) else max(0, value_of(parsed))


def _class_of(meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str:
    """``GetPersistentVolume(Claim)Class``: the beta annotation, else ``spec.storageClassName``, else ``""``."""
    annotations = meta.get("annotations")
    if isinstance(annotations, Mapping) and BETA_STORAGE_CLASS in annotations:
        return str(annotations[BETA_STORAGE_CLASS])
    return str(spec.get("storageClassName") or "")


@dataclass(frozen=True, slots=True)
class ClaimRecord:
    """A PersistentVolumeClaim: ``key`` ``namespace/name``; ``volume_name`` ``spec.volumeName``; ``storage_class``
    as ``GetPersistentVolumeClaimClass``; ``requested`` ``resources.requests.storage`` in bytes; ``phase``
    ``status.phase``; ``selector`` the compiled ``spec.selector`` (None: none); ``owner_uid`` the uid of its
    controller ownerReference of kind Pod (``""``: none). ``obj`` is the JSON as served, for the PreBind update."""

    namespace: str
    name: str
    uid: str
    volume_name: str
    storage_class: str
    requested: int
    access_modes: tuple[str, ...]
    volume_mode: str
    phase: str
    deleting: bool
    annotations: Mapping[str, str]
    selector: Any
    owner_uid: str
    resource_version: str
    obj: Mapping[str, Any]

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def fully_bound(self) -> bool:
        """``isPVCFullyBound``: a volumeName and the ``pv.kubernetes.io/bind-completed`` annotation."""
        return bool(self.volume_name) and ANN_BIND_COMPLETED in self.annotations

    @property
    def selected_node(self) -> str | None:
        return self.annotations.get(ANN_SELECTED_NODE)

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> ClaimRecord:
        from .labelselector import compile_label_selector

        meta, spec = _meta(obj), _spec(obj)
        status = _field(obj, "status")
        resources = _field(spec, "resources")
        owner = ""
        for ref in listed(meta.get("ownerReferences")):
            if isinstance(ref, Mapping) and ref.get("controller") is True and ref.get("kind") == "Pod":
                owner = str(ref.get("uid") or "")
        raw_selector = spec.get("selector")
        return cls(str(meta.get("namespace") or ""), str(meta.get("name") or ""), str(meta.get("uid") or ""),
                   str(spec.get("volumeName") or ""), _class_of(meta, spec), _storage(resources.get("requests")),
                   tuple(str(m) for m in listed(spec.get("accessModes"))), str(spec.get("volumeMode") or FILESYSTEM),
                   str(status.get("phase") or ""), bool(meta.get("deletionTimestamp")),
                   _str_map(meta.get("annotations")),
                   compile_label_selector(raw_selector) if isinstance(raw_selector, Mapping) else None, owner,
                   str(meta.get("resourceVersion") or ""), obj)


@dataclass(frozen=True, slots=True)
class VolumeRecord:
    """A PersistentVolume: ``capacity`` in bytes; ``claim_ref`` ``(namespace, name, uid)`` of ``spec.claimRef`` or
    None; ``node_affinity`` the compiled required terms (None: the PV has no required node affinity; ``()``: terms
    that select nothing); ``labels`` for VolumeZone; ``obj`` the JSON as served, for the PreBind update."""

    name: str
    labels: Mapping[str, str]
    capacity: int
    storage_class: str
    access_modes: tuple[str, ...]
    volume_mode: str
    phase: str
    deleting: bool
    claim_ref: tuple[str, str, str] | None
    node_affinity: tuple[NodeSelectorTerm, ...] | None
    resource_version: str
    obj: Mapping[str, Any]

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> VolumeRecord:
        meta, spec = _meta(obj), _spec(obj)
        status = _field(obj, "status")
        ref = spec.get("claimRef")
        claim_ref = (str(ref.get("namespace") or ""), str(ref.get("name") or ""), str(ref.get("uid") or "")) \
            if isinstance(ref, Mapping) else None
        affinity = spec.get("nodeAffinity")
        required = affinity.get("required") if isinstance(affinity, Mapping) else None
        terms = None
        if isinstance(required, Mapping):
            terms = tuple(t for t in map(_term, listed(required.get("nodeSelectorTerms"))) if t is not None)
        return cls(str(meta.get("name") or ""), _str_map(meta.get("labels")), _storage(spec.get("capacity")),
                   _class_of(meta, spec), tuple(str(m) for m in listed(spec.get("accessModes"))),
                   str(spec.get("volumeMode") or FILESYSTEM), str(status.get("phase") or ""),
                   bool(meta.get("deletionTimestamp")), claim_ref, terms, str(meta.get("resourceVersion") or ""), obj)

    def node_affinity_matches(self, labels: Mapping[str, str]) -> bool:
        """``CheckNodeAffinity``: the required terms (ORed) against the node's labels; a node built from labels only
        has no name, so ``matchFields`` compare ``metadata.name`` with ``""``."""
        if self.node_affinity is None:
            return True
        for term in self.node_affinity:
            if term.errors:
                continue
            if all(r.matches_labels(labels) for r in term.expressions) and all(
                    r.matches_fields({METADATA_NAME: ""}) for r in term.fields):
                return True
        return False

    def local_node_names(self) -> frozenset[str]:
        """``util.GetLocalPersistentVolumeNodeNames`` (pkg/volume/util): per required node selector term, the
        intersection of the values of its ``kubernetes.io/hostname In`` expressions, united over the terms (a term
        without one adds nothing); empty when the PV names no node that way. VolumeBinding's PreFilter reads the
        values as node names (``GetEligibleNodes``)."""
        affinity = _field(self.obj, "spec").get("nodeAffinity")
        required = affinity.get("required") if isinstance(affinity, Mapping) else None
        terms = listed(required.get("nodeSelectorTerms")) if isinstance(required, Mapping) else []
        out: set[str] = set()
        for term in terms:
            nodes: set[str] | None = None
            for expr in listed(term.get("matchExpressions")) if isinstance(term, Mapping) else []:
                if isinstance(expr, Mapping) and expr.get("key") == HOSTNAME_LABEL and expr.get("operator") == "In":
                    values = {str(v) for v in listed(expr.get("values"))}
                    nodes = values if nodes is None else nodes & values
            out |= nodes or set()
        return frozenset(out)

    def bound_to(self, claim: ClaimRecord) -> bool:
        """``IsVolumeBoundToClaim``: claimRef names the claim (and its uid, when the claimRef has one)."""
        if self.claim_ref is None:
            return False
        namespace, name, uid = self.claim_ref
        return namespace == claim.namespace and name == claim.name and (not uid or uid == claim.uid)


@dataclass(frozen=True, slots=True)
class ClassRecord:
    """A StorageClass: ``binding_mode`` ``volumeBindingMode`` (``""`` when unset); ``allowed_topologies`` as
    ``((key, values), ...)`` per term (ORed; inside a term ANDed)."""

    name: str
    provisioner: str
    binding_mode: str
    allowed_topologies: tuple[tuple[tuple[str, frozenset[str]], ...], ...]

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> ClassRecord:
        meta = _meta(obj)
        topologies = []
        for term in listed(obj.get("allowedTopologies")):
            if not isinstance(term, Mapping):
                continue
            topologies.append(tuple((str(e.get("key") or ""), frozenset(str(v) for v in listed(e.get("values"))))
                                    for e in listed(term.get("matchLabelExpressions")) if isinstance(e, Mapping)))
        return cls(str(meta.get("name") or ""), str(obj.get("provisioner") or ""),
                   str(obj.get("volumeBindingMode") or ""), tuple(topologies))

    @property
    def delay_binding(self) -> bool:
        return self.binding_mode == WAIT_FOR_FIRST_CONSUMER

    @property
    def provisions(self) -> bool:
        """A provisioner is set and is not ``kubernetes.io/no-provisioner``."""
        return bool(self.provisioner) and self.provisioner != NOT_SUPPORTED_PROVISIONER

    def topology_matches(self, labels: Mapping[str, str]) -> bool:
        """``MatchTopologySelectorTerms``: no terms match every node; else some term has every key with a listed
        value."""
        if not self.allowed_topologies:
            return True
        return any(all(labels.get(k) in values for k, values in term) for term in self.allowed_topologies)


def _name(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("name") or "")


class VolumeCatalog:
    """The PVCs (``namespace/name``), PVs and StorageClasses (name) a scheduler has listed, with assumed versions
    laid over them. ``blind``: kinds that could not be listed (``persistentvolumeclaims``, ``persistentvolumes``,
    ``storageclasses``); while any is, the volume plugins cannot decide and :attr:`usable` is False."""

    def __init__(self, claims: Iterable[Mapping[str, Any]] = (), volumes: Iterable[Mapping[str, Any]] = (),
                 classes: Iterable[Mapping[str, Any]] = ()) -> None:
        self.claims: dict[str, ClaimRecord] = {}
        self.volumes: dict[str, VolumeRecord] = {}
        self.classes: dict[str, ClassRecord] = {}
        self._assumed_claims: dict[str, ClaimRecord] = {}
        self._assumed_volumes: dict[str, VolumeRecord] = {}
        self.blind: set[str] = set()
        for obj in claims:
            self.set_claim(obj)
        for obj in volumes:
            self.set_volume(obj)
        for obj in classes:
            self.set_class(obj)

    @property
    def usable(self) -> bool:
        return not self.blind

    # -- reading (assumed versions first, as the assume cache's Get) --------------------------------------------

    def claim(self, namespace: str, name: str) -> ClaimRecord | None:
        key = f"{namespace}/{name}"
        return self._assumed_claims.get(key) or self.claims.get(key)

    def volume(self, name: str) -> VolumeRecord | None:
        return self._assumed_volumes.get(name) or self.volumes.get(name)

    def storage_class(self, name: str) -> ClassRecord | None:
        return self.classes.get(name)

    def volumes_of_class(self, storage_class: str) -> Iterator[VolumeRecord]:
        """``pvCache.ListPVs(storageClassName)``: every PV of that class, assumed versions included."""
        for name in self.volumes.keys() | self._assumed_volumes.keys():
            pv = self.volume(name)
            if pv is not None and pv.storage_class == storage_class:
                yield pv

    def api_claim(self, key: str) -> ClaimRecord | None:
        """``GetAPIObj``: the version the watch last showed, ignoring assumptions."""
        return self.claims.get(key)

    def api_volume(self, name: str) -> VolumeRecord | None:
        return self.volumes.get(name)

    # -- the watches ------------------------------------------------------------------------------------------------

    def set_claim(self, obj: Mapping[str, Any]) -> ClaimRecord:
        record = ClaimRecord.from_obj(obj)
        self.claims[record.key] = record
        assumed = self._assumed_claims.get(record.key)
        if assumed is not None and assumed.resource_version != record.resource_version:
            del self._assumed_claims[record.key]
        return record

    def remove_claim(self, namespace: str, name: str) -> None:
        self.claims.pop(f"{namespace}/{name}", None)
        self._assumed_claims.pop(f"{namespace}/{name}", None)

    def set_volume(self, obj: Mapping[str, Any]) -> VolumeRecord:
        record = VolumeRecord.from_obj(obj)
        self.volumes[record.name] = record
        assumed = self._assumed_volumes.get(record.name)
        if assumed is not None and assumed.resource_version != record.resource_version:
            del self._assumed_volumes[record.name]
        return record

    def remove_volume(self, name: str) -> None:
        self.volumes.pop(name, None)
        self._assumed_volumes.pop(name, None)

    def set_class(self, obj: Mapping[str, Any]) -> ClassRecord:
        record = ClassRecord.from_obj(obj)
        self.classes[record.name] = record
        return record

    def remove_class(self, name: str) -> None:
        self.classes.pop(name, None)

    def relist(self, kind: str, objs: Iterable[Mapping[str, Any]]) -> None:
        """Replace every object of ``kind`` (``persistentvolumeclaims``, ``persistentvolumes``, ``storageclasses``)."""
        self.blind.discard(kind)
        if kind == "persistentvolumeclaims":
            self.claims = {}
            for obj in objs:
                self.set_claim(obj)
        elif kind == "persistentvolumes":
            self.volumes = {}
            for obj in objs:
                self.set_volume(obj)
        elif kind == "storageclasses":
            self.classes = {}
            for obj in objs:
                self.set_class(obj)

    def upsert(self, kind: str, obj: Mapping[str, Any]) -> None:
        {"persistentvolumeclaims": self.set_claim, "persistentvolumes": self.set_volume,
         "storageclasses": self.set_class}[kind](obj)

    def delete(self, kind: str, obj: Mapping[str, Any]) -> None:
        if kind == "persistentvolumeclaims":
            self.remove_claim(str(_meta(obj).get("namespace") or ""), _name(obj))
        elif kind == "persistentvolumes":
            self.remove_volume(_name(obj))
        elif kind == "storageclasses":
            self.remove_class(_name(obj))

    # -- Reserve / Unreserve ------------------------------------------------------------------------------------

    def assume_volume(self, obj: Mapping[str, Any]) -> None:
        """``pvCache.Assume``: read ``obj`` for this PV until the watch shows another resourceVersion."""
        record = VolumeRecord.from_obj(obj)
        self._assumed_volumes[record.name] = record

    def assume_claim(self, obj: Mapping[str, Any]) -> None:
        record = ClaimRecord.from_obj(obj)
        self._assumed_claims[record.key] = record

    def restore_volume(self, name: str) -> None:
        """``pvCache.Restore``: forget the assumed version."""
        self._assumed_volumes.pop(name, None)

    def restore_claim(self, key: str) -> None:
        self._assumed_claims.pop(key, None)
