"""The transcript export with an audit feed, driven on the teaching controller as the screen drives it: exercise 1
sent with kubectl (no Binding of observatory's own), the kubelet's status write, the second Binding's 409; the
transcript names each write and each timeline frame's write."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from observatory.model.audit import parse_event
from observatory.model.deltas import Upserted
from observatory.model.source import AuditUpdate, Capabilities, Source
from observatory.model.state import ClusterState
from observatory.model.writes import WriteStore
from observatory.ui.teaching import TeachingController
from tests.ui.fakes import RecordedSource
from tests.unit.model import audit_events as ev

T0 = datetime(2026, 12, 2, 4, 0, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


class AuditedSource(RecordedSource):
    """The recorded lab with an audit feed (its updates come from the test, through the store)."""

    origin = "lab"

    def audit_stream(self) -> AsyncIterator[AuditUpdate]:
        raise AssertionError("the transcript reads the screen's store, never the feed itself")

    def capabilities(self) -> Capabilities:
        return Capabilities(access=self, audit=self)


@dataclass
class Host:
    source: Source
    state: ClusterState
    clock: Clock
    notices: list[tuple[str, str]] = field(default_factory=list)

    def now(self) -> datetime:
        return self.clock()

    def notify(self, message: str, *, title: str = "", severity: str = "information", timeout: float | None = None,
               markup: bool = False) -> None:
        self.notices.append((title, message))

    def ask(self, screen: Any, answered: Any) -> None:
        raise AssertionError("no modal here")

    def save_screenshot(self, filename: str | None = None, path: str | None = None) -> str:
        raise AssertionError("no screenshot here")


def pod(rv: str, node: str, phase: str) -> dict[str, Any]:
    obj = ev.pod(rv, node, phase)
    obj["metadata"]["uid"] = "00000000-0000-4000-8000-000000000001"
    return obj


def exercise(source: Source) -> tuple[TeachingController, Host]:
    """The pod seen Pending (RV 17), kubectl's Binding (201) and its frame (RV 22), the kubelet's status patch and
    its frame (RV 28), kubectl's second Binding (409)."""
    clock = Clock()
    state = ClusterState(clock)
    host = Host(source, state, clock)
    teaching = TeachingController(host)
    store = WriteStore()
    teaching.write_store = store
    state.apply(Upserted("pods", pod("17", "", "Pending"), "ADDED"))
    clock.now = T0 + timedelta(seconds=10.3)
    store.apply(AuditUpdate((parse_event(ev.bind_201()),)))
    state.apply(Upserted("pods", pod("22", "pair-worker", "Pending"), "MODIFIED"))
    clock.now = T0 + timedelta(seconds=11.6)
    store.apply(AuditUpdate((parse_event(ev.status_patch()),)))
    state.apply(Upserted("pods", pod("28", "pair-worker", "Running"), "MODIFIED"))
    clock.now = T0 + timedelta(seconds=14.1)
    store.apply(AuditUpdate((parse_event(ev.bind_409()),)))
    return teaching, host


def test_the_transcript_of_kubectls_bindings_names_every_write_and_frame(tmp_path):
    teaching, _ = exercise(AuditedSource())
    written = teaching.export_transcript(tmp_path / "t.md")
    assert written is not None
    markdown, twin = written[0].read_text(), json.loads(written[1].read_text())
    assert "No Binding was sent." in markdown  # observatory sent none; kubectl did
    assert "- Writes: from the audit feed `lab`" in markdown
    assert "POST | pods/manual/binding | 201 |" in markdown
    assert "POST | pods/manual/binding | 409 | Conflict |" in markdown
    assert ev.MESSAGE_409 in markdown
    assert "| 22 | 2026-12-02T04:00:10.300000Z | MODIFIED | `pair-worker` | Pending | POST pods/manual/binding · " \
           "kubectl · 201 | matched by order |" in markdown
    assert "PATCH pods/manual/status · kubelet pair-worker · 200 | exact |" in markdown
    (writes,) = twin["writes"]
    assert writes["pod"] == "sched-lab/manual" and twin["audit"] == {"origin": "lab"}
    assert [w["code"] for w in writes["writes"]] == [201, 200, 409]
    assert writes["writes"][2]["message"] == ev.MESSAGE_409
    assert [(f["resourceVersion"], f["link"]) for f in writes["frames"]] == [
        ("17", "none"), ("22", "order"), ("28", "exact")]


def test_without_an_audit_feed_the_transcript_says_who_wrote_is_not_known(tmp_path):
    teaching, _ = exercise(RecordedSource())
    written = teaching.export_transcript(tmp_path / "t.md")
    assert written is not None
    assert "No audit feed: who wrote each change is not known." in written[0].read_text()
    assert json.loads(written[1].read_text())["writes"] == []
