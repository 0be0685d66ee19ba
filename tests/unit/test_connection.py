"""One connection helper for the screen, ``why`` and ``schedule``: the same message and exit code from each."""

from __future__ import annotations

import pytest

from observatory import cli
from observatory.lab.kubeconfig import write_kubeconfig
from tests.kube.helpers import closed_port

COMMANDS = {"screen": [], "why": ["why", "web"], "schedule": ["schedule", "--scheduler-name", "mine"]}


@pytest.fixture
def no_kubeconfig(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("KUBECONFIG", raising=False)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_lab_that_cannot_start_is_one_line_and_exit_1(no_kubeconfig, capsys, command):
    assert cli.main(["--scenario", "no-such-scenario", *COMMANDS[command]]) == 1
    err = capsys.readouterr().err
    assert err.startswith("observatory: the embedded lab could not start: ") and err.count("\n") == 1
    assert "no-such-scenario" in err and "Traceback" not in err


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unreachable_cluster_is_the_same_paragraph_and_exit_2(tmp_path, capsys, command):
    port = closed_port()
    config = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")
    assert cli.main(["--kubeconfig", str(config), *COMMANDS[command]]) == 2
    err = capsys.readouterr().err
    assert err == (f'observatory: Cannot reach the cluster of context "observatory-lab". The connection to '
                   f"http://127.0.0.1:{port} was refused: nothing is listening on 127.0.0.1:{port}. Run "
                   "`observatory --lab` to use the embedded lab instead.\n")
