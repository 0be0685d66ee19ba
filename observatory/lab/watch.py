"""Watch streams of the lab: newline-delimited WatchEvents over a chunked 200, as kube-apiserver serves them.

Reproduces apiserver ``pkg/endpoints/handlers/watch.go`` (``serveWatch``: the JSON or Table stream, timeouts) and
``pkg/endpoints/handlers/get.go`` (``ListResource`` with ``watch=true``: ``resourceVersion``, ``timeoutSeconds``,
``allowWatchBookmarks``, ``sendInitialEvents``), with the 410 Expired ERROR event and the initial-events-end
BOOKMARK of ``pkg/storage/cacher`` (reference §3.2). Events come from the store's watch fan-out
(:meth:`~observatory.lab.store.Store.watch`), each encoded once for every stream (:mod:`observatory.lab.watch_encoding`)
and written at most 64 KiB at a time. A watcher that falls ``LabSettings.watch_queue_limit`` changes behind is
closed, as the cacher closes an unresponsive ``cacheWatcher`` (:class:`~observatory.lab.watchers.Watcher`): its
stream ends, or its connection is cut when it is stuck writing to a client that does not read.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aiohttp import HttpVersion11, web

from observatory.lab import errors, faults
from observatory.lab.encoding import go_json
from observatory.lab.listing import ListQuery, make_predicate
from observatory.lab.request_body import JSON, _include_object, _int_param, _wants_table
from observatory.lab.resources import ResourceType
from observatory.lab.store import Change, Predicate, Store, Watcher, safe_match
from observatory.lab.watch_encoding import WRITE_CHUNK, Encoder, identifier, shared_initial_events
from observatory.settings import LabSettings

if TYPE_CHECKING:
    from observatory.lab.api import LabContext


async def serve_watch(request: web.Request, lab: LabContext, rt: ResourceType, query: ListQuery, *,
                      wire: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> web.StreamResponse:
    """A watch stream: newline-delimited WatchEvents over a chunked 200 (reference §3.2).

    resourceVersion unset or "0" starts with synthetic ADDED events; a specific one resumes after it, or sends one
    ERROR event with the 410 Expired Status and ends when it is older than the history window. ``timeoutSeconds``
    ends the stream cleanly (a negative one at once, before any event); without it the end comes after a random
    time between ``min_request_timeout`` and twice that, as kube-apiserver does. ``allowWatchBookmarks=true`` brings
    periodic BOOKMARKs. ``wire`` turns a stored object into the object sent (default: the object with ``rt``'s kind
    and apiVersion), for a group that serves another's storage (events.k8s.io/v1 events).
    """
    store, settings = lab.store, lab.settings
    rv_text = request.query.get("resourceVersion", "")
    timeout = _int_param(request, "timeoutSeconds")
    bookmarks = request.query.get("allowWatchBookmarks", "") in ("true", "1")
    send_initial = request.query.get("sendInitialEvents", "")
    table = _wants_table(request)
    include_object = _include_object(request)
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
    encoder = Encoder(rt, wire=wire, table=table, include_object=include_object)

    response = web.StreamResponse(status=200, headers={"Content-Type": JSON, "Cache-Control": "no-cache, private"})
    if request.version >= HttpVersion11:  # HTTP/1.0 has no chunks: Go ends such a stream by closing it
        response.enable_chunked_encoding()
    await response.prepare(request)
    stream = _Stream(request, response)

    try:
        # With initial events (watch-list included) the stream continues from this snapshot, never from older history.
        watcher = store.watch(rt.name, query.namespace, predicate, None if initial else since,
                              limit=settings.watch_queue_limit,
                              identifier=identifier(rt, query.namespace, request.query.get("labelSelector", ""),
                                                    request.query.get("fieldSelector", "")))
        snapshot_rv = store.resource_version
        initial_objects = list(store.iter(rt.name, query.namespace)) if initial else []
    except errors.StatusError as exc:
        await response.write(go_json({"type": "ERROR", "object": exc.status}))
        await response.write_eof()
        return response
    watcher.on_overflow = stream.abort_if_blocked
    try:
        with faults.open_watch(request, watcher):  # reachable by drop-watches and compact (lab/faults.py)
            if timeout is not None and timeout < 0:
                # serveWatch's time.After of a negative duration fires at once: a 200 stream that ends before its
                # first event (ListResource passes any non-zero timeoutSeconds through unchecked).
                return response
            if initial:
                await _send_initial(stream, store, rt, encoder, initial_objects, predicate)
                del initial_objects
                if send_initial == "true" and bookmarks:
                    await stream.write(go_json({"type": "BOOKMARK", "object": {
                        "kind": rt.kind, "apiVersion": rt.api_version,
                        "metadata": {"resourceVersion": str(snapshot_rv),
                                     "annotations": {"k8s.io/initial-events-end": "true"}}}}))
            await _pump(request, stream, watcher, store, settings, rt, encoder, timeout, bookmarks)
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        store.stop_watch(watcher)
    return response


class _Stream:
    """The response of one watch, and whether a write to it is waiting for the client to read."""

    def __init__(self, request: web.Request, response: web.StreamResponse) -> None:
        self.request = request
        self.response = response
        self.writing = False

    async def write(self, data: bytes) -> None:
        self.writing = True
        try:
            await self.response.write(data)
        finally:
            self.writing = False

    def abort_if_blocked(self) -> None:
        """The store closed this watch for falling behind (:meth:`Watcher.close_unresponsive`). A stream suspended
        in a write is waiting for a client that does not read: cut the connection, which frees what the transport
        holds for it (the client sees its watch end, as with any dropped connection). A stream that is not writing
        reads the end of its queue and finishes the response cleanly."""
        transport = self.request.transport
        if self.writing and transport is not None and not transport.is_closing():
            transport.abort()


async def _send_initial(stream: _Stream, store: Store, rt: ResourceType, encoder: Encoder,
                        objects: list[dict[str, Any]], predicate: Predicate | None) -> None:
    """The synthetic ADDED events, encoded once for every stream sending them now, written WRITE_CHUNK at a time."""
    with shared_initial_events(store).share(rt.name, rt.api_version) as table:
        batch: list[bytes] = []
        size = 0
        for obj in objects:
            if predicate is not None and not safe_match(predicate, obj):
                continue
            data = encoder.added(obj, table)
            batch.append(data)
            size += len(data)
            if size >= WRITE_CHUNK:
                await stream.write(b"".join(batch))
                batch, size = [], 0
        if batch:
            await stream.write(b"".join(batch))


async def _pump(request: web.Request, stream: _Stream, watcher: Watcher, store: Store, settings: LabSettings,
                rt: ResourceType, encoder: Encoder, timeout: int | None, bookmarks: bool) -> None:
    """Write the watcher's changes until the deadline, the store closing the watch, or the client going away;
    everything queued is written together, up to WRITE_CHUNK bytes per write."""
    response = stream.response
    loop = asyncio.get_running_loop()
    if timeout is None:
        timeout_s = settings.min_request_timeout * (1 + random.random())
    else:
        timeout_s = float(timeout) if timeout > 0 else settings.min_request_timeout * (1 + random.random())
    deadline = loop.time() + timeout_s
    next_bookmark = loop.time() + settings.bookmark_interval
    tick = min(settings.bookmark_interval, 2.0)
    queue = watcher.queue
    while True:
        now = loop.time()
        if now >= deadline:
            break
        change: Change | None
        if not queue.empty():
            change = queue.get_nowait()
            if change is None:  # the store closed this watch
                break
        else:
            try:
                change = await asyncio.wait_for(queue.get(), min(deadline, now + tick) - now)
            except TimeoutError:
                change = None
                if request.transport is None or request.transport.is_closing():
                    return
            else:
                if change is None:  # the store closed this watch
                    break
        if change is not None:
            await faults.hold(request)  # a stall-watches or latency fault (lab/faults.py)
            first = encoder.change(change)
            batch, size, ended = [first], len(first), False
            while size < WRITE_CHUNK and not queue.empty():
                more = queue.get_nowait()
                if more is None:
                    ended = True
                    break
                data = encoder.change(more)
                batch.append(data)
                size += len(data)
            await stream.write(b"".join(batch) if len(batch) > 1 else first)
            if ended:
                break
        if bookmarks and loop.time() >= next_bookmark and await faults.hold(request) and queue.empty():
            next_bookmark = loop.time() + settings.bookmark_interval
            await stream.write(go_json({"type": "BOOKMARK", "object": {
                "kind": rt.kind, "apiVersion": rt.api_version,
                "metadata": {"resourceVersion": str(store.resource_version)}}}))
    await response.write_eof()
