"""Every write to the watched pods, whoever sent it, as the API server's audit events tell it; and which write made
each frame of a pod's ``spec.nodeName`` timeline.

:class:`WriteStore` takes :class:`~observatory.model.source.AuditUpdate` batches. The stages of one request
(``RequestReceived``, then ``ResponseComplete``) share an ``auditID`` and become one :class:`Write` that keeps the
most advanced stage seen (the complete one, with the answer) at the place the first stage arrived. Reads (``get``,
``list``, ``watch``) are ignored. A write belongs to a pod (``"namespace/name"``) when its ``objectRef`` is the pod
itself or one of its subresources (``pods/NAME/binding``, ``pods/NAME/status``, ``pods/NAME/eviction``), or when it
creates a ``bindings`` object (``POST /api/v1/namespaces/NS/bindings``), whose name is its pod's. Memory is bounded:
``per_pod`` writes per pod, ``total`` in all (the least recently written pod loses its oldest first).

:func:`join_frames` gives each :class:`~observatory.model.records.TimelineFrame` its write: ``exact`` where the
write's answer is the pod at the frame's resourceVersion, ``order`` (by object and order) otherwise, ``none`` when no
write fits. :func:`differences` names the fields in which two writes differ (the scheduler's Binding beside
kubectl's).

API (for the screen, transcripts and recordings): :class:`Write`, :class:`WriteStore`, :class:`FrameWrite`,
:func:`join_frames`, :func:`pod_of`, :func:`audit_id_of`, :func:`differences`, :func:`body_shape`,
:data:`COMPARED`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from ._json import mapping, text
from .audit import STAGES, AuditEvent
from .exchange import BindingExchange
from .records import TimelineFrame
from .source import AuditUpdate

__all__ = ["COMPARED", "MATCHED_BY_ORDER", "METHODS", "NO_WRITE_SEEN", "FrameWrite", "Join", "Write", "WriteStore",
           "audit_id_of", "body_shape", "differences", "join_frames", "pod_of"]

METHODS = {"create": "POST", "update": "PUT", "patch": "PATCH", "delete": "DELETE", "deletecollection": "DELETE"}
"""The HTTP method of each write verb (apiserver ``RequestInfo.Verb`` from the method: POST is ``create``, PUT
``update``, PATCH ``patch``, DELETE ``delete`` or, on a collection, ``deletecollection``)."""
NO_WRITE_SEEN = "no write seen"
MATCHED_BY_ORDER = "matched by order"

Join = Literal["exact", "order", "none"]
"""How a frame found its write: the write's answer carries the frame's resourceVersion (``exact``); the write is the
pod's next successful one in order (``order``, shown as "matched by order"); or none fits (``none``, "no write
seen")."""


def pod_of(event: AuditEvent) -> str:
    """The pod key (``"namespace/name"``) a write belongs to, or "" when it is not a write to one pod: a pod or its
    subresource (``objectRef`` ``resource: pods``, core group), or a create of a core ``bindings`` object, whose
    name is the pod's (``objectRef.name``, else the request body's ``metadata.name``)."""
    if not event.is_write or event.api_group or not event.namespace:
        return ""
    if event.resource == "pods":
        return f"{event.namespace}/{event.name}" if event.name else ""
    if event.resource == "bindings" and event.verb == "create":
        name = event.name or text(mapping(mapping(event.request_object).get("metadata")).get("name"))
        return f"{event.namespace}/{name}" if name else ""
    return ""


def audit_id_of(exchange: BindingExchange) -> str:
    """The ``Audit-Id`` response header of one of observatory's own Bindings (kube-apiserver sends the request's
    ``auditID`` in it), "" without one."""
    for name, value in exchange.response_headers:
        if name.lower() == "audit-id":
            return value.strip()
    return ""


@dataclass(frozen=True, slots=True)
class Write:
    """One write to a pod: its audit event (the most advanced stage seen), its pod key and its place in arrival
    order (``seq``, counting from 0 for the first write the store took)."""

    event: AuditEvent
    pod: str
    seq: int

    @property
    def ok(self) -> bool:
        """The write succeeded (a 2xx ``responseStatus.code``); False before the answer (``RequestReceived``)."""
        return 200 <= self.event.code < 300

    @property
    def at(self) -> datetime | None:
        """When the API server received the request (``requestReceivedTimestamp``, else ``stageTimestamp``)."""
        return self.event.received or self.event.stage_at

    @property
    def method(self) -> str:
        """The request's HTTP method (:data:`METHODS`), the verb in capitals for any other."""
        return METHODS.get(self.event.verb, self.event.verb.upper())

    @property
    def summary(self) -> str:
        """``POST pods/manual/binding · kubectl · 201``: method, target, writer and code (``…`` before the
        answer)."""
        code = str(self.event.code) if self.event.code else "…"
        return f"{self.method} {self.event.target} · {self.event.writer} · {code}"


def _stage_rank(event: AuditEvent) -> int:
    return STAGES.index(event.stage) if event.stage in STAGES else -1


class WriteStore:
    """The writes of every pod seen, in arrival order, with bounded memory; and the audit feed's malformed count.

    ``per_pod``: the most writes kept per pod (its oldest go first). ``total``: the most kept in all; past it the pod
    written least recently loses its oldest write.
    """

    def __init__(self, per_pod: int = 200, total: int = 20_000) -> None:
        self.per_pod = per_pod
        self.total = total
        self.malformed = 0
        """The feed's running count of input it could not read (the last :class:`AuditUpdate`'s)."""
        self.problem = ""
        """The last such problem, in one sentence."""
        self._pods: OrderedDict[str, OrderedDict[str, Write]] = OrderedDict()  # least recently written first
        self._pod_of_id: dict[str, str] = {}  # auditID -> pod key
        self._count = 0
        self._seq = 0
        self.version = 0
        """Counts the changes to the writes kept: equal versions, equal contents."""

    def __len__(self) -> int:
        return self._count

    def apply(self, update: AuditUpdate) -> set[str]:
        """Take one update; the pod keys whose writes changed."""
        self.malformed, self.problem = update.malformed, update.problem
        changed: set[str] = set()
        for event in update.events:
            if self.add(event):
                changed.add(self._pod_of_id[event.audit_id])
        return changed

    def add(self, event: AuditEvent) -> bool:
        """Take one event; True when it is a pod's write (new, or a later stage of one kept)."""
        known = self._pod_of_id.get(event.audit_id)
        if known is not None:
            writes = self._pods[known]
            old = writes[event.audit_id]
            if _stage_rank(event) < _stage_rank(old.event):
                return False  # an earlier stage arriving late: the later one is kept
            writes[event.audit_id] = Write(event, known, old.seq)
            self._pods.move_to_end(known)
            self.version += 1
            return True
        pod = pod_of(event)
        if not pod:
            return False
        writes = self._pods.setdefault(pod, OrderedDict())
        self._pods.move_to_end(pod)
        writes[event.audit_id] = Write(event, pod, self._seq)
        self._pod_of_id[event.audit_id] = pod
        self._seq += 1
        self._count += 1
        self.version += 1
        if len(writes) > self.per_pod:
            self._drop_oldest(pod)
        while self._count > self.total:
            self._drop_oldest(next(iter(self._pods)))
        return True

    def _drop_oldest(self, pod: str) -> None:
        writes = self._pods[pod]
        audit_id, _ = writes.popitem(last=False)
        del self._pod_of_id[audit_id]
        self._count -= 1
        if not writes:
            del self._pods[pod]

    def for_pod(self, pod: str) -> list[Write]:
        """The writes of ``pod``, oldest first (a copy); [] for a pod with none."""
        writes = self._pods.get(pod)
        return list(writes.values()) if writes is not None else []

    def in_scope(self, namespace: str | None) -> list[Write]:
        """The writes to every pod of ``namespace`` (None: all namespaces), in arrival order."""
        out = [w for pod, writes in self._pods.items()
               if namespace is None or pod.partition("/")[0] == namespace for w in writes.values()]
        out.sort(key=lambda w: w.seq)
        return out

    def get(self, audit_id: str) -> Write | None:
        """The write of ``audit_id`` (an event's ``auditID``, a response's ``Audit-Id``), None when not kept."""
        pod = self._pod_of_id.get(audit_id)
        return self._pods[pod][audit_id] if pod is not None else None

    def sent_binding(self, pod: str | None = None) -> bool:
        """Whether anyone sent a Binding (of ``pod``, or of any pod kept)."""
        writes = self.for_pod(pod) if pod is not None else (w for ws in self._pods.values() for w in ws.values())
        return any(w.event.is_binding for w in writes)


@dataclass(frozen=True, slots=True)
class FrameWrite:
    """A timeline frame and the write that made it (None when ``how`` is ``none``)."""

    frame: TimelineFrame
    write: Write | None
    how: Join

    @property
    def label(self) -> str:
        """What the timeline says of the frame's write: ``← POST pods/manual/binding · kubectl · 201``, the same
        followed by ``(matched by order)``, or ``no write seen``."""
        if self.write is None:
            return NO_WRITE_SEEN
        label = f"← {self.write.summary}"
        return label if self.how == "exact" else f"{label} ({MATCHED_BY_ORDER})"


def _fits(frame: TimelineFrame, event: AuditEvent) -> bool:
    """Whether a write of this verb can make a frame of this change: a watch ``DELETED`` only comes from a delete,
    an ``ADDED`` only from a create of the pod itself; a ``MODIFIED`` from anything but that create (a graceful
    delete sets ``deletionTimestamp``, a MODIFIED); a ``RELISTED`` from any."""
    creates_pod = event.verb == "create" and event.resource == "pods" and not event.subresource
    if frame.change == "DELETED":
        return event.verb == "delete"
    if frame.change == "ADDED":
        return creates_pod
    if frame.change == "MODIFIED":
        return not creates_pod
    return True


def join_frames(frames: Sequence[TimelineFrame], writes: Sequence[Write]) -> list[FrameWrite]:
    """Each frame of one pod (oldest first) with its write among ``writes`` (that pod's, oldest first).

    Exact first: a successful write whose answer is the pod at the frame's resourceVersion
    (:attr:`AuditEvent.resource_version`). Then by object and order, from the newest frame back: among the
    successful writes after the previous exactly joined frame's write and before the next frame's write, not joined
    already, that fit the frame's change, the last one the API server received before the frame arrived (a write
    that made no frame of its own, such as a condition-only status patch, comes earlier and is passed over; a frame
    listed when the screen started gets the last write before it, the one that left the pod as listed); when a time
    is unknown, the last of them. None fits: ``none``.
    """
    candidates = [w for w in writes if w.ok]
    position = {w.event.audit_id: i for i, w in enumerate(candidates)}
    by_rv: dict[str, Write] = {}
    for candidate in candidates:
        rv = candidate.event.resource_version
        if rv:
            by_rv.setdefault(rv, candidate)
    joined: list[Write | None] = [by_rv.get(f.resource_version) if f.resource_version else None for f in frames]
    exact = [w is not None for w in joined]
    used = {w.event.audit_id for w in joined if w is not None}
    floors: list[int] = []  # per frame: position of the write of the last exactly joined frame before it
    floor = -1
    for found in joined:
        floors.append(floor)
        if found is not None:
            floor = max(floor, position[found.event.audit_id])
    ceiling = len(candidates)  # position of the write of the frame after this one
    for i in range(len(frames) - 1, -1, -1):
        hit = joined[i]
        if hit is not None:
            ceiling = min(ceiling, position[hit.event.audit_id])
            continue
        window = [w for w in candidates[floors[i] + 1:ceiling] if w.event.audit_id not in used
                  and _fits(frames[i], w.event)]
        chosen = _by_time(frames[i], window)
        if chosen is not None:
            joined[i] = chosen
            used.add(chosen.event.audit_id)
            ceiling = position[chosen.event.audit_id]
    return [FrameWrite(f, w, "none" if w is None else "exact" if exact[i] else "order")
            for i, (f, w) in enumerate(zip(frames, joined, strict=True))]


def _by_time(frame: TimelineFrame, window: list[Write]) -> Write | None:
    """The last write of ``window`` received before ``frame`` arrived; the last of all when a time is unknown."""
    if any(w.at is None for w in window):
        return window[-1] if window else None
    before = [w for w in window if w.at is not None and w.at <= frame.at]
    return before[-1] if before else None


COMPARED = ("verb", "request_uri", "user", "groups", "user_agent", "source_ips", "code", "body")
"""The fields :func:`differences` compares, in the order a side-by-side view shows them."""


def body_shape(value: Any, prefix: str = "") -> tuple[str, ...]:
    """The key paths of a JSON value, sorted: ``("apiVersion", "kind", "metadata.name", "target.name", …)``; two
    Bindings of different pods to different nodes have the same shape."""
    if isinstance(value, dict):
        paths: list[str] = []
        for key in value:
            path = f"{prefix}.{key}" if prefix else str(key)
            paths.extend(body_shape(value[key], path) or (path,))
        return tuple(sorted(paths))
    if isinstance(value, list):
        return tuple(sorted({p for item in value for p in body_shape(item, f"{prefix}[]")}))
    return ()


def _field(event: AuditEvent, name: str) -> object:
    if name == "request_uri":  # the same POST: the path with the pod's namespace and name left out
        ref = "/".join(p for p in (event.resource, event.subresource) if p)
        return (event.request_uri.split("?", 1)[0].rsplit("/namespaces/", 1)[0], ref)
    if name == "body":
        return body_shape(event.request_object)
    return getattr(event, name)


def differences(a: AuditEvent, b: AuditEvent, fields: Iterable[str] = COMPARED) -> frozenset[str]:
    """The names among ``fields`` (:data:`COMPARED`) in which ``a`` and ``b`` differ. ``request_uri`` compares the
    API path and resource/subresource, not the object's namespace and name; ``body`` the request body's shape
    (:func:`body_shape`), not its values."""
    return frozenset(name for name in fields if _field(a, name) != _field(b, name))
