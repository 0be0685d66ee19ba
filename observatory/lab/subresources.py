"""HTTP handlers of the subresources served beyond ``status`` and ``binding``: ``pods/eviction``
(:mod:`observatory.lab.eviction`), ``pods/log``, ``exec``, ``attach`` and ``portforward``
(:mod:`observatory.lab.podlogs`), and ``scale`` of the workloads (:mod:`observatory.lab.kinds.scale`).

:data:`HANDLERS` maps ``(resource, subresource)`` to an async handler called with the request, the registry, the
resource type, the namespace and the object's name; it answers with a response (``encoding.go_json`` bodies) or
raises :class:`~observatory.lab.errors.StatusError`. A subresource listed in discovery
(:data:`observatory.lab.resources.ALL`) without a handler here answers 404 as an unserved path does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from aiohttp import web

from observatory.lab import eviction, podlogs
from observatory.lab.kinds import scale
from observatory.lab.registry import Registry
from observatory.lab.resources import ResourceType

Handler = Callable[[web.Request, Registry, ResourceType, str, str], Awaitable[web.StreamResponse]]

HANDLERS: Mapping[tuple[str, str], Handler] = {**eviction.HANDLERS, **podlogs.HANDLERS, **scale.HANDLERS}
