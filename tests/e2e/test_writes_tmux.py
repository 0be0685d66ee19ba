"""End to end as the seed exercise has it: ``observatory --lab`` in tmux, exercise 1's kubectl commands verbatim in
another shell, and the screen naming kubectl as the writer of both Bindings (201, then the 409 with the text kubectl
printed) and of the bind frame in the nodeName timeline, with the kubelet's frames after it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.e2e.test_tmux import SOCKET, tmux, wait_for

__all__ = ["tmux"]  # the fixture, used by name

BINDING = ('{"apiVersion":"v1","kind":"Binding",\n'
           ' "metadata":{"name":"manual","namespace":"sched-lab"},\n'
           ' "target":{"apiVersion":"v1","kind":"Node","name":"pair-worker"}}\n')
CONFLICT = ('Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node '
            '"pair-worker"')


def lab_kubeconfig(cache: Path, timeout: float = 20.0) -> Path:
    """The embedded lab's kubeconfig at its stable path under the user cache directory (platformdirs)."""
    path = cache / "observatory" / "lab" / "kubeconfig"
    deadline = time.monotonic() + timeout
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert path.exists(), f"no lab kubeconfig at {path}"
    return path


def test_exercise_1_with_kubectl_beside_the_screen(tmp_path, tmux, kubectl):
    exe = Path(sys.executable).parent / "observatory"
    assert exe.exists(), "the observatory console script must be installed"
    session = f"obs-writes-{os.getpid()}"
    cache = tmp_path / "cache"
    # 260 columns: the writes pane's detail holds the Status message on one line.
    env = f"HOME={tmp_path} XDG_CACHE_HOME={cache} KUBECONFIG= TERM=xterm-256color"
    subprocess.run([tmux, "-L", SOCKET, "new-session", "-d", "-s", session, "-x", "260", "-y", "50",
                    f"env -u COLUMNS -u LINES {env} {exe} --lab"], check=True)
    try:
        wait_for(tmux, session, "sched-lab/manual", "live", "Writes: sched-lab/manual", "audit: lab")
        (tmp_path / "binding.json").write_text(BINDING)
        shell = {**os.environ, "KUBECONFIG": str(lab_kubeconfig(cache))}
        bind = [kubectl, "create", "--raw", "/api/v1/namespaces/sched-lab/pods/manual/binding", "-f",
                str(tmp_path / "binding.json")]
        first = subprocess.run(bind, capture_output=True, text=True, env=shell, timeout=30)
        assert first.returncode == 0, first.stderr
        wait_for(tmux, session, "kubectl", "POST binding", "201 Created",
                 "← POST pods/manual/binding · kubectl · 201")
        second = subprocess.run(bind, capture_output=True, text=True, env=shell, timeout=30)
        assert second.stderr == f"Error from server (Conflict): {CONFLICT}\n"
        screen = wait_for(tmux, session, "409 Conflict", f"Status message ▸ {CONFLICT}",
                          "PATCH pods/manual/status · kubelet pair-worker · 200")
        timeline = screen[screen.index("nodeName timeline"):]
        assert timeline.index("binding · kubectl") < timeline.index("kubelet pair-worker")
        assert "Traceback" not in screen
        subprocess.run([tmux, "-L", SOCKET, "send-keys", "-t", session, "q"], check=True)
    finally:
        subprocess.run([tmux, "-L", SOCKET, "kill-server"], capture_output=True)
