"""The break-it finding, as a person meets it: an ``observatory schedule --leader-elect`` leader paused (SIGSTOP)
for longer than its Lease, while a second instance takes over; after SIGCONT the paused one sends no Binding (it is
past its renew deadline, so it never acts again before a renewal, which now fails), and stops as kube-scheduler
does. Bounded: a lab, two instances and a pause of about one Lease duration (4 s)."""

from __future__ import annotations

import signal

from tests.e2e.test_kubectl_seed import Lab
from tests.scheduler.conftest import pod_manifest
from tests.scheduler.test_cli_lab import Instance, apply, instances, lab, node_of, start, wait

__all__ = ["instances", "lab"]

LEASE = ("--lease-name", "paused", "--lease-duration", "4", "--renew-deadline", "3", "--retry-period", "0.5")
"""Short, but long enough that the standby keeps renewing on a loaded CI machine (if it missed its own deadline,
the resumed instance could take the Lease back legitimately and bind)."""


def test_a_paused_leader_binds_nothing_after_it_resumes(lab: Lab, instances: list[Instance]):
    a = start(lab, instances, "a", "-n", "sched-lab", "--leader-elect", *LEASE)
    wait(lambda: "Leading: acquired Lease kube-system/paused" in a.errors(), "a to lead")
    b = start(lab, instances, "b", "-n", "sched-lab", "--leader-elect", *LEASE)
    wait(lambda: f"held by {a.identity()}: standing by" in b.errors(), "b to stand by")

    a.proc.send_signal(signal.SIGSTOP)
    try:
        wait(lambda: "Leading: acquired Lease kube-system/paused" in b.errors(), "b to take over", 30)
        # b waited out a's lease (4 s) from its last observed renewal: a is past its 3 s renew deadline.
        before = len(a.lines())  # a is stopped: nothing more can reach its output until SIGCONT
    finally:
        a.proc.send_signal(signal.SIGCONT)
    names = [f"after-pause-{i}" for i in range(8)]
    apply(lab, *(pod_manifest(name) for name in names))  # while a still holds its stale view of the Lease
    wait(lambda: all(node_of(lab, name) for name in names), "the pods bound")
    code = a.proc.wait(timeout=60)  # a's renewal gives up: Lost the Lease, as kube-scheduler exits
    acted = [line for line in a.lines()[before:] if not line.startswith("skipped ")]
    assert acted == [], f"the paused leader acted after SIGCONT; the standby said: {b.errors()}"
    assert code == 1 and "Lost the Lease kube-system/paused" in a.errors()
    wait(lambda: {line.split()[1] for line in b.lines() if line.startswith("bound ")}
         >= {f"sched-lab/{name}" for name in names}, "b's lines")
    assert "Traceback" not in a.errors() + b.errors()
