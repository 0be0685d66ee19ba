"""observatory reads a running ``observatory lab serve``'s audit events as it reads any kube-apiserver's: the log
file it writes (``--audit-log-path``, followed as ``observatory --audit-log`` follows it) and the webhook it posts
to (``--audit-webhook-config-file`` written by ``observatory --audit-webhook-listen``'s receiver), and the lab
observatory starts itself, in-process. Exercise 1's two
kubectl Bindings arrive as AuditEvents with kubectl's 201 and 409, the second with the text kubectl printed."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from observatory.kube.audit_feed import AuditHub
from observatory.kube.audit_log import AuditLogFeed
from observatory.kube.audit_webhook import AuditWebhookFeed
from observatory.model.audit import AuditEvent
from tests.e2e.test_kubectl_seed import MANUAL_POD, Lab, serving

BINDING = ('{"apiVersion":"v1","kind":"Binding",\n'
           ' "metadata":{"name":"manual","namespace":"sched-lab"},\n'
           ' "target":{"apiVersion":"v1","kind":"Node","name":"pair-worker"}}\n')
CONFLICT = ('Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node '
            '"pair-worker"')


async def exercise_one(lab: Lab) -> tuple[str, str]:
    """The seed exercise's commands verbatim: the pod, then the Binding twice (the second to another node)."""
    created = await asyncio.to_thread(lab.sh, "kubectl -n sched-lab apply -f -", MANUAL_POD)
    assert created.returncode == 0, created.stderr
    (lab.tmp / "binding.json").write_text(BINDING)
    bind = "kubectl create --raw /api/v1/namespaces/sched-lab/pods/manual/binding -f binding.json"
    first = await asyncio.to_thread(lab.sh, bind)
    await asyncio.to_thread(lab.sh, 'sed -i "s/pair-worker/pair-control-plane/" binding.json')
    second = await asyncio.to_thread(lab.sh, bind)
    return first.stdout, second.stderr


async def stop(lab: Lab) -> None:
    """SIGTERM, then wait for the exit without blocking the event loop (the webhook receiver runs on it)."""
    lab.proc.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(lab.proc.wait, 10) == 0


async def bindings(feed: AuditHub, count: int = 2, target: str = "pods/manual/binding") -> list[AuditEvent]:
    """The finished writes of ``target`` in sched-lab the feed delivers, until ``count`` arrived (a 60 s guard)."""
    found: list[AuditEvent] = []
    async with asyncio.timeout(60):
        async for update in feed.audit_stream():
            found += [e for e in update.events if e.target == target and e.namespace == "sched-lab" and e.complete]
            if len(found) >= count:
                return found
    raise AssertionError("unreachable")


def check(found: list[AuditEvent], printed: tuple[str, str]) -> None:
    first, second = found
    assert [(e.verb, e.code, e.writer) for e in found] == [("create", 201, "kubectl"), ("create", 409, "kubectl")]
    assert (first.status, second.status, second.reason, second.message) == ("Success", "Failure", "Conflict",
                                                                              CONFLICT)
    assert printed[1] == f"Error from server (Conflict): {second.message}\n"  # the text kubectl printed
    assert first.request_object["target"]["name"] == "pair-worker"  # pods/binding at RequestResponse
    assert second.request_object["target"]["name"] == "pair-control-plane"
    assert '"code":201' in printed[0]


async def test_a_lab_audit_log_followed_as_audit_log_follows_it_and_its_webhook_pointed_at_the_listener(
        tmp_path: Path, kubectl):
    """One lab serve with both backends (kube-apiserver unions them): each origin delivers both Bindings."""
    log = tmp_path / "audit" / "audit.log"
    log.parent.mkdir()
    async with AuditWebhookFeed("127.0.0.1", 0, config_path=tmp_path / "webhook.kubeconfig",
                                flush_seconds=0.05) as webhook, \
            AuditLogFeed(log, poll_seconds=0.05, flush_seconds=0.05) as follower:
        with serving(tmp_path, "--audit-log-path", str(log), f"--audit-webhook-config-file={webhook.config_path}",
                     "--audit-webhook-batch-max-wait=200ms") as lab:
            waiting = [asyncio.create_task(bindings(feed)) for feed in (follower, webhook)]
            printed = await exercise_one(lab)
            from_log, from_webhook = [await task for task in waiting]
            await stop(lab)  # while the receiver still answers: the lab sends its last batch as it stops
    check(from_log, printed)
    check(from_webhook, printed)
    assert [e.audit_id for e in from_log] == [e.audit_id for e in from_webhook]
    for feed in (follower, webhook):
        assert feed.malformed == 0, feed.problem


async def test_the_lab_observatory_started_is_read_in_process(tmp_path: Path, kubectl):
    """``observatory --lab``'s default feed: the EmbeddedLab's auditor, no file and no HTTP in between; the
    simulated kubelet's status patch after the Binding arrives too, as ``system:node:pair-worker``."""
    from types import SimpleNamespace

    from observatory.cli import start_audit
    from observatory.embedded import EmbeddedLab
    from observatory.kube.audit_feed import InProcessAuditFeed
    from observatory.settings import LabSettings
    from tests.conftest import API_ONLY

    embedded = EmbeddedLab(LabSettings(**{**API_ONLY, "kubelet": True}), scenario="pair",
                           kubeconfig_path=tmp_path / "kubeconfig")
    await embedded.start()
    try:
        feed = await start_audit(None, SimpleNamespace(lab=embedded))  # type: ignore[arg-type]
        assert isinstance(feed, InProcessAuditFeed) and feed.origin == "lab"
        waiting = asyncio.create_task(bindings(feed))
        kubelet = asyncio.create_task(bindings(feed, 1, "pods/manual/status"))
        client = Lab(None, embedded.url, str(tmp_path / "kubeconfig"), tmp_path)  # type: ignore[arg-type]
        printed = await exercise_one(client)
        found, (status,) = await waiting, await kubelet
        await feed.aclose()
    finally:
        await embedded.stop()
    check(found, printed)
    assert (status.verb, status.code, status.user, status.writer) == ("patch", 200, "system:node:pair-worker",
                                                                      "kubelet pair-worker")
    assert "system:nodes" in status.groups and status.resource_version
