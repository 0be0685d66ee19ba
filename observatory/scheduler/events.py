"""Writing a scheduler's events the way client-go's events/v1 broadcaster does (``tools/events``).

* The server is asked once whether it serves ``events.k8s.io/v1`` (``GET /apis/events.k8s.io/v1``), as
  ``NewEventBroadcasterAdapterWithContext`` does through discovery. If it does, each event is
  ``POST /apis/events.k8s.io/v1/namespaces/{ns}/events`` (:func:`~.objects.scheduler_event`); if not, the adapter's
  legacy core/v1 recorder is used: ``POST /api/v1/namespaces/{ns}/events`` (:func:`~.objects.legacy_event`).
* Isomorphic events within :data:`FINISH_SECONDS` are one event with a series (``event_broadcaster.go``
  ``recordToSink``): the second occurrence PATCHes ``{"series": {"count": 2, "lastObservedTime": …}}`` (strategic
  merge; a 404 creates the event again), so ``kubectl describe`` shows ``(x2 over …)``; later ones only count
  locally; every :data:`REFRESH_SECONDS` the open series are written, and a series not seen for
  :data:`FINISH_SECONDS` is written one last time and forgotten (``refreshExistingEventSeries``, ``finishSeries``).
* Isomorphic means the same type, action, reason, reportingController, reportingInstance and ``regarding``, the
  whole ObjectReference, resourceVersion included (upstream's ``getKey``). A scheduler's first refusal is followed
  by its own ``PodScheduled=False`` status patch, which bumps the pod's resourceVersion, so the second refusal of a
  pod starts a new event and the third joins it as a series: ``kubectl describe`` then shows one FailedScheduling
  line and one ``(x2 over …)`` line, as it does under kube-scheduler. (Later refusals leave the condition as it is,
  so no status patch and no new resourceVersion come between them.)
* A transport failure is retried up to :data:`MAX_TRIES` times, :data:`RETRY_SECONDS` apart (jittered); an API error
  answer drops the event, as client-go's ``recordEvent`` does.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from observatory.kube.fetch import ApiError, Unreachable, get_json, send_json
from observatory.scheduler.objects import legacy_event, object_reference, scheduler_event, series_patch

__all__ = ["EventRecorder"]

FINISH_SECONDS = 6 * 60
REFRESH_SECONDS = 30 * 60
MAX_TRIES = 12
RETRY_SECONDS = 10.0
STRATEGIC = "application/strategic-merge-patch+json"


@dataclass
class _Cached:
    event: dict[str, Any]
    first_seen: float
    count: int = 1
    last_observed: datetime | None = None
    last_observed_mono: float = 0.0


class EventRecorder:
    """Records the events of one scheduler profile: ``controller`` (the schedulerName) and ``instance``
    (``<schedulerName>-<hostname>``) through ``api``. ``log`` gets one sentence per write that failed for good."""

    def __init__(self, api: Any, controller: str, instance: str, *, log: Callable[[str], None] | None = None,
                 retry_seconds: float = RETRY_SECONDS) -> None:
        self.api = api
        self.controller = controller
        self.instance = instance
        self.log = log or (lambda _line: None)
        self.retry_seconds = retry_seconds
        self.api_version: str | None = None
        """``events.k8s.io/v1`` or ``v1`` once known."""
        self._detect_lock = asyncio.Lock()
        self._cache: dict[tuple[Any, ...], _Cached] = {}
        self.written = 0

    async def _detect(self) -> str:
        async with self._detect_lock:
            if self.api_version is None:
                try:
                    await get_json(self.api, "/apis/events.k8s.io/v1", timeout=10.0)
                    self.api_version = "events.k8s.io/v1"
                except ApiError:
                    self.api_version = "v1"
                    self.log("The API server does not serve events.k8s.io/v1: events are written through core/v1.")
                except Unreachable:
                    return "events.k8s.io/v1"  # ask again next time
            return self.api_version

    def _key(self, pod: Mapping[str, Any], type_: str, reason: str, action: str,
             related: Mapping[str, Any] | None = None) -> tuple[Any, ...]:
        """The isomorphism key: upstream's ``getKey`` (see the module), ``related`` included when there is one."""
        regarding = object_reference(pod)
        other = tuple(sorted(object_reference(related).items())) if related is not None else ()
        return (type_, action, reason, self.controller, self.instance, tuple(sorted(regarding.items())), other)

    async def record(self, pod: Mapping[str, Any], type_: str, reason: str, action: str, note: str, *,
                     related: Mapping[str, Any] | None = None) -> None:
        """Record one event about ``pod`` (``Normal``/``Warning``, e.g. ``Scheduled``/``Binding``), with
        ``related`` as its second object when given (``Preempted``: the preemptor); returns when it was written,
        counted into a series, or given up. Never raises for API or network trouble."""
        version = await self._detect()
        now = datetime.now(UTC)
        if version == "v1":
            await self._write("POST", _events_path(pod, "v1"), legacy_event(
                pod, type_, reason, note, controller=self.controller, now=now, related=related))
            return
        key = self._key(pod, type_, reason, action, related)
        cached = self._cache.get(key)
        if cached is None:
            event = scheduler_event(pod, type_, reason, action, note, controller=self.controller,
                                    instance=self.instance, now=now, related=related)
            self._cache[key] = _Cached(event, time.monotonic())
            await self._write("POST", _events_path(pod, version), event)
            return
        cached.count += 1
        cached.last_observed, cached.last_observed_mono = now, time.monotonic()
        if cached.count == 2:
            await self._write_series(cached)

    async def _write_series(self, cached: _Cached) -> None:
        event = cached.event
        meta = event["metadata"]
        path = f"/apis/events.k8s.io/v1/namespaces/{quote(meta['namespace'], safe='')}/events/" \
               f"{quote(meta['name'], safe='')}"
        patch = series_patch(cached.count, cached.last_observed or datetime.now(UTC))
        try:
            await send_json(self.api, "PATCH", path, patch, content_type=STRATEGIC, timeout=30.0)
            self.written += 1
        except ApiError as exc:
            if exc.status != 404:
                self.log(f"The series of event {meta['name']} could not be written: {exc.message}")
                return
            await self._write("POST", path.rsplit("/", 1)[0], {**event, **patch})
        except Unreachable as exc:
            self.log(f"The series of event {meta['name']} could not be written: {exc}")

    async def _write(self, method: str, path: str, body: dict[str, Any]) -> None:
        for attempt in range(1, MAX_TRIES + 1):
            try:
                await send_json(self.api, method, path, body, timeout=30.0)
                self.written += 1
                return
            except ApiError as exc:
                self.log(f"The server rejected event {body['metadata']['name']} ({exc.status}): {exc.message}")
                return
            except Unreachable as exc:
                if attempt == MAX_TRIES:
                    self.log(f"Event {body['metadata']['name']} could not be written: {exc}")
                    return
            await asyncio.sleep(random.uniform(1.0, 1.25) * self.retry_seconds)

    async def maintain(self) -> None:
        """Run until cancelled: write open series every :data:`REFRESH_SECONDS`; every :data:`FINISH_SECONDS`
        write and forget the series not seen for that long, and forget single events older than that."""
        last_refresh = time.monotonic()
        while True:
            await asyncio.sleep(FINISH_SECONDS)
            now = time.monotonic()
            for key, cached in list(self._cache.items()):
                if cached.count > 1 and now - cached.last_observed_mono > FINISH_SECONDS:
                    await self._write_series(cached)
                    self._cache.pop(key, None)
                elif cached.count == 1 and now - cached.first_seen > FINISH_SECONDS:
                    self._cache.pop(key, None)
            if now - last_refresh >= REFRESH_SECONDS:
                last_refresh = now
                for cached in list(self._cache.values()):
                    if cached.count > 1:
                        await self._write_series(cached)


def _events_path(pod: Mapping[str, Any], version: str) -> str:
    meta = pod.get("metadata") or {}
    namespace = quote(str(meta.get("namespace") or "") or "default", safe="")
    base = "/api/v1" if version == "v1" else "/apis/events.k8s.io/v1"
    return f"{base}/namespaces/{namespace}/events"
