"""Several embedded labs at once, each with its own kubeconfig: no lab overwrites the file of one that still serves.

The README's flow, tried as a student would: with no kubeconfig, the screen and ``observatory schedule`` start
together, each on its own embedded lab; kubectl through the kubeconfig the screen shows reaches the screen's lab,
also after ``schedule`` has stopped. And the rules of :mod:`observatory.lab.kubeconfig` one by one: the first lab
takes the stable ``<cache>/observatory/lab/kubeconfig``, a later one writes ``<pid>-<port>/kubeconfig``, the stable
path moves only to a lab that serves, and the directories of dead processes are removed.
"""

from __future__ import annotations

import asyncio
import io
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from observatory import cli
from observatory.connection import connected
from observatory.embedded import EmbeddedLab
from observatory.kube.connect import check_reachable, connect
from observatory.kube.fetch import get_json
from observatory.lab.kubeconfig import default_kubeconfig_path, write_kubeconfig
from observatory.lab.resources import CORE_V1
from observatory.settings import LabSettings
from tests.conftest import API_ONLY
from tests.kube.helpers import closed_port, pod
from tests.waiting import eventually

COMMAND = str(Path(sys.executable).parent / "observatory")


@pytest.fixture
def no_kubeconfig(tmp_path, monkeypatch) -> Iterator[dict[str, str]]:
    """A user with no kubeconfig at all (HOME without ~/.kube, no KUBECONFIG) and a cache directory of their own;
    yields the environment for subprocesses."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    yield {**os.environ}


def server_of(path: Path) -> str:
    return yaml.safe_load(path.read_text())["clusters"][0]["cluster"]["server"]


async def answers(path: Path) -> str:
    """Connect through the kubeconfig at ``path`` and read a node: the server it reached."""
    conn = await connect(str(path))
    try:
        await check_reachable(conn)
        await get_json(conn.api, "/api/v1/nodes/pair-worker")
        return conn.server
    finally:
        await conn.close()


async def test_two_labs_one_after_another_get_their_own_kubeconfigs(no_kubeconfig, tmp_path):
    stable = default_kubeconfig_path()
    assert stable == tmp_path / "cache" / "observatory" / "lab" / "kubeconfig"
    first = EmbeddedLab(LabSettings(**API_ONLY), scenario="pair")
    second = EmbeddedLab(LabSettings(**API_ONLY), scenario="pair")
    third = EmbeddedLab(LabSettings(**API_ONLY), scenario="pair")
    await first.start()
    try:
        assert first.kubeconfig_path == stable and server_of(stable) == first.url
        assert stat.S_IMODE(stable.parent.stat().st_mode) == 0o700  # the tokens' folder is the user's alone
        await second.start()
        try:
            port = second.url.rsplit(":", 1)[1]
            assert second.kubeconfig_path == stable.parent / f"{os.getpid()}-{port}" / "kubeconfig"
            assert server_of(second.kubeconfig_path) == second.url
            assert stat.S_IMODE(second.kubeconfig_path.parent.stat().st_mode) == 0o700
            assert server_of(stable) == first.url  # the first lab still serves: its file is left alone
            assert await answers(second.kubeconfig_path) == second.url
        finally:
            await second.stop()
        assert not second.kubeconfig_path.parent.exists()  # its own directory went with it
        assert server_of(stable) == first.url
        assert await answers(first.kubeconfig_path) == first.url  # the first keeps working

        await third.start()
        assert third.kubeconfig_path != stable
    finally:
        await first.stop()
    try:
        # The lab the stable path named has stopped: the path moves to the lab that still serves.
        assert server_of(stable) == third.url
        assert await answers(stable) == third.url
    finally:
        await third.stop()
    assert not stable.exists()  # no lab left: no kubeconfig that would be refused
    assert [p.name for p in stable.parent.iterdir() if p.name != ".lock"] == []


async def test_a_dead_labs_files_are_taken_over_and_cleaned_up(no_kubeconfig, tmp_path):
    stable = default_kubeconfig_path()
    write_kubeconfig(stable, f"http://127.0.0.1:{closed_port()}")  # a lab that is gone without cleaning up
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_dir = stable.parent / f"{int(gone.stdout)}-12345"
    write_kubeconfig(dead_dir / "kubeconfig", "http://127.0.0.1:12345")  # killed with kill -9
    lab = EmbeddedLab(LabSettings(**API_ONLY), scenario="pair")
    await lab.start()
    try:
        assert lab.kubeconfig_path == stable and server_of(stable) == lab.url
        assert not dead_dir.exists()
    finally:
        await lab.stop()


async def kubectl_pods(kubectl: str, kubeconfig: str) -> subprocess.CompletedProcess:
    """``kubectl get pods -n sched-lab -o name`` in a thread (the lab it reaches runs on this event loop)."""
    return await asyncio.to_thread(subprocess.run, [kubectl, "--kubeconfig", kubeconfig, "-n", "sched-lab", "get",
                                                    "pods", "-o", "name"], capture_output=True, text=True, timeout=30)


async def test_the_screen_and_schedule_together_without_a_kubeconfig(no_kubeconfig, kubectl, tmp_path):
    """The README's flow: the screen starts on its embedded lab; ``observatory schedule`` starts on another one;
    kubectl through the kubeconfig the screen shows reaches the screen's lab, during and after ``schedule``."""
    args = cli.build_parser().parse_args([])
    async with connected(LabSettings(), err=io.StringIO()) as screen:  # what `observatory` (the screen) does
        assert screen.lab is not None
        shown = cli.screen_source(screen, args).commands_context().kubeconfig
        assert shown is not None and shown == str(screen.lab.kubeconfig_path)
        screen.lab.registry.create(CORE_V1["pods"], "sched-lab", pod("only-on-the-screens-lab"))
        err = tmp_path / "schedule.err"
        with err.open("w") as handle:
            schedule = subprocess.Popen([COMMAND, "schedule", "--scheduler-name", "my-scheduler"],
                                        stdout=subprocess.DEVNULL, stderr=handle, env=no_kubeconfig)
        try:
            await eventually(lambda: "Synced" in err.read_text() or schedule.poll() is not None, "schedule to sync",
                             timeout=60)
            assert schedule.poll() is None, err.read_text()
            lines = err.read_text().splitlines()
            theirs = Path(next(line for line in lines if line.startswith("Kubeconfig: ")).split(": ", 1)[1])
            assert str(theirs) != shown and theirs.exists()
            assert server_of(Path(shown)) == screen.lab.url
            during = await kubectl_pods(kubectl, shown)
        finally:
            schedule.send_signal(signal.SIGTERM)
            code = await asyncio.to_thread(schedule.wait, 30)
        assert code == 0, err.read_text()
        assert not theirs.exists()
        after = await kubectl_pods(kubectl, shown)
        for got in (during, after):  # the screen's lab, while schedule ran and after it stopped
            assert (got.returncode, got.stdout) == (0, "pod/manual\npod/only-on-the-screens-lab\n"), got.stderr
