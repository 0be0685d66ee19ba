"""Every kubeconfig oddity (kc_oddities.py) is one paragraph on stderr and exit code 2 for every command that
connects (the screen, ``why``, ``schedule``), in process: no traceback, nothing on stdout, no unclosed HTTP session,
no password from the server URL. The installed commands are checked in tests/e2e/test_kubeconfig_oddities.py."""

from __future__ import annotations

import gc
import warnings

import pytest

from observatory import cli
from observatory.kube.connect import LAB_HINT
from tests.kube.helpers import closed_port
from tests.kube.kc_oddities import COMMANDS, PASSWORD, cases
from tests.kube.kc_tools import isolated

__all__ = ["isolated"]

pytestmark = pytest.mark.usefixtures("isolated")

SERVER = f"http://127.0.0.1:{closed_port()}"
CASES = cases(SERVER)


@pytest.mark.parametrize("oddity", sorted(CASES))
def test_each_oddity_is_one_paragraph_and_exit_2_for_every_command(tmp_path, capsys, oddity):
    config = CASES[oddity](tmp_path)
    messages = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for command, args in COMMANDS.items():
            code = cli.main([*args, "--kubeconfig", config])
            out, err = capsys.readouterr()
            assert (code, out) == (2, ""), (command, code, err)
            message = err.strip()
            assert message.startswith("observatory: ") and message.endswith(LAB_HINT), (command, err)
            assert "\n" not in message and "Traceback" not in message, (command, err)
            assert PASSWORD not in message and "alice" not in message, (command, err)
            messages[command] = message
        gc.collect()
    assert not [w for w in caught if "Unclosed" in str(w.message)]
    assert len(set(messages.values())) == 1, messages  # the same paragraph whichever command connects


def test_a_context_name_with_control_characters_is_shown_escaped(tmp_path, capsys):
    """A kubeconfig from elsewhere may name its context anything: the paragraph quotes it without sending it."""
    import yaml

    from tests.unit.test_clean_output import HOSTILE, raw_controls

    name = f"c{HOSTILE}"
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": name, "clusters": [], "users": [],
           "contexts": [{"name": name, "context": {"cluster": "nowhere", "user": "u"}}]}
    (tmp_path / "kc").write_text(yaml.safe_dump(doc))
    assert cli.main(["why", "p", "--kubeconfig", str(tmp_path / "kc")]) == 2
    err = capsys.readouterr().err
    assert raw_controls(err.encode("utf-8")) == [] and "\\x1b]0;TITLE\\x07" in err
