"""Hypothesis strategies for hostile API JSON, shared by the property tests (``test_properties*.py``; no tests here).

What they generate: objects with missing or null ``metadata``/``spec``/``status``, containers
that are null or not lists, unknown fields, huge messages (at least 1 MiB), odd encodings (lone surrogates, NUL,
ANSI and OSC terminal escapes, bidi overrides, combining characters, invalid UTF-8 decoded with
``errors="surrogateescape"``, Rich markup), numbers where strings belong and strings where numbers belong, null,
absent and malformed timestamps, huge and negative counts and quantities.

Values are drawn from small pools of names so that deltas about the same object collide (an update, a delete, a
relist that leaves a ghost behind), which is where state bookkeeping goes wrong.
"""

from __future__ import annotations

import os
import re
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

SCALE = 10 if os.environ.get("HYPOTHESIS_PROFILE") == "explore" else 1
"""Ten times the examples when hunting for bugs (tests/conftest.py's profiles)."""
PROPERTY_SETTINGS = settings(max_examples=150 * SCALE, deadline=None, suppress_health_check=list(HealthCheck))
"""Bounded: each property runs in a few seconds even on a loaded 2-core machine."""
SMALL_SETTINGS = settings(max_examples=60 * SCALE, deadline=None, suppress_health_check=list(HealthCheck))
"""For the properties whose single example is costly (a whole ClusterState run, a rendered report)."""

HUGE = "x" * (1 << 20) + "\x1b[2J tail"
"""A message of just over 1 MiB that ends in a terminal escape (built once: generating it per example is slow)."""
HUGE_MARKUP = "[bold]" * 20000 + "[/]" * 30000
"""Rich markup that does not balance: a renderer that parses markup raises MarkupError on it."""

ODD_PIECES = [
    "\x00", "\x1b[31mred\x1b[0m", "\x1b]0;pwned\x07", "\x1b[2J\x1b[H", "\x9b31m", "\x07", "\x08", "\r", "\t", "\n",
    "\x7f", "\u202eevil\u202c", "\u2066iso\u2069", "\u200f", "e\u0301\u0301\u0301\u0301", "\u0301", "\ufeff",
    "\ud800", "\udfff", "\ud83d", b"\xff\xfe\x80name".decode("utf-8", "surrogateescape"),
    b"caf\xe9".decode("utf-8", "surrogateescape"), "[bold]", "[/]", "[/bold]", "[link=http://x]", "[", "]",
    "\\[", "{", "}", "%s", "{0}", "$(rm -rf /)", "日本語", "\U0001F600", "ﷺ", "𒐫", " ", "", "-", ".", "..", "/",
    "a/b", "100m", "1e999999999", "-1", "0", "NaN", "null", "true", "9" * 40,
]
"""Troublesome fragments: terminal control (C0, C1, CSI, OSC), bidi and zero-width characters, combining marks,
lone surrogates (as ``json.loads`` makes them from ``"\\ud800"`` and surrogateescape makes them from bad bytes),
Rich markup, format strings, wide characters, numbers-as-text."""

odd_text = st.one_of(
    st.sampled_from(ODD_PIECES),
    st.lists(st.sampled_from(ODD_PIECES), min_size=1, max_size=6).map("".join),
    st.text(st.characters(codec=None, exclude_categories=()), max_size=30),  # any code point, surrogates included
    st.text(max_size=20),
    st.binary(max_size=20).map(lambda b: b.decode("utf-8", "surrogateescape")),
)
"""Strings of any shape, bar the huge ones."""
texty = st.one_of(odd_text, odd_text, odd_text, odd_text, st.sampled_from([HUGE, HUGE_MARKUP]))
"""Any string, including the >= 1 MiB ones."""

numbers = st.one_of(
    st.integers(), st.integers(min_value=-(2 ** 70), max_value=2 ** 70), st.sampled_from([0, -1, 2 ** 63, -(2 ** 63)]),
    st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
)
"""Numbers where strings belong (and JSON's true/false)."""

leaf = st.one_of(st.none(), numbers, odd_text)
junk = st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                   st.dictionaries(odd_text, inner, max_size=3)), max_leaves=8)
"""Any JSON-ish value (and a few JSON cannot carry: NaN, infinities, lone surrogates)."""


def maybe(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the well-formed value, else anything at all (null, a number, a list, odd text...)."""
    return st.one_of(valid, valid, valid, junk)


def obj(required: dict[str, st.SearchStrategy[Any]] | None = None, **optional: st.SearchStrategy[Any]):
    """A dict with the ``required`` keys, each optional key present or absent, and maybe unknown fields."""
    return st.fixed_dictionaries(required or {}, optional={**optional, "unknownField": junk})


def _slots(value: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key or index) inside ``value``, depth first."""
    if isinstance(value, dict):
        for key, item in value.items():
            out.append((value, key))
            _slots(item, out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out.append((value, i))
            _slots(item, out)
    return out


MUTATIONS = ("delete", "null", "junk", "text", "huge", "number", "not-a-list", "list", "unknown")


@st.composite
def corrupted(draw: st.DrawFn, valid: st.SearchStrategy[Any], max_edits: int = 4) -> Any:
    """A well-formed value with up to ``max_edits`` random parts deleted, nulled, or replaced by something of the
    wrong type (junk, odd or huge text, a number, a dict for a list, a list for anything), or given unknown
    fields: so the builders get deep into an object before they meet the bad part."""
    value = draw(valid)
    for _ in range(draw(st.integers(0, max_edits))):
        slots = _slots(value, [])
        if not slots:
            break
        parent, key = draw(st.sampled_from(slots))
        action = draw(st.sampled_from(MUTATIONS))
        if action == "delete":
            del parent[key]
        elif action == "unknown" and isinstance(parent, dict):
            parent[draw(odd_text)] = draw(junk)
        else:
            old = parent[key]
            parent[key] = {"null": lambda: None, "junk": lambda: draw(junk), "text": lambda: draw(odd_text),
                           "huge": lambda: draw(st.sampled_from([HUGE, HUGE_MARKUP])),
                           "number": lambda: draw(numbers), "not-a-list": lambda old=old: {"0": old},
                           "list": lambda old=old: [old], "unknown": lambda: draw(junk)}[action]()
    return value


def hostile(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly a corrupted well-formed object, sometimes the object itself, sometimes anything at all."""
    return st.one_of(corrupted(valid), corrupted(valid), corrupted(valid), valid, junk)


def listof(element: st.SearchStrategy[Any], min_size: int = 0, max_size: int = 3) -> st.SearchStrategy[Any]:
    return st.lists(element, min_size=min_size, max_size=max_size)


NAMES = ["a", "b", "web-0", "n1", "pair-worker", "pair-control-plane", "", "\x1b[31mred", "x" * 300, "ns/evil",
         "[bold]", "\ud800", "e\u0301"]
NAMESPACES = ["default", "sched-lab", "", "kube-system", "\u202ens"]
name = st.one_of(st.sampled_from(NAMES), st.sampled_from(NAMES), st.sampled_from(NAMES), odd_text)
namespace = st.one_of(st.sampled_from(NAMESPACES), st.sampled_from(NAMESPACES), odd_text)

TIMESTAMPS = [
    "2026-11-29T09:28:00Z", "2026-11-29T09:28:30.123456Z", "2026-11-29T09:28:30.123456789Z", "2026-11-29T09:28:00",
    "2026-11-29T09:28:00+05:30", "0001-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00",
    "9999-12-31T23:59:59.999999Z", "2026-02-30T00:00:00Z", "not a time", "", "1732872480", "2026-11-29",
    "2026-11-29T25:61:61Z", "\x00", "2026-11-29T09:28:00Z\x1b[2J",
]
timestamp = st.one_of(st.sampled_from(TIMESTAMPS), st.sampled_from(TIMESTAMPS), st.none(), numbers, odd_text,
                      st.datetimes().map(lambda d: d.isoformat()))
"""metav1.Time as served, and everything else: null, numbers, garbage, out of range (absent: by corruption)."""

QUANTITIES = ["100m", "0.5m", "1", "2", "4", "1Gi", "8Gi", "128Mi", "1e3", "1E3", "1e999999999", "-1", "-100m",
              "0", "1Ei", "9223372036854775807", "1.5", "1_000", " 1", "", "abc", "1Qi", "+1", ".5", "5.", "0x10"]
quantity = st.one_of(st.sampled_from(QUANTITIES), st.sampled_from(QUANTITIES), numbers, odd_text, st.none())
RESOURCES = ["cpu", "memory", "pods", "ephemeral-storage", "nvidia.com/gpu", "hugepages-2Mi", "\x1b", ""]
resource_list = st.dictionaries(st.one_of(st.sampled_from(RESOURCES[:2]), st.sampled_from(RESOURCES)), quantity,
                                min_size=1, max_size=4)

LABEL_KEYS = ["disktype", "kubernetes.io/hostname", "node-role.kubernetes.io/control-plane",
              "node-role.kubernetes.io/", "kubernetes.io/role", "topology.kubernetes.io/zone"]
labels = st.dictionaries(st.one_of(st.sampled_from(LABEL_KEYS), odd_text), odd_text, max_size=3)
EFFECTS = ["NoSchedule", "NoExecute", "PreferNoSchedule", "", "Bogus"]
taint = st.fixed_dictionaries({"key": st.sampled_from(LABEL_KEYS), "effect": st.sampled_from(EFFECTS)},
                              optional={"value": odd_text, "timeAdded": timestamp})
toleration = obj(key=st.sampled_from(LABEL_KEYS), operator=st.sampled_from(["Exists", "Equal", "In"]),
                 value=odd_text, effect=st.sampled_from(EFFECTS), tolerationSeconds=numbers)
requirement = obj({"key": st.sampled_from(LABEL_KEYS),
                   "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bogus"])},
                  values=listof(odd_text))
term = obj(matchExpressions=listof(requirement, 1), matchFields=listof(requirement))
affinity = obj(nodeAffinity=obj(
    requiredDuringSchedulingIgnoredDuringExecution=obj({"nodeSelectorTerms": listof(term)}),
    preferredDuringSchedulingIgnoredDuringExecution=listof(obj(weight=numbers, preference=term))))

port = obj({"containerPort": st.integers(-5, 70000)}, hostPort=st.integers(-5, 70000),
           protocol=st.sampled_from(["TCP", "UDP", "SCTP", "tcp"]), hostIP=odd_text)
container = obj({"name": name, "resources": obj(requests=resource_list, limits=resource_list)},
                ports=listof(port), restartPolicy=st.sampled_from(["Always", "Never"]))
REASONS = ["Unschedulable", "SchedulerError", "SchedulingGated", "", "NodeLost", "Evicted"]
condition = obj({"type": st.sampled_from(["PodScheduled", "PodScheduled", "Ready", "Initialized"]),
                 "status": st.sampled_from(["True", "False", "False", "Unknown"])},
                reason=st.sampled_from(REASONS), message=texty,
                lastTransitionTime=timestamp, lastProbeTime=timestamp)
container_state = st.one_of(obj({"waiting": obj(reason=odd_text, message=odd_text)}),
                            obj({"running": obj(startedAt=timestamp)}),
                            obj({"terminated": obj(reason=odd_text, exitCode=numbers, signal=numbers)}))
container_status = obj({"name": name, "ready": st.booleans(), "state": container_state},
                       started=st.booleans(), lastState=container_state, restartCount=numbers)
PHASES = ["Pending", "Pending", "Running", "Succeeded", "Failed", "Unknown", ""]

SIM_FILTER = ['{"n1": {"NodeResourcesFit": "passed", "TaintToleration": "passed"}}',
              '{"n1": {"NodeResourcesFit": "Insufficient cpu"}, "n2": "passed"}', "{", "[]", "null", '{"n1": 5}',
              '{"\\ud800": {"\\u001b[2J": "\\u001b]0;x\\u0007"}}']
ANNOTATIONS = ["kube-scheduler-simulator.sigs.k8s.io/filter-result", "scheduler-simulator/filter-result",
               "kube-scheduler-simulator.sigs.k8s.io/selected-node"]
annotations = st.dictionaries(st.sampled_from(ANNOTATIONS), st.one_of(st.sampled_from(SIM_FILTER), name), max_size=2)


def metadata(names: st.SearchStrategy[Any] = name, namespaces: st.SearchStrategy[Any] = namespace):
    return obj({"name": names, "namespace": namespaces, "uid": st.sampled_from(["u1", "u2", "u3", ""]),
                "resourceVersion": st.integers(0, 30).map(str), "creationTimestamp": timestamp},
               deletionTimestamp=st.one_of(timestamp, st.none(), st.none()), labels=labels,
               annotations=annotations, generateName=odd_text, managedFields=junk)


def valid_pod(names: st.SearchStrategy[Any] = name, namespaces: st.SearchStrategy[Any] = namespace,
              node_names: st.SearchStrategy[Any] = name):
    return st.fixed_dictionaries({
        "apiVersion": st.just("v1"), "kind": st.just("Pod"), "metadata": metadata(names, namespaces),
        "spec": obj({"containers": listof(container, 1),
                     "schedulerName": st.sampled_from(["default-scheduler", "default-scheduler", "my-scheduler"])},
                    nodeName=node_names, priority=numbers,
                    preemptionPolicy=st.sampled_from(["Never", "PreemptLowerPriority"]),
                    schedulingGates=listof(obj({"name": name})), initContainers=listof(container),
                    overhead=resource_list, resources=obj(requests=resource_list, limits=resource_list),
                    tolerations=listof(toleration), nodeSelector=labels, affinity=affinity),
        "status": obj({"phase": st.sampled_from(PHASES), "conditions": listof(condition)},
                      reason=st.sampled_from(REASONS), message=odd_text, startTime=timestamp,
                      nominatedNodeName=node_names, containerStatuses=listof(container_status),
                      initContainerStatuses=listof(container_status))})


def pods(names: st.SearchStrategy[Any] = name, namespaces: st.SearchStrategy[Any] = namespace,
         node_names: st.SearchStrategy[Any] = name):
    """Pod JSON: any of metadata/spec/status, or any part inside them, missing, null or malformed."""
    return hostile(valid_pod(names, namespaces, node_names))


node_condition = obj({"type": st.sampled_from(["Ready", "Ready", "MemoryPressure"]),
                      "status": st.sampled_from(["True", "True", "False", "Unknown", ""])},
                     reason=odd_text, message=odd_text, lastHeartbeatTime=timestamp)


def nodes(names: st.SearchStrategy[Any] = name):
    """Node JSON: conditions, taints, allocatable and capacity of any shape."""
    return hostile(st.fixed_dictionaries({
        "apiVersion": st.just("v1"), "kind": st.just("Node"), "metadata": metadata(names, st.just("")),
        "spec": obj(unschedulable=st.booleans(), taints=listof(taint), podCIDR=odd_text),
        "status": obj({"conditions": listof(node_condition, 1), "allocatable": resource_list},
                      capacity=resource_list)}))


FIT_ERRORS = [
    "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {node-role.kubernetes.io/"
    "control-plane: }. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
    "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector..",
    "0/1 nodes are available: 1 node(s) were unschedulable.", "no nodes available to schedule pods",
    "skip schedule deleting pod: ns/name", "binding rejected: timeout", "running PreBind plugin \"x\": boom",
    "No nodes are available that match all of the following predicates:: Insufficient cpu (9), MatchNodeSelector (2).",
    "0/99999999999999999999 nodes are available: 99999999999999999999 Insufficient cpu.",
    "0/2 nodes are available: " + "1 Insufficient cpu, " * 200 + "...", "0/-1 nodes are available: -5 x.",
]
fit_message = st.one_of(st.sampled_from(FIT_ERRORS), texty,
                        st.lists(st.one_of(st.sampled_from(FIT_ERRORS), odd_text), max_size=4).map(" ".join))
"""FailedScheduling messages: real ones of several releases, spliced, and anything at all."""
EVENT_REASONS = ["FailedScheduling", "FailedScheduling", "Scheduled", "Pulled", "", "Killing"]


def events(names: st.SearchStrategy[Any] = name, involved: st.SearchStrategy[Any] = name,
           namespaces: st.SearchStrategy[Any] = namespace):
    """core/v1 Event JSON of either recorder, timestamps null, absent or malformed, counts huge or negative."""
    return hostile(st.fixed_dictionaries(
        {"apiVersion": st.just("v1"), "kind": st.just("Event"), "metadata": metadata(names, namespaces),
         "involvedObject": obj({"kind": st.sampled_from(["Pod", "Pod", "Node", ""]), "name": involved,
                                "namespace": namespaces},
                               uid=st.sampled_from(["u1", "u2", "u3", ""]), fieldPath=odd_text),
         "reason": st.sampled_from(EVENT_REASONS), "message": st.one_of(fit_message, numbers),
         "type": st.sampled_from(["Normal", "Warning"])},
        optional={"source": obj(component=st.sampled_from(["default-scheduler", "kubelet", ""])),
                  "reportingComponent": st.sampled_from(["default-scheduler", "my-scheduler", "", "\x1b[2J"]),
                  "count": numbers, "firstTimestamp": timestamp, "lastTimestamp": timestamp,
                  "eventTime": timestamp, "series": obj(count=numbers, lastObservedTime=timestamp)}))


leases = hostile(obj({"metadata": metadata(), "spec": obj(holderIdentity=odd_text, renewTime=timestamp,
                                                          leaseDurationSeconds=numbers, acquireTime=timestamp)}))
"""coordination.k8s.io/v1 Lease JSON."""

anything = st.one_of(junk, pods(), nodes(), events(), leases)
"""What a builder may be handed instead of the object it expects."""

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def unprintable(text: str) -> list[str]:
    """The characters of ``text`` that would drive or break a terminal: C0 controls other than tab and newline,
    DEL, C1 controls (ESC-less CSI ``\\x9b`` among them), bidi overrides and isolates, and lone surrogates (which
    no UTF-8 terminal can be sent)."""
    return _CONTROL.findall(text)
