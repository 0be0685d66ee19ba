"""Node-fit preview: for one pod, every node's verdict from the scheduling framework, with the numbers behind it.

The verdicts come from :func:`observatory.scheduling.filter_nodes`, the same Filter plugins the lab's
default-scheduler runs (kube-scheduler v1.34.1's NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
NodePorts, NodeResourcesFit, VolumeRestrictions, VolumeBinding, VolumeZone, PodTopologySpread, InterPodAffinity).
They are observatory's *prediction* from the objects it has cached: the volume plugins run only when the cache holds
the PVCs, PVs and StorageClasses (:meth:`FitIndex.set_volumes`; otherwise each node of a pod with claims says the
prediction cannot see volumes, :mod:`.volumefit`); a real scheduler also runs the DRA and volume-limit filters, may
run another profile, and its cache may differ for a moment. :func:`compared` sets the preview beside the scheduler's
latest refusal and says in words where they disagree. When the pod carries kube-scheduler-simulator's
``filter-result`` annotation, that recorded result is shown instead (:func:`simulator_preview`).

:class:`FitIndex` keeps the framework's :class:`~observatory.scheduling.Snapshot` current from the same deltas as
:class:`~.state.ClusterState`, so a preview costs one filter pass over the nodes (about 10 µs per node), not a
re-parse of every pod.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from observatory.scheduling import NodeVerdict, PodInfo, Snapshot, filter_nodes
from observatory.scheduling.fiterror import FitErrorParse
from observatory.scheduling.nodeaffinity import NodeSelectorTerm
from observatory.scheduling.pods import is_terminal, pod_key
from observatory.scheduling.taints import Taint as SchedTaint
from observatory.scheduling.taints import find_untolerated_taint
from observatory.scheduling.verdicts import (
    AffinityMismatch,
    InsufficientResource,
    NodeNameMismatch,
    Pair,
    PodAffinityConflict,
    PortConflict,
    SpreadViolation,
    VolumeConflict,
)
from observatory.scheduling.volumeplugins import VOLUME_PLUGINS
from observatory.scheduling.volumes import VolumeCatalog, volume_shape

from ._json import items, mapping, text
from .records import NodeView, PodView
from .units import amount
from .volumefit import blind_note, explain_prefilter, explain_volume, has_claims

__all__ = [
    "OBSERVATORY_PREDICTION",
    "SIMULATOR_RESULT",
    "FitIndex",
    "FitPreview",
    "NodeFit",
    "bind_warnings",
    "compared",
    "fit_preview",
    "pod_info",
    "simulator_preview",
    "untolerated_taints",
]

OBSERVATORY_PREDICTION = "observatory's prediction from cached objects"
"""How every framework-computed preview is labelled, on screen and in ``observatory why``."""
SIMULATOR_RESULT = "kube-scheduler-simulator's recorded result (pod annotations)"
"""The label when the verdicts come from the debuggable scheduler's ``filter-result`` annotation."""
_PASSED = "passed"


@dataclass(frozen=True, slots=True)
class NodeFit:
    """One node's verdict for the pod.

    ``fits``: every filter passed. ``filter``: the first Filter plugin that rejects the node (None when it fits).
    ``reasons``: the plugin's status reasons exactly as they enter a FitError message. ``why``: the rejection in
    plain words with its numbers, one string per cause (e.g. ``cpu: requests 2, free 500m of 2 (1500m in use)``,
    ``untolerated taint dedicated=gpu:NoSchedule``, ``nodeSelector disktype=ssd: node has disktype=hdd``,
    ``cordoned (spec.unschedulable)``). ``notes``: facts the filters do not decide on but a binder should know
    (``NotReady``, ``cordoned``, ``selected by kube-scheduler-simulator``). ``resources``: ``(resource, requested,
    in use, allocatable)`` rows in scheduler units (cpu millicores, memory bytes, pods a count); empty for a
    simulator result."""

    node: str
    fits: bool
    filter: str | None
    reasons: tuple[str, ...] = ()
    why: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    resources: tuple[tuple[str, int, int, int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The ``nodes[]`` entry of ``observatory why -o json`` (see :meth:`FitPreview.to_json`)."""
        return {"node": self.node, "fits": self.fits, "filter": self.filter, "reasons": list(self.reasons),
                "why": list(self.why), "notes": list(self.notes),
                "resources": [{"resource": r, "requested": q, "used": u, "allocatable": a, "free": a - u}
                              for r, q, u, a in self.resources]}


@dataclass(frozen=True, slots=True)
class FitPreview:
    """Every node's :class:`NodeFit` for one pod, in node-name order.

    ``source`` is ``"observatory"`` (the framework over cached objects) or ``"kube-scheduler-simulator"``;
    ``label`` says so in words. ``scope`` is the namespace whose pods alone were counted on the nodes when only one
    namespace is watched (free resources are then overstated), else None."""

    pod: str
    source: str
    label: str
    nodes: tuple[NodeFit, ...]
    scope: str | None = None
    disagreement: str = ""
    """Where the scheduler's latest refusal and this preview disagree, in words ("" when they do not): see
    :func:`compared`."""
    volumes_checked: bool = False
    """True when the pod has claims and the volume plugins ran over the cache's PVCs, PVs and StorageClasses (a pod
    with claims and no such data gets a note on every node instead)."""

    @property
    def feasible(self) -> tuple[str, ...]:
        return tuple(n.node for n in self.nodes if n.fits)

    def get(self, node: str) -> NodeFit | None:
        return next((n for n in self.nodes if n.node == node), None)

    def to_json(self) -> dict[str, Any]:
        """``{"pod", "source", "label", "scope", "disagreement", "volumesChecked", "feasible": [node...],
        "nodes": [NodeFit.to_json()...]}``."""
        return {"pod": self.pod, "source": self.source, "label": self.label, "scope": self.scope,
                "disagreement": self.disagreement, "volumesChecked": self.volumes_checked,
                "feasible": list(self.feasible),
                "nodes": [n.to_json() for n in self.nodes]}


# -- PodInfo, parsed once per pod shape ------------------------------------------------------------------------

_SHAPE_FIELDS = ("resources", "overhead", "priority", "preemptionPolicy", "tolerations", "nodeSelector", "affinity",
                 "topologySpreadConstraints")
_INFO_CACHE: dict[str, PodInfo] = {}
_INFO_CACHE_SIZE = 4096


def _shape(spec: Mapping[str, Any]) -> str:
    parts = [repr([(mapping(c).get("resources"), mapping(c).get("ports")) for c in items(spec.get("containers"))]),
             repr([(mapping(c).get("resources"), mapping(c).get("restartPolicy"))
                   for c in items(spec.get("initContainers"))])]
    parts.extend(repr(spec.get(f)) for f in _SHAPE_FIELDS)
    parts.append(volume_shape(spec))
    return "|".join(parts)


def pod_info(obj: Mapping[str, Any]) -> PodInfo:
    """The scheduling framework's :class:`~observatory.scheduling.PodInfo` for Pod JSON.

    Pods of one shape (a Deployment's replicas) share one parse: the fields that depend on the spec come from a
    bounded cache keyed by the spec fragments the framework reads; identity, ``spec.nodeName`` and
    ``status.startTime`` are filled in per pod."""
    obj = mapping(obj)
    spec = mapping(obj.get("spec"))
    meta, status = mapping(obj.get("metadata")), mapping(obj.get("status"))
    namespace = text(meta.get("namespace"))
    # pod (anti-)affinity terms default to the pod's own namespace: such shapes are per namespace
    shape = _shape(spec) + ("|" + namespace if "pod" in repr(spec.get("affinity")) else "")
    template = _INFO_CACHE.get(shape)
    if template is None:
        template = PodInfo.from_pod({"metadata": {"namespace": namespace},
                                     "spec": {k: v for k, v in spec.items() if k != "nodeName"}})
        if len(_INFO_CACHE) >= _INFO_CACHE_SIZE:
            _INFO_CACHE.clear()
        _INFO_CACHE[shape] = template
    raw_labels = mapping(meta.get("labels"))
    return replace(template, key=pod_key(obj), uid=text(meta.get("uid")), node_name=text(spec.get("nodeName")),
                   start_time=text(status.get("startTime")), namespace=namespace,
                   labels={str(k): str(v) for k, v in raw_labels.items()},
                   deleting=bool(meta.get("deletionTimestamp")))


class FitIndex:
    """A scheduling :class:`~observatory.scheduling.Snapshot` plus every pod's :class:`PodInfo`, kept current from
    the same objects :class:`~.state.ClusterState` sees. Bound, non-terminal pods count on their node."""

    def __init__(self) -> None:
        self.snapshot = Snapshot()
        self._infos: dict[str, PodInfo] = {}
        self._counted: dict[str, bool] = {}
        self.generation = 0
        """Grows whenever something a preview reads changes (a node, or a pod's scheduling facts or whether it
        counts on its node); a container restart or a new annotation leaves it alone, so a preview can be reused."""

    def info(self, key: str) -> PodInfo | None:
        """The PodInfo of pod ``namespace/name``, None when unknown."""
        return self._infos.get(key)

    def set_pod(self, key: str, obj: Mapping[str, Any]) -> None:
        info = pod_info(obj)
        old = self._infos.get(key)
        counted = not (is_terminal(obj) or not info.node_name)
        if old == info and self._counted.get(key) == counted:
            return
        self.generation += 1
        self._counted[key] = counted
        if old is not None and old.identity != info.identity:
            self.snapshot.remove_pod(old)
        self._infos[key] = info
        if is_terminal(obj) or not info.node_name:
            self.snapshot.remove_pod(info)
        else:
            self.snapshot.add_pod(info)

    def remove_pod(self, key: str) -> None:
        self.generation += 1
        self._counted.pop(key, None)
        old = self._infos.pop(key, None)
        if old is not None:
            self.snapshot.remove_pod(old)

    def set_node(self, obj: Mapping[str, Any]) -> None:
        self.generation += 1
        self.snapshot.set_node(obj)

    def remove_node(self, name: str) -> None:
        self.generation += 1
        self.snapshot.remove_node(name)

    def set_volumes(self, catalog: VolumeCatalog | None) -> None:
        """Give the volume plugins the PVCs, PVs and StorageClasses to read (None: they do not run)."""
        self.generation += 1
        self.snapshot.volumes = catalog


# -- the preview --------------------------------------------------------------------------------------------------

def untolerated_taints(node: NodeView, info: PodInfo) -> list[str]:
    """Every NoSchedule or NoExecute taint of ``node`` that the pod does not tolerate, as ``key=value:Effect``
    (the TaintToleration filter reports only the first)."""
    out = []
    for taint in node.taints:
        sched = SchedTaint(taint.key, taint.value, taint.effect)
        if find_untolerated_taint((sched,), info.tolerations) is not None:
            out.append(str(taint))
    return out


def _term_failure(term: NodeSelectorTerm, labels: Mapping[str, str], name: str) -> str:
    """The first requirement of ``term`` that this node fails, in words."""
    if term.errors:
        return f"malformed term ({'; '.join(term.errors)})"
    for r in term.expressions:
        if not r.matches_labels(labels):
            has = f"{r.key}={labels[r.key]}" if r.key in labels else f"no {r.key} label"
            values = f" [{', '.join(r.values)}]" if r.values else ""
            return f"{r.key} {r.operator}{values}: node has {has}"
    for r in term.fields:
        if not r.matches_fields({"metadata.name": name}):
            return f"{r.key} {r.operator} [{', '.join(r.values)}]: node is {name}"
    return "no match"


def _domain(pair: Pair, node: str) -> str:
    """``on this node`` for a hostname domain, else ``in zone=a``."""
    key, value = pair
    return "on this node" if key == "kubernetes.io/hostname" and value == node else f"in {key}={value}"


def _names(keys: list[str], most: int = 3) -> str:
    shown = ", ".join(sorted(keys)[:most])
    return shown + (f" and {len(keys) - most} more" if len(keys) > most else "")


def _pod_affinity_why(detail: PodAffinityConflict, info: PodInfo, snapshot: Snapshot, node: str) -> str:
    """InterPodAffinity's rejection in words, naming the pods in the node's topology domain."""
    term, pair = detail.term, detail.pair
    if detail.kind == "affinity":
        assert term is not None
        if pair is None:
            return f"pod affinity {term.selector.describe()}: the node has no {term.topology_key} label"
        return f"pod affinity: no pod matching {term.selector.describe()} {_domain(pair, node)}"
    if pair is None:
        return detail.kind
    in_domain = [p for n in snapshot if n.labels.get(pair[0]) == pair[1] for p in n.pods.values()]
    if detail.kind == "anti-affinity":
        assert term is not None
        hits = [p.key for p in in_domain if term.matches(p.namespace, p.labels, None)]
        verb = "matches" if len(hits) == 1 else "match"
        return f"anti-affinity: {_names(hits) or 'a pod'} {_domain(pair, node)} {verb} {term.selector.describe()}"
    labels = (snapshot.namespaces or {}).get(info.namespace)
    owners = [p.key for p in in_domain for t in p.required_anti_affinity
              if t.topology_key == pair[0] and t.matches(info.namespace, info.labels, labels)]
    return (f"existing pods' anti-affinity: {_names(sorted(set(owners))) or 'a pod'} {_domain(pair, node)} "
            f"will not run beside a pod labelled {','.join(f'{k}={v}' for k, v in sorted(info.labels.items()))}")


def _spread_why(detail: SpreadViolation) -> str:
    """``spread over topology.kubernetes.io/zone: a has 3 (+1 with this pod), b has 0, maxSkew 1``: this node's
    domain first, with the incoming pod when it matches the selector itself."""
    key = detail.topology_key
    if detail.topology_value is None:
        return f"spread over {key}: the node has no {key} label"
    others = sorted((v, n) for v, n in detail.domains.items() if v != detail.topology_value)
    plus = " (+1 with this pod)" if detail.self_match else ""
    counts = [f"{detail.topology_value} has {detail.matching}{plus}", *(f"{v} has {n}" for v, n in others[:5])]
    if len(others) > 5:
        counts.append(f"{len(others) - 5} more")
    return f"spread over {key}: {', '.join(counts)}, maxSkew {detail.max_skew}"


def _explain(verdict: NodeVerdict, info: PodInfo, node: NodeView | None, labels: Mapping[str, str],
             snapshot: Snapshot | None = None) -> list[str]:
    why: list[str] = []
    for detail in verdict.details:
        if isinstance(detail, InsufficientResource):
            if detail.resource == "pods":
                why.append(f"pods: {detail.used} of {detail.allocatable} already on the node")
            else:
                res = detail.resource
                why.append(f"{res}: requests {amount(res, detail.requested)}, free "
                           f"{amount(res, max(0, detail.free))} of {amount(res, detail.allocatable)} "
                           f"({amount(res, detail.used)} in use)")
        elif isinstance(detail, SchedTaint):
            if node is not None:
                why.extend(f"untolerated taint {t}" for t in untolerated_taints(node, info))
            else:
                value = f"={detail.value}" if detail.value else ""
                why.append(f"untolerated taint {detail.key}{value}:{detail.effect}")
        elif isinstance(detail, AffinityMismatch):
            for key, wanted, actual in detail.selector_misses:
                has = f"{key}={actual}" if actual is not None else f"no {key} label"
                why.append(f"nodeSelector {key}={wanted}: node has {has}")
            if detail.required_unmatched:
                terms = info.affinity.required or ()
                if not terms:
                    why.append("required node affinity has no terms, so it matches no node")
                for i, term in enumerate(terms):
                    why.append(f"nodeAffinity term {i + 1}: {_term_failure(term, labels, verdict.node)}")
        elif isinstance(detail, PortConflict):
            why.append(f"host port {detail.protocol}/{detail.port} ({detail.host_ip}) already in use")
        elif isinstance(detail, NodeNameMismatch):
            why.append(f"spec.nodeName is {detail.requested}")
        elif isinstance(detail, SpreadViolation):
            why.append(_spread_why(detail))
        elif isinstance(detail, PodAffinityConflict) and snapshot is not None:
            why.append(_pod_affinity_why(detail, info, snapshot, verdict.node))
        elif isinstance(detail, VolumeConflict) and snapshot is not None:
            why.append(explain_volume(detail, snapshot, labels))
    if not why and verdict.plugin in VOLUME_PLUGINS and snapshot is not None:
        why.extend(explain_prefilter(r, info, snapshot) for r in verdict.reasons)
    if verdict.plugin == "NodeUnschedulable":
        why.append("cordoned (spec.unschedulable)")
    elif verdict.plugin == "NodeAffinity" and not why:
        why.append("node(s) didn't satisfy the pod's node-name affinity")
    if not why and verdict.reasons:
        why.extend(verdict.reasons)
    return why


def _notes(node: NodeView | None, plugin: str | None = None) -> tuple[str, ...]:
    """NotReady and cordoned, unless the rejection already says it (NodeUnschedulable is the cordon)."""
    if node is None:
        return ()
    notes = []
    if node.ready != "True":
        notes.append("NotReady" if node.has_ready_condition else "no Ready condition")
    if node.unschedulable and plugin != "NodeUnschedulable":
        notes.append("cordoned")
    return tuple(notes)


def fit_preview(pod: PodView, info: PodInfo, index: FitIndex, nodes: Mapping[str, NodeView],
                scope: str | None = None) -> FitPreview:
    """The framework's verdict on every node for ``pod``, or the simulator's recorded one when the pod has it.

    For a pod that is already bound, the NodeName filter rejects every other node (as for a pod created with
    ``spec.nodeName``); the preview is computed as if the pod were unbound, so it answers "where could it go"."""
    if pod.simulator_filter:
        preview = simulator_preview(pod, nodes)
        if preview is not None:
            return replace(preview, scope=scope)
    unbound = replace(info, node_name="") if info.node_name else info
    # A bound pod counts on its own node: take it out of the snapshot for the question "would it fit there".
    snapshot = index.snapshot
    if info.node_name:
        snapshot.remove_pod(info)
    try:
        verdicts = filter_nodes(unbound, snapshot)
    finally:
        if info.node_name and not pod.terminal:
            snapshot.add_pod(info)
    out = []
    blind = blind_note(unbound, snapshot) if unbound.volumes else None
    for name in sorted(verdicts):
        verdict = verdicts[name]
        node = nodes.get(name)
        node_info = snapshot.get(name)
        labels = node_info.labels if node_info is not None else {}
        why = () if verdict.feasible else tuple(_explain(verdict, unbound, node, labels, snapshot))
        notes = _notes(node, verdict.plugin) + ((blind,) if blind else ())
        out.append(NodeFit(name, verdict.feasible, verdict.plugin, verdict.reasons, why, notes,
                           tuple((r.resource, r.requested, r.used, r.allocatable) for r in verdict.resources)))
    return FitPreview(pod.key, "observatory", OBSERVATORY_PREDICTION, tuple(out), scope,
                      volumes_checked=blind is None and has_claims(unbound))


def simulator_preview(pod: PodView, nodes: Mapping[str, NodeView]) -> FitPreview | None:
    """kube-scheduler-simulator's ``filter-result`` annotation as a preview: per node, the first plugin whose
    result is not ``passed`` rejects it. None when the annotation is not a JSON object of objects."""
    try:
        raw = json.loads(pod.simulator_filter)
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None
    out = []
    for name in sorted(raw):
        plugins = raw[name]
        if not isinstance(plugins, dict):
            continue
        failed = next(((p, r) for p, r in plugins.items() if r != _PASSED), None)
        notes = list(_notes(nodes.get(name)))
        if pod.simulator_selected == name:
            notes.append("selected by kube-scheduler-simulator")
        if failed is None:
            out.append(NodeFit(name, True, None, (), (), tuple(notes)))
        else:
            plugin, result = failed
            out.append(NodeFit(name, False, str(plugin), (text(result),), (text(result),), tuple(notes)))
    if not out:
        return None  # nothing usable (no node was an object of plugin results): the prediction instead
    return FitPreview(pod.key, "kube-scheduler-simulator", SIMULATOR_RESULT, tuple(out))


# -- warnings before a bind ---------------------------------------------------------------------------------------

def bind_warnings(pod_key: str, pod: PodView | None, node_name: str, node: NodeView | None,
                  fit: NodeFit | None, info: PodInfo | None, scope: str | None = None) -> list[str]:
    """Why binding ``pod_key`` to ``node_name`` may be refused, or accepted and then go nowhere, in plain words.

    Covers what the API server refuses (a pod deleted, already bound, being deleted or gated: ``pods/binding``
    answers 404 or 409/400) and what it accepts but the cluster will not act on (a missing, NotReady or cordoned
    node, an untolerated NoSchedule/NoExecute taint, a nodeSelector/affinity mismatch or a resource shortfall,
    which the kubelet's admission rejects). ``fit`` is the node's verdict from :func:`fit_preview`; ``info`` the
    pod's PodInfo; ``scope`` the only namespace watched, if any (then a node that seems to have room may not).
    When the API server will refuse the Binding, only those reasons are given. An empty list means nothing stands
    in the way."""
    warnings = []
    if pod is None:
        warnings.append(f"{pod_key} no longer exists: the API server will answer 404 Not Found")
    else:
        if pod.node_name:
            warnings.append(f"already assigned to {pod.node_name}: the API server will refuse")
        if pod.deleting:
            warnings.append("the pod is being deleted: the API server will refuse")
        if pod.gates:
            warnings.append(f"the pod has scheduling gates ({', '.join(pod.gates)}): the API server will refuse")
    if warnings:
        return warnings  # the API server refuses the Binding: what the node would do never comes into play
    if node is None:
        warnings.append(f"node {node_name} does not exist: the binding succeeds, then pod GC deletes the pod")
        return warnings
    if node.ready != "True":
        warnings.append(f"node {node_name} is not Ready: nothing will start the pod")
    if node.unschedulable:
        warnings.append(f"node {node_name} is cordoned: a hand-bind ignores that, the scheduler would not")
    if info is not None:
        for taint in untolerated_taints(node, info):
            then = ("the taint manager evicts the pod once it is bound" if taint.endswith(":NoExecute")
                    else "a hand-bind ignores that, the scheduler would not")
            warnings.append(f"node {node_name} has taint {taint}, which the pod does not tolerate: {then}")
    if fit is not None and fit.filter == "NodeAffinity":
        warnings.append(f"the pod's node selector/affinity does not match node {node_name} ({'; '.join(fit.why)}): "
                        "the kubelet will reject the pod")
    if fit is not None and fit.filter == "NodePorts":
        warnings.append(f"{'; '.join(fit.why)} on node {node_name}: the kubelet will reject the pod")
    if fit is not None and pod is not None and not pod.node_name:
        short = []
        for resource, requested, used, allocatable in fit.resources:
            if requested <= allocatable - used:
                continue
            if resource == "pods":
                short.append(f"pods ({used}/{allocatable} already)")
            else:
                short.append(f"{resource} (requests {amount(resource, requested)}, free "
                             f"{amount(resource, max(0, allocatable - used))})")
        if short:
            warnings.append(f"node {node_name} lacks {', '.join(short)}: the API server accepts the binding, the "
                            "kubelet will reject the pod")
        elif scope:
            warnings.append(f"only {scope}'s pods are counted on node {node_name} (observatory watches that "
                            "namespace): pods of other namespaces may leave no room, and the kubelet would reject "
                            "the pod; observatory why counts every namespace")
    return warnings


# -- the preview beside the scheduler's refusal ----------------------------------------------------------------

MODELED_REASON_KINDS = frozenset({
    "taint", "affinity", "insufficient", "too-many-pods", "unschedulable", "node-name", "ports", "topology",
    "pod-affinity", "plugins", "not-ready", "pressure"})
"""FitError reason kinds (:data:`observatory.scheduling.fiterror.KINDS`) whose plugins the framework runs; the
others (volume, DRA, unknown texts) come from filters observatory does not model."""


def compared(preview: FitPreview, refusal: FitErrorParse | None) -> FitPreview:
    """``preview`` with :attr:`FitPreview.disagreement` set from the scheduler's latest refusal of the pod, so the
    screen never claims a fit the scheduler denies without saying so:

    * reasons from filters observatory does not model: ``The scheduler also reports "2 node(s) didn't match
      PersistentVolume's node affinity", from a filter observatory does not model: trust the scheduler.``;
    * the scheduler found no node and the prediction finds one: ``The scheduler's latest refusal found no node,
      but this prediction fits pair-worker: …`` with the likely reasons (an unmodeled filter, another profile, a
      cache that lags);
    * the refusal counted another number of nodes than the cache holds.

    A simulator's recorded result, or a pod no scheduler refused, is returned as it is."""
    if refusal is None or not refusal.recognized or preview.source != "observatory":
        return replace(preview, disagreement="") if preview.disagreement else preview
    notes: list[str] = []
    modeled = MODELED_REASON_KINDS | {"volume"} if preview.volumes_checked else MODELED_REASON_KINDS
    unmodeled = [r for r in refusal.reasons if r.kind not in modeled]
    if unmodeled:
        quoted = ", ".join(f'"{r.count} {r.text}"' if r.count is not None else f'"{r.text}"' for r in unmodeled)
        notes.append(f"The scheduler also reports {quoted}, from a filter observatory does not model: trust the "
                     "scheduler's message for those nodes.")
    if refusal.available == 0 and preview.feasible:
        why = ("the scheduler runs a filter observatory does not model" if unmodeled else
               "the scheduler runs another profile, or knows of pods or node changes this cache has not seen yet, or "
               "the cluster changed since")
        notes.append(f"The scheduler's latest refusal found no node, but this prediction fits "
                     f"{_names(list(preview.feasible))}: {why}.")
    if refusal.total is not None and preview.nodes and refusal.total != len(preview.nodes):
        notes.append(f"The scheduler counted {refusal.total} nodes; this cache holds {len(preview.nodes)}.")
    disagreement = " ".join(notes)
    # the same object when nothing changed, so a pane that compares what it shows stays cheap
    return preview if disagreement == preview.disagreement else replace(preview, disagreement=disagreement)

