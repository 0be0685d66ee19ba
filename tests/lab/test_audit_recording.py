"""The lab's own audit log, as kubectl's exercise 1 leaves it (``lab serve --audit-log-path``), through a recording,
its replay and the transcript: the events the screen received replay equal, and the transcript names kubectl's
Binding with its 201 and the second with its 409 and the text kubectl printed. One lab for the module (the
``served`` fixture of ``test_audit_kubectl``: a create, two Bindings, a status patch and a delete)."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from datetime import UTC, datetime

from observatory.model.audit import parse_line
from observatory.model.recording import AuditEntry, read_recording
from observatory.model.source import AuditUpdate, Capabilities
from observatory.model.transcript import PodWrites, Transcript, render
from observatory.model.writes import WriteStore
from observatory.recorder import RecordingSource
from observatory.replay import ReplaySource, load_recording
from tests.lab.test_audit_kubectl import CONFLICT, served  # noqa: F401  (the module's lab)
from tests.unit.test_recording_sources import FakeSource


class LogFeed:
    """The lab's audit log read once, one update per line, as a log follower would hand them to the screen."""

    origin = "log audit.log"

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    async def audit_stream(self) -> AsyncIterator[AuditUpdate]:
        for line in self.lines:
            yield AuditUpdate((parse_line(line),))


class LabLog(FakeSource):
    def __init__(self, lines: list[str]) -> None:
        super().__init__({}, [])
        self.feed = LogFeed(lines)

    def capabilities(self) -> Capabilities:
        return Capabilities(audit=self.feed)


async def test_the_labs_audit_events_record_replay_and_make_the_transcript(served, tmp_path):  # noqa: F811
    lines = served.log.read_text().splitlines()
    path = tmp_path / "session.jsonl"
    recorder = RecordingSource(LabLog(lines), path)
    live = [u async for u in recorder.capabilities().audit.audit_stream()]
    await recorder.close()
    assert [e for e in read_recording(path.read_text().splitlines()).entries if not isinstance(e, AuditEntry)] == []

    replay = ReplaySource(load_recording(path), speed=math.inf)
    replayed: list[AuditUpdate] = []
    async for update in replay.capabilities().audit.audit_stream():
        replayed.append(update)
        if len(replayed) == len(live):
            break
    await replay.close()
    assert replayed == live

    store = WriteStore()
    for update in replayed:
        store.apply(update)
    writes = PodWrites.take(store, "default/manual", [])
    at = datetime(2026, 12, 2, 4, 0, tzinfo=UTC)
    transcript = Transcript(context="observatory-lab", server=served.url, namespace="default", lab=True, started=at,
                            exported=at, audit=replay.capabilities().audit.origin, writes=(writes,))
    markdown, text = render(transcript)
    bindings = [w for w in json.loads(text)["writes"][0]["writes"] if w["target"] == "pods/manual/binding"]
    assert [(b["writer"], b["code"], b["reason"]) for b in bindings] == [("kubectl", 201, ""),
                                                                       ("kubectl", 409, "Conflict")]
    assert bindings[1]["message"] == CONFLICT and bindings[1]["responseObject"]["message"] == CONFLICT
    assert bindings[0]["requestObject"]["target"]["name"] == "pair-worker"
    assert f"| POST | pods/manual/binding | 409 | Conflict | {CONFLICT} |" in markdown
    assert "| POST | pods/manual/binding | 201 |" in markdown
