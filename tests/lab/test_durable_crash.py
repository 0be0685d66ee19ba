"""``observatory lab serve --state`` killed with SIGKILL right after an answer: the acknowledged write is there after
the restart, the resourceVersion continues above every RV handed out before, and a state file the lab cannot use
exits 2 with one paragraph and no traceback.

Each test starts the installed command as a subprocess (about a second per start); the crash soak is in
tests/e2e/test_crash_soak.py.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

LAB_ARGS = ("--no-scheduler", "--no-kubelet", "--no-pv-controller")
"""No simulated components: every write to the lab is the test's own."""


@dataclass
class Served:
    """One ``lab serve`` process: its URL and kubeconfig."""

    proc: subprocess.Popen
    url: str
    kubeconfig: Path

    def kill(self) -> None:
        """SIGKILL, as a crash: no handler runs, nothing is flushed or closed by the lab."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.proc.stdout.close()  # type: ignore[union-attr]
        self.proc.stderr.close()  # type: ignore[union-attr]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()


def serve(tmp: Path, state: Path, *, port: int = 0, components: tuple[str, ...] = LAB_ARGS,
          env: dict[str, str] | None = None) -> Served:
    """Start ``observatory lab serve --state STATE`` on ``port`` (0: a free one) with the ``components`` flags and
    extra environment ``env``, and wait for its URL line."""
    kubeconfig = tmp / "kubeconfig"
    proc = subprocess.Popen(
        [sys.executable, "-m", "observatory", "lab", "serve", "--port", str(port), "--state", str(state),
         "--kubeconfig-out", str(kubeconfig), *components],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    url_line = proc.stdout.readline()  # type: ignore[union-attr]
    match = re.fullmatch(r"Lab API server: (http://127\.0\.0\.1:\d+)\n", url_line)
    if match is None:
        proc.kill()
        pytest.fail(f"lab did not start: {url_line!r} {proc.communicate()[1]}")
    proc.stdout.readline()  # type: ignore[union-attr]  # the Kubeconfig line
    return Served(proc, match.group(1), kubeconfig)


def call(url: str, method: str, path: str, body: dict | None = None,
         content_type: str = "application/json") -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def pod(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels},
            "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "nginx"}]}}


PODS = "/api/v1/namespaces/default/pods"


def rv(obj: dict) -> int:
    return int(obj["metadata"]["resourceVersion"])


def test_writes_acknowledged_just_before_kill_9_are_there_after_the_restart(tmp_path):
    state = tmp_path / "state.db"
    lab = serve(tmp_path, state)
    try:
        seen = []
        for name in ("stays", "goes", "changes"):
            code, created = call(lab.url, "POST", PODS, pod(name))
            assert code == 201, created
            seen.append(rv(created))
        code, gone = call(lab.url, "DELETE", f"{PODS}/goes")
        assert code == 200, gone
        seen.append(rv(gone))
        code, patched = call(lab.url, "PATCH", f"{PODS}/changes", {"metadata": {"labels": {"gen": "2"}}},
                             "application/merge-patch+json")
        assert code == 200, patched
        seen.append(rv(patched))
        code, last = call(lab.url, "POST", PODS, pod("last"))
        assert code == 201, last
        seen.append(rv(last))
        lab.kill()  # at once after the 201: no save, no clean stop

        lab = serve(tmp_path, state)
        code, items = call(lab.url, "GET", PODS)
        assert code == 200
        by_name = {p["metadata"]["name"]: p for p in items["items"]}
        assert set(by_name) == {"stays", "changes", "last"}
        assert by_name["changes"]["metadata"]["labels"] == {"gen": "2"}
        assert rv(by_name["last"]) == rv(last) and rv(by_name["changes"]) == rv(patched)
        assert int(items["metadata"]["resourceVersion"]) >= max(seen)
        code, after = call(lab.url, "POST", PODS, pod("after"))
        assert code == 201
        assert rv(after) > max(seen)  # the DELETE's RV, too, is never handed out again
    finally:
        lab.stop()


def test_a_watch_resumed_from_before_the_crash_gets_410_too_old(tmp_path):
    state = tmp_path / "state.db"
    lab = serve(tmp_path, state)
    try:
        code, first = call(lab.url, "POST", PODS, pod("one"))
        assert code == 201
        code, second = call(lab.url, "POST", PODS, pod("two"))
        assert code == 201
        lab.kill()
        lab = serve(tmp_path, state)
        with urllib.request.urlopen(f"{lab.url}{PODS}?watch=1&resourceVersion={rv(first)}", timeout=10) as resp:
            line = json.loads(resp.readline())
        assert line["type"] == "ERROR"
        assert (line["object"]["code"], line["object"]["reason"], line["object"]["message"]) == (
            410, "Expired", f"too old resource version: {rv(first)} ({rv(second)})")
    finally:
        lab.stop()


@pytest.mark.parametrize("content", [b"SQLite format 3\x00" + b"\x07" * 300, b"\x89PNG not a state"],
                         ids=["damaged-database", "not-a-database"])
def test_a_state_file_the_lab_cannot_use_exits_2_with_one_paragraph(tmp_path, content):
    state = tmp_path / "state"
    state.write_bytes(content)
    result = subprocess.run(
        [sys.executable, "-m", "observatory", "lab", "serve", "--port", "0", "--state", str(state),
         "--kubeconfig-out", str(tmp_path / "kc"), *LAB_ARGS], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(f"observatory: {state}") and result.stderr.count("\n") == 1
    assert state.read_bytes() == content
