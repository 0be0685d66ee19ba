"""Which audit feed the screen gets: ``--audit-log PATH``, ``--audit-webhook-listen HOST:PORT``, or the lab's own.

:func:`audit_feed` picks the origin from the flags (they work with any kubeconfig's cluster), and for the lab
observatory started, with neither flag, the in-process feed of its auditor (``subscribe``). It checks a path or an
address at once, so the command line can refuse it with exit code 2 before it connects; the feed starts with
``async with feed:`` (binding the webhook, following the file, subscribing to the lab).
"""

from __future__ import annotations

from observatory.kube.audit_feed import AuditHub, InProcessAuditFeed, Subscribe
from observatory.kube.audit_log import AuditLogFeed, check_log_path
from observatory.kube.audit_webhook import AuditWebhookFeed, parse_listen_address

__all__ = ["audit_feed"]


def audit_feed(*, log: str | None = None, webhook: str | None = None,
               subscribe: Subscribe | None = None) -> AuditHub | None:
    """The feed for ``--audit-log`` (``log``), else ``--audit-webhook-listen`` (``webhook``), else the lab auditor's
    ``subscribe``; None when there is none. Raises
    :class:`~observatory.kube.audit_feed.AuditOriginError` for a bad path or address."""
    if log is not None:
        return AuditLogFeed(check_log_path(log))
    if webhook is not None:
        host, port = parse_listen_address(webhook)
        return AuditWebhookFeed(host, port)
    if subscribe is not None:
        return InProcessAuditFeed(subscribe)
    return None
