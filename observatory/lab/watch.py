"""Watch streams of the lab: newline-delimited WatchEvents over a chunked 200, as kube-apiserver serves them.

Reproduces apiserver ``pkg/endpoints/handlers/watch.go`` (``serveWatch``: the JSON or Table stream, timeouts) and
``pkg/endpoints/handlers/get.go`` (``ListResource`` with ``watch=true``: ``resourceVersion``, ``timeoutSeconds``,
``allowWatchBookmarks``, ``sendInitialEvents``), with the 410 Expired ERROR event and the initial-events-end
BOOKMARK of ``pkg/storage/cacher`` (reference §3.2). Events come from the store's watch fan-out
(:meth:`~observatory.lab.store.Store.watch`).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aiohttp import HttpVersion11, web

from observatory.lab import errors, faults, printing
from observatory.lab.encoding import go_json, with_kind
from observatory.lab.listing import ListQuery, make_predicate
from observatory.lab.request_body import JSON, _include_object, _int_param, _wants_table
from observatory.lab.resources import ResourceType
from observatory.lab.store import Change, Store, safe_match
from observatory.settings import LabSettings

if TYPE_CHECKING:
    from observatory.lab.api import LabContext


async def serve_watch(request: web.Request, lab: LabContext, rt: ResourceType, query: ListQuery, *,
                      wire: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> web.StreamResponse:
    """A watch stream: newline-delimited WatchEvents over a chunked 200 (reference §3.2).

    resourceVersion unset or "0" starts with synthetic ADDED events; a specific one resumes after it, or sends one
    ERROR event with the 410 Expired Status and ends when it is older than the history window. ``timeoutSeconds``
    ends the stream cleanly; without it the end comes after a random time between ``min_request_timeout`` and
    twice that, as kube-apiserver does. ``allowWatchBookmarks=true`` brings periodic BOOKMARKs. ``wire`` turns a
    stored object into the object sent (default: the object with ``rt``'s kind and apiVersion), for a group that
    serves another's storage (events.k8s.io/v1 events).
    """
    store, settings = lab.store, lab.settings
    rv_text = request.query.get("resourceVersion", "")
    timeout = _int_param(request, "timeoutSeconds")
    bookmarks = request.query.get("allowWatchBookmarks", "") in ("true", "1")
    send_initial = request.query.get("sendInitialEvents", "")
    table = _wants_table(request)
    include_object = _include_object(request)
    if timeout is not None and timeout < 0:
        raise errors.bad_request(f"timeoutSeconds: Invalid value: {timeout}: must be greater than or equal to 0")
    if send_initial and request.query.get("resourceVersionMatch", "") != "NotOlderThan":
        raise errors.invalid("ListOptions", "", [("FieldValueForbidden", "sendInitialEvents",
                             "Forbidden: sendInitialEvents is forbidden for watch unless resourceVersionMatch is set "
                             "to NotOlderThan")],
                             group="meta.k8s.io")
    initial = rv_text in ("", "0") if not send_initial else send_initial == "true"
    since: int | None = None
    if not initial:
        try:
            since = int(rv_text) if rv_text else None
        except ValueError:
            raise errors.bad_request(f"invalid resource version: {rv_text}") from None
    if since is not None and since > store.resource_version:
        # The cacher waits up to 3 s for a future resourceVersion, then answers this 504 (watch_cache.go
        # waitUntilFreshAndBlock); the lab has nothing to wait for, so it answers at once.
        raise errors.StatusError(errors.status_failure(
            504, "Timeout", f"Timeout: Too large resource version: {since}, current: {store.resource_version}",
            {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
             "retryAfterSeconds": 1}))
    predicate = make_predicate(rt, query)
    as_object = wire or (lambda obj: with_kind(obj, rt.kind, rt.api_version))

    response = web.StreamResponse(status=200, headers={"Content-Type": JSON, "Cache-Control": "no-cache, private"})
    if request.version >= HttpVersion11:  # HTTP/1.0 has no chunks: Go ends such a stream by closing it
        response.enable_chunked_encoding()
    await response.prepare(request)

    first_table = True

    def encode(type_: str, obj: dict[str, Any], change: Change | None = None) -> bytes:
        nonlocal first_table
        if table:
            # Like the apiserver's watch encoder, only the first Table carries columnDefinitions.
            obj = printing.table(rt.name, [obj], datetime.now(UTC), resource_version=obj["metadata"]["resourceVersion"],
                                 include_object=include_object, kind=rt.kind, api_version=rt.api_version,
                                 include_column_definitions=first_table, to_object=wire)
            first_table = False
            return go_json({"type": type_, "object": obj})
        if change is not None:
            cached = change.encoded.get(rt.api_version)
            if cached is None:  # encoded once per change (and group version) however many watchers share it
                cached = change.encoded[rt.api_version] = go_json({"type": type_, "object": as_object(obj)})
            return cached
        return go_json({"type": type_, "object": as_object(obj)})

    try:
        # With initial events (watch-list included) the stream continues from this snapshot, never from older history.
        watcher = store.watch(rt.name, query.namespace, predicate, None if initial else since)
        snapshot_rv = store.resource_version
        initial_objects = list(store.iter(rt.name, query.namespace)) if initial else []
    except errors.StatusError as exc:
        await response.write(go_json({"type": "ERROR", "object": exc.status}))
        await response.write_eof()
        return response
    try:
        if initial:
            chunk = [encode("ADDED", obj) for obj in initial_objects
                     if predicate is None or safe_match(predicate, obj)]
            if chunk:
                await response.write(b"".join(chunk))
            if send_initial == "true" and bookmarks:
                await response.write(go_json({"type": "BOOKMARK", "object": {
                    "kind": rt.kind, "apiVersion": rt.api_version,
                    "metadata": {"resourceVersion": str(snapshot_rv),
                                 "annotations": {"k8s.io/initial-events-end": "true"}}}}))
        with faults.open_watch(request, watcher):  # reachable by drop-watches and compact (lab/faults.py)
            await _pump(request, response, watcher, store, settings, rt, encode, timeout, bookmarks)
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        store.stop_watch(watcher)
    return response


async def _pump(request: web.Request, response: web.StreamResponse, watcher: Any, store: Store,
                settings: LabSettings, rt: ResourceType, encode: Any, timeout: int | None, bookmarks: bool) -> None:
    loop = asyncio.get_running_loop()
    if timeout is None:
        timeout_s = settings.min_request_timeout * (1 + random.random())
    else:
        timeout_s = float(timeout) if timeout > 0 else settings.min_request_timeout * (1 + random.random())
    deadline = loop.time() + timeout_s
    next_bookmark = loop.time() + settings.bookmark_interval
    tick = min(settings.bookmark_interval, 2.0)
    while True:
        now = loop.time()
        if now >= deadline:
            break
        try:
            change: Change | None = await asyncio.wait_for(watcher.queue.get(), min(deadline, now + tick) - now)
        except TimeoutError:
            change = None
            if request.transport is None or request.transport.is_closing():
                return
        else:
            if change is None:  # the store closed this watch
                break
            await faults.hold(request)  # a stall-watches or latency fault (lab/faults.py)
            batch = [encode(change.type, change.obj, change)]
            while not watcher.queue.empty():
                more = watcher.queue.get_nowait()
                if more is None:
                    await response.write(b"".join(batch))
                    return await response.write_eof()
                batch.append(encode(more.type, more.obj, more))
            await response.write(b"".join(batch))
        if bookmarks and loop.time() >= next_bookmark and await faults.hold(request) and watcher.queue.empty():
            next_bookmark = loop.time() + settings.bookmark_interval
            await response.write(go_json({"type": "BOOKMARK", "object": {
                "kind": rt.kind, "apiVersion": rt.api_version,
                "metadata": {"resourceVersion": str(store.resource_version)}}}))
    await response.write_eof()
