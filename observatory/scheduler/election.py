"""Leader election through a ``coordination.k8s.io/v1`` Lease, as client-go's ``tools/leaderelection`` does it.

``LeaderElector.run`` reproduces ``leaderelection.go`` with a ``LeaseLock`` (``resourcelock/leaselock.go``):

* **acquire**: every ``retry_period`` (jittered by up to 1.2 times, ``JitterFactor``), ``tryAcquireOrRenew``:
  ``GET /apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}``; a 404 creates the Lease with this
  candidate as holder (POST). A Lease held by someone else counts as valid for ``leaseDurationSeconds`` after this
  candidate *observed* it change (client-go never compares clocks with the holder's ``renewTime``); once it has
  expired, or when ``holderIdentity`` is empty (released), the candidate PUTs itself in as holder with
  ``leaseTransitions + 1``, under the resourceVersion it read, so of two candidates one gets 409 and loses.
* **renew**: the leader PUTs a fresh ``renewTime`` every ``retry_period`` (keeping ``acquireTime`` and
  ``leaseTransitions``); when no renewal succeeds within ``renew_deadline`` it has lost the lease and stops leading
  (kube-scheduler then exits).
* **holds** (:meth:`LeaderElector.holds`), checked before every act (each Binding, PreBind write, preemption,
  event and status write): the leader acts only while its last successful renewal *started* less than
  ``renew_deadline`` ago. client-go notices a missed deadline only when its renew loop's timeout fires
  (``renew`` in ``leaderelection.go``), and its package documentation says the implementation "does not
  guarantee that only one client is acting as a leader (a.k.a. fencing)"; a leader paused (SIGSTOP, a long GC, a
  suspended VM) past its lease would go on binding after it resumes, beside the candidate that took over. Since
  every other candidate waits ``lease_duration`` (longer than ``renew_deadline``) from when it observed that
  renewal, a leader that stops at the renew deadline has stopped before anyone else may start. What is left is an
  act already on the wire when the pause began. Times are read from the clock that keeps counting while the
  machine sleeps (``CLOCK_BOOTTIME`` where there is one, else the monotonic clock).
* **release** (``ReleaseOnCancel``, what kube-scheduler sets): on a clean stop the leader PUTs
  ``holderIdentity: ""``, ``leaseDurationSeconds: 1``, renew and acquire time now, so a waiting candidate takes over
  at its next retry instead of waiting out the lease.

Upstream's defaults (kube-scheduler's ``--leader-elect-*`` flags): lease 15 s, renew deadline 10 s, retry 2 s;
``NewLeaderElector``'s checks apply: lease > renew deadline > 1.2 x retry period > 0. ``leaseDurationSeconds`` is a
whole number of seconds (``int(LeaseDuration / time.Second)``).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from observatory.kube.fetch import ApiError, Unreachable, get_json, send_json
from observatory.kube.lease import lease_path
from observatory.scheduler.objects import lease_body, lease_spec, micro_time
from observatory.scheduler.options import JITTER_FACTOR, check_timings

__all__ = ["JITTER_FACTOR", "LeaderElector", "check_timings", "uptime"]


def uptime() -> float:
    """Seconds on a clock that never goes back and keeps counting through a suspend (``CLOCK_BOOTTIME``; the
    monotonic clock where the system has none)."""
    boottime = getattr(time, "CLOCK_BOOTTIME", None)
    return time.clock_gettime(boottime) if boottime is not None else time.monotonic()


class LeaderElector:
    """One candidate, ``identity`` (``<hostname>_<uuid>``), for the Lease ``namespace/name``. ``leading`` is set
    while this candidate holds the Lease; ``renewed`` is set on each successful acquire or renewal (a waiter
    clears it first). ``log`` gets one sentence per change of leader. ``clock`` gives the seconds every
    observation and renewal is stamped with (default :func:`uptime`)."""

    def __init__(self, api: Any, namespace: str, name: str, identity: str, *, lease_duration: float = 15.0,
                 renew_deadline: float = 10.0, retry_period: float = 2.0,
                 log: Callable[[str], None] | None = None, clock: Callable[[], float] | None = None) -> None:
        check_timings(lease_duration, renew_deadline, retry_period)
        self.api = api
        self.namespace, self.name, self.identity = namespace, name, identity
        self.lease_duration, self.renew_deadline, self.retry_period = lease_duration, renew_deadline, retry_period
        self.log = log or (lambda _line: None)
        self.leading = asyncio.Event()
        self.renewed = asyncio.Event()
        self._clock = clock or uptime
        self._renewed_at: float | None = None  # when the last successful acquire or renewal started
        self._lease: dict[str, Any] | None = None  # the object last read or written (its resourceVersion)
        self._observed: dict[str, Any] = {}  # the spec last observed
        self._observed_raw = ""
        self._observed_at = 0.0  # when that observation was made (self._clock)
        self._reported = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def is_leader(self) -> bool:
        return self._observed.get("holderIdentity") == self.identity

    @property
    def holder(self) -> str:
        """The last observed holder ("" when none)."""
        return str(self._observed.get("holderIdentity") or "")

    def holds(self) -> bool:
        """True while this candidate leads and its last successful acquire or renewal started less than
        ``renew_deadline`` seconds ago: the check before every act (module docstring, **holds**)."""
        return (self.leading.is_set() and self._renewed_at is not None
                and self._clock() - self._renewed_at < self.renew_deadline)

    def lapse(self) -> str:
        """Why :meth:`holds` is False, as one clause: ``the Lease NS/NAME was last renewed 31.2 s ago, longer
        than its renew deadline of 10 s`` (or that it is not held)."""
        if not self.leading.is_set() or self._renewed_at is None:
            return f"the Lease {self.key} is not held"
        return (f"the Lease {self.key} was last renewed {self._clock() - self._renewed_at:.1f} s ago, longer than "
                f"its renew deadline of {self.renew_deadline:g} s")

    def _renewed(self, started: float) -> bool:
        """Record a successful acquire or renewal that started at ``started``; always True."""
        self._renewed_at = started
        self.renewed.set()
        return True

    def _lease_valid(self, now: float) -> bool:
        return self._observed_at + float(self._observed.get("leaseDurationSeconds") or 0) > now

    def _observe(self, spec: dict[str, Any], now: float) -> None:
        self._observed, self._observed_at = spec, now

    def _report(self) -> None:
        holder = self.holder
        if holder != self._reported:
            self._reported = holder
            if holder and holder != self.identity:
                self.log(f"Lease {self.key} is held by {holder}: standing by.")

    def _record(self, now: datetime, *, acquired: str | None, transitions: int) -> dict[str, Any]:
        spec = lease_spec(self.identity, int(self.lease_duration), now, now, transitions)
        if acquired:
            spec["acquireTime"] = acquired
        return spec

    async def _update(self, spec: dict[str, Any]) -> None:
        """PUT ``spec`` into the Lease last read (optimistic concurrency on its resourceVersion)."""
        assert self._lease is not None
        body = {**self._lease, "spec": spec}
        self._lease = await send_json(self.api, "PUT", lease_path(self.namespace, self.name), body,
                                      timeout=self.renew_deadline)

    async def try_acquire_or_renew(self) -> bool:
        """``tryAcquireOrRenew``: True when this candidate holds the Lease afterwards."""
        now_mono, now = self._clock(), datetime.now(UTC)
        if self.is_leader and self._lease_valid(now_mono) and self._lease is not None:  # the fast path
            spec = self._record(now, acquired=self._observed.get("acquireTime"),
                                transitions=int(self._observed.get("leaseTransitions") or 0))
            try:
                await self._update(spec)
                self._observe(spec, now_mono)
                return self._renewed(now_mono)
            except (ApiError, Unreachable):
                pass  # fall back to the slow path
        try:
            lease = await get_json(self.api, lease_path(self.namespace, self.name), timeout=self.renew_deadline)
        except ApiError as exc:
            if exc.status != 404:
                return self._failed(f"error retrieving resource lock {self.key}", exc)
            spec = self._record(now, acquired=None, transitions=0)
            try:
                self._lease = await send_json(
                    self.api, "POST", f"/apis/coordination.k8s.io/v1/namespaces/{quote(self.namespace, safe='')}"
                    "/leases", lease_body(self.namespace, self.name, spec), timeout=self.renew_deadline)
            except (ApiError, Unreachable) as exc:
                return self._failed("error initially creating leader election record", exc)
            self._observe(spec, now_mono)
            return self._renewed(now_mono)
        except Unreachable as exc:
            return self._failed(f"error retrieving resource lock {self.key}", exc)
        spec_now = lease.get("spec") or {}
        raw = json.dumps(spec_now, sort_keys=True)
        if raw != self._observed_raw:
            self._observe(dict(spec_now), now_mono)
            self._observed_raw = raw
        self._lease = lease
        if self.holder and self._lease_valid(now_mono) and not self.is_leader:
            return False
        if self.is_leader:
            spec = self._record(now, acquired=self._observed.get("acquireTime"),
                                transitions=int(self._observed.get("leaseTransitions") or 0))
        else:
            spec = self._record(now, acquired=None, transitions=int(self._observed.get("leaseTransitions") or 0) + 1)
        try:
            await self._update(spec)
        except (ApiError, Unreachable) as exc:
            return self._failed("Failed to update lock", exc)
        self._observe(spec, now_mono)
        return self._renewed(now_mono)

    def _failed(self, what: str, exc: Exception) -> bool:
        """Log a failed attempt in client-go's leaderelection words (``error retrieving resource lock NS/NAME: …``,
        ``error initially creating leader election record: …``, ``Failed to update lock: …``), once per distinct
        message so a retry every ``retry_period`` does not flood the output; always False."""
        line = f"{what}: {exc}"
        if line != getattr(self, "_last_failure", None):
            self._last_failure = line
            self.log(line)
        return False

    async def acquire(self) -> None:
        """Return once this candidate holds the Lease (retrying every jittered ``retry_period``)."""
        while True:
            ok = await self.try_acquire_or_renew()
            self._report()
            if ok:
                self.leading.set()
                self.log(f"Leading: acquired Lease {self.key} as {self.identity}.")
                return
            await asyncio.sleep(self.retry_period * (1 + random.random() * JITTER_FACTOR))

    async def renew(self) -> None:
        """Renew every ``retry_period`` until no renewal succeeds within ``renew_deadline``; then return (the lease
        is lost and ``leading`` is cleared)."""
        try:
            while True:
                try:
                    async with asyncio.timeout(self.renew_deadline):
                        while not await self.try_acquire_or_renew():
                            await asyncio.sleep(self.retry_period)
                except TimeoutError:
                    return
                await asyncio.sleep(self.retry_period)
        finally:
            self.leading.clear()

    async def release(self) -> bool:
        """Give the Lease up if this candidate holds it (``holderIdentity: ""``, ``leaseDurationSeconds: 1``).
        Returns whether the Lease is no longer ours as far as we know."""
        if not self.is_leader or self._lease is None:
            return True
        now = datetime.now(UTC)
        spec = {"holderIdentity": "", "leaseDurationSeconds": 1, "acquireTime": micro_time(now),
                "renewTime": micro_time(now), "leaseTransitions": int(self._observed.get("leaseTransitions") or 0)}
        self.leading.clear()
        try:
            await self._update(spec)
        except (ApiError, Unreachable) as exc:
            self.log(f"Lease {self.key} could not be released: {exc}")
            return False
        self._observe(spec, self._clock())
        return True
