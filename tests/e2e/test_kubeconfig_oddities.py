"""The installed commands with kubeconfigs that cannot be used, and with a server URL carrying ``user:password@``
next to a token (the break-it finding: a ValueError traceback, exit 1, then ``Unclosed client session``).

Every command that connects (the screen, ``why``, ``schedule``) gives one paragraph on stderr and exit code 2, with
no traceback, no unclosed-session warning and never the URL's password; against a working API server the
userinfo URL is used as kubectl uses it (tests/kube/test_server_userinfo.py compares the headers with kubectl's).
The full list of oddities runs in process in tests/kube/test_kubeconfig_oddities.py (each subprocess costs a
second or more); here the issue's case goes through the console script, as a person meets it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_kubectl_seed import Lab, serving
from tests.kube.helpers import closed_port, rewrite_kubeconfig
from tests.kube.kc_oddities import COMMANDS, PASSWORD, TOKEN, cases

COMMAND = str(Path(sys.executable).parent / "observatory")


def environment(home: Path) -> dict[str, str]:
    skip = ("KUBECONFIG", "COLUMNS", "LINES", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
    return {**{k: v for k, v in os.environ.items() if k not in skip}, "HOME": str(home)}


def check_one_paragraph(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == "" and "Traceback" not in result.stderr and "Unclosed" not in result.stderr
    message = result.stderr.strip()
    assert "\n" not in message and message.startswith("observatory: ") and "--lab" in message
    assert PASSWORD not in message
    return message


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_userinfo_and_a_token_to_a_closed_port_is_one_paragraph_and_exit_2(tmp_path, command):
    config = cases(f"http://127.0.0.1:{closed_port()}")["userinfo-and-token"](tmp_path)
    result = subprocess.run([COMMAND, *COMMANDS[command], "--kubeconfig", config], capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, env=environment(tmp_path), timeout=60)
    assert "was refused" in check_one_paragraph(result)


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    with serving(tmp_path_factory.mktemp("userinfo-lab"), "--scenario", "manual-binding") as lab:
        yield lab


def userinfo_kubeconfig(lab: Lab, tmp: Path) -> str:
    port = lab.url.rsplit(":", 1)[1]
    return str(rewrite_kubeconfig(Path(lab.kubeconfig), tmp / "kc", server=f"http://alice:{PASSWORD}@127.0.0.1:{port}",
                                  token=TOKEN))


def test_why_works_through_a_server_url_with_userinfo_and_a_token(lab, tmp_path):
    result = subprocess.run([COMMAND, "why", "manual", "-n", "sched-lab", "--kubeconfig",
                             userinfo_kubeconfig(lab, tmp_path)], capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, env=environment(tmp_path), timeout=60)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines()[0].split() == ["Pod:", "sched-lab/manual"]
    assert PASSWORD not in result.stdout


def test_schedule_works_through_a_server_url_with_userinfo_and_a_token(lab, tmp_path):
    err = tmp_path / "schedule.err"
    with err.open("w") as handle:
        proc = subprocess.Popen([COMMAND, "schedule", "--scheduler-name", "userinfo-test", "--kubeconfig",
                                 userinfo_kubeconfig(lab, tmp_path)], stdout=subprocess.DEVNULL, stderr=handle,
                                stdin=subprocess.DEVNULL, env=environment(tmp_path))
    try:
        deadline = time.monotonic() + 30
        while "identity " not in err.read_text():
            assert proc.poll() is None, err.read_text()
            assert time.monotonic() < deadline, err.read_text()
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
    text = err.read_text()
    assert code == 0, text
    assert "Traceback" not in text and "Unclosed" not in text and PASSWORD not in text
