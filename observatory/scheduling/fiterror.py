"""Read a FailedScheduling message (or PodScheduled=False condition message) of any kube-scheduler release.

The reverse of :mod:`.messages`. What it reads (reference §4.3, §4.3a):

* ``pkg/scheduler/framework/types.go`` ``FitError.Error``: ``0/<N> nodes are available:`` then either
  `` <PreFilterMsg>.`` (no count) or `` <histogram>.``, the histogram being ``"<count> <reason>"`` strings sorted
  as strings and joined with ``", "``; then `` <PostFilterMsg>``. Releases before 1.34 appended it as
  `` <PostFilterMsg>.``, hence the ``..`` ending many real messages.
* The PostFilter message: the reasons of the PostFilter plugins joined with ``", "``, e.g. DynamicResources'
  ``no new claims to deallocate`` and DefaultPreemption's ``preemption: <message>``
  (``pkg/scheduler/framework/preemption/preemption.go``), whose body is itself a FitError
  (``Preemption is not helpful for scheduling``, ``No preemption victims found for incoming pod``) or a sentence
  (``not eligible due to preemptionPolicy=Never.``).
* ``pkg/scheduler/schedule_one.go``: ``truncateMessage`` cuts events at ``NoteLengthLimit`` (1024 bytes) to
  ``message[:1020] + " ..."``; ``no nodes available to schedule pods``; ``skip schedule deleting pod: ns/name``;
  ``binding rejected: …`` and plugin errors (``running … plugin …``).
* Older wordings: ``node(s) had taints that the pod didn't tolerate`` (≤1.17), ``node(s) had taint {k: v}, that
  the pod didn't tolerate`` (1.18–1.2x), ``node(s) had untolerated taint {k: v}`` (≤1.34.1),
  ``node(s) had untolerated taint(s)`` (≥1.34.2), ``node(s) didn't match node selector`` / ``MatchNodeSelector``,
  the pre-1.9 ``No nodes are available that match all of the (following) predicates:: Insufficient cpu (9), …``
  and ``fit failure summary on nodes : … (2)``, and other schedulers' ``0/N nodes are unavailable: …``.

Whitespace runs are read as one space (kubectl wraps long lines); reason texts are otherwise kept as printed.
``parse_fit_error`` never raises: on an internal error it returns an unrecognized parse that still holds ``raw``.

Reason kinds: ``taint`` (detail ``key``/``value`` when printed), ``affinity`` (node affinity / nodeSelector),
``insufficient`` (detail ``resource``), ``too-many-pods``, ``unschedulable``, ``node-name``, ``ports``, ``volume``,
``topology``, ``pod-affinity``, ``not-ready``, ``pressure`` (detail ``condition``, pre-taint node conditions),
``plugins`` (PreFilter result: detail ``plugins``), ``dra``, and in preemption bodies ``not-helpful``,
``no-victims``, ``not-eligible``, ``placement``; anything else is ``unknown``, text verbatim.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace

__all__ = [
    "KINDS", "SPECIALS", "FitErrorParse", "PreemptionParse", "Reason", "parse_fit_error", "summary",
]

KINDS = (
    "taint", "affinity", "insufficient", "too-many-pods", "unschedulable", "node-name", "ports", "volume",
    "topology", "pod-affinity", "not-ready", "pressure", "plugins", "dra", "not-helpful", "no-victims",
    "not-eligible", "placement", "unknown",
)
#: ``special`` values. ``prefilter``: every reason is a PreFilter verdict (no count, or ``didn't satisfy plugin``).
SPECIALS = ("no-nodes", "deleting", "binding-rejected", "unbound-pvcs", "plugin-error", "prefilter")


@dataclass(frozen=True)
class Reason:
    """One histogram entry: ``count`` nodes (None when the release printed no count) rejected for ``text``."""

    count: int | None
    text: str
    kind: str = "unknown"
    detail: dict = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class PreemptionParse:
    """The body after ``preemption: ``: ``raw`` as printed (whitespace runs as one space), the FitError ``total``
    and its reasons, or one count-less reason for a sentence such as ``not eligible due to
    preemptionPolicy=Never``."""

    raw: str
    total: int | None = None
    reasons: tuple[Reason, ...] = ()


@dataclass(frozen=True)
class FitErrorParse:
    """Everything read from one message. ``raw`` is always the input, verbatim."""

    raw: str
    recognized: bool = False
    available: int | None = None
    total: int | None = None
    reasons: tuple[Reason, ...] = ()
    preemption: PreemptionParse | None = None
    extra_postfilter: tuple[str, ...] = ()
    truncated: bool = False
    counts_exceed_total: bool = False
    special: str | None = None
    special_detail: str | None = None


_WS = re.compile(r"\s+")
_NUM = r"[0-9]{1,18}"  # int() of 4300+ digits raises; counts that long are not counts
_HEADER = re.compile(rf"(?<![0-9])(?P<a>{_NUM})/(?P<n>{_NUM}) nodes? (?:are|is) (?:un)?available:?", re.I)
_LEGACY = re.compile(r"No nodes are available that match all of the (?:following )?predicates:*|"
                     r"fit failure summary on nodes ?:", re.I)
_PREEMPTION = re.compile(r"(?:^|(?<=[ .,]))preemption:(?: |$)", re.I)
_COUNTED = re.compile(rf"({_NUM}) (.*)$", re.S)
_STARTS_COUNTED = re.compile(r"[0-9]+(?: |$)")
_LEGACY_ENTRY = re.compile(rf"(.*?) ?\(({_NUM})\)$", re.S)
_BRACES = re.compile(r"\{([^{}:]*):([^{}]*)\}")
_BRACKETS = re.compile(r"\[([^\]]*)\]")
_PLUGIN = re.compile(r"satisfy plugins?(?:\(s\))? (.*)", re.I | re.S)
_PRESSURE = re.compile(r"(memory|disk|pid) ?pressure|out ?of ?disk", re.I)
_SPECIAL_FORMS = (
    ("no-nodes", re.compile(r"no nodes available to schedule pods\b", re.I)),
    ("deleting", re.compile(r"skip schedule deleting pod: ?(?P<d>.*)", re.I | re.S)),
    ("binding-rejected", re.compile(r"binding rejected: ?(?P<d>.*)", re.I | re.S)),
    ("unbound-pvcs", re.compile(r"pod has unbound immediate PersistentVolumeClaims\b", re.I)),
    ("plugin-error", re.compile(r"(?P<d>(?:error while )?running\b.*\bplugin\b.*)", re.I | re.S)),
)
_OPEN, _CLOSE = "{[(", "}])"


def parse_fit_error(message: str) -> FitErrorParse:
    """Parse one message; see the module docstring. Pure, and never raises."""
    if isinstance(message, (bytes, bytearray)):
        message = bytes(message).decode("utf-8", "replace")
    raw = message if isinstance(message, str) else ("" if message is None else str(message))
    try:
        parsed = _parse(raw)
        return parsed if parsed.raw is raw else replace(parsed, raw=raw)  # cached: an equal string parsed before
    except Exception:
        return FitErrorParse(raw=raw)


@functools.lru_cache(maxsize=4096)
def _parse(raw: str) -> FitErrorParse:
    """Cached: under churn the same message is read again for every repeat of a pod's FailedScheduling event, and
    many pods share one message (``0/1000 nodes are available: ...``); the result is immutable."""
    text = _WS.sub(" ", raw).rstrip()
    truncated = text.endswith(" ...")  # truncateMessage's suffix; older ".." endings are not truncation
    text = (text[:-4] if truncated else text).strip()
    for name, pattern in _SPECIAL_FORMS:
        m = pattern.match(text)
        if m:
            detail = m.groupdict().get("d")
            return FitErrorParse(raw=raw, recognized=True, truncated=truncated, special=name,
                                 special_detail=detail.strip() if detail is not None else None,
                                 available=0 if name == "no-nodes" else None, total=0 if name == "no-nodes" else None)
    marker = _PREEMPTION.search(text)
    main = text[:marker.start()] if marker else text
    preemption, pre_extras = _parse_preemption(text[marker.end():]) if marker else (None, ())
    head = _HEADER.search(main)
    if head is None:
        legacy = _LEGACY.search(main)
        if legacy is None:
            return FitErrorParse(raw=raw, truncated=truncated, preemption=preemption, extra_postfilter=pre_extras)
        reasons = tuple(_legacy_reason(p) for p in _split(main[legacy.end():].strip().rstrip(".")) if p.strip())
        return FitErrorParse(raw=raw, recognized=True, reasons=reasons, truncated=truncated)
    total = int(head["n"])
    reasons, rest = _histogram(main[head.end():])
    counted = sum(r.count or 0 for r in reasons)
    special = "prefilter" if reasons and all(r.count is None or r.kind == "plugins" for r in reasons) else None
    return FitErrorParse(
        raw=raw, recognized=True, available=int(head["a"]), total=total, reasons=reasons, preemption=preemption,
        extra_postfilter=_extras(rest) + pre_extras, truncated=truncated, counts_exceed_total=counted > total,
        special=special,
    )


def _parse_preemption(body: str) -> tuple[PreemptionParse, tuple[str, ...]]:
    """``body`` follows ``preemption: ``. Returns the parse and any PostFilter text joined after it."""
    head = _HEADER.match(body.lstrip())
    if head is None:
        sentence = body.strip().rstrip(".").strip()
        return PreemptionParse(raw=body, reasons=(_reason(sentence),) if sentence else ()), ()
    reasons, rest = _histogram(body.lstrip()[head.end():])
    return PreemptionParse(raw=body, total=int(head["n"]), reasons=reasons), _extras(rest)


def _histogram(text: str) -> tuple[tuple[Reason, ...], str]:
    """Reasons up to the histogram's closing period, and the text after it."""
    end = _terminator(text)
    body, rest = (text[:end], text[end + 1:]) if end >= 0 else (text, "")
    merged: list[str] = []
    for piece in _split(body):
        piece = piece.strip()
        if not piece:
            continue
        if merged and not _STARTS_COUNTED.match(piece):
            merged[-1] += ", " + piece  # "had taint {k: v}, that the pod didn't tolerate" (1.18-1.2x)
        else:
            merged.append(piece)
    return tuple(_reason(p) for p in merged), rest


def _terminator(text: str) -> int:
    """Index of the first period at bracket depth 0 followed by the end, a space, a comma or a period."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        elif ch == "." and depth == 0 and text[i + 1:i + 2] in ("", " ", ",", "."):
            return i
    return -1


def _split(text: str) -> list[str]:
    """Split on ``", "`` outside ``{}``, ``[]`` and ``()``."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0 and text[i + 1:i + 2] == " ":
            parts.append(text[start:i])
            start = i = i + 2
            continue
        i += 1
    parts.append(text[start:])
    return parts


def _extras(rest: str) -> tuple[str, ...]:
    return tuple(p.strip(" .,") for p in _split(rest.strip(" .,")) if p.strip(" .,"))


def _reason(piece: str) -> Reason:
    piece = piece.strip().rstrip(",").strip()
    m = _COUNTED.match(piece)
    count, text = (int(m[1]), m[2].strip()) if m and m[2].strip() else (None, piece)
    kind, detail = _classify(text)
    return Reason(count, text, kind, detail)


def _legacy_reason(piece: str) -> Reason:
    m = _LEGACY_ENTRY.match(piece.strip())
    count, text = (int(m[2]), m[1].strip()) if m else (None, piece.strip())
    kind, detail = _classify(text)
    return Reason(count, text, kind, detail)


def _classify(text: str) -> tuple[str, dict]:
    t = text.lower()
    if "preemption is not helpful" in t:
        return "not-helpful", {}
    if "no preemption victims" in t or "no victims found" in t:
        return "no-victims", {}
    if t.startswith("not eligible"):
        return "not-eligible", {}
    if "potential placement" in t:
        return "placement", {}
    if "satisfy plugin" in t:
        m = _BRACKETS.search(text) or _PLUGIN.search(text)
        inner = m[1] if m else ""
        names = tuple(n for n in re.split(r"[\s,]+", inner) if n and n != "simultaneously")
        return "plugins", {"plugins": names}
    if "taint" in t:
        m = _BRACES.search(text)
        return "taint", ({"key": m[1].strip(), "value": m[2].strip()} if m else {})
    if t.startswith("insufficient "):
        resource = text[len("insufficient "):].strip()
        return ("too-many-pods", {}) if resource == "pods" else ("insufficient", {"resource": resource})
    if "too many pods" in t:
        return "too-many-pods", {}
    if any(w in t for w in ("volume", "persistentvolumeclaim", "pvc", "diskconflict", "free storage")):
        return "volume", {}
    if "topology spread" in t or "topologyspread" in t or "evenpodsspread" in t:
        return "topology", {}
    if re.search(r"pods?'? (?:anti-)?affinity|interpodaffinity", t):
        return "pod-affinity", {}
    if any(w in t for w in ("node affinity", "node selector", "nodeselector", "affinity/selector")):
        return "affinity", {}
    if "requested node name" in t or "requested hostname" in t or t in ("hostname", "podfitshost"):
        return "node-name", {}
    if "free ports" in t or "hostports" in t or "host port" in t:
        return "ports", {}
    if "unschedulable" in t:
        return "unschedulable", {}
    if "not ready" in t or "notready" in t or "checknodecondition" in t:
        return "not-ready", {}
    m = _PRESSURE.search(text)
    if m:
        return "pressure", {"condition": f"{m[1].lower()} pressure" if m[1] else "out of disk"}
    if "claim" in t or "dynamic resource" in t:
        return "dra", {}
    return "unknown", {}


def _phrase(r: Reason) -> str:
    """A few plain words for one reason (see :func:`summary`)."""
    t = r.text.lower()
    if r.kind == "taint":
        key, value = r.detail.get("key"), r.detail.get("value")
        return "untolerated taint" + (f" {key}" if key else "") + (f"={value}" if key and value else "")
    if r.kind == "insufficient":
        return f"too little {r.detail.get('resource', '?')}"
    if r.kind == "volume":
        return "unbound PVC" if "unbound" in t else "volume node affinity conflict" if "node affinity" in t \
            else "volume conflict"
    if r.kind == "pod-affinity":
        return "pod affinity/anti-affinity" if "affinity/anti" in t else \
            "pod anti-affinity" if "anti" in t else "pod affinity"
    if r.kind == "pressure":
        return r.detail.get("condition", "node pressure")
    if r.kind == "plugins":
        return "excluded by " + ("/".join(r.detail.get("plugins", ())) or "PreFilter")
    fixed = {
        "affinity": "node selector/affinity mismatch", "too-many-pods": "too many pods", "unschedulable": "cordoned",
        "node-name": "not the requested node", "ports": "host port in use", "topology": "topology spread",
        "not-ready": "not ready", "dra": "device claims", "not-helpful": "preemption would not help",
        "no-victims": "no preemption victims", "not-eligible": "may not preempt", "placement": "preemption found room",
    }
    return fixed.get(r.kind) or _shorten(r.text, 40)


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1].rstrip() + "…"


def summary(p: FitErrorParse, max_items: int = 4) -> str:
    """One line for a pending-pods pane.

    Format: ``<available>/<total> nodes: <count> <phrase>, …`` (``nodes: …`` when no total was printed), items
    ordered by count, largest first (ties keep the message's order), at most ``max_items`` then ``+K more``; a
    trailing `` …`` when the message was truncated. The preemption part is left out. Whole-message forms get a
    fixed sentence (``no nodes in the cluster``, ``pod is being deleted``, …); an unrecognized message is shown
    shortened to 80 characters. Example: ``0/2 nodes: 1 too little cpu, 1 untolerated taint
    node-role.kubernetes.io/control-plane``.
    """
    fixed = {"no-nodes": "no nodes in the cluster", "deleting": "pod is being deleted",
             "unbound-pvcs": "waiting for PersistentVolumeClaims to bind"}
    if p.special in fixed:
        return fixed[p.special]
    if p.special in ("binding-rejected", "plugin-error"):
        lead = "bind rejected" if p.special == "binding-rejected" else "scheduler plugin error"
        return _shorten(f"{lead}: {p.special_detail or ''}".rstrip(": "), 100)
    if not p.recognized:
        return _shorten(_WS.sub(" ", p.raw).strip(), 80)
    ordered = sorted(p.reasons, key=lambda r: -(r.count or 0))
    items = [(f"{r.count} " if r.count is not None else "") + _phrase(r) for r in ordered[:max_items]]
    if len(ordered) > max_items:
        items.append(f"+{len(ordered) - max_items} more")
    head = f"{p.available}/{p.total} nodes" if p.total is not None else "nodes"
    line = f"{head}: {', '.join(items)}" if items else head
    return line + (" …" if p.truncated else "")
