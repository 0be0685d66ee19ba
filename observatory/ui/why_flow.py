"""Why is the selected pod pending: the Why pane's content, kube-scheduler's Lease behind it, and ``m`` for the raw
message. A mixin of :class:`~observatory.ui.app.ObservatoryApp`, kept apart so the app module stays small.

The diagnosis and the fit preview are recomputed only when the selection or what they depend on changed (the app's
dirty areas), and the pane repaints only when the result differs. The Lease is read in an exclusive worker, at most
every ``lease_interval`` seconds and only while a pod no default-scheduler has looked at is selected.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from textual import work

from observatory.model.diagnosis import NO_SCHEDULER, SCHEDULER_LEASE, Diagnosis
from observatory.model.records import LeaseView
from observatory.model.state import ClusterState
from observatory.scheduling.pods import DEFAULT_SCHEDULER_NAME
from observatory.ui.screens.raw_message import RawMessageScreen
from observatory.ui.widgets.why_pane import WhyPane

if TYPE_CHECKING:
    from observatory.ui.source import Source

WHY_AREAS = frozenset({"pods", "nodes", "events", "why"})
"""Dirty areas that can change a diagnosis or a fit preview ("why": the selection or the Lease changed)."""
TEXT_REFRESH = timedelta(seconds=1)
"""The diagnosis says "last 5s ago": recompute it this often even when nothing else changed."""
SELECTION_WAIT = 0.5
"""Seconds the Why pane waits at most for the frame that shows a newly selected pod's cursor."""
REFIT_EVERY = 0.25
"""Seconds between two fit previews of the same pod under churn. A preview filters every node (about 20 ms at 1,000
nodes); pods binding elsewhere change it every repaint. The latest change is always fitted, at most this late."""


def wants_lease(diagnosis: Diagnosis | None) -> bool:
    """Only a pod that the default scheduler was expected to look at, and has not, needs kube-scheduler's Lease."""
    return (diagnosis is not None and diagnosis.state == NO_SCHEDULER
            and diagnosis.scheduler_name == DEFAULT_SCHEDULER_NAME)


class WhyFlow:
    """The Why pane for the selected pod, kube-scheduler's Lease, and the raw-message modal."""

    state: ClusterState
    source: Source
    selected: str | None
    lease_interval: float
    _dirty: set[str]
    lease: LeaseView | None = None
    """kube-scheduler's Lease as last read (None until read)."""
    _lease_read_at: float | None = None
    _why_at: datetime | None = None
    _wants_lease: bool = False
    _fit_facts: tuple | None = None
    _fit_at = float("-inf")  # time.monotonic() of the last fit preview
    _refit_waiting = False  # what the preview reads changed since, within REFIT_EVERY of it
    selection_since: float | None = None
    """time.monotonic() when another pod was selected, until the frame showing its cursor is painted."""

    def show_why(self, dirty: set[str], now: datetime) -> None:
        """Recompute the selected pod's diagnosis (and, when pods or nodes changed, its fit) and hand both to the
        Why pane, which repaints only what differs; read kube-scheduler's Lease when the diagnosis needs it."""
        if self.selection_since is not None and time.monotonic() - self.selection_since < SELECTION_WAIT:
            return  # another pod was just selected: its cursor is painted first (ObservatoryApp.watch_selected)
        refit_due = self._refit_waiting and time.monotonic() - self._fit_at >= REFIT_EVERY
        if dirty & WHY_AREAS or refit_due or self._why_at is None or now - self._why_at >= TEXT_REFRESH:
            self._why_at = now
            self._wants_lease = self._diagnose(dirty)
        if self._wants_lease:
            self._read_lease_when_due()

    def _diagnose(self, dirty: set[str]) -> bool:
        """Show the selected pod's diagnosis and fit; True when the diagnosis needs kube-scheduler's Lease."""
        pane = self.query_one(WhyPane)
        key = self.selected if self.selected in self.state.pods else None
        if key is None:
            pane.show(None, None, None)
            return False
        scope = self.source.namespace
        diagnosis = self.state.diagnosis(key, lease=self.lease, scope=scope)
        shown = pane.preview
        facts = (key, scope, self.state.fit_generation)  # an unchanged generation: the preview still holds
        changed = facts != self._fit_facts and (bool(dirty & WHY_AREAS) or self._refit_waiting)
        at = time.monotonic()
        refit = shown is None or shown.pod != key or (changed and at - self._fit_at >= REFIT_EVERY)
        self._refit_waiting = changed and not refit  # fitted on a later repaint (show_why), once REFIT_EVERY is over
        if refit:
            self._fit_facts, self._fit_at = facts, at
        pane.show(key, diagnosis, self.state.fit(key, scope) if refit else shown)
        return wants_lease(diagnosis)

    def _read_lease_when_due(self) -> None:
        at = time.monotonic()
        if self._lease_read_at is None or at - self._lease_read_at >= self.lease_interval:
            self._lease_read_at = at
            self.read_scheduler_lease()

    @work(exclusive=True, group="lease", exit_on_error=False)
    async def read_scheduler_lease(self) -> None:
        """GET kube-system/kube-scheduler; the source never raises (a 403 or 404 comes back as the Lease's
        ``problem``), so what is shown is always the latest answer."""
        self.lease = await self.source.read_lease(*SCHEDULER_LEASE)
        self._dirty.add("why")

    def action_raw_message(self) -> None:
        """``m``: the selected pod's scheduler message, verbatim and copyable."""
        key = self.selected
        if key is None:
            self.notify("Select a pod in the pending pods pane first.", title="Raw message")
            return
        diagnosis = self.state.diagnosis(key, lease=self.lease, scope=self.source.namespace)
        raw = diagnosis.raw_message if diagnosis is not None else ""
        self.push_screen(RawMessageScreen(f"Scheduler message for {key}", raw,
                                          _message_source(self.state, key, diagnosis) if raw else ""))


def _message_source(state: ClusterState, key: str, diagnosis: Diagnosis) -> str:
    """Where the raw message was read: the PodScheduled condition, else the latest FailedScheduling event."""
    pod = state.pods.get(key)
    condition = pod.scheduled if pod is not None else None
    if condition is not None and condition[2] == diagnosis.raw_message:
        where = f"from the PodScheduled condition (status {condition[0]}, reason {condition[1]})"
    else:
        where = "from the latest FailedScheduling event"
    if diagnosis.refused_by:
        times = f" {diagnosis.refusals} times" if diagnosis.refusals > 1 else ""
        where += f"; {diagnosis.refused_by} reported it{times}"
    return where
