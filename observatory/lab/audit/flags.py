"""``observatory lab serve``'s audit flags: kube-apiserver's (``staging/src/k8s.io/apiserver/pkg/server/options/
audit.go``), with its defaults, into :class:`~observatory.settings.LabSettings`.

Defaults as upstream: ``--audit-log-maxage``, ``--audit-log-maxbackup`` and ``--audit-log-maxsize`` 0,
``--audit-log-format json``, ``--audit-webhook-mode batch``, ``--audit-webhook-batch-max-size 400``,
``--audit-webhook-batch-max-wait 30s``, ``--audit-webhook-initial-backoff 10s``. A negative size or age gets
``AuditLogOptions.Validate``'s sentence (``--audit-log-maxage -1 can't be a negative number``); a bad duration
pflag's (``invalid argument "x" for "--audit-webhook-batch-max-wait" flag: time: invalid duration "x"``).
"""

from __future__ import annotations

import argparse
from typing import Any

from observatory.lab.goparse import flag_duration
from observatory.settings import LabSettings

__all__ = ["add_flags", "problem", "updates"]

_DESTS = ("audit_policy_file", "audit_log_path", "audit_log_maxage", "audit_log_maxbackup", "audit_log_maxsize",
          "audit_log_format", "audit_webhook_config_file", "audit_webhook_mode", "audit_webhook_batch_max_size",
          "audit_webhook_batch_max_wait", "audit_webhook_initial_backoff")


def _non_negative(flag: str) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'invalid argument "{text}" for "{flag}" flag: strconv.ParseInt: '
                                             f'parsing "{text}": invalid syntax') from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"{flag} {value} can't be a negative number")
        return value
    return parse


def _positive(flag: str) -> Any:
    def parse(text: str) -> int:
        value = _non_negative(flag)(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"invalid audit batch webhook max batch size {value}, must be a "
                                             "positive number")
        return value
    return parse


def _duration(flag: str) -> Any:
    def parse(text: str) -> float:
        nanoseconds = flag_duration(flag, text)
        if nanoseconds < 0:
            raise argparse.ArgumentTypeError(f"{flag} {text}: a duration cannot be negative")
        return nanoseconds / 1e9
    return parse


def add_flags(parser: argparse.ArgumentParser) -> None:
    """kube-apiserver's audit flags on ``lab serve`` (every default None: the settings' value stands)."""
    group = parser.add_argument_group(
        "audit", "kube-apiserver's audit flags. Unlike kube-apiserver, which audits nothing without "
        "--audit-policy-file, the lab audits with its default policy (writes to pods, pods/binding, pods/status, "
        "bindings and nodes at RequestResponse, other writes at Metadata, reads not at all; Secrets, ConfigMaps "
        "and TokenReviews never above Metadata); a policy file replaces it.")
    group.add_argument("--audit-policy-file", metavar="FILE",
                       help="the audit.k8s.io/v1 Policy (YAML or JSON) that decides each request's audit level")
    group.add_argument("--audit-log-path", metavar="PATH",
                       help="write each audit event as a JSON line to this file; '-' means standard out")
    group.add_argument("--audit-log-maxage", type=_non_negative("--audit-log-maxage"), metavar="DAYS",
                       help="days to retain old audit log files, by the timestamp in their names (default 0: all)")
    group.add_argument("--audit-log-maxbackup", type=_non_negative("--audit-log-maxbackup"), metavar="N",
                       help="old audit log files to retain (default 0: all)")
    group.add_argument("--audit-log-maxsize", type=_non_negative("--audit-log-maxsize"), metavar="MB",
                       help="megabytes of audit log before it is rotated (default 0: 100, lumberjack's default)")
    group.add_argument("--audit-log-format", metavar="FORMAT",
                       help='format of saved audits: "json" (default; "legacy" is refused)')
    group.add_argument("--audit-webhook-config-file", metavar="FILE",
                       help="a kubeconfig-format file naming the audit webhook that receives EventList batches")
    group.add_argument("--audit-webhook-mode", metavar="MODE",
                       help="batch (default: buffer and send in batches) or blocking (send each event at once)")
    group.add_argument("--audit-webhook-batch-max-size", type=_positive("--audit-webhook-batch-max-size"),
                       metavar="N", help="the maximum size of a batch (default 400)")
    group.add_argument("--audit-webhook-batch-max-wait", type=_duration("--audit-webhook-batch-max-wait"),
                       metavar="DURATION",
                       help="how long a batch that is not full waits before it is sent (default 30s)")
    group.add_argument("--audit-webhook-initial-backoff", type=_duration("--audit-webhook-initial-backoff"),
                       metavar="DURATION", help="the wait before retrying the first failed request (default 10s)")


def updates(args: argparse.Namespace) -> dict[str, Any]:
    """The LabSettings fields the given flags set."""
    return {dest: getattr(args, dest) for dest in _DESTS if getattr(args, dest, None) is not None}


def problem(settings: LabSettings) -> str | None:
    """Why kube-apiserver would refuse to start with these audit settings (one sentence), or None."""
    from observatory.lab.audit.auditor import AuditConfigError, check_settings
    from observatory.lab.audit.backends import WebhookConfigError, load_webhook_config

    try:
        check_settings(settings)
        if settings.audit_webhook_config_file:
            load_webhook_config(settings.audit_webhook_config_file)
    except (AuditConfigError, WebhookConfigError) as exc:
        return str(exc)
    return None
