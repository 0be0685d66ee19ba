"""Decoding the few Kubernetes protobuf request bodies kubectl sends to the lab.

kubectl's typed clients (``kubectl create namespace``, for one) POST ``application/vnd.kubernetes.protobuf``. The
body is apimachinery's envelope (``pkg/runtime/serializer/protobuf/protobuf.go``): the 4-byte magic ``k8s\\x00``,
then a ``runtime.Unknown`` message {1: typeMeta {1: apiVersion, 2: kind}, 2: raw, 3: contentEncoding,
4: contentType} whose ``raw`` is the object's own message. Field numbers come from k8s.io/api ``core/v1`` and
apimachinery ``meta/v1`` ``generated.proto``.

Only kinds whose messages are listed in :data:`MESSAGES` decode; anything else raises :class:`ProtobufError`, and the
API answers 415 as for any unsupported body.
"""

from __future__ import annotations

import base64
from typing import Any

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


class ProtobufError(ValueError):
    """The body is not a protobuf envelope of a kind this decoder knows."""


# message name -> {field number: (json name, type)}; type is "string", "int", "bool", a message name,
# "map" (map<string,string>), "bytesmap" (map<string,bytes>, base64 in JSON), or "[...]" for repeated.
MESSAGES: dict[str, dict[int, tuple[str, str]]] = {
    "ObjectMeta": {
        1: ("name", "string"), 2: ("generateName", "string"), 3: ("namespace", "string"),
        11: ("labels", "map"), 12: ("annotations", "map"), 14: ("finalizers", "[string]"),
    },
    "Namespace": {1: ("metadata", "ObjectMeta"), 2: ("spec", "NamespaceSpec")},
    "NamespaceSpec": {1: ("finalizers", "[string]")},
    # k8s.io/api authorization/v1 generated.proto: what ``kubectl auth can-i`` POSTs (lab/rbac.py answers it)
    "SelfSubjectAccessReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SelfSubjectAccessReviewSpec")},
    "SelfSubjectAccessReviewSpec": {1: ("resourceAttributes", "ResourceAttributes"),
                                    2: ("nonResourceAttributes", "NonResourceAttributes")},
    "ResourceAttributes": {1: ("namespace", "string"), 2: ("verb", "string"), 3: ("group", "string"),
                           4: ("version", "string"), 5: ("resource", "string"), 6: ("subresource", "string"),
                           7: ("name", "string")},
    "NonResourceAttributes": {1: ("path", "string"), 2: ("verb", "string")},
    # k8s.io/api core/v1 generated.proto: what ``kubectl create configmap|secret|serviceaccount`` POST
    "ConfigMap": {1: ("metadata", "ObjectMeta"), 2: ("data", "map"), 3: ("binaryData", "bytesmap"),
                  4: ("immutable", "bool")},
    "Secret": {1: ("metadata", "ObjectMeta"), 2: ("data", "bytesmap"), 3: ("type", "string"),
               4: ("stringData", "map"), 5: ("immutable", "bool")},
    "ServiceAccount": {1: ("metadata", "ObjectMeta"), 2: ("secrets", "[ObjectReference]"),
                       3: ("imagePullSecrets", "[LocalObjectReference]"), 4: ("automountServiceAccountToken", "bool")},
    "ObjectReference": {1: ("kind", "string"), 2: ("namespace", "string"), 3: ("name", "string"),
                        4: ("uid", "string"), 5: ("apiVersion", "string"), 6: ("resourceVersion", "string"),
                        7: ("fieldPath", "string")},
    "LocalObjectReference": {1: ("name", "string")},
    # k8s.io/api scheduling/v1 generated.proto: what ``kubectl create priorityclass`` POSTs
    "PriorityClass": {1: ("metadata", "ObjectMeta"), 2: ("value", "int32"), 3: ("globalDefault", "bool"),
                      4: ("description", "string"), 5: ("preemptionPolicy", "string")},
}


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ProtobufError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(buf: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, value) pairs: ints for varints, bytes for length-delimited; fixed widths are skipped."""
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            out.append((number, value))
        elif wire == 2:
            length, pos = _varint(buf, pos)
            if pos + length > len(buf):
                raise ProtobufError("truncated field")
            out.append((number, buf[pos:pos + length]))
            pos += length
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
    return out


def _string(value: int | bytes) -> str:
    """A length-delimited field as text; a varint where a string belongs is a malformed body."""
    if isinstance(value, int):
        raise TypeError("a number where a string belongs")
    return value.decode()


def _message(buf: bytes, name: str) -> dict[str, Any]:
    schema = MESSAGES[name]
    obj: dict[str, Any] = {}
    for number, value in _fields(buf):
        if number not in schema:
            continue
        key, typ = schema[number]
        if typ in ("map", "bytesmap"):
            entry = dict(_fields(value))  # type: ignore[arg-type]
            raw = entry.get(2, b"")
            if typ == "map":
                text = _string(raw)
            elif isinstance(raw, bytes):
                text = base64.b64encode(raw).decode()
            else:
                raise TypeError("a number where bytes belong")
            obj.setdefault(key, {})[_string(entry.get(1, b""))] = text
        elif typ.startswith("[") and typ[1:-1] in MESSAGES:
            obj.setdefault(key, []).append(_message(value, typ[1:-1]))  # type: ignore[arg-type]
        elif typ.startswith("["):
            obj.setdefault(key, []).append(value.decode() if isinstance(value, bytes) else value)
        elif typ == "string":
            obj[key] = value.decode() if isinstance(value, bytes) else str(value)
        elif typ in ("int", "bool"):
            obj[key] = bool(value) if typ == "bool" else value
        elif typ == "int32":  # a negative int32 travels as its 64-bit two's complement varint
            if not isinstance(value, int):
                raise TypeError("bytes where a number belongs")
            value &= 0xFFFFFFFF
            obj[key] = value - (1 << 32) if value >= 1 << 31 else value
        else:
            obj[key] = _message(value, typ)  # type: ignore[arg-type]
    return obj


def decode(body: bytes) -> dict[str, Any]:
    """The JSON-shaped object (with kind and apiVersion) inside a Kubernetes protobuf envelope."""
    if not body.startswith(MAGIC):
        raise ProtobufError("missing the k8s protobuf magic prefix")
    try:
        unknown = dict(_fields(body[len(MAGIC):]))
        type_meta = dict(_fields(unknown.get(1, b"")))  # type: ignore[arg-type]
        api_version = type_meta.get(1, b"").decode()  # type: ignore[union-attr]
        kind = type_meta.get(2, b"").decode()  # type: ignore[union-attr]
        if kind not in MESSAGES:
            raise ProtobufError(f"protobuf bodies of kind {kind or '<none>'} are not supported by the lab")
        body_fields = _message(unknown.get(2, b""), kind)  # type: ignore[arg-type]
    except ProtobufError:
        raise
    except (TypeError, ValueError, AttributeError, RecursionError) as exc:  # a number for a message; bad UTF-8
        raise ProtobufError(f"malformed protobuf body: {exc}") from None
    return {"kind": kind, "apiVersion": api_version, **body_fields}
