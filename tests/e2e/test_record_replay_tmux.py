"""``observatory --lab --record FILE`` against a token lab in tmux, a bind, quit; the file is a recording without the
token; then ``observatory replay FILE`` shows the same cluster with no lab running, the recorded keys pressed again."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from observatory.model.recording import DeltaEntry, ExchangeEntry, read_recording
from tests.e2e.test_tmux import SOCKET, tmux, wait_for

__all__ = ["tmux"]


def send(tmux: str, session: str, *keys: str) -> None:
    subprocess.run([tmux, "-L", SOCKET, "send-keys", "-t", session, *keys], check=True)


def ended(tmux: str, session: str, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if subprocess.run([tmux, "-L", SOCKET, "has-session", "-t", session], capture_output=True).returncode:
            return True
        time.sleep(0.1)
    return False


def test_record_a_token_lab_session_then_replay_it(tmp_path, tmux):
    exe = Path(sys.executable).parent / "observatory"
    recording = tmp_path / "session.jsonl"
    env = (f"HOME={tmp_path} XDG_CACHE_HOME={tmp_path / 'cache'} KUBECONFIG= TERM=xterm-256color "
           "OBSERVATORY_LAB__TOKEN=true")
    session = f"rec-{os.getpid()}"
    try:
        subprocess.run([tmux, "-L", SOCKET, "new-session", "-d", "-s", session, "-x", "120", "-y", "40",
                        f"env -u COLUMNS -u LINES {env} {exe} --lab --record {recording}"], check=True)
        wait_for(tmux, session, "sched-lab/manual", "LAB", "live")
        send(tmux, session, "b")
        wait_for(tmux, session, "Bind sched-lab/manual to which node?")
        send(tmux, session, "worker", "Enter")
        wait_for(tmux, session, "201 Created")
        # the lab's kubeconfig (and its token) lives as long as the lab: read it before quitting
        kubeconfig = tmp_path / "cache" / "observatory" / "lab" / "kubeconfig"
        token = next(line.split(":", 1)[1].strip() for line in kubeconfig.read_text().splitlines()
                     if line.strip().startswith("token:"))
        send(tmux, session, "q")
        assert ended(tmux, session), "q should quit observatory"

        text = recording.read_text()
        assert len(token) > 20 and token not in text
        recorded = read_recording(text.splitlines())
        assert recorded.header.lab and recorded.header.server.startswith("https://127.0.0.1:")
        exchanges = [e.exchange for e in recorded.entries if isinstance(e, ExchangeEntry)]
        assert [(x.pod, x.node, x.status) for x in exchanges] == [("sched-lab/manual", "pair-worker", 201)]
        kinds = {e.delta.kind for e in recorded.entries if isinstance(e, DeltaEntry)}
        assert {"pods", "nodes", "events"} <= kinds

        session = f"play-{os.getpid()}"
        subprocess.run([tmux, "-L", SOCKET, "new-session", "-d", "-s", session, "-x", "120", "-y", "40",
                        f"env -u COLUMNS -u LINES HOME={tmp_path} TERM=xterm-256color {exe} replay {recording} "
                        "--speed inf"], check=True)
        # The recorded keys are pressed again (b, worker, Enter): the replay ends on the 201, as the live run did, and
        # the recorded q does not quit it. Keys pressed before it has finished would mix with the recorded ones.
        screen = wait_for(tmux, session, "sched-lab/manual", "pair-worker", "LAB",
                          "Writes: sched-lab/manual", "HTTP/1.1 201 Created", "Replay finished")
        assert "Traceback" not in screen
        send(tmux, session, "q")
        assert ended(tmux, session), "q should quit the replay"
    finally:
        subprocess.run([tmux, "-L", SOCKET, "kill-server"], capture_output=True)
