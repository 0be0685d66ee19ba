"""Authorization attributes of a request, as kube-apiserver's ``RequestInfoFactory.NewRequestInfo`` derives them
(``k8s.io/apiserver/pkg/endpoints/request/requestinfo.go``), for the lab's RBAC mode (:mod:`observatory.lab.rbac`).

``/api/v1/...`` and ``/apis/<group>/<version>/...`` with at least a resource are resource requests: POST create, GET
and HEAD get (list, or watch when ``watch`` is given and is neither ``0`` nor ``false``, when no object is named;
``fieldSelector=metadata.name=X`` names it), PUT update, PATCH patch, DELETE delete (deletecollection when no object is
named); ``namespaces/<ns>/`` gives the namespace (a namespace's own ``status`` and ``finalize`` stay subresources of
the namespace). Anything
else (discovery, ``/version``, ``/healthz``, the lab's own paths) is a non-resource request whose verb is the
lower-case HTTP method.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

__all__ = ["Attributes", "attributes"]

_SPECIAL_VERBS = frozenset({"proxy", "watch"})
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


@dataclass(frozen=True)
class Attributes:
    """What authorization looks at: ``authorizer.Attributes`` of one request (or of a SelfSubjectAccessReview)."""

    verb: str
    resource_request: bool
    path: str = ""
    namespace: str = ""
    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""

    @property
    def combined_resource(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def attributes(method: str, path: str, query: Any) -> Attributes:
    """A request's authorization attributes, as ``RequestInfoFactory.NewRequestInfo`` derives them. ``query`` is
    the query string as a mapping (``request.query``)."""
    verb = method.lower()
    parts = [unquote(p) for p in path.strip("/").split("/") if p]
    non_resource = Attributes(verb=verb, resource_request=False, path=path)
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return non_resource
    group = ""
    rest = parts[1:]
    if parts[0] == "apis":
        if len(rest) < 3:
            return non_resource
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    special = bool(rest) and rest[0] in _SPECIAL_VERBS
    if special:
        verb, rest = rest[0], rest[1:]
    else:
        verb = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete"}.get(method.upper(), "")
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 and not special else ""
    if not name and verb == "get":
        verb = "watch" if _watch(query) else "list"
        name = _selected_name(str(query.get("fieldSelector", "")))
    elif not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(verb=verb, resource_request=True, path=path, namespace=namespace, group=group,
                      version=version, resource=resource, subresource=subresource, name=name)


def _watch(query: Any) -> bool:
    """``ListOptions.watch`` as ``NewRequestInfo`` decodes it: present and neither ``0`` nor ``false`` in any case
    (``Convert_Slice_string_To_bool``; ``watch=`` and ``watch=yes`` are watches)."""
    if "watch" not in query:
        return False
    value = str(query.get("watch"))
    return value != "0" and value.lower() != "false"


def _selected_name(selector: str) -> str:
    """``metadata.name`` when the field selector requires exactly that value (``RequiresExactMatch``) and it is a
    valid path segment (``IsValidPathSegmentName``: not ``.`` or ``..``, no ``/`` or ``%``), else ""."""
    for term in selector.split(","):
        key, sep, value = term.partition("=")
        if not sep or key.endswith("!"):
            continue
        value = value[1:] if value.startswith("=") else value
        if key.strip() == "metadata.name":
            value = value.strip()
            return value if value not in ("", ".", "..") and not any(c in value for c in "/%") else ""
    return ""
