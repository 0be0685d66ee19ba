"""``observatory why POD [-n NS] [-o text|json]``: the diagnosis and the node-fit table of one pod, printed once.

What it reads, over one :class:`~observatory.kube.connect.Connection` (raw JSON, :mod:`observatory.kube.fetch`),
every list paged with ``limit``/``continue``:

1. ``GET /api/v1/namespaces/{ns}/pods/{name}``: any error answer is printed as kubectl prints it
   (``Error from server (NotFound): pods "web" not found``) and the command exits 1.
2. ``GET /api/v1/nodes``.
3. ``GET /api/v1/pods?fieldSelector=spec.nodeName!=``: the bound pods, so the fit counts what is on each node. On
   403 it falls back to ``/api/v1/namespaces/{ns}/pods`` with the same selector, and the fit's ``scope`` names
   that namespace (free resources are then overstated).
4. ``GET /api/v1/namespaces/{ns}/events?fieldSelector=involvedObject.name={name},involvedObject.namespace={ns}``.
5. ``GET /api/v1/events?fieldSelector=reason=FailedScheduling`` and ``...reason=Scheduled``, for the schedulers
   seen (on 403: the same in the pod's namespace, and the diagnosis says "seen in namespace ...").
6. ``GET /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler`` (never fails the command).
7. Only for a pod with PersistentVolumeClaims (or generic ephemeral volumes): its namespace's
   ``/api/v1/namespaces/{ns}/persistentvolumeclaims``, ``/api/v1/persistentvolumes`` and
   ``/apis/storage.k8s.io/v1/storageclasses``, so the fit runs the volume plugins as the scheduler does. A kind
   that is forbidden (403) or not served (404) becomes a warning, and the fit says it cannot see volumes.
8. ``GET /api/v1/events?fieldSelector=reason=Preempted`` (the namespace's on 403, as in step 5): the victims this
   pod preempted are the events whose ``related`` is the pod (same uid), each ``Preempted by pod <uid> on node
   <node>`` (kube-scheduler's ``PreemptPod``).

A 403 on steps 2-5 that no fallback cures becomes a line in ``warnings``; any other error answer exits 1 as in
step 1; a cluster that stops answering exits 2 with one paragraph. Everything read goes into a fresh
:class:`~observatory.model.state.ClusterState`, whose ``diagnosis`` and ``fit`` give the answer. With the
embedded lab (``--lab``, or no kubeconfig at all) the command first gives the lab's scheduler up to
:data:`LAB_WAIT_SECONDS` to put a PodScheduled condition on the pod.

``-o json`` prints one document (units: cpu in millicores, memory and ephemeral-storage in bytes, pods a count;
times RFC 3339 UTC)::

    {"apiVersion": "observatory/v1", "kind": "Why", "pod": "NAMESPACE/NAME",
     "diagnosis": Diagnosis.to_json(),       # state, title, headline, explanation, likely, schedulerName,
                                             # schedulersSeen, lease, gates, nodeName, nominatedNodeName,
                                             # failedScheduling {raw, available, total, reasons[], preemption, ...}
     "nodeFit": FitPreview.to_json(),        # pod, source, label, scope, disagreement, volumesChecked,
                                             # feasible[], nodes[] with node, fits,
                                             # filter, reasons[], why[], notes[],
                                             # resources[] {resource, requested, used, allocatable, free}
     "schedulerLease": {"name": "kube-system/kube-scheduler", "holder": "...", "renewTime": "..." | null,
                        "leaseDurationSeconds": 15, "problem": ""},
     "preemption": {"nominatedNodeName": "node-1" | null,      # status.nominatedNodeName
                    "victims": [{"pod": "NAMESPACE/NAME", "node": "node-1", "note": "Preempted by pod ..."}]},
     "warnings": ["..."]}                    # what could not be read (403s), else []

``-o text`` prints the same for a person, the node-fit table wrapped to the terminal (80 columns when not a TTY).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import textwrap
from collections.abc import Awaitable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO
from urllib.parse import quote

from observatory.kube.fetch import ApiError, Unreachable, get_json, list_all
from observatory.kube.lease import read_lease
from observatory.model._json import text as _text
from observatory.model.deltas import EVENTS, FORBIDDEN, NODES, PODS, Relisted, WatchState
from observatory.model.diagnosis import SCHEDULER_LEASE, Diagnosis
from observatory.model.fit import FitPreview, compared
from observatory.model.records import LeaseView
from observatory.model.state import ClusterState
from observatory.model.text import safe, safe_json
from observatory.model.victims import Victim, victims_of
from observatory.scheduling.volumes import VolumeCatalog, parse_pod_volumes
from observatory.settings import Settings

__all__ = [
    "API_VERSION", "Gathered", "Why", "gather", "json_text", "pod_name", "render_text", "run", "safe", "why_from",
]

API_VERSION = "observatory/v1"
EXIT_API_ERROR, EXIT_CONNECT = 1, 2
LAB_WAIT_SECONDS = 3.0
"""With the embedded lab, how long to give its scheduler to look at the pod (until PodScheduled appears)."""
_TYPE_PREFIXES = ("pod/", "pods/", "po/")


@dataclass
class Gathered:
    """What was read for one pod: raw JSON objects, the Lease, the one namespace each part was limited to after a
    403 (None: cluster-wide) and the warnings about parts that could not be read."""

    pod: dict[str, Any]
    nodes: list[dict[str, Any]] = field(default_factory=list)
    nodes_rv: str = ""
    pods: list[dict[str, Any]] = field(default_factory=list)
    pods_rv: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)
    lease: LeaseView | None = None
    pods_scope: str | None = None
    events_scope: str | None = None
    nodes_forbidden: str = ""
    """The 403's message when the nodes could not be listed ("" when they were)."""
    warnings: list[str] = field(default_factory=list)
    volumes: VolumeCatalog | None = None
    """The pod's claims, the PVs and the StorageClasses (None: the pod has no claims, so none were read); kinds
    that could not be read are in its ``blind`` set."""
    preempted: list[dict[str, Any]] = field(default_factory=list)
    """The ``Preempted`` events (core/v1) whose ``related`` object is this pod."""


@dataclass(frozen=True)
class Why:
    """The answer for one pod: its diagnosis, node-fit preview, kube-scheduler's Lease and warnings."""

    pod: str
    diagnosis: Diagnosis
    fit: FitPreview
    lease: LeaseView | None
    warnings: tuple[str, ...] = ()
    victims: tuple[Victim, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The ``-o json`` document (see the module docstring)."""
        return {"apiVersion": API_VERSION, "kind": "Why", "pod": self.pod, "diagnosis": self.diagnosis.to_json(),
                "nodeFit": self.fit.to_json(), "schedulerLease": self.lease.to_json() if self.lease else None,
                "preemption": {"nominatedNodeName": self.diagnosis.nominated_node or None,
                               "victims": [v.to_json() for v in self.victims]},
                "warnings": list(self.warnings)}


def _path_segment(text: str, what: str) -> str:
    """``text`` if the API path can carry it as one segment; ValueError in words otherwise (empty, ``.``, ``..``,
    or containing ``/`` or ``%``, as the API server's ``IsValidPathSegmentName`` refuses)."""
    if not text or text in (".", ".."):
        raise ValueError(f"{text!r} is not a {what}")
    for bad in ("/", "%"):
        if bad in text:
            raise ValueError(f"{text!r} is not a {what}: it may not contain {bad!r}")
    return text


def pod_name(text: str) -> str:
    """The pod name from ``NAME`` or ``pod/NAME`` (kubectl's TYPE/NAME form). Raises ValueError, in words, for a
    name the API path cannot carry (empty, ``.``, ``..``, or containing ``/`` or ``%``)."""
    for prefix in _TYPE_PREFIXES:
        if text.startswith(prefix):
            return _path_segment(text[len(prefix):], "pod name")
    return _path_segment(text, "pod name")


# -- reading --------------------------------------------------------------------------------------------------

async def _forbidden_ok(call: Awaitable[tuple[list[dict[str, Any]], str]]) -> tuple[list[dict[str, Any]], str] | str:
    """The list, or the Status message when the answer is 403 (other errors propagate)."""
    try:
        return await call
    except ApiError as exc:
        if exc.status != 403:
            raise
        return exc.message


async def gather(api: Any, namespace: str, name: str, *, page_size: int = 500) -> Gathered:
    """Read everything the module docstring lists for pod ``namespace/name`` through ``api`` (a kubernetes-asyncio
    ApiClient). Raises :class:`~observatory.kube.fetch.ApiError` (the pod's GET, or a list answered with an error
    other than 403) or :class:`~observatory.kube.fetch.Unreachable`."""
    ns = quote(namespace, safe="")
    got = Gathered(pod=await get_json(api, f"/api/v1/namespaces/{ns}/pods/{quote(name, safe='')}"))
    nodes = await _forbidden_ok(list_all(api, "/api/v1/nodes", page_size=page_size))
    if isinstance(nodes, str):
        got.nodes_forbidden = nodes
        got.warnings.append(f"Nodes cannot be listed, so no node fit is computed: {nodes}")
    else:
        got.nodes, got.nodes_rv = nodes
    bound = "spec.nodeName!="
    pods = await _forbidden_ok(list_all(api, "/api/v1/pods", field_selector=bound, page_size=page_size))
    if isinstance(pods, str):
        got.pods_scope = namespace
        pods = await _forbidden_ok(list_all(api, f"/api/v1/namespaces/{ns}/pods", field_selector=bound,
                                            page_size=page_size))
        if isinstance(pods, str):
            got.warnings.append(f"Pods cannot be listed, so nothing is counted on the nodes: {pods}")
            pods = ([], "")
    got.pods, got.pods_rv = pods
    events: dict[str, dict[str, Any]] = {}
    own = await _forbidden_ok(list_all(
        api, f"/api/v1/namespaces/{ns}/events",
        field_selector=f"involvedObject.name={name},involvedObject.namespace={namespace}", page_size=page_size))
    if isinstance(own, str):
        got.warnings.append(f"The pod's events cannot be listed: {own}")
    else:
        events.update((_key(e), e) for e in own[0])
    for reason in ("FailedScheduling", "Scheduled"):
        path = "/api/v1/events" if got.events_scope is None else f"/api/v1/namespaces/{ns}/events"
        found = await _forbidden_ok(list_all(api, path, field_selector=f"reason={reason}", page_size=page_size))
        if isinstance(found, str) and got.events_scope is None:
            got.events_scope = namespace
            found = await _forbidden_ok(list_all(api, f"/api/v1/namespaces/{ns}/events",
                                                 field_selector=f"reason={reason}", page_size=page_size))
        if isinstance(found, str):
            got.warnings.append(f"{reason} events cannot be listed, so the schedulers seen may be incomplete: {found}")
        else:
            events.update((_key(e), e) for e in found[0])
    got.events = list(events.values())
    got.lease = await read_lease(api, *SCHEDULER_LEASE)
    if any(v.claim or v.ephemeral for v in parse_pod_volumes(got.pod.get("spec") or {})):
        got.volumes = await _gather_volumes(api, ns, page_size, got.warnings)
    path = "/api/v1/events" if got.events_scope is None else f"/api/v1/namespaces/{ns}/events"
    preempted = await _forbidden_ok(list_all(api, path, field_selector="reason=Preempted", page_size=page_size))
    if isinstance(preempted, str) and got.events_scope is None:
        preempted = await _forbidden_ok(list_all(api, f"/api/v1/namespaces/{ns}/events",
                                                 field_selector="reason=Preempted", page_size=page_size))
    if isinstance(preempted, str):
        got.warnings.append(f"Preempted events cannot be listed, so victims are not shown: {preempted}")
    else:
        got.preempted = preempted[0]
    return got


_VOLUME_PATHS = (("persistentvolumeclaims", "/api/v1/namespaces/{ns}/persistentvolumeclaims"),
                 ("persistentvolumes", "/api/v1/persistentvolumes"),
                 ("storageclasses", "/apis/storage.k8s.io/v1/storageclasses"))


async def _gather_volumes(api: Any, ns: str, page_size: int, warnings: list[str]) -> VolumeCatalog:
    """Step 7: the catalog the volume plugins read; a 403 or 404 on one kind leaves it blind to that kind."""
    catalog = VolumeCatalog()
    for kind, path in _VOLUME_PATHS:
        try:
            objs, _ = await list_all(api, path.format(ns=ns), page_size=page_size)
        except ApiError as exc:
            if exc.status not in (403, 404):
                raise
            catalog.blind.add(kind)
            warnings.append(f"The {kind} cannot be listed, so the node fit cannot check the pod's volumes: "
                            f"{exc.message}")
            continue
        catalog.relist(kind, objs)
    return catalog


def _key(obj: Any) -> str:
    """``namespace/name`` as ClusterState keys it (any JSON value: a body that is not an object has no name)."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    return f"{_text(meta.get('namespace'))}/{_text(meta.get('name'))}"


def why_from(got: Gathered, *, now: datetime | None = None) -> Why:
    """Diagnose what :func:`gather` read: a fresh ClusterState fed one Relisted per kind (the pod's own GET joins
    the bound pods unless the list, read later, already has it)."""
    state = ClusterState() if now is None else ClusterState(clock=lambda: now)
    key = _key(got.pod)
    pods = {key: got.pod}
    pods.update((_key(p), p) for p in got.pods)
    if got.nodes_forbidden:  # nodes are then known only by name: a bound pod's node is not "missing"
        state.apply(WatchState(NODES, FORBIDDEN, detail=got.nodes_forbidden))
    else:
        state.apply(Relisted(NODES, tuple(got.nodes), got.nodes_rv))
    state.apply(Relisted(PODS, tuple(pods.values()), got.pods_rv))
    state.apply(Relisted(EVENTS, tuple(got.events)))
    if got.volumes is not None:
        state.set_volumes(got.volumes)
    diagnosis = state.diagnosis(key, lease=got.lease, scope=got.events_scope)
    fit = state.fit(key, scope=got.pods_scope)
    if diagnosis is None or fit is None:  # the pod was just put in; only a pod without a name could miss
        raise ValueError(f"the pod {key} has no name")
    return Why(key, diagnosis, compared(fit, diagnosis.refusal), got.lease, tuple(got.warnings),
               victims_of(got.pod, got.preempted))


async def _wait_for_scheduler(api: Any, namespace: str, name: str, seconds: float) -> None:
    """Poll the pod until it has a PodScheduled condition (a scheduler, or the API server for a gated pod, has
    spoken) or ``seconds`` pass. Errors end the wait; :func:`gather` reports them."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    path = f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(name, safe='')}"
    while loop.time() < deadline:
        try:
            pod = await get_json(api, path, timeout=seconds)
        except (ApiError, Unreachable):
            return
        conditions = (pod.get("status") or {}).get("conditions") or []
        if (pod.get("spec") or {}).get("nodeName") or any(
                isinstance(c, dict) and c.get("type") == "PodScheduled" for c in conditions):
            return
        await asyncio.sleep(0.05)


# -- text -----------------------------------------------------------------------------------------------------

def _ago(then: datetime | None, now: datetime) -> str:
    if then is None:
        return "never renewed"
    seconds = max(0, int((now - then).total_seconds()))
    return f"renewed {seconds}s ago" if seconds < 120 else f"renewed {seconds // 60}m ago"


def _lease_text(lease: LeaseView | None, now: datetime) -> str:
    if lease is None:
        return "not read"
    if lease.problem:
        return f"{lease.key} could not be read: {lease.problem}"
    if not lease.holder:
        return f"{lease.key} has no holder"
    live = "" if lease.live(now) else f", longer ago than its {lease.duration_seconds}s duration"
    return f"{lease.key} held by {lease.holder} ({_ago(lease.renewed, now)}{live})"


def json_text(why: Why) -> str:
    """The ``-o json`` document, indented, with a final newline. Non-ASCII text is written as is; control
    characters (C0, DEL, C1), bidi controls and lone surrogates (which ``json.loads`` makes of ``"\\ud800"``, and no
    UTF-8 stream can carry) are written as their ``\\uNNNN`` escapes (:func:`~observatory.model.text.safe_json`), so
    the document never drives a terminal and still reads back as the same value."""
    return safe_json(json.dumps(why.to_json(), indent=2, ensure_ascii=False) + "\n")


def render_text(why: Why, out: TextIO, *, now: datetime | None = None) -> None:
    """Write the report for a person to ``out``: the pod, its state and explanation, the scheduler's message
    verbatim, the schedulers seen and kube-scheduler's Lease, then the node-fit table, wrapped to the terminal
    width (80 columns when ``out`` is not a terminal; no colour then)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    now = now or datetime.now(UTC)
    console = Console(file=out, highlight=False, markup=False, emoji=False)
    width = max(console.width, 40)
    d = why.diagnosis

    def para(label: str, text: str, indent: int = 17) -> None:
        first = f"{label:<{indent}}" if label else " " * indent
        lines = textwrap.wrap(text, width, initial_indent=first, subsequent_indent=" " * indent,
                              break_long_words=False, break_on_hyphens=False) or [first.rstrip()]
        for line in lines:
            console.print(Text(safe(line)), overflow="fold")

    para("Pod:", why.pod)
    para("schedulerName:", d.scheduler_name)
    if d.node:
        para("Node:", d.node)
    if d.nominated_node:
        para("Nominated node:", d.nominated_node)
    for victim in why.victims:
        para("Preempted:", f"{victim.pod} on {victim.node or 'an unnamed node'} ({victim.note})")
    para("State:", d.title)
    if d.headline.lower() != d.title.lower():
        para("", d.headline)
    console.print()
    for line in d.explanation:
        stripped = line.lstrip(" ")
        para("", stripped, indent=2 + len(line) - len(stripped))
    if d.likely:
        console.print()
        para("Likely cause:", d.likely)
    if d.raw_message:
        console.print()
        if d.refusal is not None:
            who = f" from {d.refused_by}" if d.refused_by else ""
            times = f", reported {d.refusals} time{'s' if d.refusals != 1 else ''}" if d.refusals else ""
            para("", f"FailedScheduling message (verbatim{who}{times}):", indent=0)
        else:
            para("", "Message (verbatim):", indent=0)
        para("", d.raw_message, indent=2)
    console.print()
    para("Schedulers seen:", ", ".join(d.schedulers_seen) or "none")
    para("Scheduler Lease:", _lease_text(why.lease, now))
    console.print()
    fit = why.fit
    console.print(Text(safe(f"Node fit ({fit.label})")))
    if fit.scope:
        para("", f"Only pods in namespace {fit.scope} were counted on the nodes: free resources may be overstated.",
             indent=2)
    if fit.disagreement:
        para("", fit.disagreement, indent=2)
    if not fit.nodes:
        para("", "No nodes.", indent=2)
    else:
        table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 2, 0, 0), width=width, expand=False)
        table.add_column("NODE", overflow="fold", max_width=max(12, width // 3))
        table.add_column("FIT", no_wrap=True)
        table.add_column("FILTER", no_wrap=True)
        table.add_column("WHY", overflow="fold", ratio=1, min_width=20)
        for n in fit.nodes:
            why_text = "; ".join((*n.why, *n.notes))
            table.add_row(Text(safe(n.node)), Text("yes" if n.fits else "no"), Text(safe(n.filter or "-")),
                          Text(safe(why_text)))
        with console.capture() as capture:
            console.print(table)
        out.write("".join(line.rstrip() + "\n" for line in capture.get().splitlines()))
    if why.warnings:
        console.print()
        for warning in why.warnings:
            para("Warning:", warning, indent=9)


# -- the command ----------------------------------------------------------------------------------------------

async def run(settings: Settings, *, pod: str, namespace: str | None, output: str, kubeconfig: str | None,
              context: str | None, lab: bool, scenario: str, out: TextIO | None = None,
              err: TextIO | None = None) -> int:
    """The ``why`` subcommand. Connects like the screen (:func:`observatory.connection.connected`:
    ``--kubeconfig``/``--context``; the embedded lab with ``--lab`` or when there is no kubeconfig at all, its
    kubeconfig in a temporary directory), prints the report to ``out`` and returns the exit code: 0 printed, 1 the
    API server answered with an error (printed in kubectl's words) or the lab could not start, 2 bad input or no
    cluster."""
    from observatory.connection import NotConnected, connected
    from observatory.kube.connect import LAB_HINT

    out, err = out or sys.stdout, err or sys.stderr
    try:
        name = pod_name(pod)
        if namespace is not None:
            _path_segment(namespace, "namespace name")
    except ValueError as exc:
        print(f"observatory why: {exc}", file=err)
        return EXIT_CONNECT
    try:
        async with connected(settings.lab, kubeconfig=kubeconfig, context=context, namespace=namespace, lab=lab,
                             scenario=scenario, err=err, one_shot=True) as cluster:
            connection = cluster.connection
            ns = connection.namespace
            try:
                if cluster.lab is not None:
                    await _wait_for_scheduler(connection.api, ns, name, LAB_WAIT_SECONDS)
                got = await gather(connection.api, ns, name)
            except Unreachable as exc:
                print(safe(f'observatory: Lost the cluster of context "{connection.context}" while reading pod '
                           f"{ns}/{name}. {exc} {LAB_HINT}"), file=err)
                return EXIT_CONNECT
            except ApiError as exc:
                print(safe(exc.kubectl()), file=err)  # the API server's message: any text
                return EXIT_API_ERROR
    except NotConnected as exc:
        return exc.exit_code
    try:
        result = why_from(got)
    except ValueError as exc:
        print(safe(f"observatory: the API server's answer for pod {ns}/{name} cannot be used: {exc}"), file=err)
        return EXIT_API_ERROR
    try:
        if output == "json":
            out.write(json_text(result))
        else:
            render_text(result, out)
        out.flush()
    except BrokenPipeError:  # the reader went away (| head): stop quietly, exit 1 as rich does
        with contextlib.suppress(AttributeError, OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
        return EXIT_API_ERROR
    return 0

