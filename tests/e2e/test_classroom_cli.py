"""The teaching and recording command line as a user runs it: ``observatory lessons``, ``--lesson``, ``--record``,
``replay``, and ``lab serve --token``. Every failure is one line on stderr and exit code 2."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import yaml

from observatory.lessons import lesson_names

HEADER = ('{"type":"header","format":"observatory-recording","version":1,"started":"2026-11-29T10:00:00Z",'
          '"context":"observatory-lab","server":"http://127.0.0.1:1","namespace":"","lab":true}\n')


def observatory(*args: str, tmp_path=None) -> subprocess.CompletedProcess:
    """The command with no kubeconfig around (HOME in ``tmp_path``), so nothing reaches a real cluster."""
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    if tmp_path is not None:
        env["HOME"] = str(tmp_path)
    return subprocess.run([sys.executable, "-m", "observatory", *args], capture_output=True, text=True, timeout=60,
                          env=env, stdin=subprocess.DEVNULL)


def one_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("observatory: "), result.stderr
    return result.stderr.rstrip("\n")


def test_lessons_lists_the_shipped_lessons():
    result = observatory("lessons")
    assert result.returncode == 0, result.stderr
    named = [line.split()[0] for line in result.stdout.splitlines() if line and not line[0].isspace()]
    assert named == ["manual-binding", "scheduled-pod"]
    assert "Scheduling, minus the scheduler" in result.stdout  # the manual-binding lesson's title
    summaries = [line.strip() for line in result.stdout.splitlines() if line[:1].isspace()]
    assert len(summaries) == 2 and all(summaries)


def test_an_unknown_lesson_lists_the_available_ones(tmp_path):
    line = one_line(observatory("--lesson", "nope", tmp_path=tmp_path))
    assert "nope" in line
    assert all(name in line for name in ("manual-binding", "scheduled-pod"))
    assert set(lesson_names()) == {"manual-binding", "scheduled-pod"}


def test_recording_to_an_unwritable_path(tmp_path):
    target = tmp_path / "no-such-folder" / "session.jsonl"
    line = one_line(observatory("--lab", "--record", str(target), tmp_path=tmp_path))
    assert str(target) in line
    assert not target.parent.exists()
    line = one_line(observatory("--lab", "--record", str(tmp_path), tmp_path=tmp_path))  # a directory
    assert str(tmp_path) in line


def test_replay_of_a_bad_file_names_the_file_and_line(tmp_path):
    bad = tmp_path / "session.jsonl"
    bad.write_text(HEADER + '{"type":"delta","t":0.5}\n')
    line = one_line(observatory("replay", str(bad)))
    assert line.startswith(f"observatory: {bad}: line 2: ")
    bad.write_text('{"type":"key","t":1,"at":"2026-11-29T10:00:01Z","key":"b"}\n' + HEADER)
    assert one_line(observatory("replay", str(bad))).startswith(f"observatory: {bad}: line 1: ")
    bad.write_text("")
    assert one_line(observatory("replay", str(bad))).startswith(f"observatory: {bad}: ")
    missing = tmp_path / "missing.jsonl"
    assert one_line(observatory("replay", str(missing))).startswith(f"observatory: {missing}: ")


def test_replay_speed_must_be_greater_than_zero(tmp_path):
    good = tmp_path / "session.jsonl"
    good.write_text(HEADER)
    for speed in ("0", "-2", "fast", "nan"):
        result = observatory("replay", str(good), "--speed", speed)
        assert result.returncode == 2 and "--speed" in result.stderr and "Traceback" not in result.stderr


def test_lab_serve_token_requires_the_token_on_loopback(tmp_path, kubectl):
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen([sys.executable, "-m", "observatory", "lab", "serve", "--token", "--port", "0",
                             "--kubeconfig-out", str(kubeconfig)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        url_line = proc.stdout.readline()
        match = re.fullmatch(r"Lab API server: (https://127\.0\.0\.1:\d+)\n", url_line)
        assert match, url_line + proc.stderr.read()
        proc.stdout.readline()
        config = yaml.safe_load(kubeconfig.read_text())
        token = config["users"][0]["user"]["token"]
        assert token
        ok = subprocess.run([kubectl, "--kubeconfig", str(kubeconfig), "get", "pods", "-A", "-o", "name"],
                            capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert ok.returncode == 0, ok.stderr
        denied = subprocess.run([kubectl, "--kubeconfig", str(kubeconfig), "--token", "wrong", "get", "--raw",
                                 "/api/v1/nodes"], capture_output=True, text=True, timeout=30)
        assert (denied.returncode, denied.stderr) == (1, "error: You must be logged in to the server (Unauthorized)\n")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
