"""The JSON type errors of kube-apiserver's typed decoder, for the core/v1 kinds the lab accepts as bodies.

:func:`type_error` answers the 400 BadRequest message for a body whose JSON types the typed decoder refuses
(``json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string``), including the
errors of Quantity, Time/MicroTime and IntOrString's own decoders. It reproduces apimachinery
``pkg/runtime/serializer/json`` (``SimpleMetaFactory.Interpret``), sigs.k8s.io/json's ``UnmarshalTypeError`` and
``addErrorContext``, apiserver ``pkg/endpoints/handlers/rest.go`` ``transformDecodeError`` and ``summarizeData``,
with the Go field types of k8s.io/api core/v1, apimachinery meta/v1 and coordination/v1 ``types.go``. The field
tables come from the generated models of :mod:`observatory.lab.schema`; the Quantity parser's errors come from
:mod:`observatory.scheduling.quantity` and the Time parsers' from :mod:`observatory.lab.goparse`.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from observatory.lab.goparse import _GO_SPACE, _RFC3339, _RFC3339_MICRO, _time_error
from observatory.lab.schema import _MODEL_RE, KIND_MODELS, has_model, model_fields
from observatory.scheduling.quantity import quantity_error

__all__ = ["type_error"]

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
    if _MODEL_RE.match(type_string) and has_model(type_string):
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


@functools.cache
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
        items: Any = None
        if code == _LIST and value.__class__ is list:
            items = value
        elif code == _MAP and value.__class__ is dict:
            items = value.values()
        if items is not None:
            for item in items:
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
        problem = quantity_error(raw.strip(_GO_SPACE))
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
