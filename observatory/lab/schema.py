"""The core/v1 object schema, derived from kubernetes_asyncio's generated models, and strict field validation.

Each ``kubernetes_asyncio.client.models`` class has ``openapi_types`` (python attr -> type string such as
``'V1ObjectMeta'``, ``'list[V1Container]'``, ``'dict(str, str)'``, ``'str'``, ``'int'``, ``'bool'``,
``'datetime'``, ``'object'``) and ``attribute_map`` (python attr -> JSON name). From these this module answers:

* :func:`unknown_fields` - the JSON paths a strict decoder rejects, formatted as kube-apiserver does via
  sigs.k8s.io/json (``spec.foo``, ``spec.containers[0].imagee``, ``metadata.labelz``), in document order;
* :func:`strict_decoding_message` - the 400 BadRequest message for ``fieldValidation=Strict`` on create/update,
  from apiserver ``pkg/endpoints/handlers/rest.go`` ``transformDecodeError`` around apimachinery
  ``runtime.strictDecodingError`` (``strict decoding error: `` + errors joined by ``, ``);
* :func:`warning_texts` - the ``Warning`` header texts for ``fieldValidation=Warn``
  (apiserver ``handlers/create.go`` ``addStrictDecodingWarnings``);
* :func:`type_error` - the 400 BadRequest message for a body whose JSON types the typed decoder refuses
  (``json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string``), including the
  errors of Quantity, Time/MicroTime and IntOrString's own decoders.

The tables are built lazily on first use and cached. ``openapi.py`` reuses :func:`model_fields`,
:func:`closure` and :func:`definition_name` to publish the same schema as OpenAPI v3.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

__all__ = [
    "KIND_MODELS",
    "closure",
    "definition_name",
    "model_fields",
    "strict_decoding_message",
    "type_error",
    "unknown_fields",
    "warning_texts",
]

# Kinds the lab accepts as request bodies -> generated model class.
KIND_MODELS: dict[str, str] = {
    "Pod": "V1Pod",
    "Node": "V1Node",
    "Namespace": "V1Namespace",
    "Event": "CoreV1Event",
    "Binding": "V1Binding",
    "Lease": "V1Lease",
}

# Generated classes that live in apimachinery meta/v1 rather than k8s.io/api core/v1.
_META_V1 = frozenset({
    "V1ObjectMeta", "V1ListMeta", "V1OwnerReference", "V1ManagedFieldsEntry", "V1LabelSelector",
    "V1LabelSelectorRequirement", "V1ShardInfo", "V1DeleteOptions", "V1Preconditions", "V1Status",
    "V1StatusDetails", "V1StatusCause", "V1WatchEvent",
})

_MODEL_RE = re.compile(r"^(?:V1|CoreV1)[A-Za-z0-9]+$")


@functools.lru_cache(maxsize=1)
def _models() -> Any:
    from kubernetes_asyncio.client import models  # heavy import (~0.7 s): only on first use

    return models


def definition_name(class_name: str) -> str:
    """The upstream OpenAPI definition name of a generated class.

    ``V1Pod`` -> ``io.k8s.api.core.v1.Pod``; ``CoreV1Event`` -> ``io.k8s.api.core.v1.Event``;
    ``V1ObjectMeta`` -> ``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta``.
    """
    if class_name.startswith("CoreV1"):
        return "io.k8s.api.core.v1." + class_name[len("CoreV1"):]
    if class_name in _META_V1:
        return "io.k8s.apimachinery.pkg.apis.meta.v1." + class_name[2:]
    if class_name.startswith("V1"):
        return "io.k8s.api.core.v1." + class_name[2:]
    raise ValueError(f"not a core/v1 or meta/v1 model: {class_name}")


@functools.lru_cache(maxsize=None)
def model_fields(class_name: str) -> dict[str, tuple[str, str]]:
    """``{json_name: (type_string, python_attr)}`` for a generated model class, in the model's field order."""
    cls = getattr(_models(), class_name)
    return {cls.attribute_map[attr]: (t, attr) for attr, t in cls.openapi_types.items()}


def referenced_models(type_string: str) -> list[str]:
    """Model class names inside a type string (``'list[V1Container]'`` -> ``['V1Container']``)."""
    return [t for t in re.findall(r"[A-Za-z0-9]+", type_string) if _MODEL_RE.match(t) and hasattr(_models(), t)]


@functools.lru_cache(maxsize=None)
def closure(roots: tuple[str, ...]) -> tuple[str, ...]:
    """Every model class reachable from ``roots`` (roots first, then discovery order)."""
    seen: dict[str, None] = {}
    stack = list(roots)
    while stack:
        name = stack.pop(0)
        if name in seen:
            continue
        seen[name] = None
        for type_string, _attr in model_fields(name).values():
            stack.extend(referenced_models(type_string))
    return tuple(seen)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk_type(type_string: str, value: Any, path: str, out: list[str]) -> None:
    if type_string.startswith("list[") and type_string.endswith("]"):
        if isinstance(value, list):
            inner = type_string[5:-1]
            for i, item in enumerate(value):
                _walk_type(inner, item, f"{path}[{i}]", out)
        return
    if type_string.startswith("dict("):
        return  # map values: every core/v1 map here is map[string]string or map[string]Quantity
    if _MODEL_RE.match(type_string) and hasattr(_models(), type_string):
        _walk_model(type_string, value, path, out)
    # 'str', 'int', 'bool', 'datetime', 'object' (IntOrString, FieldsV1, RawExtension): nothing to check


def _walk_model(class_name: str, value: Any, path: str, out: list[str]) -> None:
    if not isinstance(value, dict):
        return  # a type error, not an unknown field; the strict decoder reports it differently
    fields = model_fields(class_name)
    for key, sub in value.items():
        known = fields.get(key)
        if known is None:
            out.append(_join(path, key))
        else:
            _walk_type(known[0], sub, _join(path, key), out)


def unknown_fields(kind: str, obj: dict) -> list[str]:
    """Paths of the fields of ``obj`` (a ``kind`` body) that the v1 schema does not know, in document order.

    Top-level ``kind``/``apiVersion`` are known (TypeMeta); ``object``-typed fields and map values accept
    anything; a non-object where an object is expected is not reported. Unknown subtrees are reported once, by
    their own path. ``kind`` is one of :data:`KIND_MODELS` (KeyError otherwise).
    """
    out: list[str] = []
    _walk_model(KIND_MODELS[kind], obj, "", out)
    return out


def _errors(paths: list[str]) -> list[str]:
    return [f'unknown field "{p}"' for p in paths]


def strict_decoding_message(kind: str, paths: list[str], version: str = "v1") -> str:
    """The kube-apiserver BadRequest message for a create/update body with unknown fields under Strict.

    ``Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.foo",
    unknown field "spec.bar"`` (status 400, reason BadRequest). ``kind`` is the body's kind, which for the
    endpoints the lab serves is also the kind decoded into.
    """
    return (f'{kind} in version "{version}" cannot be handled as a {kind}: strict decoding error: '
            + ", ".join(_errors(paths)))


def warning_texts(paths: list[str]) -> list[str]:
    """One warning text per unknown field for ``fieldValidation=Warn``: ``unknown field "spec.foo"``.

    The server sends each as a ``Warning: 299 - "<text>"`` header; kubectl prints ``Warning: <text>``.
    """
    return _errors(paths)


# -- JSON type errors --------------------------------------------------------------------------------------------
#
# kube-apiserver decodes a create/update body in two steps (apimachinery runtime/serializer/json):
#
# 1. ``SimpleMetaFactory.Interpret`` reads ``apiVersion``/``kind`` with the standard library (case-insensitive keys)
#    into ``struct{APIVersion string; Kind string}``; a non-string there fails before any GVK is known, and
#    ``transformDecodeError`` answers ``the object provided is unrecognized (must be of type Pod): couldn't get
#    version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string
#    (<first 30 bytes of the body> ...)``.
# 2. sigs.k8s.io/json (a case-sensitive fork of encoding/json) unmarshals into the typed struct. A JSON value of the
#    wrong type is *saved* as an ``UnmarshalTypeError`` (the first in document order wins; decoding goes on); an error
#    returned by a type's own ``UnmarshalJSON`` (Quantity, Time, MicroTime, IntOrString) *aborts* decoding and wins.
#    ``addErrorContext`` sets Struct to the innermost struct type being decoded and Field to the JSON field names
#    from the root joined by ``.`` (no slice indexes, no map keys), so ``Error()`` reads
#    ``json: cannot unmarshal <value> into Go struct field <Struct>.<path> of type <Go type>``; the handler wraps it
#    as ``Pod in version "v1" cannot be handled as a Pod: <error>`` (400 BadRequest). A type error also wins over
#    unknown fields under fieldValidation=Strict (``UnmarshalStrict`` returns it instead of the strict errors).
#
# ``<value>`` is ``string``, ``bool``, ``array``, ``object``, ``number`` or, into an integer field,
# ``number <literal>``.
# ``<Go type>`` is the dereferenced field type: ``string``, ``int32``, ``[]v1.Container``, ``map[string]string``,
# ``v1.ResourceList``, and the named string types of k8s.io/api (``v1.RestartPolicy``, ``types.UID``, ...).
# null is accepted everywhere. The generated Python models flatten those names, so the fields whose Go type is not
# derivable from the model's type string are listed below (from k8s.io/api core/v1, apimachinery meta/v1 and
# coordination/v1 types.go). Derived defaults: 'str' -> string, 'int' -> int32, 'bool' -> bool,
# 'datetime' -> metav1.Time, 'object' -> anything (FieldsV1), 'dict(str, str)' -> map[string]string.

_Q, _RL, _IOS, _MT = "resource.Quantity", "v1.ResourceList", "intstr.IntOrString", "metav1.MicroTime"
_CONTAINER = {"imagePullPolicy": "v1.PullPolicy", "terminationMessagePolicy": "v1.TerminationMessagePolicy",
              "restartPolicy": "v1.ContainerRestartPolicy"}
_GO_TYPES: dict[str, dict[str, str]] = {
    "V1ObjectMeta": {"uid": "types.UID", "generation": "int64", "deletionGracePeriodSeconds": "int64"},
    "V1OwnerReference": {"uid": "types.UID"},
    "V1ManagedFieldsEntry": {"operation": "v1.ManagedFieldsOperationType"},
    "V1LabelSelectorRequirement": {"operator": "v1.LabelSelectorOperator"},
    "V1ObjectReference": {"uid": "types.UID"},
    "V1PodSpec": {"restartPolicy": "v1.RestartPolicy", "dnsPolicy": "v1.DNSPolicy", "overhead": _RL,
                  "preemptionPolicy": "v1.PreemptionPolicy", "terminationGracePeriodSeconds": "int64",
                  "activeDeadlineSeconds": "int64"},
    "V1PodStatus": {"phase": "v1.PodPhase", "qosClass": "v1.PodQOSClass", "resize": "v1.PodResizeStatus",
                    "observedGeneration": "int64", "allocatedResources": _RL},
    "V1PodCondition": {"type": "v1.PodConditionType", "status": "v1.ConditionStatus", "observedGeneration": "int64"},
    "V1PodReadinessGate": {"conditionType": "v1.PodConditionType"},
    "V1PodOS": {"name": "v1.OSName"},
    "V1Container": _CONTAINER,
    "V1EphemeralContainer": _CONTAINER,
    "V1ContainerPort": {"protocol": "v1.Protocol"},
    "V1VolumeMount": {"mountPropagation": "v1.MountPropagationMode", "recursiveReadOnly": "v1.RecursiveReadOnlyMode"},
    "V1VolumeMountStatus": {"recursiveReadOnly": "v1.RecursiveReadOnlyMode"},
    "V1ContainerResizePolicy": {"resourceName": "v1.ResourceName", "restartPolicy": "v1.ResourceResizeRestartPolicy"},
    "V1ContainerRestartRule": {"action": "v1.ContainerRestartRuleAction"},
    "V1ContainerRestartRuleOnExitCodes": {"operator": "v1.ContainerRestartRuleOnExitCodesOperator"},
    "V1Lifecycle": {"stopSignal": "v1.Signal"},
    "V1ContainerStatus": {"stopSignal": "v1.Signal", "allocatedResources": _RL},
    "V1ResourceStatus": {"name": "v1.ResourceName"},
    "V1ResourceHealth": {"health": "v1.ResourceHealthStatus", "resourceID": "v1.ResourceID"},
    "V1ResourceRequirements": {"limits": _RL, "requests": _RL},
    "V1VolumeResourceRequirements": {"limits": _RL, "requests": _RL},
    "V1NodeAllocatableResourceClaimStatus": {"resources": "map[v1.ResourceName]resource.Quantity"},
    "V1Capabilities": {"add": "[]v1.Capability", "drop": "[]v1.Capability"},
    "V1HTTPGetAction": {"port": _IOS, "scheme": "v1.URIScheme"},
    "V1TCPSocketAction": {"port": _IOS},
    "V1SleepAction": {"seconds": "int64"},
    "V1Probe": {"terminationGracePeriodSeconds": "int64"},
    "V1Toleration": {"operator": "v1.TolerationOperator", "effect": "v1.TaintEffect", "tolerationSeconds": "int64"},
    "V1Taint": {"effect": "v1.TaintEffect"},
    "V1NodeSelectorRequirement": {"operator": "v1.NodeSelectorOperator"},
    "V1TopologySpreadConstraint": {"whenUnsatisfiable": "v1.UnsatisfiableConstraintAction",
                                   "nodeAffinityPolicy": "v1.NodeInclusionPolicy",
                                   "nodeTaintsPolicy": "v1.NodeInclusionPolicy"},
    "V1PodSecurityContext": {"runAsUser": "int64", "runAsGroup": "int64", "fsGroup": "int64",
                             "supplementalGroups": "[]int64", "fsGroupChangePolicy": "v1.PodFSGroupChangePolicy",
                             "seLinuxChangePolicy": "v1.PodSELinuxChangePolicy",
                             "supplementalGroupsPolicy": "v1.SupplementalGroupsPolicy"},
    "V1SecurityContext": {"runAsUser": "int64", "runAsGroup": "int64", "procMount": "v1.ProcMountType"},
    "V1SeccompProfile": {"type": "v1.SeccompProfileType"},
    "V1AppArmorProfile": {"type": "v1.AppArmorProfileType"},
    "V1LinuxContainerUser": {"uid": "int64", "gid": "int64", "supplementalGroups": "[]int64"},
    "V1HostPathVolumeSource": {"type": "v1.HostPathType"},
    "V1EmptyDirVolumeSource": {"medium": "v1.StorageMedium", "sizeLimit": _Q},
    "V1ResourceFieldSelector": {"divisor": _Q},
    "V1AzureDiskVolumeSource": {"cachingMode": "v1.AzureDataDiskCachingMode", "kind": "v1.AzureDataDiskKind"},
    "V1ServiceAccountTokenProjection": {"expirationSeconds": "int64"},
    "V1PersistentVolumeClaimSpec": {"accessModes": "[]v1.PersistentVolumeAccessMode",
                                    "volumeMode": "v1.PersistentVolumeMode"},
    "V1ImageVolumeSource": {"pullPolicy": "v1.PullPolicy"},
    "V1NodeStatus": {"capacity": _RL, "allocatable": _RL, "phase": "v1.NodePhase",
                     "volumesInUse": "[]v1.UniqueVolumeName"},
    "V1NodeCondition": {"type": "v1.NodeConditionType", "status": "v1.ConditionStatus"},
    "V1NodeAddress": {"type": "v1.NodeAddressType"},
    "V1AttachedVolume": {"name": "v1.UniqueVolumeName"},
    "V1ContainerImage": {"sizeBytes": "int64"},
    "V1NodeSwapStatus": {"capacity": "int64"},
    "V1ConfigMapNodeConfigSource": {"uid": "types.UID"},
    "V1NamespaceSpec": {"finalizers": "[]v1.FinalizerName"},
    "V1NamespaceStatus": {"phase": "v1.NamespacePhase"},
    "V1NamespaceCondition": {"type": "v1.NamespaceConditionType", "status": "v1.ConditionStatus"},
    "CoreV1Event": {"eventTime": _MT},
    "CoreV1EventSeries": {"lastObservedTime": _MT},
    "V1LeaseSpec": {"acquireTime": _MT, "renewTime": _MT, "strategy": "v1.CoordinatedLeaseStrategy"},
}

# Descriptor codes: (code, go_type, extra). STR/BOOL: a JSON string/bool; INT: extra = (min, max); MODEL: extra =
# (field table, Go struct name); LIST/MAP: extra = element descriptor; QTY/IOS/TIME: the type's UnmarshalJSON
# (TIME extra = layout); ANY: anything.
_STR, _INT, _BOOL, _MODEL, _LIST, _MAP, _QTY, _IOSC, _TIME, _ANY = range(10)
_RANGES = {"int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}
_RFC3339 = "2006-01-02T15:04:05Z07:00"
_RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"


def _go_struct(class_name: str) -> str:
    return class_name[len("CoreV1"):] if class_name.startswith("CoreV1") else class_name[2:]


def _descriptor(type_string: str, go: str | None, tables: dict[str, dict[str, tuple]]) -> tuple:
    """The check for one model type string, ``go`` overriding the Go type the model cannot express."""
    if go == _Q:
        return (_QTY, go, None)
    if go == _IOS:
        return (_IOSC, go, None)
    if type_string == "datetime":
        return (_TIME, "string", _RFC3339_MICRO if go == _MT else _RFC3339)
    if type_string.startswith("list[") and type_string.endswith("]"):
        elem_go = go[2:] if go else None
        elem = _descriptor(type_string[5:-1], elem_go, tables)
        return (_LIST, go or "[]" + elem[1], elem)
    if type_string.startswith("dict("):
        if go is not None and go != "map[string]string":
            return (_MAP, go, (_QTY, _Q, None))
        return (_MAP, "map[string]string", (_STR, "string", None))
    if type_string == "str":
        return (_STR, go or "string", None)
    if type_string == "int":
        go = go or "int32"
        return (_INT, go, _RANGES[go])
    if type_string == "bool":
        return (_BOOL, "bool", None)
    if _MODEL_RE.match(type_string) and hasattr(_models(), type_string):
        return (_MODEL, "v1." + _go_struct(type_string), (_field_table(type_string, tables), _go_struct(type_string)))
    return (_ANY, "", None)  # 'object': FieldsV1 (IntOrString is listed in _GO_TYPES)


def _field_table(class_name: str, tables: dict[str, dict[str, tuple]]) -> dict[str, tuple]:
    table = tables.get(class_name)
    if table is None:
        table = tables[class_name] = {}  # registered first: models refer to themselves (JSONSchemaProps-like)
        overrides = _GO_TYPES.get(class_name, {})
        for json_name, (type_string, _attr) in model_fields(class_name).items():
            table[json_name] = _descriptor(type_string, overrides.get(json_name), tables)
    return table


@functools.lru_cache(maxsize=None)
def _kind_descriptor(kind: str) -> tuple:
    return _descriptor(KIND_MODELS[kind], None, {})


class _Aborted(Exception):
    """An error returned by a type's UnmarshalJSON: decoding stops and this error is the answer."""


def _value_name(value: Any) -> str:
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "number"


def _literal(value: Any) -> str:
    """The JSON text of a decoded scalar as the client most likely wrote it (for objects/arrays only the first byte,
    all the parsers below look at)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return "{" if isinstance(value, dict) else "["
    return str(value) if isinstance(value, int) else repr(value)


def _type_error(value: str, struct: str, path: list[str], go_type: str) -> str:
    return f"json: cannot unmarshal {value} into Go struct field {struct}.{'.'.join(path)} of type {go_type}"


def _int_value(value: Any) -> str | None:
    """Why ``value`` does not fit an integer field: ``number <literal>``, another JSON type name, or None if not."""
    if isinstance(value, int) and not isinstance(value, bool):
        return None
    return "number " + _literal(value) if isinstance(value, float) else _value_name(value)


def _check(desc: tuple, value: Any, struct: str, path: list[str], saved: list[str]) -> None:
    code, go_type, extra = desc
    if code == _STR:
        if value.__class__ is not str:
            if not saved:
                saved.append(_type_error(_value_name(value), struct, path, go_type))
    elif code == _MODEL:
        if value.__class__ is dict:
            table, name = extra
            for key, sub in value.items():
                sub_desc = table.get(key)
                if sub_desc is not None and sub is not None:
                    path.append(key)
                    _check(sub_desc, sub, name, path, saved)
                    path.pop()
        elif not saved:
            saved.append(_type_error(_value_name(value), struct, path, go_type))
    elif code == _LIST or code == _MAP:
        container = list if code == _LIST else dict
        if value.__class__ is container:
            for item in (value if code == _LIST else value.values()):
                if item is not None:
                    _check(extra, item, struct, path, saved)
        elif not saved:
            saved.append(_type_error(_value_name(value), struct, path, go_type))
    elif code == _BOOL:
        if value.__class__ is not bool and not saved:
            saved.append(_type_error(_value_name(value), struct, path, go_type))
    elif code == _INT:
        wrong = _int_value(value)
        if wrong is None and not extra[0] <= value <= extra[1]:
            wrong = f"number {value}"
        if wrong is not None and not saved:
            saved.append(_type_error(wrong, struct, path, go_type))
    elif code == _QTY:
        raw = value if isinstance(value, str) else _literal(value)
        problem = _quantity_error(raw.strip(_GO_SPACE))
        if problem:
            raise _Aborted(problem)
    elif code == _IOSC:
        # IntOrString.UnmarshalJSON: a JSON string is the string; anything else is json.Unmarshal'd into an int32.
        if not isinstance(value, str):
            wrong = _int_value(value)
            if wrong is None and not -(1 << 31) <= value < (1 << 31):
                wrong = f"number {value}"
            if wrong is not None:
                raise _Aborted(_type_error(wrong, struct, path, "int32"))
    elif code == _TIME:
        # metav1.Time/MicroTime.UnmarshalJSON: json.Unmarshal into a string, then time.Parse(RFC3339[Micro]).
        if not isinstance(value, str):
            raise _Aborted(_type_error(_value_name(value), struct, path, "string"))
        problem = _time_error(value, extra)
        if problem:
            raise _Aborted(problem)


def type_error(kind: str, obj: Any, *, version: str = "v1", body: bytes | None = None) -> str | None:
    """The kube-apiserver 400 BadRequest message for a ``kind`` body whose JSON types do not decode, or None.

    ``Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field
    ObjectMeta.metadata.name of type string``; a Quantity, Time or IntOrString that its own decoder refuses gives
    that decoder's error (``quantities must match the regular expression ...``, ``parsing time ...``); a
    non-string ``apiVersion``/``kind`` gives the ``the object provided is unrecognized`` message, whose summary is
    the first 30 bytes of ``body`` (default: ``obj`` as compact JSON). Check this before unknown fields: the real
    decoder reports a type error instead of any strict-decoding error. ``kind`` is one of :data:`KIND_MODELS`.
    """
    desc = _kind_descriptor(kind)
    if obj is None:
        return None  # the body `null` decodes to an empty object
    problem = _interpret_error(obj)
    if problem is not None:
        raw = body if body is not None else json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
        return (f"the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; "
                f"json parse error: {problem} ({_summarize(raw)})")
    saved: list[str] = []
    try:
        _check(desc, obj, "", [], saved)
    except _Aborted as exc:
        error = str(exc)
    else:
        if not saved:
            return None
        error = saved[0]
    return f'{kind} in version "{version}" cannot be handled as a {kind}: {error}'


_FIND_KIND = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'


def _interpret_error(obj: Any) -> str | None:
    """The standard-library decode of ``apiVersion``/``kind`` (``SimpleMetaFactory.Interpret``); keys match
    case-insensitively there."""
    if not isinstance(obj, dict):
        return f"json: cannot unmarshal {_value_name(obj)} into Go value of type {_FIND_KIND}"
    for key, value in obj.items():
        if value is None or isinstance(value, str):
            continue
        folded = key.casefold()
        if folded in ("apiversion", "kind"):
            field = "apiVersion" if folded == "apiversion" else "kind"
            return f"json: cannot unmarshal {_value_name(value)} into Go struct field .{field} of type string"
    return None


def _summarize(data: bytes, limit: int = 30) -> str:
    """apiserver ``summarizeData``: JSON objects as text, anything else in hex, cut at ``limit`` bytes."""
    if not data:
        return "<empty>"
    cut = data[:limit]
    text = cut.decode("utf-8", "replace") if data[:1] == b"{" else cut.hex()
    return text + " ..." if len(data) > limit else text


# Go's unicode.IsSpace, which strings.TrimSpace uses (Python's str.strip() also strips \x1c-\x1f).
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000"

# -- resource.ParseQuantity (apimachinery pkg/api/resource/quantity.go), errors only --------------------------------

_QTY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_QTY_NUMERIC = "unable to parse numeric part of quantity"
_QTY_SUFFIX = "unable to parse quantity's suffix"
_DEC_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BIN_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DIGITS = frozenset("0123456789")


def _digits_end(s: str, i: int) -> int:
    while i < len(s) and s[i] in _DIGITS:
        i += 1
    return i


def _quantity_error(s: str) -> str | None:
    """The error ``ParseQuantity(s)`` returns, or None when ``s`` is a valid quantity."""
    if not s:
        return _QTY_FORMAT
    end = len(s)
    pos = 1 if s[0] in "+-" else 0
    while pos < end and s[pos] == "0":  # leading zeros; all zeros is 0
        pos += 1
    if pos >= end:
        return None
    i = _digits_end(s, pos)
    num, pos = s[pos:i] or "0", i
    denom = ""
    if pos < end and s[pos] == ".":
        i = _digits_end(s, pos + 1)
        denom, pos = s[pos + 1:i], i
    value, suffix_start = s[:pos], pos
    while pos < end and s[pos] in "eEinumkKMGTP":
        pos += 1
    if pos < end:
        if s[pos] in "+-":
            pos += 1
        if _digits_end(s, pos) < end:
            return _QTY_FORMAT
    suffix = s[suffix_start:]
    if suffix in _DEC_SUFFIXES:
        binary, exponent = False, _DEC_SUFFIXES[suffix]
    elif suffix in _BIN_SUFFIXES:
        binary, exponent = True, _BIN_SUFFIXES[suffix]
    elif len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?[0-9]+", suffix[1:]) \
            and -(1 << 63) <= int(suffix[1:]) < (1 << 63):
        binary, exponent = False, (int(suffix[1:]) + (1 << 31)) % (1 << 32) - (1 << 31)  # int32(parsed)
    else:
        return _QTY_SUFFIX
    # Only the inf.Dec slow path can fail (no digit to read); it runs when the int64 fast path cannot.
    if binary:
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1 if not denom else -1
        scale = 0
    else:
        precision, scale = 18 - len(num) - len(denom), exponent
    fast = precision >= 0 and scale - len(denom) >= -9
    if not fast and not any(c in _DIGITS for c in value):
        return _QTY_NUMERIC
    return None


# -- time.Parse(layout, value) (Go src/time/format.go) for RFC3339 and RFC3339Micro, errors only --------------------

# (prefix, element, layout text) per layout element, as time.nextStdChunk splits the two layouts.
_TIME_CHUNKS = {
    _RFC3339: (("", "year", "2006"), ("-", "month", "01"), ("-", "day", "02"), ("T", "hour", "15"),
               (":", "minute", "04"), (":", "second", "05"), ("", "tz", "Z07:00")),
    _RFC3339_MICRO: (("", "year", "2006"), ("-", "month", "01"), ("-", "day", "02"), ("T", "hour", "15"),
                     (":", "minute", "04"), (":", "second", "05"), ("", "frac", ".000000"), ("", "tz", "Z07:00")),
}


def _time_quote(b: bytes) -> str:
    """time's ``quote``: double quotes, ``\\"`` and ``\\\\`` escaped, every non-ASCII or control byte as ``\\xNN``."""
    out = ['"']
    for c in b:
        if c >= 0x80 or c < 0x20:
            out.append(f"\\x{c:02x}")
        else:
            out.append(("\\" if c in (0x22, 0x5C) else "") + chr(c))
    out.append('"')
    return "".join(out)


def _getnum(s: bytes, fixed: bool) -> tuple[int, bytes] | None:
    if not s[:1].isdigit():
        return None
    if not s[1:2].isdigit():
        return None if fixed else (s[0] - 48, s[1:])
    return (s[0] - 48) * 10 + s[1] - 48, s[2:]


def _atoi(s: bytes) -> int | None:
    neg = s[:1] == b"-"
    if s[:1] in (b"-", b"+"):
        s = s[1:]
    if s and not s.isdigit():
        return None
    number = int(s) if s else 0  # time's leadingInt reads nothing from "" without an error
    return -number if neg else number


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _time_error(text: str, layout: str) -> str | None:
    """The ``*time.ParseError`` text of ``time.Parse(layout, text)``, or None when it parses."""
    value = avalue = text.encode("utf-8")
    year, month, day = 0, -1, -1
    chunks = _TIME_CHUNKS[layout]

    def cannot(layout_elem: str, value_elem: bytes) -> str:
        return (f"parsing time {_time_quote(avalue)} as {_time_quote(layout.encode())}: cannot parse "
                f"{_time_quote(value_elem)} as {_time_quote(layout_elem.encode())}")

    def out_of_range(what: str) -> str:
        return f"parsing time {_time_quote(avalue)}: {what} out of range"

    for index, (prefix, elem, std) in enumerate(chunks):
        if prefix:
            if value[:1] != prefix.encode():
                return cannot(prefix, value)
            value = value[1:]
        hold, bad, range_err = value, False, ""
        if elem == "year":
            if len(value) < 4 or not value[:1].isdigit():
                bad = True
            else:
                parsed_year = _atoi(value[:4])
                value = value[4:]
                bad = parsed_year is None
                year = parsed_year or 0
        elif elem in ("month", "day", "hour", "minute", "second"):
            got = _getnum(value, elem != "hour")
            number = 0
            if got is None:
                bad = True
            else:
                number, value = got
            if elem == "month":
                month = number
                if not bad and not 1 <= number <= 12:
                    range_err = "month"
            elif elem == "day":
                day = number
            elif elem in ("hour", "minute") and number >= (24 if elem == "hour" else 60):
                range_err = elem
            elif elem == "second" and not bad:
                if number >= 60:
                    range_err = "second"
                elif value[:1] in (b".", b",") and value[1:2].isdigit() and chunks[index + 1][1] != "frac":
                    n = 2
                    while value[n:n + 1].isdigit():
                        n += 1
                    value = value[n:]  # a fraction the layout does not have: any number of digits
        elif elem == "frac":
            if len(value) < 7:
                bad = True
            else:
                nanos = _atoi(value[1:7]) if value[:1] in (b".", b",") else None
                bad = nanos is None
                if nanos is not None and nanos < 0:
                    range_err = "fractional second"
                value = value[7:]
        else:  # tz: Z or ±hh:mm
            if value[:1] == b"Z":
                value = value[1:]
            elif len(value) < 6 or value[3:4] != b":":
                bad = True
            else:
                sign, hh, mm, value = value[:1], value[1:3], value[4:6], value[6:]
                hours = _getnum(hh, True)
                minutes = _getnum(mm, True) if hours else None
                bad = hours is None or minutes is None or sign not in (b"+", b"-")
                if hours and hours[0] > 24:
                    range_err = "time zone offset hour"
                if minutes and minutes[0] > 60:
                    range_err = "time zone offset minute"
        if range_err:
            return out_of_range(range_err)
        if bad:
            return cannot(std, hold)
    if value:
        return f"parsing time {_time_quote(avalue)}: extra text: {_time_quote(value)}"
    if not 1 <= day <= _days_in(month, year):
        return out_of_range("day")
    return None
