"""WritesController without a screen: a fake host (observatory/ui/writes.py's WritesHost) and the recorded audited
source of tests/ui/audit_fakes.py."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from observatory.model.deltas import Relisted
from observatory.model.source import AuditUpdate, Source
from observatory.model.state import ClusterState
from observatory.ui.writes import WritesController
from tests.ui.audit_fakes import AuditedSource
from tests.ui.fakes import RecordedSource, frozen_clock


@dataclass
class FakeHost:
    source: Source
    state: ClusterState = field(default_factory=lambda: ClusterState(frozen_clock))
    selected: str | None = None
    followed: list[Any] = field(default_factory=list)
    changes: int = 0

    def follow_audit(self, follow: Any) -> None:
        self.followed.append(follow)

    def writes_changed(self) -> None:
        self.changes += 1

    def notify(self, *args: Any, **kwargs: Any) -> None: ...

    def ask(self, screen: Any, answered: Any) -> None: ...


def test_without_a_feed_nothing_is_followed_and_the_timeline_names_no_writer() -> None:
    host = FakeHost(RecordedSource())
    writes = WritesController(host)  # type: ignore[arg-type]  # the fake has no panes: show() is not called
    writes.start()
    assert host.followed == [] and writes.feed is None and writes.timeline("sched-lab/manual") is None


async def test_the_feed_is_followed_once_into_the_store_and_each_change_asks_for_a_repaint() -> None:
    source = AuditedSource()
    host = FakeHost(source)
    writes = WritesController(host)  # type: ignore[arg-type]
    writes.start()
    writes.start()  # a rescope keeps the one feed
    assert len(host.followed) == 1 and host.changes == 1
    task = asyncio.ensure_future(host.followed[0])
    source.kubectl_bind()
    source.feed.updates.put_nowait(AuditUpdate())  # nothing new: no repaint
    source.log(malformed=1, problem="not an audit.k8s.io/v1 EventList")
    for _ in range(10):
        await asyncio.sleep(0)
    task.cancel()
    assert host.changes == 3 and len(writes.store) == 1 and writes.store.malformed == 1
    host.state.apply(Relisted("pods", tuple(source.objects["pods"].values()), "101"))
    joined = writes.timeline("sched-lab/manual")
    assert joined is not None and [j.label for j in joined] == [
        "← POST pods/manual/binding · kubectl · 201 (matched by order)"]
