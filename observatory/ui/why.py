"""Why is the selected pod pending: :class:`WhyController` gives the Why pane its diagnosis and fit preview, and
keeps kube-scheduler's Lease behind it; ``m`` shows the raw message.

The diagnosis and the fit preview are recomputed only when the selection or what they depend on changed (the
screen's dirty areas), and the pane repaints only when the result differs. The Lease is read in an exclusive worker
of the screen, at most every ``lease_interval`` seconds and only while a pod no default-scheduler has looked at is
selected.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Protocol

from observatory.model.diagnosis import NO_SCHEDULER, SCHEDULER_LEASE, Diagnosis
from observatory.model.fit import compared
from observatory.model.records import LeaseView
from observatory.model.state import ClusterState
from observatory.scheduling.pods import DEFAULT_SCHEDULER_NAME
from observatory.ui.areas import WHY_INPUTS, Area
from observatory.ui.host import Panes, ScreenFacts

__all__ = ["REFIT_EVERY", "SELECTION_WAIT", "TEXT_REFRESH", "WhyController", "WhyHost", "message_source",
           "wants_lease"]

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


class WhyHost(ScreenFacts, Protocol):
    """What the Why pane's controller needs from the screen."""

    @property
    def selected(self) -> str | None: ...

    @property
    def panes(self) -> Panes: ...

    @property
    def selection_since(self) -> float | None:
        """time.monotonic() when another pod was selected, until the frame showing its cursor is painted."""
        ...

    def read_scheduler_lease(self) -> None:
        """Run :meth:`WhyController.read_lease` in an exclusive worker."""
        ...


class WhyController:
    """The Why pane for the selected pod, and kube-scheduler's Lease as last read."""

    def __init__(self, host: WhyHost, *, lease_interval: float) -> None:
        self.host, self.lease_interval = host, lease_interval
        self.lease: LeaseView | None = None
        """kube-scheduler's Lease as last read (None until read)."""
        self._lease_read_at: float | None = None
        self._why_at: datetime | None = None
        self._wants_lease = False
        self._fit_facts: tuple[str, str | None, int] | None = None
        self._fit_at = float("-inf")  # time.monotonic() of the last fit preview
        self._refit_waiting = False  # what the preview reads changed since, within REFIT_EVERY of it

    def show(self, dirty: Area, now: datetime) -> None:
        """Recompute the selected pod's diagnosis (and, when pods or nodes changed, its fit) and hand both to the
        Why pane, which repaints only what differs; read kube-scheduler's Lease when the diagnosis needs it."""
        since = self.host.selection_since
        if since is not None and time.monotonic() - since < SELECTION_WAIT:
            return  # another pod was just selected: its cursor is painted first (MainScreen.watch_selected)
        refit_due = self._refit_waiting and time.monotonic() - self._fit_at >= REFIT_EVERY
        if dirty & WHY_INPUTS or refit_due or self._why_at is None or now - self._why_at >= TEXT_REFRESH:
            self._why_at = now
            self._wants_lease = self._diagnose(dirty)
        if self._wants_lease:
            self._read_lease_when_due()

    def _diagnose(self, dirty: Area) -> bool:
        """Show the selected pod's diagnosis and fit; True when the diagnosis needs kube-scheduler's Lease."""
        state, pane, selected = self.host.state, self.host.panes.why, self.host.selected
        key = selected if selected in state.pods else None
        if key is None:
            pane.show(None, None, None)
            return False
        scope = state.node_scope(self.host.source.namespace)
        diagnosis = state.diagnosis(key, lease=self.lease, scope=scope)
        shown = pane.preview
        facts = (key, scope, state.fit_generation)  # an unchanged generation: the preview still holds
        changed = facts != self._fit_facts and (bool(dirty & WHY_INPUTS) or self._refit_waiting)
        at = time.monotonic()
        refit = shown is None or shown.pod != key or (changed and at - self._fit_at >= REFIT_EVERY)
        self._refit_waiting = changed and not refit  # fitted on a later repaint (show), once REFIT_EVERY is over
        if refit:
            self._fit_facts, self._fit_at = facts, at
        preview = state.fit(key, scope) if refit else shown
        pane.show(key, diagnosis, compared(preview, diagnosis.refusal if diagnosis else None) if preview else None)
        return wants_lease(diagnosis)

    def _read_lease_when_due(self) -> None:
        at = time.monotonic()
        if self._lease_read_at is None or at - self._lease_read_at >= self.lease_interval:
            self._lease_read_at = at
            self.host.read_scheduler_lease()

    async def read_lease(self) -> None:
        """GET kube-system/kube-scheduler; the source never raises (a 403 or 404 comes back as the Lease's
        ``problem``), so what is shown is always the latest answer."""
        self.lease = await self.host.source.read_lease(*SCHEDULER_LEASE)

    def raw_message(self, key: str) -> tuple[str, str]:
        """``m``: the selected pod's scheduler message, verbatim, and where it was read ("" when there is none)."""
        state = self.host.state
        diagnosis = state.diagnosis(key, lease=self.lease, scope=state.node_scope(self.host.source.namespace))
        raw = diagnosis.raw_message if diagnosis is not None else ""
        return raw, (message_source(state, key, diagnosis) if raw and diagnosis is not None else "")


def message_source(state: ClusterState, key: str, diagnosis: Diagnosis) -> str:
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
