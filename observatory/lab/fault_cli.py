"""``observatory lab fault KIND [ARG] [--server URL]``: drive the fault endpoint of a running lab (``/lab/faults``).

The kinds are those of :mod:`observatory.lab.faults`, plus ``show`` (the active faults). The lab is found through
its kubeconfig (``--kubeconfig``, default the one ``observatory lab serve`` writes), whose server, CA and bearer
token are used; ``--server URL`` names another lab (the kubeconfig's CA and token are used only when its server is
that URL). One line of fact is printed; bad input exits 2 and an unreachable or refusing lab exits 1, each with one
readable sentence on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import ssl
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = ["FaultCommandError", "LabTarget", "add_parser", "fault_request", "run", "send_fault", "target"]

KINDS = ("drop-watches", "stall-watches", "compact", "errors", "latency", "clear", "show")
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
TIMEOUT = 15.0
"""Seconds to wait for the lab's answer."""


class FaultCommandError(Exception):
    """One readable sentence for stderr; ``code`` is the exit code (1: the lab failed us, 2: bad input)."""

    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class LabTarget:
    """Where the lab is: its URL, and the CA (PEM) and bearer token to reach it with (None when not needed)."""

    server: str
    ca_pem: bytes | None = None
    token: str | None = None


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``fault`` to the ``observatory lab`` subcommands."""
    fault = commands.add_parser(
        "fault", help="inject a fault into a running lab (for class and tests)",
        description="Inject a fault into a running lab through its /lab/faults endpoint. "
        "drop-watches: cut every open watch; stall-watches SECONDS: watches send nothing for SECONDS, then deliver "
        "what queued; compact: drop the watch history, so resumes get 410 Expired; errors RATE [--code 500|429]: "
        "refuse that fraction (0..1) of API requests; latency MS: delay every API request and watch write; "
        "clear: remove every fault; show: print the active faults.")
    fault.add_argument("kind", choices=KINDS, metavar="KIND", help=f"one of: {', '.join(KINDS)}")
    fault.add_argument("value", nargs="?", metavar="ARG",
                       help="SECONDS for stall-watches, RATE (0..1) for errors, MS for latency")
    fault.add_argument("--code", type=int, choices=(500, 429), default=None,
                       help="errors: answer 500 InternalError (default) or 429 Too Many Requests")
    fault.add_argument("--retry-after", type=int, default=None, metavar="SECONDS",
                       help="errors --code 429: the Retry-After header (default 1, as kube-apiserver)")
    fault.add_argument("--server", metavar="URL", help="the lab's URL (default: the server of the lab kubeconfig)")
    fault.add_argument("--kubeconfig", dest="fault_kubeconfig", metavar="PATH", type=Path,
                       help="the lab's kubeconfig (default: a lab kubeconfig named by $KUBECONFIG, else the one "
                       "'observatory lab serve' writes)")
    return fault


def fault_request(kind: str, value: str | None = None, *, code: int | None = None,
                  retry_after: int | None = None) -> dict[str, Any] | None:
    """The POST body for ``kind`` and its command-line ``value`` (None for ``show``, a GET). Raises
    FaultCommandError (exit 2) for bad input."""
    needs = {"stall-watches": "SECONDS", "errors": "RATE", "latency": "MS"}
    if kind not in KINDS:
        raise FaultCommandError(f"unknown fault {kind!r}: choose one of {', '.join(KINDS)}", EXIT_USAGE)
    if kind in needs and value is None:
        example = {"stall-watches": "5", "errors": "0.5", "latency": "200"}[kind]
        raise FaultCommandError(f"{kind} needs {needs[kind]}, e.g. 'observatory lab fault {kind} {example}'",
                                EXIT_USAGE)
    if kind not in needs and value is not None:
        raise FaultCommandError(f"{kind} takes no argument (got {value!r})", EXIT_USAGE)
    if (code is not None or retry_after is not None) and kind != "errors":
        raise FaultCommandError("--code and --retry-after go with errors only", EXIT_USAGE)
    if retry_after is not None and code != 429:
        raise FaultCommandError("--retry-after goes with --code 429", EXIT_USAGE)
    if kind == "show":
        return None
    body: dict[str, Any] = {"kind": kind}
    if kind == "stall-watches":
        body["seconds"] = _parse(value, float, "SECONDS", "a number of seconds, e.g. 5")
    elif kind == "latency":
        body["ms"] = _parse(value, int, "MS", "a whole number of milliseconds, e.g. 200")
    elif kind == "errors":
        body["rate"] = _parse(value, float, "RATE", "a fraction from 0 to 1, e.g. 0.5")
        body["code"] = code or 500
        if retry_after is not None:
            body["retryAfterSeconds"] = retry_after
    return body


def _parse(value: str | None, kind: type, name: str, want: str) -> Any:
    try:
        return kind(str(value))
    except ValueError:
        raise FaultCommandError(f"{name} must be {want}, not {value!r}", EXIT_USAGE) from None


def target(server: str | None = None, kubeconfig: Path | None = None) -> LabTarget:
    """The lab to talk to: ``server`` (with the kubeconfig's CA and token when that kubeconfig names the same
    server), else the server of ``kubeconfig`` (default: the first file in ``KUBECONFIG`` whose current-context is
    the lab's, ``observatory-lab``; else the path ``lab serve`` writes by default). Raises FaultCommandError."""
    from observatory.lab.kubeconfig import default_kubeconfig_path

    path = kubeconfig or lab_kubeconfig_from_env() or default_kubeconfig_path()
    entry = _read_kubeconfig(path, required=server is None)
    if server is not None:
        try:
            url = urlsplit(server)
            url.port  # noqa: B018 - raises ValueError for a port out of range or not a number
        except ValueError:
            url = None
        if url is None or url.scheme not in ("http", "https") or not url.netloc:
            raise FaultCommandError(f"--server must be an http:// or https:// URL, not {server!r}", EXIT_USAGE)
        if entry is not None and entry.server.rstrip("/") == server.rstrip("/"):
            return entry
        return LabTarget(server.rstrip("/"))
    assert entry is not None
    return entry


def lab_kubeconfig_from_env() -> Path | None:
    """The first file ``KUBECONFIG`` lists whose current-context is the lab's (``observatory-lab``), or None: a user
    who pointed kubectl at a lab (``export KUBECONFIG=...``) means that lab, even if another ``observatory --lab``
    has since rewritten the default lab kubeconfig."""
    import yaml

    from observatory.lab.kubeconfig import LAB_NAME

    for entry in os.environ.get("KUBECONFIG", "").split(os.pathsep):
        if not entry:
            continue
        try:
            doc = yaml.safe_load(Path(entry).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        if isinstance(doc, dict) and doc.get("current-context") == LAB_NAME:
            return Path(entry)
    return None


def _read_kubeconfig(path: Path, *, required: bool) -> LabTarget | None:
    import yaml

    try:
        doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        if not required:
            return None
        raise FaultCommandError(f"no lab kubeconfig at {path}: start a lab with 'observatory lab serve', or name "
                                "one with --kubeconfig PATH or --server URL", EXIT_USAGE) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        if not required:
            return None
        raise FaultCommandError(f"cannot read the lab kubeconfig {path}: {exc}", EXIT_USAGE) from None
    try:
        current = doc.get("current-context")
        contexts = {c["name"]: c["context"] for c in doc.get("contexts") or []}
        context: dict[str, Any] = contexts.get(current) or next(iter(contexts.values()), {})
        clusters = {c["name"]: c["cluster"] for c in doc.get("clusters") or []}
        users = {u["name"]: u.get("user") or {} for u in doc.get("users") or []}
        cluster = clusters.get(context.get("cluster")) or next(iter(clusters.values()))
        user = users.get(context.get("user")) or {}
        server = str(cluster["server"]).rstrip("/")
        ca = cluster.get("certificate-authority-data")
        ca_pem = base64.b64decode(ca) if ca else None
        token = user.get("token") or None
    except (AttributeError, KeyError, TypeError, StopIteration, ValueError):
        if not required:
            return None
        raise FaultCommandError(f"{path} is not a kubeconfig with a cluster server", EXIT_USAGE) from None
    return LabTarget(server, ca_pem, token)


async def send_fault(lab: LabTarget, body: dict[str, Any] | None, *, timeout: float = TIMEOUT) -> dict[str, Any]:
    """POST ``body`` to ``/lab/faults`` (GET when ``body`` is None) and return the lab's JSON answer. Raises
    FaultCommandError with one sentence for every failure: no connection, TLS, 401, 404 (not a lab), 400 (the
    lab's own message), anything else."""
    import aiohttp

    url = f"{lab.server}/lab/faults"
    headers = {"Accept": "application/json"}
    if lab.token:
        headers["Authorization"] = f"Bearer {lab.token}"
    ssl_context: ssl.SSLContext | bool = True
    if lab.ca_pem:
        ssl_context = ssl.create_default_context(cadata=lab.ca_pem.decode("ascii", "replace"))
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
            method = session.get(url, headers=headers, ssl=ssl_context) if body is None else \
                session.post(url, headers=headers, json=body, ssl=ssl_context)
            async with method as resp:
                raw = await resp.read()
                status = resp.status
    except aiohttp.ClientSSLError as exc:
        raise FaultCommandError(f"TLS to the lab at {lab.server} failed ({exc.__class__.__name__}): pass the "
                                "lab's kubeconfig with --kubeconfig PATH") from None
    except aiohttp.ClientConnectorError as exc:
        why = "connection refused" if isinstance(exc.os_error, ConnectionRefusedError) else str(exc.os_error or exc)
        raise FaultCommandError(f"cannot reach the lab at {lab.server} ({why}); is 'observatory lab serve' running?"
                                ) from None
    except (TimeoutError, aiohttp.ClientError, OSError) as exc:
        what = f"no answer within {timeout:g} s" if isinstance(exc, asyncio.TimeoutError) else str(exc) or \
            type(exc).__name__
        raise FaultCommandError(f"the lab at {lab.server} did not answer ({what})") from None
    try:
        doc = json.loads(raw)
    except ValueError:
        doc = None
    message = doc.get("message") if isinstance(doc, dict) else None
    if status == 401:
        raise FaultCommandError(f"the lab at {lab.server} refused the credentials (401 Unauthorized): pass its "
                                "kubeconfig with --kubeconfig PATH")
    if status == 404:
        raise FaultCommandError(f"{lab.server} serves no /lab/faults (404): is it an observatory lab?")
    if status == 400:
        raise FaultCommandError(f"the lab refused the fault: {message or 'bad request'}", EXIT_USAGE)
    if not 200 <= status < 300 or not isinstance(doc, dict):
        raise FaultCommandError(f"the lab at {lab.server} answered {status}" + (f": {message}" if message else ""))
    return doc


def summary(doc: dict[str, Any]) -> str:
    """One line for ``show``: the active faults and the open watches."""
    parts = []
    for fault in doc.get("active") or []:
        kind = fault.get("kind")
        if kind == "errors":
            parts.append(f"errors {fault.get('rate', 0) * 100:g}% {fault.get('code')}")
        elif kind == "latency":
            parts.append(f"latency {fault.get('ms')} ms")
        elif kind == "stall-watches":
            parts.append(f"watches stalled for {fault.get('remainingSeconds', 0):.1f} s more")
        else:
            parts.append(str(kind))
    watches = doc.get("openWatches", 0)
    return f"{', '.join(parts) or 'no faults'}; {watches} open watch{'' if watches == 1 else 'es'}"


def run(args: argparse.Namespace) -> int:
    """``observatory lab fault``: print one line, return the exit code."""
    try:
        body = fault_request(args.kind, args.value, code=args.code, retry_after=args.retry_after)
        lab = target(args.server, args.fault_kubeconfig)
        doc = asyncio.run(send_fault(lab, body))
    except FaultCommandError as exc:
        print(f"observatory lab fault: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        return 130
    with contextlib.suppress(BrokenPipeError):
        print(summary(doc) if body is None else doc.get("message", "done"))
    return EXIT_OK
