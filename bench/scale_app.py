"""observatory under test, headless, in a process of its own: the same code path as the ``observatory`` command.

:func:`main` (a ``multiprocessing`` spawn target) connects through the lab's kubeconfig exactly as
``observatory --kubeconfig FILE -A`` does (``connect``, ``check_reachable``, a :class:`ClusterSource` over every
namespace, :class:`ObservatoryApp` with the default settings), runs it with ``App.run_test`` (Textual's headless
driver: every frame is composed, none is written to a terminal) and answers the benchmark's questions over a pipe.

Instrumentation, added to the running app's instances (nothing in observatory changes for it):

* **frames**: ``App._display`` is called once per composed screen update; its time is when a change became visible.
* **paints**: the pending pane's line renderer records, for rows whose key starts with the probe prefix, the time
  and the text of every line it paints, and for the cursor row the time and row index. A row that is not on screen
  is never painted, so "painted" means visible.
* **repaints**: the app's ``_repaint`` (the interval flush that pushes state into the panes), with the pod and node
  counts it saw, so the initial sync can be timed to the first repaint of the complete model and the frames after.

Each process has its own peak RSS (``VmHWM``), so the parent reads the app's memory from ``/proc/PID/status``.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import time
from multiprocessing.connection import Connection
from typing import Any

SETTLE_POLL_S = 0.01


class PaintProbe:
    """Records frames, repaints and paints of probe rows (see the module docstring)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.frames: list[float] = []
        self.repaints: list[tuple[float, float, int, int]] = []  # (start, seconds, pods seen, nodes seen)
        self.paints: dict[str, list[tuple[float, str]]] = {}
        self.cursor: list[tuple[float, int]] = []
        self.painted = asyncio.Event()
        self.gc_full: list[tuple[float, float]] = []  # (start, seconds) of each full (generation 2) collection
        self._gc_t0 = 0.0
        gc.callbacks.append(self._gc)

    def _gc(self, phase: str, info: dict[str, int]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._gc_t0 = time.monotonic()
        else:
            self.gc_full.append((self._gc_t0, time.monotonic() - self._gc_t0))

    def attach_app(self, app: Any) -> None:
        display, repaint = app._display, app.main._repaint

        def timed_display(screen: Any, renderable: Any) -> None:
            if renderable is not None:
                self.frames.append(time.monotonic())
                self.painted.set()
            display(screen, renderable)

        def timed_repaint() -> None:
            pods, nodes = len(app.main.state.pods), len(app.main.state.nodes)
            t = time.monotonic()
            repaint()
            self.repaints.append((t, time.monotonic() - t, pods, nodes))

        app._display, app.main._repaint = timed_display, timed_repaint

    def attach_pane(self, pane: Any) -> None:
        """Hook the pending pane: a RowList calls its ``paint_probe`` with (key, line, is_cursor, index) for each
        row line it renders (observatory/ui/widgets/row_list.py)."""
        pane.paint_probe = self.record

    def record(self, key: str, strip: Any, is_cursor: bool, index: int | None) -> None:
        now = time.monotonic()
        if key.startswith(self.prefix):
            self.paints.setdefault(key, []).append((now, strip.text))
        if is_cursor and index is not None:
            self.cursor.append((now, index))

    async def wait(self, check: Any, timeout: float) -> Any:
        """Call ``check()`` after each frame until it returns something other than None, or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while True:
            found = check()
            if found is not None:
                return found
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.painted.clear()
            try:
                await asyncio.wait_for(self.painted.wait(), min(left, 0.25))
            except TimeoutError:
                pass

    def first_paint(self, key: str, expect: str, since: float) -> float | None:
        for t, text in self.paints.get(key, ()):
            if t >= since and expect in text:
                return t
        return None

    def first_cursor(self, row: int, since: float) -> float | None:
        """The first time at or after ``since`` that row ``row`` was painted as the cursor row."""
        found = None
        for t, index in reversed(self.cursor):
            if t < since:
                break
            if index == row:
                found = t
        return found


def _quiet(app: Any) -> bool:
    """Nothing left to do: no pending layout or repaint, no message waiting in the app or any widget."""
    try:
        screen = app.screen
    except Exception:
        return False
    if screen._layout_required or screen._repaint_required or screen._dirty_widgets:
        return False
    return all(node._message_queue.empty() for node in itertools.chain((app,), screen.walk_children(with_self=True)))


async def _sync(app: Any, probe: PaintProbe, t0: float, pods: int, nodes: int, timeout: float) -> dict[str, Any]:
    """Initial sync: from ``t0`` (before connecting) until the model holds ``pods`` pods and ``nodes`` nodes
    (``model_s``), and until the first full render (``render_s``): the last frame composed after the first repaint
    that saw the complete model, once the app is quiet (every mount, layout and message done)."""
    deadline = t0 + timeout
    state = app.main.state
    while len(state.pods) < pods or len(state.nodes) < nodes:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the model holds {len(state.pods)} of {pods} pods and {len(state.nodes)} of "
                               f"{nodes} nodes after {timeout:g} s")
        await asyncio.sleep(SETTLE_POLL_S)
    model_at = time.monotonic()
    repaint_end = None
    quiet_since = None
    while time.monotonic() < deadline:
        if repaint_end is None:
            full = [s + d for s, d, p, n in probe.repaints if p >= pods and n >= nodes]
            repaint_end = full[0] if full else None
        elif probe.frames and probe.frames[-1] >= repaint_end and _quiet(app):
            if quiet_since is not None and time.monotonic() - quiet_since >= 2 * SETTLE_POLL_S:
                frames = [f for f in probe.frames if f >= repaint_end]
                return {"model_s": model_at - t0, "render_s": frames[-1] - t0,
                        "first_frame_after_model_s": frames[0] - t0, "frames_to_settle": len(frames),
                        "pods": len(app.main.state.pods), "nodes": len(app.main.state.nodes),
                        "events": len(app.main.state.events)}
            quiet_since = quiet_since or time.monotonic()
        else:
            quiet_since = None
        await asyncio.sleep(SETTLE_POLL_S)
    raise TimeoutError("the first full render did not settle in time")


async def _keys(app: Any, pilot: Any, probe: PaintProbe, n: int, timeout: float) -> dict[str, Any]:
    """``n`` presses of down/up (alternating, so the cursor stays near the top) in the pending pane: seconds from
    the press until the new cursor row was painted."""
    from observatory.ui.widgets.pending_pods import PendingPodsPane

    pane = app.query_one(PendingPodsPane)
    pane.focus()
    await asyncio.sleep(0.2)
    latencies, missed = [], 0
    for i in range(n):
        row = pane.cursor_row
        key = "down" if (i % 2 == 0 or row == 0) else "up"
        target = row + (1 if key == "down" else -1)
        t = time.monotonic()
        press = asyncio.create_task(pilot.press(key))
        seen = await probe.wait(lambda target=target, t=t: probe.first_cursor(target, t), timeout)
        await press
        if seen is None:
            missed += 1
        else:
            latencies.append(seen - t)
    return {"latencies_s": latencies, "missed": missed}


async def _serve(conn: Connection, kubeconfig: str, pods: int, nodes: int, size: tuple[int, int], prefix: str,
                 sync_timeout: float, audit_log: str | None = None) -> None:
    t0 = time.monotonic()
    from observatory.kube.connect import check_reachable, connect
    from observatory.kube.source import ClusterSource
    from observatory.settings import Settings
    from observatory.ui.app import ObservatoryApp
    from observatory.ui.widgets.pending_pods import PendingPodsPane

    settings = Settings()
    connection = await connect(kubeconfig, None, None)
    await check_reachable(connection)
    audit = None
    if audit_log is not None:  # as ``observatory --audit-log FILE`` follows it
        from observatory.kube.audit_origin import audit_feed

        audit = audit_feed(log=audit_log)
        assert audit is not None
        await audit.start()
    source = ClusterSource(connection, namespace=None, lab=True, audit=audit)
    app = ObservatoryApp(source, refresh_interval=settings.ui.refresh_interval,
                         recent_seconds=settings.ui.recent_seconds, lease_interval=settings.ui.lease_interval)
    probe = PaintProbe(prefix)
    probe.attach_app(app)
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def receive() -> None:
        try:
            inbox.put_nowait(conn.recv())
        except (EOFError, OSError):
            loop.remove_reader(conn.fileno())
            inbox.put_nowait({"cmd": "stop", "id": -1})

    async def answer(msg: dict[str, Any], pilot: Any) -> None:
        cmd = msg["cmd"]
        try:
            if cmd == "sync":
                result: Any = await _sync(app, probe, t0, pods, nodes, sync_timeout)
            elif cmd == "wait_paint":
                since = msg["since"]
                result = await probe.wait(lambda: probe.first_paint(msg["key"], msg["expect"], since),
                                          msg["timeout"])
            elif cmd == "keys":
                result = await _keys(app, pilot, probe, msg["n"], msg["timeout"])
            elif cmd == "stats":
                since = msg.get("since", 0.0)
                recent = [d for s, d, _, _ in probe.repaints if s >= since]
                result = {"cpu_s": time.process_time(), "frames": len(probe.frames), "repaint_s": recent,
                          "gc_full_s": [d for s, d in probe.gc_full if s >= since],
                          "pods": len(app.main.state.pods), "events": len(app.main.state.events),
                          "audit_received": audit.received if audit else 0,
                          "audit_malformed": audit.malformed if audit else 0}
            else:
                result = None
            conn.send({"id": msg["id"], "ok": True, "result": result})
        except Exception as exc:
            conn.send({"id": msg["id"], "ok": False, "error": f"{type(exc).__name__}: {exc}"})

    loop.add_reader(conn.fileno(), receive)
    tasks: set[asyncio.Task[None]] = set()
    try:
        async with app.run_test(size=size) as pilot:
            probe.attach_pane(app.query_one(PendingPodsPane))
            conn.send({"id": 0, "ok": True, "result": "running"})
            while True:
                msg = await inbox.get()
                if msg["cmd"] == "stop":
                    break
                task = asyncio.create_task(answer(msg, pilot))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            for task in tasks:
                task.cancel()
    finally:
        loop.remove_reader(conn.fileno())
        await source.close()
        if audit is not None:
            await audit.aclose()
        try:
            conn.send({"id": -1, "ok": True, "result": "stopped"})
        except OSError:
            pass


def main(conn: Connection, kubeconfig: str, pods: int, nodes: int, size: tuple[int, int], prefix: str,
         sync_timeout: float, audit_log: str | None = None) -> None:
    """Process entry point (``multiprocessing`` spawn target). ``audit_log``: follow the lab's audit log as
    ``observatory --audit-log FILE`` does (the audit variant)."""
    asyncio.run(_serve(conn, kubeconfig, pods, nodes, size, prefix, sync_timeout, audit_log))
