"""``observatory --audit-log PATH``: follow a kube-apiserver audit log (``--audit-log-path``, one JSON Event per line)
as it grows, across rotations, into an :class:`~observatory.kube.audit_feed.AuditHub`.

:class:`LogFollower` is the file logic, with no clock and no event loop: each :meth:`LogFollower.poll` reads what was
added since the last one and returns the complete lines. It

* reads what is there, then new lines as they are written; a last line without its newline is kept until it is
  complete (kube-apiserver's log backend writes each Event and its newline in one write, a reader can still land
  between two ``read`` calls of a large one);
* follows **rename-and-create** rotation, as lumberjack (``gopkg.in/natefinch/lumberjack.v2``, which
  ``--audit-log-maxsize``/``-maxbackup``/``-maxage`` drive) rotates: the file is renamed to
  ``<name>-<timestamp>.<ext>`` and a new one created under the old name. When the path names another file (its device
  and inode differ) or none, the old file is read to its end first, then the new one from its start;
* follows **copytruncate** rotation (logrotate's: the file is copied aside and truncated in place): a file shorter
  than the offset read so far was truncated, and is read again from its start. A partial line at that moment is lost
  with the truncation and counted as malformed. (A file truncated and grown past the old offset between two polls
  cannot be told from one that grew; its first line read is then usually a fragment, counted as malformed.);
* waits for a missing file (``waiting`` says so) and for an unreadable one (``problem``), trying again each poll;
* refuses a line longer than :data:`MAX_LINE` bytes (counted; the rest of it up to its newline is skipped).

:class:`AuditLogFeed` runs a follower every ``poll_seconds`` (0.2 s; at once again while there is more to read) and
hands each line to the hub, whose origin text says ``log PATH`` and, while it cannot read, why.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from observatory.kube.audit_feed import AuditHub, AuditOriginError
from observatory.model.text import safe

__all__ = ["CHUNK", "MAX_LINE", "AuditLogFeed", "FollowStep", "LogFollower", "check_log_path"]

CHUNK = 256 * 1024
"""Bytes read per poll step; a poll that read a full chunk is followed at once by another."""
MAX_LINE = 16 * 1024 * 1024
"""The longest line accepted (kube-apiserver's ``--audit-log-truncate-max-event-size`` defaults to 100 KiB when
truncation is on; without it a ``RequestResponse`` Event of a large object can be a few MiB)."""
POLL_SECONDS = 0.2
"""How often the feed looks for new lines, a rotation or the file appearing."""


def check_log_path(path: str) -> Path:
    """The ``--audit-log`` path, checked before the screen starts: a missing file is fine (it is waited for) when its
    folder exists. Raises :class:`AuditOriginError` (exit 2) for an empty path, a folder, a missing folder or a file
    that cannot be read."""
    if not path.strip():
        raise AuditOriginError("--audit-log needs the path of the API server's audit log (its --audit-log-path)")
    target = Path(path).expanduser()
    if target.is_dir():
        raise AuditOriginError(f"--audit-log {safe(path)} is a directory; name the audit log file in it "
                               "(the API server's --audit-log-path)")
    parent = target.parent
    if not parent.is_dir():
        raise AuditOriginError(f"--audit-log {safe(path)}: there is no directory {safe(str(parent))}")
    if target.exists():
        try:
            with target.open("rb"):
                pass
        except OSError as exc:
            raise AuditOriginError(f"--audit-log {safe(path)} cannot be read: {exc.strerror or exc}") from None
    return target


@dataclass
class FollowStep:
    """What one :meth:`LogFollower.poll` found: complete ``lines`` (without their newline), ``problems`` (one
    sentence per lost or refused piece of input, to count), and ``more`` when it stopped before the end."""

    lines: list[bytes] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    more: bool = False


class LogFollower:
    """Follows one audit log path (see the module docstring). ``waiting`` is True while there is no file to read;
    ``problem`` is why the file cannot be read ("" when it can); ``moved`` is True while the path names no file but
    the old one is still open (renamed, the new one not created yet); ``rotations`` and ``truncations`` count the
    rotations seen."""

    def __init__(self, path: Path, *, chunk: int = CHUNK, max_line: int = MAX_LINE) -> None:
        self.path = path
        self.chunk = chunk
        self.max_line = max_line
        self.waiting = True
        self.problem = ""
        self.rotations = 0
        self.truncations = 0
        self.moved = False
        self._file: IO[bytes] | None = None
        self._ident: tuple[int, int] = (0, 0)
        self._partial = bytearray()
        self._skipping = False

    def close(self) -> None:
        """Close the open file; a later poll opens the path again from its start."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def poll(self) -> FollowStep:
        """Read what was added since the last poll (at most one chunk), following rotations."""
        step = FollowStep()
        if self._file is None and not self._open(step):
            return step
        assert self._file is not None
        data = self._read(step)
        if data:
            self._split(data, step)
            step.more = len(data) >= self.chunk
            return step
        self._check_rotation(step)
        return step

    def _open(self, step: FollowStep) -> bool:
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            self.waiting, self.problem = True, ""
            return False
        except OSError as exc:
            self.waiting, self.problem = True, str(exc.strerror or exc)
            return False
        stat = os.fstat(handle.fileno())
        self._file, self._ident = handle, (stat.st_dev, stat.st_ino)
        self.waiting, self.problem = False, ""
        return True

    def _read(self, step: FollowStep) -> bytes:
        assert self._file is not None
        try:
            return self._file.read(self.chunk)
        except OSError as exc:
            self.problem = str(exc.strerror or exc)
            self.close()
            return b""

    def _check_rotation(self, step: FollowStep) -> None:
        """At the end of the open file: has the path moved on to another file (rename), or been truncated?"""
        if self._file is None:
            return
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self.moved = True  # renamed away and not created again yet: keep the old file until the new one appears
            return
        except OSError as exc:
            self.problem = str(exc.strerror or exc)
            return
        self.moved = False
        if (stat.st_dev, stat.st_ino) != self._ident:
            self._drain(step)  # whatever was written before the rename
            self._finish_partial(step)
            self.close()
            self.rotations += 1
            if self._open(step):
                data = self._read(step)
                self._split(data, step)
                step.more = len(data) >= self.chunk
            return
        if stat.st_size < self._file.tell():
            if self._partial:
                step.problems.append("the log was truncated in the middle of a line; its end is lost")
            self._partial.clear()
            self._skipping = False
            self._file.seek(0)
            self.truncations += 1
            data = self._read(step)
            self._split(data, step)
            step.more = len(data) >= self.chunk

    def _drain(self, step: FollowStep) -> None:
        while self._file is not None:
            data = self._read(step)
            if not data:
                return
            self._split(data, step)

    def _finish_partial(self, step: FollowStep) -> None:
        """A rotated file's last line without a newline: kube-apiserver never leaves one, so take it as a line if
        it reads as one (the parser counts it when it does not)."""
        if self._partial.strip() and not self._skipping:
            step.lines.append(bytes(self._partial).rstrip(b"\r"))
        self._partial.clear()
        self._skipping = False

    def _split(self, data: bytes, step: FollowStep) -> None:
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            piece = data[start:end]
            start = end + 1
            if self._skipping:
                self._skipping = False
                self._partial.clear()
                continue
            if self._partial:
                self._partial += piece
                line = bytes(self._partial)
                self._partial.clear()
            else:
                line = piece
            line = line.rstrip(b"\r")
            if len(line) > self.max_line:
                step.problems.append(f"a log line is longer than {self.max_line} bytes")
            elif line.strip():
                step.lines.append(line)
        rest = data[start:]
        if self._skipping or not rest:
            return
        self._partial += rest
        if len(self._partial) > self.max_line:
            step.problems.append(f"a log line is longer than {self.max_line} bytes")
            self._partial.clear()
            self._skipping = True


class AuditLogFeed(AuditHub):
    """The audit events of a log file (``observatory --audit-log PATH``), followed as :class:`LogFollower` says."""

    def __init__(self, path: Path, *, poll_seconds: float = POLL_SECONDS, **options: Any) -> None:
        self.path = path
        self.follower = LogFollower(path)
        self._poll_seconds = poll_seconds
        self._task: asyncio.Task[None] | None = None
        super().__init__(self._origin_text(), **options)

    def _origin_text(self) -> str:
        name = f"log {safe(str(self.path))}"
        if self.follower.problem:
            return f"{name} (cannot read it: {self.follower.problem}; trying again)"
        if self.follower.waiting:
            return f"{name} (waiting for the file to appear)"
        if self.follower.moved:
            return f"{name} (the file was moved away; waiting for a new one)"
        return name

    def step(self) -> bool:
        """One poll: deliver its lines and problems. Returns whether there is more to read at once."""
        found = self.follower.poll()
        for problem in found.problems:
            self.count_malformed(problem)
        for line in found.lines:
            self.add_line(line)
        self.set_origin(self._origin_text())
        return found.more

    async def _follow(self) -> None:
        while True:
            if self.step():
                await asyncio.sleep(0)  # a large file: read it a chunk at a time, letting the screen paint between
            else:
                await asyncio.sleep(self._poll_seconds)

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._follow(), name="audit-log-follower")

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.follower.close()
