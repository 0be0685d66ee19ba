"""Exec credential plugins, against the TLS token lab:

* the first run happens before the UI takes the terminal: the command line connects (and so runs the plugin,
  whose standard error reaches the terminal) before the app is built;
* tokens are refreshed when they expire: the plugin hands out a token that expires a few seconds later; before
  that no request runs it again, after it the next request (one run for several concurrent requests) does;
* a failing plugin's standard error is shown, at connect time (``connect()``, ``observatory``, ``observatory why``)
  and when a refresh fails (a request's error, the Binding exchange, the watch's stale state; no traceback).

The plugin counts its runs in a file; kubectl runs the same plugin as the reference for its output format.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from observatory import cli
from observatory.kube.binding import post_binding
from observatory.kube.connect import LAB_HINT, ConnectError, check_reachable, connect
from observatory.kube.fetch import Unreachable, get_json
from observatory.kube.reflector import Reflector
from observatory.model.deltas import WatchState
from tests.kube.helpers import Collector, loopback_url
from tests.kube.kc_tools import isolated, observatory, one_paragraph, run, write_yaml
from tests.waiting import eventually

__all__ = ["isolated"]

pytestmark = pytest.mark.usefixtures("isolated")

API_VERSION = "client.authentication.k8s.io/v1beta1"
PROMPT = "plugin: open https://login.example/device and enter the code WXYZ-1234"
EXPIRED = "error: the refresh token has expired; run `login` again"

PLUGIN = """\
import datetime, json, os, sys
here = {here!r}
count_file = os.path.join(here, "runs")
runs = int(open(count_file).read()) + 1 if os.path.exists(count_file) else 1
open(count_file, "w").write(str(runs))
with open(os.path.join(here, "info-%d.json" % runs), "w") as f:
    f.write(os.environ.get("KUBERNETES_EXEC_INFO", "{{}}"))
sys.stderr.write({prompt!r} + "\\n")
sys.stderr.flush()
if {fail_from} and runs >= {fail_from}:
    sys.stderr.write({expired!r} + "\\n")
    sys.exit(1)
status = {{"token": {token!r}}}
if {lifetime}:
    expiry = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds={lifetime})
    status["expirationTimestamp"] = expiry.strftime("%Y-%m-%dT%H:%M:%SZ")
    open(os.path.join(here, "expiry-%d" % runs), "w").write(status["expirationTimestamp"])
print(json.dumps({{"apiVersion": {api!r}, "kind": "ExecCredential", "status": status}}))
"""


class Plugin:
    """A plugin script in ``folder`` and the kubeconfig that uses it for the TLS lab."""

    def __init__(self, folder: Path, lab, *, lifetime: int = 0, fail_from: int = 0, token: str | None = None,
                 command: str | None = None, install_hint: str | None = None) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        script = folder / "plugin.py"
        script.write_text(PLUGIN.format(here=str(folder), prompt=PROMPT, fail_from=fail_from, expired=EXPIRED,
                                        token=token or lab.token, lifetime=lifetime, api=API_VERSION))
        exec_: dict[str, Any] = {"apiVersion": API_VERSION, "command": command or sys.executable,
                                 "args": [str(script)]}
        if install_hint:
            exec_["installHint"] = install_hint
        self.kubeconfig = write_yaml(folder / "kc", {
            "apiVersion": "v1", "kind": "Config", "current-context": "lab",
            "clusters": [{"name": "lab", "cluster": {"server": loopback_url(lab.url),
                                                     "certificate-authority-data": _b64(lab.ca_pem)}}],
            "users": [{"name": "plugged", "user": {"exec": exec_}}],
            "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "plugged", "namespace": "sched-lab"}}]})

    @property
    def runs(self) -> int:
        path = self.folder / "runs"
        return int(path.read_text()) if path.exists() else 0

    def expiry(self, run: int) -> datetime:
        return datetime.fromisoformat((self.folder / f"expiry-{run}").read_text().replace("Z", "+00:00"))

    def info(self, run: int) -> dict[str, Any]:
        return json.loads((self.folder / f"info-{run}.json").read_text())


def _b64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode()


async def test_kubectl_takes_the_plugin_output(tls_lab, tmp_path, kubectl):
    """The reference: kubectl runs the same plugin and its token works."""
    plugin = Plugin(tmp_path / "p", tls_lab)
    result = await run(kubectl, "--kubeconfig", str(plugin.kubeconfig), "get", "--raw", "/version")
    assert result.returncode == 0, result.stderr
    assert plugin.runs == 1 and PROMPT in result.stderr  # kubectl passes the plugin's stderr through


async def test_cli_runs_the_plugin_before_the_ui_is_built(tls_lab, tmp_path, monkeypatch, capsys):
    from observatory.ui.app import ObservatoryApp

    plugin = Plugin(tmp_path / "p", tls_lab)
    seen: dict[str, Any] = {}
    built = ObservatoryApp.__init__

    def record_init(self, *args, **kwargs):
        seen["runs when the app is built"] = plugin.runs
        seen["stderr before the app"] = capsys.readouterr().err
        built(self, *args, **kwargs)

    async def no_ui(self, *args, **kwargs):
        seen["context"] = self.main.source.connection.context

    monkeypatch.setattr(ObservatoryApp, "__init__", record_init)
    monkeypatch.setattr(ObservatoryApp, "run_async", no_ui)
    assert await asyncio.to_thread(cli.main, ["--kubeconfig", str(plugin.kubeconfig)]) == 0
    assert seen["runs when the app is built"] == 1 and seen["context"] == "lab"
    assert PROMPT in seen["stderr before the app"]  # the plugin's prompt reached the terminal before any UI
    assert plugin.info(1) == {"apiVersion": API_VERSION, "kind": "ExecCredential", "spec": {"interactive": False}}


async def test_token_is_refreshed_after_it_expires(tls_lab, tmp_path, capsys):
    plugin = Plugin(tmp_path / "p", tls_lab, lifetime=4)
    conn = await connect(str(plugin.kubeconfig))
    try:
        assert plugin.runs == 1
        expiry = plugin.expiry(1)
        await check_reachable(conn)
        await get_json(conn.api, "/api/v1/namespaces/sched-lab/pods/manual")
        if datetime.now(UTC) <= expiry:  # still valid: cached, not run again (kubernetes-asyncio alone would)
            assert plugin.runs == 1
        await eventually(lambda: datetime.now(UTC) > expiry, "the first token to expire", timeout=30)
        before = plugin.runs
        await asyncio.gather(*(get_json(conn.api, "/version") for _ in range(4)))
        assert plugin.runs == before + 1  # one run for four concurrent requests
        assert plugin.info(plugin.runs)["spec"]["interactive"] is False
        assert capsys.readouterr().err.count(PROMPT) == 1  # the first run only: a refresh stays off the screen
    finally:
        await conn.close()


async def test_failing_refresh_is_a_sentence_with_the_plugin_stderr(tls_lab, tmp_path):
    plugin = Plugin(tmp_path / "p", tls_lab, lifetime=3, fail_from=2)
    conn = await connect(str(plugin.kubeconfig))
    try:
        await eventually(lambda: datetime.now(UTC) > plugin.expiry(1), "the token to expire", timeout=30)
        with pytest.raises(Unreachable) as exc:
            await get_json(conn.api, "/api/v1/nodes")
        assert exc.value.reason == "credentials"
        for needle in ("exit code 1", EXPIRED, 'user "plugged"'):
            assert needle in str(exc.value)
        with pytest.raises(ConnectError) as lost:
            await check_reachable(conn)
        assert lost.value.reason == "credentials" and EXPIRED in str(lost.value)
        exchange = await post_binding(conn.api, "sched-lab", "manual", "pair-worker")
        assert exchange.status == 0 and EXPIRED in (exchange.error or "")
        assert tls_lab.token not in (exchange.error or "")
        # what the screen shows while watching: the watch's stale state carries the plugin's words
        pods = Collector(Reflector(conn.api, "pods", "sched-lab", backoff_initial=0.05, backoff_max=0.2).run())
        try:
            stale = await eventually(lambda: next((d for d in pods.deltas if isinstance(d, WatchState)
                                                   and d.state == "stale" and EXPIRED in d.detail), None),
                                     "a stale watch state quoting the plugin", timeout=30)
            assert 'user "plugged"' in stale.detail
        finally:
            await pods.stop()
    finally:
        await conn.close()


@pytest.mark.parametrize("command", [(), ("why", "manual")], ids=["observatory", "observatory-why"])
async def test_failing_plugin_at_start_is_one_paragraph_quoting_its_stderr(tls_lab, tmp_path, command):
    plugin = Plugin(tmp_path / "p", tls_lab, fail_from=1)
    with pytest.raises(ConnectError) as exc:
        await connect(str(plugin.kubeconfig))
    assert exc.value.reason == "exec" and EXPIRED in str(exc.value)
    result = await observatory(*command, "--kubeconfig", str(plugin.kubeconfig))
    message = one_paragraph(result)
    assert 'user "plugged"' in message and "exit code 1" in message and EXPIRED in message
    assert result.stderr.index(PROMPT) < result.stderr.index(message)  # streamed first, as kubectl does


async def test_missing_plugin_names_it_and_gives_the_install_hint(tls_lab, tmp_path, kubectl):
    hint = "Install the login helper: see the team wiki, page 'cluster access'."
    plugin = Plugin(tmp_path / "p", tls_lab, command="observatory-no-such-login-plugin", install_hint=hint)
    reference = await run(kubectl, "--kubeconfig", str(plugin.kubeconfig), "get", "--raw", "/version")
    assert reference.returncode == 1 and hint in reference.stderr
    with pytest.raises(ConnectError) as exc:
        await connect(str(plugin.kubeconfig))
    text = str(exc.value)
    assert exc.value.reason == "exec" and text.endswith(LAB_HINT)
    assert '"observatory-no-such-login-plugin"' in text and "was not found" in text and hint in text
