"""The lab kubeconfig: exact content, file mode, atomic replace, the ~/.kube/config guard, and real readers."""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import platformdirs
import pytest
import yaml
from kubernetes_asyncio import config
from kubernetes_asyncio.client import Configuration

from observatory.lab.kubeconfig import default_kubeconfig_path, write_kubeconfig

CA_PEM = b"-----BEGIN CERTIFICATE-----\nMIIBdummy\n-----END CERTIFICATE-----\n"


def test_default_path_is_in_the_cache_not_dot_kube() -> None:
    path = default_kubeconfig_path()
    assert path == Path(platformdirs.user_cache_dir("observatory")) / "lab" / "kubeconfig"
    assert ".kube" not in path.parts


def test_full_content(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "kc", "https://10.0.0.5:6443", ca_pem=CA_PEM, token="s3cret")
    assert path == tmp_path / "kc"
    assert yaml.safe_load(path.read_text()) == {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "observatory-lab", "cluster": {
            "server": "https://10.0.0.5:6443",
            "certificate-authority-data": base64.b64encode(CA_PEM).decode(),
        }}],
        "contexts": [{"name": "observatory-lab", "context": {
            "cluster": "observatory-lab", "user": "observatory-lab", "namespace": "default"}}],
        "current-context": "observatory-lab",
        "preferences": {},
        "users": [{"name": "observatory-lab", "user": {"token": "s3cret"}}],
    }


def test_plain_http_without_credentials_and_custom_context(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "kc", "http://127.0.0.1:8080", context="lab2", namespace="sched-lab")
    data = yaml.safe_load(path.read_text())
    assert data["clusters"] == [{"name": "observatory-lab", "cluster": {"server": "http://127.0.0.1:8080"}}]
    assert data["users"] == [{"name": "observatory-lab", "user": {}}]
    assert data["contexts"] == [{"name": "lab2", "context": {
        "cluster": "observatory-lab", "user": "observatory-lab", "namespace": "sched-lab"}}]
    assert data["current-context"] == "lab2"


def test_mode_parents_and_atomic_replace(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "kubeconfig"
    write_kubeconfig(path, "http://127.0.0.1:1", token="one")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o644)
    inode = path.stat().st_ino
    write_kubeconfig(path, "http://127.0.0.1:1", token="two")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.stat().st_ino != inode  # a new file renamed over the old one, not rewritten in place
    assert yaml.safe_load(path.read_text())["users"][0]["user"] == {"token": "two"}
    assert sorted(p.name for p in path.parent.iterdir()) == ["kubeconfig"]  # no temporary files left


def test_refuses_users_kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    target = home / ".kube" / "config"
    for candidate in (target, Path("~/.kube/config"), home / ".kube" / ".." / ".kube" / "config"):
        with pytest.raises(ValueError, match=r"refusing to write the lab kubeconfig to .*~/.kube/config"):
            write_kubeconfig(candidate, "http://127.0.0.1:1")
    # a symlink that resolves to it is refused too
    (home / ".kube").mkdir(parents=True)
    target.write_text("mine")
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(ValueError):
        write_kubeconfig(link, "http://127.0.0.1:1")
    assert target.read_text() == "mine"


@pytest.mark.parametrize("server", ["127.0.0.1:6443", "ftp://x", "https://", ""])
def test_rejects_a_server_that_is_not_a_url(tmp_path: Path, server: str) -> None:
    with pytest.raises(ValueError, match="must be an http:// or https:// URL"):
        write_kubeconfig(tmp_path / "kc", server)
    assert not (tmp_path / "kc").exists()


async def test_kubernetes_asyncio_reads_it(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "kc", "https://127.0.0.1:6443", ca_pem=CA_PEM, token="tok-123",
                            namespace="sched-lab")
    configuration = Configuration()
    loader = await config.load_kube_config(config_file=str(path), client_configuration=configuration,
                                           temp_file_path=str(tmp_path))
    assert configuration.host == "https://127.0.0.1:6443"
    assert configuration.api_key["BearerToken"] == "Bearer tok-123"
    assert Path(configuration.ssl_ca_cert).read_bytes() == CA_PEM
    assert loader.current_context["name"] == "observatory-lab"
    assert loader.current_context["context"]["namespace"] == "sched-lab"


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_parses_it(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "kc", "https://127.0.0.1:6443", ca_pem=CA_PEM, token="tok-123")
    env = {**os.environ, "KUBECONFIG": "/nonexistent"}  # only --kubeconfig counts
    run = subprocess.run(
        ["kubectl", "--kubeconfig", str(path), "config", "view", "--minify", "--raw", "-o", "json"],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )
    assert run.returncode == 0, run.stderr
    view = json.loads(run.stdout)
    assert view["current-context"] == "observatory-lab"
    assert view["clusters"] == [{"name": "observatory-lab", "cluster": {
        "server": "https://127.0.0.1:6443", "certificate-authority-data": base64.b64encode(CA_PEM).decode()}}]
    assert view["users"] == [{"name": "observatory-lab", "user": {"token": "tok-123"}}]
    assert view["contexts"] == [{"name": "observatory-lab", "context": {
        "cluster": "observatory-lab", "user": "observatory-lab", "namespace": "default"}}]
