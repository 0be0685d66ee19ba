"""The ``observatory`` command line: parse arguments, build Settings, run the app, the lab or ``why``.

Every failure the user can cause (a bad scenario, a port in use, a bad flag) ends as one readable message on stderr
and a non-zero exit; no traceback reaches the terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from observatory import __version__, classroom, schedule
from observatory.cliflags import add_audit_flags, add_connection_flags
from observatory.lab import fault_cli
from observatory.lab.audit import flags as audit_flags
from observatory.settings import Settings

if TYPE_CHECKING:
    from observatory.connection import Connected
    from observatory.kube.audit_feed import AuditHub
    from observatory.kube.source import ClusterSource

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="observatory",
        description="Make Kubernetes scheduling visible and hands-on.",
    )
    parser.add_argument("--version", action="version", version=f"observatory {__version__}")
    parser.add_argument("--kubeconfig", metavar="PATH",
                        help="kubeconfig to use (default: $KUBECONFIG, then ~/.kube/config; with none, the lab)")
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context (default: the current context)")
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("-n", "--namespace", metavar="NS", help="namespace to watch (default: the context's)")
    scope.add_argument("-A", "--all-namespaces", action="store_true", help="watch every namespace")
    parser.add_argument("--lab", action="store_true",
                        help="use the embedded lab (simulated cluster) even when a kubeconfig exists")
    parser.add_argument("--scenario", default=None, metavar="NAME|PATH",
                        help="lab scenario for --lab (default manual-binding, or the --lesson's)")
    parser.add_argument("--read-only", action="store_true", help="never send a Binding")
    add_audit_flags(parser)
    classroom.add_flags(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    lab = commands.add_parser("lab", help="the embedded Kubernetes-API-compatible lab server",
                              description="The embedded Kubernetes-API-compatible lab server.")
    lab_commands = lab.add_subparsers(dest="lab_command", metavar="LAB_COMMAND")
    serve = lab_commands.add_parser(
        "serve",
        help="run the lab API server in the foreground",
        description="Run the lab API server in the foreground until Ctrl-C or SIGTERM. Prints the server URL and "
        "the kubeconfig path (context observatory-lab); never writes ~/.kube/config.",
    )
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1; any other address gets HTTPS and a token)")
    serve.add_argument("--port", type=int, default=0, help="port to listen on (default 0: a free port)")
    serve.add_argument("--scenario", default="pair", metavar="NAME|PATH",
                       help="scenario to load: a name from 'observatory lab scenarios' or a YAML file (default pair)")
    serve.add_argument("--kubeconfig-out", type=Path, metavar="PATH",
                       help="where to write the kubeconfig (default: under the user's cache directory)")
    serve.add_argument("--state", type=Path, metavar="PATH",
                       help="keep every object in this SQLite database, each write committed before it is "
                       "answered, and reload it at start (an earlier lab's JSON state file is migrated once)")
    serve.add_argument("--event-ttl", type=event_ttl, default=None, metavar="DURATION",
                       help="how long an Event is kept after its last write, as kube-apiserver's --event-ttl: a Go "
                       "duration such as 1h, 30m or 90s (default 1h; 0 keeps Events forever)")
    serve.add_argument("--scheduler-name", action="append", default=[], metavar="NAME",
                       help="another schedulerName the lab's default-scheduler answers to (repeatable)")
    serve.add_argument("--no-scheduler", action="store_true", help="do not run the simulated default-scheduler")
    serve.add_argument("--no-kubelet", action="store_true", help="do not run the simulated kubelets")
    serve.add_argument("--no-pv-controller", action="store_true",
                       help="do not run the simulated PersistentVolume controller and local-path provisioner")
    serve.add_argument("--token", action="store_true",
                       help="require a bearer token even on 127.0.0.1, over HTTPS with a generated CA (kubectl "
                       "sends credentials only over TLS); the kubeconfig carries both")
    serve.add_argument("--rbac", type=Path, metavar="FILE",
                       help="RBAC mode: a YAML file of users (token, namespaces, rules); other requests get 403 "
                       "Forbidden. HTTPS as with --token; the kubeconfig is the first user's (see README)")
    audit_flags.add_flags(serve)  # kube-apiserver's --audit-* flags (lab/audit/flags.py)
    lab_commands.add_parser("scenarios", help="list the scenarios the lab ships",
                            description="List the scenarios the lab ships.")
    fault_cli.add_parser(lab_commands)  # observatory lab fault KIND (lab/fault_cli.py)
    add_why_parser(commands)
    classroom.add_parsers(commands)
    schedule.add_parser(commands)
    return parser


def event_ttl(text: str) -> int:
    """``--event-ttl``: a Go duration (``time.ParseDuration``), in whole seconds as kube-apiserver passes it on
    (``uint64(EventTTL.Seconds())``). A bad value gets pflag's sentence (``flag.go``: ``invalid argument %q for %q
    flag: %v``) around Go's error; a negative one is refused."""
    from observatory.lab.goparse import flag_duration

    nanoseconds = flag_duration("--event-ttl", text)
    if nanoseconds < 0:
        raise argparse.ArgumentTypeError(f"{text}: an Event TTL cannot be negative (0 keeps Events forever)")
    return nanoseconds // 1_000_000_000


def add_why_parser(commands: argparse._SubParsersAction) -> None:
    """``observatory why POD``. The connection flags are also accepted after the subcommand; their copies here
    default to SUPPRESS so that a value given before the subcommand is not overwritten by a subparser default."""
    why = commands.add_parser(
        "why", help="print why one pod is where it is, and which nodes it fits, without starting the TUI",
        description="Print the diagnosis of one pod (why it is Pending, with the scheduler's message parsed) and "
        "the node-fit table (per node: the filter that rejects it and the numbers behind that), then exit. "
        "Exit codes: 0 printed, 1 the API server answered with an error (e.g. the pod does not exist), 2 the "
        "cluster cannot be reached or the input is wrong.")
    why.add_argument("pod", metavar="POD", help="the pod's name (or pod/NAME)")
    why.add_argument("-n", "--namespace", metavar="NS", default=argparse.SUPPRESS,
                     help="the pod's namespace (default: the context's, like kubectl)")
    why.add_argument("-o", "--output", choices=("text", "json"), default="text",
                     help="text for a person (default) or one JSON document (see README)")
    add_connection_flags(why)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``observatory`` console script. Returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = Settings()
    except ValueError as exc:
        print(f"observatory: invalid OBSERVATORY_* setting: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "lab":
        if args.lab_command == "serve":
            return serve_lab(settings, args)
        if args.lab_command == "scenarios":
            return list_scenarios()
        if args.lab_command == "fault":
            return fault_cli.run(args)
        parser.parse_args(["lab", "--help"])
    if args.command == "why":
        return run_why(settings, args)
    if args.command == "schedule":
        return schedule.run(settings, args)
    if args.command == "replay":
        return classroom.run_replay(settings, args)
    if args.command == "lessons":
        return classroom.list_lessons()
    return run_app(settings, args)


def run_why(settings: Settings, args: argparse.Namespace) -> int:
    """``observatory why POD``: see :mod:`observatory.why`."""
    from observatory import why

    if args.all_namespaces:
        print("observatory why: -A/--all-namespaces does not apply to one pod; name its namespace with -n NS",
              file=sys.stderr)
        return EXIT_USAGE
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(why.run(settings, pod=args.pod, namespace=args.namespace, output=args.output,
                                   kubeconfig=args.kubeconfig, context=args.context, lab=args.lab,
                                   scenario=args.scenario or "manual-binding"))
    return 130


def list_scenarios() -> int:
    from observatory.lab import scenarios

    for info in scenarios.list_scenarios():
        print(f"{info.name:<20} {info.description}")
    print(f"{'scale:nodes=N,pods=M':<20} A generated cluster of N nodes and M pods in mixed states (Running, Pending, "
          "Completed, for a scheduler that is not running, gated); add ,seed=S for another one.")
    return 0


def serve_lab(settings: Settings, args: argparse.Namespace) -> int:
    """``observatory lab serve``: run until Ctrl-C or SIGTERM, then stop cleanly and exit 0."""
    from observatory.embedded import EmbeddedLab
    from observatory.lab.server import LabError, StateFileError

    if not args.host.strip():
        print("observatory: --host needs an address (127.0.0.1 by default)", file=sys.stderr)
        return EXIT_USAGE
    if not 0 <= args.port <= 65535:
        print(f"observatory: --port {args.port} is not a port number (0-65535)", file=sys.stderr)
        return EXIT_USAGE

    lab_settings = settings.lab.model_copy(update={
        "scheduler": settings.lab.scheduler and not args.no_scheduler,
        "kubelet": settings.lab.kubelet and not args.no_kubelet,
        "pv_controller": settings.lab.pv_controller and not args.no_pv_controller,
        "token": settings.lab.token or args.token,
        "rbac": args.rbac or settings.lab.rbac,
        "scheduler_names": list(dict.fromkeys([*settings.lab.scheduler_names, *args.scheduler_name])),
        "event_ttl": settings.lab.event_ttl if args.event_ttl is None else args.event_ttl,
        **audit_flags.updates(args),
    })
    audit_problem = audit_flags.problem(lab_settings)
    if audit_problem:  # as kube-apiserver refuses to start (a bad policy, log format or webhook file)
        print(f"observatory: {audit_problem}", file=sys.stderr)
        return EXIT_USAGE

    async def run() -> int:
        lab = EmbeddedLab(lab_settings, host=args.host, port=args.port, scenario=args.scenario,
                        state_path=args.state, kubeconfig_path=args.kubeconfig_out)
        try:
            await lab.start()
        except StateFileError as exc:
            print(f"observatory: {exc}", file=sys.stderr)
            return EXIT_USAGE
        except (LabError, ValueError, OSError) as exc:
            print(f"observatory: {exc}", file=sys.stderr)
            return 1
        print(f"Lab API server: {lab.url}", flush=True)
        print(f"Kubeconfig: {lab.kubeconfig_path}", flush=True)
        for user, path in lab.user_kubeconfigs.items():  # an RBAC lab: one kubeconfig per user
            print(f"Kubeconfig for {user}: {path}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        try:
            await lab.stop()
        except (OSError, LabError) as exc:
            print(f"observatory: could not save the lab state: {exc}", file=sys.stderr)
            return 1
        return 0

    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(run())
    return 0


def screen_source(cluster: Connected, args: argparse.Namespace, audit: AuditHub | None = None) -> ClusterSource:
    """The source the screen watches on ``cluster``: the embedded lab is a classroom cluster, so without ``-n`` it
    shows every namespace (the seed pod lives in sched-lab); a real cluster is scoped to the context's namespace,
    as kubectl is. Its ``commands_context().kubeconfig`` is the kubeconfig that reaches the cluster; ``audit`` its
    audit feed."""
    from observatory.kube.source import ClusterSource

    connection = cluster.connection
    if args.all_namespaces or (cluster.lab is not None and not args.namespace):
        namespace = None
    else:
        namespace = args.namespace or connection.namespace
    return ClusterSource(connection, namespace=namespace, lab=cluster.lab is not None, read_only=args.read_only,
                         audit=audit)


async def start_audit(flagged: AuditHub | None, cluster: Connected) -> AuditHub | None:
    """The screen's audit feed, started, its announcement (the webhook's kubeconfig and flags) printed to stderr
    before the screen takes the terminal: the ``--audit-log``/``--audit-webhook-listen`` one, else the in-process
    feed of the lab observatory started. Raises AuditOriginError (exit 2) when it cannot start."""
    from observatory.kube.audit_origin import audit_feed

    feed = flagged or audit_feed(subscribe=cluster.lab.auditor.subscribe if cluster.lab is not None else None)
    if feed is not None:
        await feed.start()
        for line in feed.announcement():
            print(line, file=sys.stderr, flush=True)
    return feed


def run_app(settings: Settings, args: argparse.Namespace) -> int:
    """The main job: the TUI against the kubeconfig's cluster, in-cluster, or the embedded lab when there is none
    (connected as :func:`observatory.connection.connected` says; its exit codes)."""
    from observatory.connection import NotConnected, connected
    from observatory.kube.audit_feed import AuditOriginError
    from observatory.kube.audit_origin import audit_feed
    from observatory.recorder import RecordingSource
    from observatory.scheduler.host import InProcessScheduler
    from observatory.ui.app import ObservatoryApp
    from observatory.ui.themes import theme_problem

    try:
        flagged_audit = audit_feed(log=args.audit_log, webhook=args.audit_webhook_listen)
    except AuditOriginError as exc:
        print(f"observatory: {exc}", file=sys.stderr)
        return EXIT_USAGE
    lesson, problem = classroom.resolve_lesson(args.lesson)
    problem = problem or (classroom.record_problem(args.record) if args.record else None)
    problem = problem or theme_problem(settings.ui.theme)
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_USAGE

    async def main() -> int:
        # An explicit --scenario wins; else the lesson's scenario; else the seed exercise's.
        scenario = args.scenario or (lesson.scenario if lesson is not None else None)
        try:
            async with connected(settings.lab, kubeconfig=args.kubeconfig, context=args.context,
                                 namespace=args.namespace, lab=args.lab, scenario=scenario) as cluster:
                return await run_screen(cluster)
        except NotConnected as exc:
            return exc.exit_code

    async def run_screen(cluster: Connected) -> int:
        try:
            audit = await start_audit(flagged_audit, cluster)
        except AuditOriginError as exc:
            print(f"observatory: {exc}", file=sys.stderr)
            return EXIT_USAGE
        try:
            return await run_app_on(cluster, audit)
        finally:
            if audit is not None:
                await audit.aclose()

    async def run_app_on(cluster: Connected, audit: AuditHub | None) -> int:
        connection = cluster.connection
        cluster_source = screen_source(cluster, args, audit)
        source: ClusterSource | RecordingSource = cluster_source
        # r runs observatory's scheduler over this connection; not in a recording (a replay could not redo it).
        scheduler = None if args.record else InProcessScheduler(cluster_source)
        if args.record:
            try:
                source = RecordingSource(cluster_source, Path(args.record), secrets=connection.secrets)
            except OSError as exc:
                await cluster_source.close()
                print(f"observatory: cannot record to {args.record}: {exc.strerror or exc}", file=sys.stderr)
                return EXIT_USAGE
        app = ObservatoryApp(source, refresh_interval=settings.ui.refresh_interval,
                             recent_seconds=settings.ui.recent_seconds, keymap=settings.ui.keymap,
                             lease_interval=settings.ui.lease_interval,
                             theme=settings.ui.theme, keycast=settings.ui.keycast,
                             screenshot_dir=settings.ui.screenshot_dir, scheduler=scheduler,
                             **classroom.app_options(ObservatoryApp, lesson=lesson))
        try:
            await app.run_async()
        finally:
            await source.close()
        if isinstance(source, RecordingSource) and source.error:
            print(f"observatory: {source.error}", file=sys.stderr)
        return app.return_code or 0

    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(main())
    return 0


def console_main() -> int:
    """The ``observatory`` console script and ``python -m observatory``: :func:`main`, with standard output that
    cannot be written ended as a sentence rather than a traceback. A reader that went away (``observatory why p |
    head``, EPIPE) ends the command quietly with exit code 1, as Python's documentation recommends; any other write
    failure (``> /dev/full``: ENOSPC) is one line on stderr and exit code 1."""
    try:
        code = main()
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        _discard_stdout()
        return 1
    except OSError as exc:
        _discard_stdout()
        print(f"observatory: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
        return 1


def _discard_stdout() -> None:
    """Point standard output at /dev/null so the interpreter's last flush has nowhere to fail."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
