"""Generate ``observatory/lab/data/schema.json``: the core/v1, meta/v1, coordination/v1, events/v1 and storage/v1
models the lab validates against and publishes as OpenAPI, read from kubernetes_asyncio's generated client models.

Only ``observatory.kube`` imports kubernetes_asyncio at run time, so the lab reads this file instead of the
models. Each generated class has ``openapi_types`` (python attr -> type string such as ``'V1ObjectMeta'``,
``'list[V1Container]'``, ``'dict(str, str)'``, ``'str'``, ``'int'``, ``'bool'``, ``'datetime'``, ``'object'``)
and ``attribute_map`` (python attr -> JSON name); its getters' docstrings hold the property descriptions, and its
setters reject ``None`` for the required properties (openapi-generator's layout). For every model reachable from
the roots below the file keeps, in the model's field order, ``[json name, type string, python attr]``, the
non-empty descriptions by python attr, and the required python attrs.

Run ``python -m tools.lab_schema`` after upgrading kubernetes_asyncio; ``tests/unit/test_lab_schema_data.py``
fails while the shipped file differs from what this gives for the installed version.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).resolve().parent.parent / "observatory" / "lab" / "data" / "schema.json"

ROOTS = (
    # the kinds the lab decodes, lists, and publishes in /openapi/v3/api/v1
    "V1Pod", "V1PodList", "V1Node", "V1NodeList", "V1Namespace", "V1NamespaceList", "CoreV1Event",
    "CoreV1EventList", "V1Binding", "V1DeleteOptions", "V1Status", "V1WatchEvent", "V1Lease", "V1PriorityClass",
    # events.k8s.io/v1, the other schema of the same stored events
    "EventsV1Event", "EventsV1EventList",
    # core/v1 and storage.k8s.io/v1 storage: PersistentVolumeClaim, PersistentVolume, StorageClass
    "V1PersistentVolumeClaim", "V1PersistentVolumeClaimList", "V1PersistentVolume", "V1PersistentVolumeList",
    "V1StorageClass", "V1StorageClassList",
)

_MODEL_NAME = re.compile(r"^(?:V1|CoreV1|EventsV1)[A-Za-z0-9]+$")
_REQUIRED = re.compile(r"Invalid value for `(\w+)`, must not be `None`")


def _description(cls: type, attr: str) -> str:
    doc = getattr(cls, attr).__doc__ or ""
    body = []
    for line in [ln.strip().replace("  # noqa: E501", "") for ln in doc.splitlines()][1:]:
        if line.startswith(":return:"):
            break
        body.append(line)
    return " ".join(x for x in body if x).strip()


def _model(cls: Any) -> dict[str, Any]:
    source = inspect.getsource(sys.modules[cls.__module__])
    required = set(_REQUIRED.findall(source))
    return {
        "fields": [[cls.attribute_map[attr], t, attr] for attr, t in cls.openapi_types.items()],
        "descriptions": {attr: text for attr in cls.openapi_types if (text := _description(cls, attr))},
        "required": [attr for attr in cls.openapi_types if attr in required],
    }


def generate() -> dict[str, Any]:
    """The file's content for the installed kubernetes_asyncio."""
    from kubernetes_asyncio.client import models

    found: dict[str, dict[str, Any]] = {}
    pending = list(ROOTS)
    while pending:
        name = pending.pop(0)
        if name in found:
            continue
        cls = getattr(models, name)
        found[name] = _model(cls)
        for type_string in cls.openapi_types.values():
            pending.extend(t for t in re.findall(r"[A-Za-z0-9]+", type_string)
                           if _MODEL_NAME.match(t) and hasattr(models, t))
    return {"models": dict(sorted(found.items()))}


def render(content: dict[str, Any]) -> str:
    return json.dumps(content, indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(render(generate()), encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(Path.cwd()) if OUTPUT.is_relative_to(Path.cwd()) else OUTPUT.name}")


if __name__ == "__main__":
    main()
