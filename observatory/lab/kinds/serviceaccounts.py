"""REST strategy of ServiceAccounts: no status, and ``printServiceAccount``'s Table (NAME, SECRETS - the number of
``secrets`` entries, an int64 - AGE) from ``pkg/printers/internalversion/printers.go``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from observatory.lab.kinds.base import KindStrategy, Printer
from observatory.lab.printcells import DOC_CREATION, DOC_NAME, column, translate_timestamp_since

_DOC_SECRETS = (
    "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed "
    'to use. Pods are only limited to this list if this service account has a "kubernetes.io/enforce-mountable-'
    'secrets" annotation set to "true". The "kubernetes.io/enforce-mountable-secrets" annotation is deprecated '
    "since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to "
    "find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested "
    "directly using the TokenRequest API, or service account token secrets can be manually created. More info: "
    "https://kubernetes.io/docs/concepts/configuration/secret")


def _cells(obj: dict[str, Any], now: datetime) -> list[Any]:
    secrets = obj.get("secrets")
    return [obj["metadata"].get("name", ""), len(secrets) if isinstance(secrets, list) else 0,
            translate_timestamp_since(obj["metadata"].get("creationTimestamp"), now)]


class ServiceAccountStrategy(KindStrategy):
    resource = "serviceaccounts"
    has_status = False
    printer = Printer((column("Name", DOC_NAME, format_="name"), column("Secrets", _DOC_SECRETS),
                       column("Age", DOC_CREATION)), _cells)


STRATEGIES: tuple[KindStrategy, ...] = (ServiceAccountStrategy(),)
