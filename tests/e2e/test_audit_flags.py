"""``observatory --audit-log`` and ``--audit-webhook-listen`` refused as a user meets them: a bad path or address is
one ``observatory: …`` line on stderr and exit code 2, before any screen, never a traceback."""

from __future__ import annotations

import socket

import pytest

from observatory.cli import main


@pytest.mark.parametrize(("argv", "says"), [
    (["--audit-log", "{tmp}"], "is a directory; name the audit log file in it"),
    (["--audit-log", "{tmp}/no-such-folder/audit.log"], "there is no directory"),
    (["--audit-webhook-listen", "9444"], "expected HOST:PORT, such as 127.0.0.1:9444"),
    (["--audit-webhook-listen", "127.0.0.1:99999"], "99999 is not a port number (0-65535)"),
])
def test_a_bad_path_or_address_is_one_line_and_exit_2(tmp_path, capsys, argv, says):
    code = main([a.format(tmp=tmp_path) for a in argv])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("observatory: --audit-") and says in err and err.count("\n") == 1
    assert "Traceback" not in err


def test_both_origins_at_once_are_refused_by_the_parser(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--audit-log", str(tmp_path / "a.log"), "--audit-webhook-listen", "127.0.0.1:0"])
    assert exited.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_an_address_in_use_is_refused_after_connecting_before_the_screen(capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["--lab", "--audit-webhook-listen", f"127.0.0.1:{port}"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"observatory: --audit-webhook-listen 127.0.0.1:{port}: cannot listen there: Address already in use" in err
    assert "Traceback" not in err
