"""REST strategies of ConfigMaps and Secrets: the scheme's defaults and conversion, and the Table printers.

* Secret: ``SetDefaults_Secret`` (``pkg/apis/core/v1/defaults.go``) gives ``type: Opaque`` when unset, and the
  v1 -> internal conversion (``Convert_v1_Secret_To_core_Secret``) merges ``stringData`` into ``data`` (each value
  base64-encoded, a ``stringData`` key winning over the same ``data`` key), so ``stringData`` is never stored or
  returned.
* Printers (``pkg/printers/internalversion/printers.go``): ``printConfigMap`` NAME, DATA (``len(data) +
  len(binaryData)``, an int64), AGE; ``printSecret`` NAME, TYPE, DATA (``len(data)``, an int64), AGE.
"""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Any

from observatory.lab.kinds.base import KindStrategy, Printer
from observatory.lab.printcells import DOC_CREATION, DOC_NAME, column, translate_timestamp_since

_DOC_CONFIGMAP_DATA = (
    "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. "
    "Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap "
    "with the keys in the BinaryData field, this is enforced during validation process.")
_DOC_SECRET_TYPE = ("Used to facilitate programmatic handling of secret data. More info: "
                    "https://kubernetes.io/docs/concepts/configuration/secret/#secret-types")
_DOC_SECRET_DATA = (
    "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The "
    "serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly "
    "non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4")


def _age(obj: dict[str, Any], now: datetime) -> str:
    return translate_timestamp_since((obj.get("metadata") or {}).get("creationTimestamp"), now)


def _count(value: Any) -> int:
    return len(value) if isinstance(value, dict) else 0


def _configmap_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    return [obj["metadata"].get("name", ""), _count(obj.get("data")) + _count(obj.get("binaryData")), _age(obj, now)]


def _secret_cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    return [obj["metadata"].get("name", ""), obj.get("type") or "", _count(obj.get("data")), _age(obj, now)]


class ConfigMapStrategy(KindStrategy):
    resource = "configmaps"
    has_status = False
    printer = Printer((column("Name", DOC_NAME, format_="name"), column("Data", _DOC_CONFIGMAP_DATA),
                       column("Age", DOC_CREATION)), _configmap_cells)


class SecretStrategy(KindStrategy):
    resource = "secrets"
    has_status = False
    printer = Printer((column("Name", DOC_NAME, format_="name"), column("Type", _DOC_SECRET_TYPE),
                       column("Data", _DOC_SECRET_DATA), column("Age", DOC_CREATION)), _secret_cells)

    def default(self, obj: dict[str, Any]) -> None:
        """``type: Opaque`` when unset; ``stringData`` merged into ``data`` as base64 and dropped."""
        if not obj.get("type"):
            obj["type"] = "Opaque"
        string_data = obj.pop("stringData", None)
        if isinstance(string_data, dict) and string_data:
            current = obj.get("data")
            data: dict[str, Any] = current if isinstance(current, dict) else {}
            for key, value in string_data.items():
                if isinstance(value, str):
                    data[key] = base64.b64encode(value.encode()).decode()
            obj["data"] = data


STRATEGIES: tuple[KindStrategy, ...] = (ConfigMapStrategy(), SecretStrategy())
