"""`pods/log`, and the streaming subresources `exec`, `attach` and `portforward` of pods."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

from aiohttp import web

from observatory.lab.resources import ResourceType

if TYPE_CHECKING:
    from observatory.lab.registry import Registry

HANDLERS: Mapping[tuple[str, str], Callable[[web.Request, Registry, ResourceType, str, str],
                                            Awaitable[web.StreamResponse]]] = {}
