"""The core/v1 object schema, read from kubernetes_asyncio's generated models, and strict field validation.

The models come from ``data/schema.json``, which ``tools/lab_schema.py`` generates from
``kubernetes_asyncio.client.models`` (only ``observatory.kube`` imports kubernetes_asyncio at run time). For each
model it lists the fields in the model's order as ``[json name, type string, python attr]``, with type strings such
as ``'V1ObjectMeta'``, ``'list[V1Container]'``, ``'dict(str, str)'``, ``'str'``, ``'int'``, ``'bool'``,
``'datetime'``, ``'object'``; and the getters' descriptions and the required attrs. From these this module answers:

* :func:`unknown_fields` - the JSON paths a strict decoder rejects, formatted as kube-apiserver does via
  sigs.k8s.io/json (``spec.foo``, ``spec.containers[0].imagee``, ``metadata.labelz``), in document order;
* :func:`strict_decoding_message` - the 400 BadRequest message for ``fieldValidation=Strict`` on create/update,
  from apiserver ``pkg/endpoints/handlers/rest.go`` ``transformDecodeError`` around apimachinery
  ``runtime.strictDecodingError`` (``strict decoding error: `` + errors joined by ``, ``);
* :func:`warning_texts` - the ``Warning`` header texts for ``fieldValidation=Warn``
  (apiserver ``handlers/create.go`` ``addStrictDecodingWarnings``).

The file is read on first use and cached. ``openapi.py`` reuses :func:`model_fields`,
:func:`closure` and :func:`definition_name` to publish the same schema as OpenAPI v3, and ``gotypes.py`` walks the
same models to reproduce the typed decoder's JSON type errors (:func:`observatory.lab.gotypes.type_error`).
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources
from typing import Any

__all__ = [
    "KIND_MODELS",
    "closure",
    "definition_name",
    "has_model",
    "model_descriptions",
    "model_fields",
    "model_required",
    "strict_decoding_message",
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
    "PersistentVolumeClaim": "V1PersistentVolumeClaim",
    "PersistentVolume": "V1PersistentVolume",
    "StorageClass": "V1StorageClass",
    "PriorityClass": "V1PriorityClass",
}

# Generated classes that live in apimachinery meta/v1 rather than k8s.io/api core/v1.
_META_V1 = frozenset({
    "V1ObjectMeta", "V1ListMeta", "V1OwnerReference", "V1ManagedFieldsEntry", "V1LabelSelector",
    "V1LabelSelectorRequirement", "V1ShardInfo", "V1DeleteOptions", "V1Preconditions", "V1Status",
    "V1StatusDetails", "V1StatusCause", "V1WatchEvent",
})

_MODEL_RE = re.compile(r"^(?:V1|CoreV1)[A-Za-z0-9]+$")


@functools.cache
def _models() -> dict[str, dict[str, Any]]:
    """``{class name: {"fields": [...], "descriptions": {...}, "required": [...]}}`` from ``data/schema.json``."""
    text = resources.files("observatory.lab").joinpath("data", "schema.json").read_text(encoding="utf-8")
    models: dict[str, dict[str, Any]] = json.loads(text)["models"]
    return models


def has_model(class_name: str) -> bool:
    """Whether ``class_name`` is a generated model the schema knows."""
    return class_name in _models()


def model_descriptions(class_name: str) -> dict[str, str]:
    """``{python_attr: description}`` of a model's documented fields (the generated getters' docstrings)."""
    descriptions: dict[str, str] = _models()[class_name]["descriptions"]
    return descriptions


def model_required(class_name: str) -> set[str]:
    """Python attrs of a model's required fields (the generated setters reject ``None``)."""
    return set(_models()[class_name]["required"])


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


@functools.cache
def model_fields(class_name: str) -> dict[str, tuple[str, str]]:
    """``{json_name: (type_string, python_attr)}`` for a generated model class, in the model's field order."""
    return {json_name: (t, attr) for json_name, t, attr in _models()[class_name]["fields"]}


def referenced_models(type_string: str) -> list[str]:
    """Model class names inside a type string (``'list[V1Container]'`` -> ``['V1Container']``)."""
    return [t for t in re.findall(r"[A-Za-z0-9]+", type_string) if _MODEL_RE.match(t) and has_model(t)]


@functools.cache
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
    if _MODEL_RE.match(type_string) and has_model(type_string):
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
