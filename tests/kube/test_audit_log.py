"""observatory.kube.audit_log: an audit log followed as it grows, a partial last line kept until complete, rotation
by rename-and-create (lumberjack's, as kube-apiserver's --audit-log-maxsize rotates) and by copytruncate, a missing
file waited for, malformed lines counted. The follower has no clock: each poll is driven by the test."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from observatory.kube.audit_feed import AuditOriginError
from observatory.kube.audit_log import AuditLogFeed, LogFollower, check_log_path
from tests.kube.audit_events import binding_event, line, status_patch_event

BACKUP = "audit-2026-12-02T04-00-00.000.log"
"""lumberjack's backup name for audit.log: ``<name>-<timestamp>.<ext>``, timestamp ``2006-01-02T15-04-05.000``."""


def ids(follower: LogFollower) -> list[str]:
    """The auditIDs of every complete line the follower has now, polling until a poll finds nothing more."""
    found: list[str] = []
    while True:
        step = follower.poll()
        found += [json.loads(raw)["auditID"] for raw in step.lines]
        if not step.more and not step.lines:
            return found


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as f:
        f.write(data)


def test_it_reads_what_is_there_then_the_lines_written_after(tmp_path):
    log = tmp_path / "audit.log"
    log.write_bytes(line(binding_event(audit_id="a")) + line(binding_event(audit_id="b")))
    follower = LogFollower(log, chunk=64)  # small chunks: a line spans several reads
    assert ids(follower) == ["a", "b"]
    assert ids(follower) == []
    append(log, line(binding_event(audit_id="c")))
    assert ids(follower) == ["c"]


def test_a_partial_last_line_is_kept_until_its_newline_arrives(tmp_path):
    log = tmp_path / "audit.log"
    whole = line(binding_event(audit_id="a"))
    log.write_bytes(whole[:50])
    follower = LogFollower(log)
    assert ids(follower) == []
    append(log, whole[50:-1])
    assert ids(follower) == []
    append(log, b"\n")
    assert ids(follower) == ["a"]


def test_rename_and_create_rotation_reads_the_old_files_end_then_the_new_file(tmp_path):
    log = tmp_path / "audit.log"
    log.write_bytes(line(binding_event(audit_id="a")))
    follower = LogFollower(log)
    assert ids(follower) == ["a"]
    append(log, line(binding_event(audit_id="b")))  # written after the last poll, before the rotation
    log.rename(tmp_path / BACKUP)
    log.write_bytes(line(binding_event(audit_id="c")))
    assert ids(follower) == ["b", "c"]
    append(log, line(binding_event(audit_id="d")))
    assert ids(follower) == ["d"]
    assert (follower.rotations, follower.truncations) == (1, 0)


def test_a_renamed_file_with_no_new_one_yet_is_waited_for(tmp_path):
    log = tmp_path / "audit.log"
    log.write_bytes(line(binding_event(audit_id="a")))
    follower = LogFollower(log)
    assert ids(follower) == ["a"]
    log.rename(tmp_path / BACKUP)
    assert ids(follower) == [] and follower.moved
    log.write_bytes(line(binding_event(audit_id="b")))
    assert ids(follower) == ["b"] and not follower.moved


def test_copytruncate_rotation_reads_the_truncated_file_from_its_start(tmp_path):
    log = tmp_path / "audit.log"
    log.write_bytes(line(binding_event(audit_id="a")) + line(binding_event(audit_id="b")))
    follower = LogFollower(log)
    assert ids(follower) == ["a", "b"]
    shutil.copyfile(log, tmp_path / "audit.log.1")
    with log.open("r+b") as f:
        f.truncate(0)
    append(log, line(binding_event(audit_id="c")))
    assert ids(follower) == ["c"]
    assert (follower.rotations, follower.truncations) == (0, 1)


def test_a_partial_line_cut_by_copytruncate_is_counted_as_lost(tmp_path):
    log = tmp_path / "audit.log"
    whole = line(binding_event(audit_id="a"))
    log.write_bytes(whole + whole[:40])
    follower = LogFollower(log)
    assert ids(follower) == ["a"]
    with log.open("r+b") as f:
        f.truncate(0)
    step = follower.poll()
    assert step.problems == ["the log was truncated in the middle of a line; its end is lost"]


def test_a_missing_file_is_waited_for_and_read_from_its_start_when_it_appears(tmp_path):
    log = tmp_path / "audit.log"
    follower = LogFollower(log)
    assert ids(follower) == [] and follower.waiting
    log.write_bytes(line(binding_event(audit_id="a")))
    assert ids(follower) == ["a"] and not follower.waiting


def test_a_line_longer_than_the_limit_is_refused_and_the_next_one_read(tmp_path):
    log = tmp_path / "audit.log"
    log.write_bytes(b"x" * 1200 + b"\n" + line(binding_event(audit_id="a")))
    follower = LogFollower(log, chunk=100, max_line=1000)
    problems: list[str] = []
    found: list[bytes] = []
    for _ in range(40):
        step = follower.poll()
        problems += step.problems
        found += step.lines
    assert problems == ["a log line is longer than 1000 bytes"]
    assert [json.loads(raw)["auditID"] for raw in found] == ["a"]


def test_the_feed_counts_malformed_lines_and_says_while_it_waits(tmp_path):
    log = tmp_path / "audit.log"
    feed = AuditLogFeed(log)
    feed.step()
    assert feed.origin == f"log {log} (waiting for the file to appear)"
    log.write_bytes(line(binding_event(409)) + b"{truncated\n" + b"\n" + line(status_patch_event()))
    feed.step()
    assert feed.origin == f"log {log}"
    assert (feed.received, feed.malformed) == (2, 1)
    assert feed.problem.startswith("a log line is not JSON")


async def test_the_feed_follows_the_file_on_the_event_loop(tmp_path):
    log = tmp_path / "audit.log"
    log.write_bytes(line(binding_event(201)))
    async with AuditLogFeed(log, poll_seconds=0.01, flush_seconds=0.01) as feed:
        stream = feed.audit_stream()
        codes: list[int] = []
        async with asyncio.timeout(10):
            async for update in stream:
                codes += [e.code for e in update.events]
                if codes == [201]:
                    append(log, line(binding_event(409)))
                if len(codes) == 2:
                    break
        await stream.aclose()
    assert codes == [201, 409]


@pytest.mark.parametrize(("path", "says"), [
    ("", "--audit-log needs the path"),
    (".", "is a directory"),
    ("no-such-folder/audit.log", "there is no directory"),
])
def test_bad_paths_are_refused_with_one_sentence(tmp_path, monkeypatch, path, says):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AuditOriginError, match=says):
        check_log_path(path)
    assert check_log_path("audit.log") == Path("audit.log")  # a missing file in a folder that exists is waited for
