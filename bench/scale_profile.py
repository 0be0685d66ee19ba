"""py-spy on observatory's process during the busiest churn level, and the hot spots of its raw profile.

``py-spy record --format raw`` writes one line per distinct stack, ``frame;frame;...;leaf COUNT``, each frame
``function (file:line)``. :func:`summarise` turns that into two short tables: the functions where the samples were
taken (self time) and the observatory/textual functions most often on the stack (inclusive time). py-spy is in the
``bench`` extra (``pip install -e '.[bench]'``); it samples from outside, with ``--nonblocking`` so it never pauses
the app.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^():]+)(?::(?P<line>\d+))?\)$")


class PySpy:
    """``py-spy record`` on ``pid`` until :meth:`stop`; the raw profile goes to ``path``."""

    def __init__(self, pid: int, path: Path, rate: int = 100) -> None:
        beside = Path(sys.executable).parent / "py-spy"
        exe = shutil.which("py-spy") or (str(beside) if beside.exists() else None)
        if exe is None:
            raise RuntimeError("py-spy is not installed: pip install -e '.[bench]'")
        path.parent.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen([exe, "record", "--pid", str(pid), "--rate", str(rate), "--format", "raw",
                                      "--nonblocking", "--output", str(path)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _short(frame: str) -> str:
    m = _FRAME.match(frame.strip())
    if not m:
        return frame.strip()
    file = m["file"]
    for root in ("site-packages/", "/observatory/", "/bench/"):
        if root in file:
            rest = file.split(root, 1)[1]
            file = rest if root == "site-packages/" else root.strip("/") + "/" + rest
            break
    return f"{m['func']} ({file}{':' + m['line'] if m['line'] else ''})"


def summarise(path: Path, top: int = 12) -> str:
    """Markdown: the top self-time frames and the top observatory/textual functions by inclusive samples."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = [_short(f) for f in stack.split(";")]
        own[frames[-1]] += n
        seen = set()
        for f in frames:
            func = re.sub(r":\d+\)$", ")", f)  # per function, not per line
            if func not in seen and ("observatory/" in func or "textual/" in func):
                seen.add(func)
                inclusive[func] += n
    if not total:
        return "(no samples)"
    out = [f"{total:,} samples at 100 Hz.", "", "| self time | where |", "|---:|---|"]
    out += [f"| {n / total:.1%} | `{f}` |" for f, n in own.most_common(top)]
    out += ["", "| on the stack | observatory / textual function |", "|---:|---|"]
    out += [f"| {n / total:.1%} | `{f}` |" for f, n in inclusive.most_common(top * 2)]
    return "\n".join(out)
