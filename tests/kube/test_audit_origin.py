"""Which audit feed the screen gets: the flags' (with any cluster), else the in-process feed of the lab observatory
started; the ClusterSource offers it as ``capabilities().audit``, through every namespace it is scoped to."""

from __future__ import annotations

from types import SimpleNamespace

from observatory.cli import start_audit
from observatory.kube.audit_feed import InProcessAuditFeed
from observatory.kube.audit_log import AuditLogFeed
from observatory.kube.audit_origin import audit_feed
from observatory.kube.audit_webhook import AuditWebhookFeed
from observatory.kube.source import ClusterSource
from tests.kube.audit_events import binding_event
from tests.kube.test_audit_feed import FakeAuditor


def test_the_flags_pick_the_origin(tmp_path):
    assert isinstance(audit_feed(log=str(tmp_path / "audit.log")), AuditLogFeed)
    assert isinstance(audit_feed(webhook="127.0.0.1:0"), AuditWebhookFeed)
    assert isinstance(audit_feed(subscribe=FakeAuditor().subscribe), InProcessAuditFeed)
    assert audit_feed() is None


async def test_the_lab_observatory_started_is_read_in_process_unless_a_flag_names_another_origin(tmp_path):
    auditor = FakeAuditor()
    cluster = SimpleNamespace(lab=SimpleNamespace(auditor=auditor), connection=None)
    feed = await start_audit(None, cluster)  # type: ignore[arg-type]
    assert isinstance(feed, InProcessAuditFeed) and len(auditor.listeners) == 1
    auditor.emit(binding_event(409))
    assert feed.received == 1
    await feed.aclose()
    assert auditor.listeners == []
    log = audit_feed(log=str(tmp_path / "audit.log"))
    assert await start_audit(log, cluster) is log  # type: ignore[arg-type]
    assert auditor.listeners == []
    await log.aclose()  # type: ignore[union-attr]
    assert await start_audit(None, SimpleNamespace(lab=None)) is None  # type: ignore[arg-type]


def test_the_source_offers_the_feed_in_every_scope():
    conn = SimpleNamespace(context="c", server="https://x", namespace="default")
    feed = InProcessAuditFeed(FakeAuditor().subscribe)
    source = ClusterSource(conn, namespace="sched-lab", audit=feed)  # type: ignore[arg-type]
    assert source.capabilities().audit is feed
    assert source.with_namespace(None).capabilities().audit is feed
    assert ClusterSource(conn).capabilities().audit is None  # type: ignore[arg-type]

