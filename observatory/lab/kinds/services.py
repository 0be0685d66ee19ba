"""REST strategies of services, endpoints, endpointslices (defaults, validation, printing)."""

from __future__ import annotations

from observatory.lab.kinds.base import KindStrategy


class ServiceStrategy(KindStrategy):
    resource = "services"


class EndpointsStrategy(KindStrategy):
    resource = "endpoints"
    has_status = False


class EndpointSliceStrategy(KindStrategy):
    resource = "endpointslices"
    has_status = False


STRATEGIES: tuple[KindStrategy, ...] = (ServiceStrategy(), EndpointsStrategy(), EndpointSliceStrategy())
