"""Shared tools for the kubeconfig edge-case tests: an isolated environment, subprocess runners for kubectl and the
installed ``observatory`` command (async, so an in-process lab keeps serving), and the one-paragraph check."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from observatory.kube import connect as connect_module
from observatory.kube.connect import LAB_HINT

OBSERVATORY = Path(sys.executable).parent / "observatory"
"""The console script pip installed next to this interpreter: the command a user runs."""

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "ALL_PROXY",
              "all_proxy", "REQUEST_METHOD")


@pytest.fixture
def isolated(tmp_path, monkeypatch) -> Path:
    """No KUBECONFIG, no proxy variables, an empty HOME and no service account, unless a test sets them; returns
    HOME."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", *PROXY_VARS):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(connect_module, "SERVICE_ACCOUNT_DIR", tmp_path / "no-service-account")
    return home


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


async def run(*cmd: str, env: dict[str, str] | None = None, timeout: float = 90.0) -> Result:
    """Run ``cmd`` without blocking the event loop; stdin is /dev/null."""
    full_env = {**os.environ, **(env or {})}
    proc = await asyncio.create_subprocess_exec(*cmd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, env=full_env)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    return Result(proc.returncode or 0, out.decode(), err.decode())


async def observatory(*args: str, env: dict[str, str] | None = None) -> Result:
    if not OBSERVATORY.exists():
        pytest.fail(f"the observatory console script is not installed next to {sys.executable}")
    return await run(str(OBSERVATORY), *args, env=env)


async def kubectl_json(kubectl: str, *args: str, env: dict[str, str] | None = None) -> Any:
    result = await run(kubectl, *args, "-o", "json", env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def one_paragraph(result: Result) -> str:
    """The failure paragraph of an ``observatory`` run that must exit 2 with nothing on stdout and no traceback;
    it is the last line of stderr (an exec plugin's own stderr may come before it, as it does with kubectl)."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == "" and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    message = lines[-1]
    assert message.startswith("observatory: ") and message.endswith(LAB_HINT), result.stderr
    return message


def write_yaml(path: Path, doc: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return path
