"""Pod requests and node allocatable in the scheduler's integer units.

Reproduces, from kube-scheduler v1.34.1:

* ``k8s.io/component-helpers resource/helpers.go`` ``PodRequests`` / ``AggregateContainerRequests``: the sum of the
  regular containers, raised to the largest init-container step (restartable "sidecar" init containers, those with
  ``restartPolicy: Always``, add to everything after them), pod-level ``spec.resources.requests`` overriding cpu,
  memory and hugepages (PodLevelResources, beta and on in 1.34), then ``spec.overhead`` added;
* ``pkg/scheduler/framework/types.go`` ``Resource.Add`` / ``SetMaxResource``: which names count (cpu, memory,
  ephemeral-storage, pods and the *scalar* ones: extended, ``hugepages-*``, ``kubernetes.io/``-prefixed,
  ``attachable-volumes-*``), and ``pkg/apis/core/v1/helper/helpers.go`` for those name tests;
* ``pkg/scheduler/util/pod_resources.go``: the non-zero defaults used for *scoring* only, 100 millicores and
  200 MiB for a container that does not state a cpu or memory request (an explicit ``"0"`` stays 0).

Units of every ``dict[str, int]`` here: ``cpu`` in millicores, ``memory`` and ``ephemeral-storage`` in bytes,
``pods`` a count, every other resource its ``Quantity.Value()`` (rounded away from zero). Sums are exact decimals,
rounded once per pod, as upstream adds ``Quantity`` values before ``MilliValue()``.

Invalid quantities count as 0 and are reported in ``errors`` as ``"<path>: invalid quantity '<raw>': <why>"``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .quantity import InvalidQuantity, milli_value, parse, value

__all__ = [
    "CPU", "DEFAULT_MEMORY_REQUEST", "DEFAULT_MILLI_CPU_REQUEST", "EPHEMERAL_STORAGE", "MEMORY", "PODS",
    "PodResources", "compute_pod_resources", "is_scalar_resource", "node_allocatable", "pod_requests",
    "to_scheduler_units",
]

CPU, MEMORY, EPHEMERAL_STORAGE, PODS = "cpu", "memory", "ephemeral-storage", "pods"
DEFAULT_MILLI_CPU_REQUEST = 100
"""``schedutil.DefaultMilliCPURequest``: what scoring assumes for a container without a cpu request (0.1 core)."""
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
"""``schedutil.DefaultMemoryRequest``: what scoring assumes for a container without a memory request (200 MiB)."""

_NATIVE = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)
_QUALIFIED_NAME = re.compile(r"^(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                             r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_ZERO = Decimal(0)


def is_scalar_resource(name: str) -> bool:
    """``IsScalarResourceName``: extended (``example.com/foo``), ``hugepages-*``, ``kubernetes.io/``-prefixed
    native, or ``attachable-volumes-*``. Plain unknown names without a ``/`` (``foo``) are not counted at all."""
    if name.startswith(("hugepages-", "attachable-volumes-")) or "kubernetes.io/" in name:
        return True
    if "/" not in name or name.startswith("requests."):
        return False
    qualified = "requests." + name
    prefix = qualified.rsplit("/", 1)[0]
    return len(prefix) <= 253 and bool(_QUALIFIED_NAME.match(qualified))


def _counted(name: str) -> bool:
    return name in _NATIVE or is_scalar_resource(name)


def _supported_pod_level(name: str) -> bool:
    return name in (CPU, MEMORY) or name.startswith("hugepages-")


@dataclass(frozen=True, slots=True)
class PodResources:
    """One pod's resource view, computed once.

    ``requests``: for filtering (``computePodResourceRequest``): only positive scalar requests are kept, cpu,
    memory and ephemeral-storage are always present (0 when not requested). ``usage``: what the pod adds to its
    node's ``Requested`` (``Resource.Add``; every counted name, zeros kept). ``nonzero_cpu`` / ``nonzero_memory``:
    the same totals with the scoring defaults for containers that state no request (``NonZeroRequested``).
    ``errors``: invalid quantities, counted as 0."""

    requests: Mapping[str, int]
    usage: Mapping[str, int]
    nonzero_cpu: int
    nonzero_memory: int
    errors: tuple[str, ...] = ()


def _add(total: dict[str, Decimal], more: Mapping[str, Decimal]) -> None:
    for name, q in more.items():
        total[name] = total.get(name, _ZERO) + q


def _max_into(total: dict[str, Decimal], more: Mapping[str, Decimal]) -> None:
    for name, q in more.items():
        if name not in total or q > total[name]:
            total[name] = q


def _resource_list(raw: Any, path: str, errors: list[str]) -> dict[str, Decimal]:
    out: dict[str, Decimal] = {}
    if not isinstance(raw, Mapping):
        return out
    for name, q in raw.items():
        parsed = parse(q)
        if isinstance(parsed, InvalidQuantity):
            errors.append(f"{path}.{name}: {parsed}")
            continue
        out[str(name)] = parsed
    return out


def _container_requests(container: Any, path: str, defaults: Mapping[str, Decimal] | None,
                        errors: list[str]) -> dict[str, Decimal]:
    resources = container.get("resources") if isinstance(container, Mapping) else None
    raw = resources.get("requests") if isinstance(resources, Mapping) else None
    reqs = _resource_list(raw, path + ".resources.requests", errors)
    if defaults:
        present = raw if isinstance(raw, Mapping) else {}
        for name, q in defaults.items():
            if name not in present:  # applyNonMissing: missing gets the default, an explicit "0" stays 0
                reqs[name] = q
    return reqs


def _aggregate(spec: Mapping[str, Any], defaults: Mapping[str, Decimal] | None,
               errors: list[str]) -> dict[str, Decimal]:
    reqs: dict[str, Decimal] = {}
    for i, c in enumerate(_list(spec.get("containers"))):
        _add(reqs, _container_requests(c, f"spec.containers[{i}]", defaults, errors))
    sidecars: dict[str, Decimal] = {}
    init_max: dict[str, Decimal] = {}
    for i, c in enumerate(_list(spec.get("initContainers"))):
        step = _container_requests(c, f"spec.initContainers[{i}]", defaults, errors)
        if isinstance(c, Mapping) and c.get("restartPolicy") == "Always":
            _add(reqs, step)
            _add(sidecars, step)
            step = dict(sidecars)
        else:
            _add(step, sidecars)
        _max_into(init_max, step)
    _max_into(reqs, init_max)
    pod_level = spec.get("resources")
    if isinstance(pod_level, Mapping):
        for name, q in _resource_list(pod_level.get("requests"), "spec.resources.requests", errors).items():
            if _supported_pod_level(name):
                reqs[name] = q
    _add(reqs, _resource_list(spec.get("overhead"), "spec.overhead", errors))
    return reqs


def _list(raw: Any) -> list:
    return raw if isinstance(raw, list) else []


def to_scheduler_units(name: str, q: Decimal) -> int:
    """One quantity in the scheduler's integer unit for ``name`` (millicores for cpu, ``Value()`` otherwise)."""
    return milli_value(q) if name == CPU else value(q)


def compute_pod_resources(pod: Mapping[str, Any]) -> PodResources:
    """The :class:`PodResources` of a Pod (JSON as served; missing keys mean "not requested")."""
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    spec = spec if isinstance(spec, Mapping) else {}
    errors: list[str] = []
    reqs = _aggregate(spec, None, errors)
    usage = {name: to_scheduler_units(name, q) for name, q in reqs.items() if _counted(name)}
    requests = {CPU: max(usage.get(CPU, 0), 0), MEMORY: max(usage.get(MEMORY, 0), 0),
                EPHEMERAL_STORAGE: max(usage.get(EPHEMERAL_STORAGE, 0), 0)}
    for name, amount in usage.items():
        if name not in _NATIVE and amount > 0:  # SetMaxResource keeps a scalar only when it exceeds 0
            requests[name] = amount
    defaults = {CPU: Decimal(DEFAULT_MILLI_CPU_REQUEST) / 1000, MEMORY: Decimal(DEFAULT_MEMORY_REQUEST)}
    nonzero = _aggregate(spec, defaults, [])
    return PodResources(requests=requests, usage=usage,
                        nonzero_cpu=milli_value(nonzero.get(CPU, _ZERO)),
                        nonzero_memory=value(nonzero.get(MEMORY, _ZERO)),
                        errors=tuple(errors))


def pod_requests(pod: Mapping[str, Any]) -> dict[str, int]:
    """The requests NodeResourcesFit filters with: ``{"cpu": millicores, "memory": bytes, "ephemeral-storage":
    bytes, "<scalar>": Value()}``. A container without a request counts 0. Example: two containers of ``250m`` /
    ``64Mi`` -> ``{"cpu": 500, "memory": 134217728, "ephemeral-storage": 0}``."""
    return dict(compute_pod_resources(pod).requests)


def node_allocatable(node: Mapping[str, Any]) -> tuple[dict[str, int], tuple[str, ...]]:
    """``status.allocatable`` of a Node in scheduler units (``pods`` included), and errors for invalid values
    (counted as 0). Names the scheduler ignores (plain names without ``/``, other than the native four) are
    dropped."""
    status = node.get("status") if isinstance(node, Mapping) else None
    raw = status.get("allocatable") if isinstance(status, Mapping) else None
    errors: list[str] = []
    parsed = _resource_list(raw, "status.allocatable", errors)
    return {n: to_scheduler_units(n, q) for n, q in parsed.items() if _counted(n)}, tuple(errors)
