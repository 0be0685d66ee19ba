"""The options of one scheduler instance (``observatory schedule`` flags, or the TUI's), validated. Pure."""

from __future__ import annotations

import math
from dataclasses import dataclass

from observatory.scheduler.policies import DEFAULT_POLICY, POLICIES
from observatory.scheduling.sampling import check_percentage

__all__ = ["JITTER_FACTOR", "SchedulerOptions", "check_timings", "escape_selector_value", "field_selector"]

JITTER_FACTOR = 1.2
"""client-go ``leaderelection.JitterFactor``: acquire retries wait ``retry_period * (1 + rand * 1.2)``."""


def escape_selector_value(value: str) -> str:
    """``fields.EscapeValue``: backslash, comma and equals sign escaped with a backslash."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def field_selector(scheduler_name: str) -> str:
    """The pods waiting for ``scheduler_name``: ``spec.schedulerName=NAME,spec.nodeName=``."""
    return f"spec.schedulerName={escape_selector_value(scheduler_name)},spec.nodeName="


def check_timings(lease_duration: float, renew_deadline: float, retry_period: float) -> None:
    """``NewLeaderElector``'s validation, in words (ValueError); values must be finite, and a duration must fit
    the Lease's int32 ``leaseDurationSeconds``."""
    if not all(math.isfinite(v) for v in (lease_duration, renew_deadline, retry_period)):
        raise ValueError("--lease-duration, --renew-deadline and --retry-period must be finite numbers of seconds")
    if lease_duration > 2**31 - 1:
        raise ValueError(f"--lease-duration must be at most {2**31 - 1} seconds (the Lease's int32 field)")
    if lease_duration < 1:
        raise ValueError(f"--lease-duration must be at least 1 second (got {lease_duration:g})")
    if renew_deadline <= 0 or retry_period <= 0:
        raise ValueError("--renew-deadline and --retry-period must be greater than zero")
    if lease_duration <= renew_deadline:
        raise ValueError(f"--lease-duration ({lease_duration:g} s) must be greater than --renew-deadline "
                         f"({renew_deadline:g} s)")
    if renew_deadline <= JITTER_FACTOR * retry_period:
        raise ValueError(f"--renew-deadline ({renew_deadline:g} s) must be greater than {JITTER_FACTOR} x "
                         f"--retry-period ({JITTER_FACTOR * retry_period:g} s)")


@dataclass(frozen=True)
class SchedulerOptions:
    """How one scheduler instance runs. ``scheduler_name``: the pods' ``spec.schedulerName`` it serves (also its
    events' reportingController and, by default, its Lease's name). ``policy``: one of
    :data:`~.policies.POLICIES`. ``seed``: for the ``random`` policy. Lease timings in seconds (upstream defaults
    15, 10, 2). ``hostname``: for ``reportingInstance`` (``NAME-<hostname>``) and the Lease holder identity
    (``<hostname>_<uuid>``); default the machine's. ``bind_concurrency``: Bindings in flight at once.
    ``profiles``: further schedulerNames the same instance serves, as kube-scheduler's ``profiles`` do (each writes
    its events as its own reportingController, ``<profile>-<hostname>``). ``bind_delay``: seconds between a decision
    and its Binding POST (the lab's default-scheduler pauses so that watchers see the pod Pending first; 0 for
    kube-scheduler's behaviour). ``percentage_of_nodes_to_score``: KubeSchedulerConfiguration's global
    ``percentageOfNodesToScore`` (0: adaptive, upstream's default); ``profile_percentages``: (schedulerName,
    percent) pairs for profiles that set their own (``profiles[].percentageOfNodesToScore``)."""

    scheduler_name: str
    policy: str = DEFAULT_POLICY
    dry_run: bool = False
    leader_elect: bool = False
    seed: int | None = None
    lease_namespace: str = "kube-system"
    lease_name: str = ""
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    hostname: str = ""
    bind_concurrency: int = 16
    profiles: tuple[str, ...] = ()
    bind_delay: float = 0.0
    percentage_of_nodes_to_score: int = 0
    profile_percentages: tuple[tuple[str, int], ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """Every schedulerName served: ``scheduler_name`` first, then the further ``profiles``, without repeats."""
        return tuple(dict.fromkeys((self.scheduler_name, *self.profiles)))

    def validate(self) -> None:
        """ValueError, in words, for options that cannot run."""
        if not self.scheduler_name or self.scheduler_name != self.scheduler_name.strip():
            raise ValueError(f"--scheduler-name {self.scheduler_name!r} is not a schedulerName: it must be "
                             "non-empty, without leading or trailing spaces")
        if not (self.lease_name or self.scheduler_name) or not self.lease_namespace:
            raise ValueError("--lease-name and --lease-namespace may not be empty")
        if self.policy not in POLICIES:
            raise ValueError(f"unknown --policy {self.policy!r}: choose one of {', '.join(POLICIES)}")
        if self.bind_concurrency < 1:
            raise ValueError("bind concurrency must be at least 1")
        if not (math.isfinite(self.bind_delay) and self.bind_delay >= 0):
            raise ValueError(f"the bind delay must be a finite number of seconds, at least 0 (got {self.bind_delay})")
        check_percentage(self.percentage_of_nodes_to_score, "--percentage-of-nodes-to-score")
        for name, percentage in self.profile_percentages:
            check_percentage(percentage, f"percentageOfNodesToScore of profile {name!r}")
        for profile in self.profiles:
            if not profile or profile != profile.strip():
                raise ValueError(f"profile {profile!r} is not a schedulerName: it must be non-empty, without leading "
                                 "or trailing spaces")
        if self.leader_elect:
            if self.dry_run:
                raise ValueError("--dry-run writes nothing, not even a Lease: it cannot be combined with "
                                 "--leader-elect")
            check_timings(self.lease_duration, self.renew_deadline, self.retry_period)
