"""End to end as a person would: the installed ``observatory --lab`` in tmux, keys sent, screen captured."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest


@pytest.fixture
def tmux() -> str:
    path = shutil.which("tmux")
    if path is None:
        pytest.fail("tmux is not on PATH; the end-to-end TUI test requires it (.ci/run installs it)")
    return path


SOCKET = f"observatory-test-{os.getpid()}"
"""A private tmux server: other tmux servers on the machine (and their environments) cannot interfere."""


def capture(tmux: str, session: str) -> str:
    return subprocess.run([tmux, "-L", SOCKET, "capture-pane", "-p", "-t", session], capture_output=True,
                          text=True).stdout


def wait_for(tmux: str, session: str, *needles: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = capture(tmux, session)
        if all(n in screen for n in needles):
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{needles} not on screen:\n{screen}")


def test_observatory_lab_binds_201_then_409_in_tmux(tmp_path, tmux):
    exe = Path(sys.executable).parent / "observatory"
    assert exe.exists(), "the observatory console script must be installed"
    session = f"obs-{os.getpid()}"
    # COLUMNS/LINES from the test runner's environment would override the 120x40 window the app sees.
    env = f"HOME={tmp_path} XDG_CACHE_HOME={tmp_path / 'cache'} KUBECONFIG= TERM=xterm-256color"
    subprocess.run([tmux, "-L", SOCKET, "new-session", "-d", "-s", session, "-x", "120", "-y", "40",
                    f"env -u COLUMNS -u LINES {env} {exe} --lab"], check=True)
    # A tmux server started earlier with other clients may not honour -x/-y for a detached session.
    try:
        wait_for(tmux, session, "sched-lab/manual", "LAB", "live")
        subprocess.run([tmux, "-L", SOCKET, "send-keys", "-t", session, "b"], check=True)
        wait_for(tmux, session, "Bind sched-lab/manual to which node?")
        subprocess.run([tmux, "-L", SOCKET, "send-keys", "-t", session, "worker", "Enter"], check=True)
        wait_for(tmux, session, "201 Created")
        subprocess.run([tmux, "-L", SOCKET, "send-keys", "-t", session, "b"], check=True)
        wait_for(tmux, session, "Bind sched-lab/manual to which node?")
        subprocess.run([tmux, "-L", SOCKET, "send-keys", "-t", session, "control", "Enter"], check=True)
        wait_for(tmux, session, "already assigned to pair-worker")
        subprocess.run([tmux, "-L", SOCKET, "send-keys", "-t", session, "y"], check=True)
        screen = wait_for(tmux, session, "409 Conflict", "already assigned")
        assert "Traceback" not in screen
        subprocess.run([tmux, "-L", SOCKET, "send-keys", "-t", session, "q"], check=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            alive = subprocess.run([tmux, "-L", SOCKET, "has-session", "-t", session],
                                   capture_output=True).returncode == 0
            if not alive:
                break
            time.sleep(0.1)
        assert not alive, "q should quit observatory and end the tmux session"
    finally:
        subprocess.run([tmux, "-L", SOCKET, "kill-server"], capture_output=True)
