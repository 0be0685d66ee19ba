"""Command-line flags shared by the subcommands that connect to a cluster (``why``, ``schedule``)."""

from __future__ import annotations

import argparse


def add_connection_flags(parser: argparse.ArgumentParser) -> None:
    """``--kubeconfig``, ``--context``, ``--lab`` and ``--scenario`` after a subcommand. They default to SUPPRESS, so
    a value given before the subcommand (``observatory --context c why p``) is not overwritten by a subparser
    default; the caller reads them with the top-level parser's defaults."""
    parser.add_argument("--kubeconfig", metavar="PATH", default=argparse.SUPPRESS,
                        help="kubeconfig to use (default: $KUBECONFIG, then ~/.kube/config; with none, the lab)")
    parser.add_argument("--context", metavar="NAME", default=argparse.SUPPRESS,
                        help="kubeconfig context (default: the current context)")
    parser.add_argument("--lab", action="store_true", default=argparse.SUPPRESS,
                        help="use the embedded lab (simulated cluster) even when a kubeconfig exists")
    parser.add_argument("--scenario", metavar="NAME|PATH", default=argparse.SUPPRESS,
                        help="lab scenario for --lab (default manual-binding)")


def add_audit_flags(parser: argparse.ArgumentParser) -> None:
    """``--audit-log PATH`` and ``--audit-webhook-listen HOST:PORT`` (one of them): where the screen reads the API
    server's audit events, from any cluster. Without either, the lab observatory starts is read in-process."""
    audit = parser.add_mutually_exclusive_group()
    audit.add_argument("--audit-log", metavar="PATH",
                       help="follow the API server's audit log (its --audit-log-path, JSON lines) as it grows, "
                       "across rotations; a missing file is waited for")
    audit.add_argument("--audit-webhook-listen", metavar="HOST:PORT",
                       help="receive the API server's audit webhook batches here (port 0: a free one); prints the "
                       "--audit-webhook-config-file to give the API server")
