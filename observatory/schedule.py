"""``observatory schedule --scheduler-name NAME``: run a real scheduler until Ctrl-C or SIGTERM.

Connects like ``observatory why`` (``--kubeconfig``/``--context``, in-cluster, or the embedded lab with ``--lab`` or
when there is no kubeconfig at all: then the lab's URL and kubeconfig path go to stderr so kubectl can create pods
in it). Scope: every namespace, as a scheduler serves the whole cluster; ``-n NS`` restricts it to one namespace
(``-A`` says the default explicitly). The bound pods and the nodes are always watched in every namespace.

stdout gets one line per decision (:meth:`~observatory.model.decisions.SchedulingDecision.summary`, or with
``-o json`` one JSON object per line); stderr gets what is not a decision (synced, leading, watch trouble).
Exit codes: 0 stopped by Ctrl-C/SIGTERM (the Lease, if held, released); 1 the Lease was lost or the embedded lab
could not start; 2 bad input, or the cluster cannot be reached (one paragraph).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
from typing import TYPE_CHECKING, Any, TextIO

from observatory.cliflags import add_connection_flags
from observatory.model.text import safe
from observatory.scheduler.options import SchedulerOptions
from observatory.scheduler.policies import DEFAULT_POLICY, POLICIES

if TYPE_CHECKING:
    from observatory.model.decisions import SchedulingDecision

__all__ = ["add_parser", "run"]

EXIT_STOPPED, EXIT_USAGE = 1, 2
PROG = "observatory schedule"


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register ``schedule``. Connection flags after the subcommand default to SUPPRESS, as ``why``'s do, so a
    value given before the subcommand is kept."""
    p = commands.add_parser(
        "schedule", help="run a scheduler for one schedulerName: watch, filter, score, bind, write events",
        description="Run a scheduler for the pods whose spec.schedulerName is NAME, in every namespace unless -n "
        "NS restricts it: watch them, filter and score "
        "the nodes with kube-scheduler's plugins, POST the Binding, write Scheduled/FailedScheduling events "
        "(events.k8s.io/v1) and the PodScheduled condition; one line per decision on stdout. Ctrl-C or SIGTERM "
        "stops it (exit 0).")
    p.add_argument("--scheduler-name", required=True, metavar="NAME", help="the pods' spec.schedulerName to serve")
    p.add_argument("--policy", choices=POLICIES, default=DEFAULT_POLICY,
                   help="how to choose among the feasible nodes (default least-allocated: kube-scheduler's "
                   "default scoring; most-allocated packs; spread: fewest pods; first-fit: first by name; random)")
    p.add_argument("--seed", type=int, default=None, help="seed for --policy random (reproducible choices)")
    p.add_argument("--dry-run", action="store_true",
                   help="decide and print, but send nothing: no Binding, event, status patch or Lease")
    p.add_argument("--leader-elect", action="store_true",
                   help="run only while holding a coordination.k8s.io/v1 Lease (one active instance at a time)")
    p.add_argument("--lease-namespace", default="kube-system", metavar="NS",
                   help="namespace of the leader-election Lease (default kube-system)")
    p.add_argument("--lease-name", default="", metavar="NAME", help="name of the Lease (default: the scheduler name)")
    p.add_argument("--lease-duration", type=float, default=15.0, metavar="S",
                   help="seconds a standby waits after the last observed renewal before taking over (default 15)")
    p.add_argument("--renew-deadline", type=float, default=10.0, metavar="S",
                   help="seconds the leader keeps trying to renew before giving up leadership (default 10)")
    p.add_argument("--retry-period", type=float, default=2.0, metavar="S",
                   help="seconds between acquire and renew attempts (default 2)")
    p.add_argument("--percentage-of-nodes-to-score", type=int, default=0, metavar="P",
                   help="percentageOfNodesToScore: stop filtering once P %% of the nodes are feasible (0, the "
                   "default: adaptive, 50 %% minus 1 %% per 125 nodes, at least 5 %%; never fewer than 100 nodes)")
    p.add_argument("-o", "--output", choices=("text", "json"), default="text",
                   help="text: one line per decision (default); json: one JSON object per line")
    p.add_argument("-n", "--namespace", metavar="NS", default=argparse.SUPPRESS,
                   help="schedule the pods of this namespace only (default: every namespace)")
    p.add_argument("-A", "--all-namespaces", action="store_true", default=argparse.SUPPRESS,
                   help="schedule the pods of every namespace (the default)")
    add_connection_flags(p)


def options_from(args: argparse.Namespace) -> SchedulerOptions:
    """The validated options of the parsed flags (ValueError in words)."""
    options = SchedulerOptions(
        scheduler_name=args.scheduler_name, policy=args.policy, dry_run=args.dry_run,
        leader_elect=args.leader_elect, seed=args.seed, lease_namespace=args.lease_namespace,
        lease_name=args.lease_name, lease_duration=args.lease_duration, renew_deadline=args.renew_deadline,
        retry_period=args.retry_period, percentage_of_nodes_to_score=args.percentage_of_nodes_to_score)
    options.validate()
    return options


def run(settings: Any, args: argparse.Namespace) -> int:
    """The ``schedule`` subcommand; returns the exit code."""
    try:
        options = options_from(args)
        if getattr(args, "namespace", None) and getattr(args, "all_namespaces", False):
            raise ValueError("-n/--namespace and -A/--all-namespaces exclude each other")
    except ValueError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_main(settings, args, options))
    return 0


async def _main(settings: Any, args: argparse.Namespace, options: SchedulerOptions, out: TextIO | None = None,
                err: TextIO | None = None) -> int:
    from observatory.connection import NotConnected, connected

    out, err = out or sys.stdout, err or sys.stderr
    try:
        async with connected(settings.lab, kubeconfig=getattr(args, "kubeconfig", None),
                             context=getattr(args, "context", None), namespace=getattr(args, "namespace", None),
                             lab=getattr(args, "lab", False), scenario=getattr(args, "scenario", None), err=err,
                             announce=True) as cluster:
            namespace = None if getattr(args, "all_namespaces", False) else getattr(args, "namespace", None) or None
            return await _serve(cluster.connection.api, options, namespace, args.output, out, err)
    except NotConnected as exc:
        return exc.exit_code


def decision_line(decision: SchedulingDecision, output: str) -> str:
    """One line of ``schedule``'s stdout for ``decision``: its JSON (``output == "json"``; ``json.dumps`` with
    ``ensure_ascii`` writes every control and non-ASCII character as a ``\\uNNNN`` escape) or its summary with
    control characters shown as escapes (:func:`~observatory.model.text.safe`). Pod names, node names, taints and
    API server messages are cluster text, so neither form sends a raw ESC, BEL or C1 control to a terminal or a
    file."""
    if output == "json":
        return json.dumps(decision.to_json())
    return safe(decision.summary())


async def _serve(api: Any, options: SchedulerOptions, namespace: str | None, output: str, out: TextIO,
                 err: TextIO) -> int:
    """Run the scheduler until a signal (0) or a lost Lease (1), printing decisions to ``out``."""
    from observatory.model.decisions import SchedulerStopped
    from observatory.scheduler.loop import Scheduler

    def log(line: str) -> None:
        print(safe(f"{PROG}: {line}"), file=err, flush=True)

    scheduler = Scheduler(api, options, namespace=namespace, log=log)
    scope = f"namespace {namespace}" if namespace else "every namespace"
    mode = ", dry run: nothing is sent" if options.dry_run else ""
    election = f", leader election on Lease {options.lease_namespace}/{options.lease_name or options.scheduler_name}" \
        if options.leader_elect else ""
    log(f"scheduling the pods with schedulerName {options.scheduler_name} in {scope} (policy {options.policy}"
        f"{mode}{election}); identity {scheduler.identity}")

    async def consume() -> None:
        async with contextlib.aclosing(scheduler.decisions()) as decisions:  # closing it stops the watches
            async for decision in decisions:
                out.write(decision_line(decision, output) + "\n")
                out.flush()

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    consumer = asyncio.create_task(consume())
    stopper = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({consumer, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if not consumer.done():
            consumer.cancel()
        try:
            await consumer
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            log("stopped.")
        except SchedulerStopped as exc:
            log(str(exc))
            return EXIT_STOPPED
        except BrokenPipeError:  # the reader went away (| head): stop quietly
            with contextlib.suppress(AttributeError, OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
            return EXIT_STOPPED
        except Exception as exc:
            log(f"stopped by an unexpected error: {type(exc).__name__}: {exc}")
            return EXIT_STOPPED
        return 0
    finally:
        stopper.cancel()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
