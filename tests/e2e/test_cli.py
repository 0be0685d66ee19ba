"""The ``observatory`` command as a user runs it: version, scenarios, bad input, state across restarts, and a lab
on a non-loopback address (HTTPS with a generated CA, bearer token, real 401)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from observatory import __version__
from tests.e2e.test_kubectl_seed import start_lab


def observatory(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "observatory", *args], capture_output=True, text=True, timeout=60,
                          **kw)


def stop(lab) -> None:
    lab.proc.send_signal(signal.SIGINT)
    assert lab.proc.wait(timeout=10) == 0
    assert "Traceback" not in lab.proc.stderr.read()


def test_version():
    result = observatory("--version")
    assert (result.returncode, result.stdout) == (0, f"observatory {__version__}\n")


def test_lab_scenarios_lists_pair_and_manual_binding():
    result = observatory("lab", "scenarios")
    assert result.returncode == 0
    names = [line.split()[0] for line in result.stdout.splitlines()]
    assert "pair" in names and "manual-binding" in names


def test_bad_scenario_file_names_file_and_document_without_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: ok}\n---\nkind: [unclosed\n")
    result = observatory("lab", "serve", "--scenario", str(bad), "--kubeconfig-out", str(tmp_path / "kc"))
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert str(bad) in result.stderr and "document 2" in result.stderr


def test_unknown_scenario_name_lists_the_available_ones(tmp_path):
    result = observatory("lab", "serve", "--scenario", "no-such", "--kubeconfig-out", str(tmp_path / "kc"))
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "pair" in result.stderr and "manual-binding" in result.stderr


def test_invalid_object_in_scenario_is_reported_not_raised(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
                   "spec: {containers: [{name: c}]}\n")
    result = observatory("lab", "serve", "--scenario", str(bad), "--kubeconfig-out", str(tmp_path / "kc"))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "spec.containers[0].image: Required value" in result.stderr


def test_default_kubeconfig_goes_under_the_cache_directory_not_dot_kube(tmp_path, kubectl):
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "observatory", "lab", "serve"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        proc.stdout.readline()
        line = proc.stdout.readline()
        assert line == f"Kubeconfig: {tmp_path / 'cache' / 'observatory' / 'lab' / 'kubeconfig'}\n"
        config = yaml.safe_load(Path(line.split(": ", 1)[1].strip()).read_text())
        assert config["current-context"] == "observatory-lab"
        assert not (tmp_path / ".kube").exists()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)


def test_state_survives_a_restart_and_the_resource_version_continues(tmp_path, kubectl):
    state = tmp_path / "state.json"
    lab = start_lab(tmp_path, "--state", str(state))
    assert lab.sh("kubectl run keep --image=nginx --restart=Never").returncode == 0
    # once Running, nothing changes the pod any more: its resourceVersion is the one the state file keeps
    waited = lab.sh("kubectl wait '--for=jsonpath={.status.phase}=Running' pod/keep --timeout=30s")
    assert waited.returncode == 0, waited.stderr
    rv_before = int(json.loads(lab.sh("kubectl get pod keep -o json").stdout)["metadata"]["resourceVersion"])
    stop(lab)
    assert state.exists()

    lab = start_lab(tmp_path, "--state", str(state))
    try:
        kept = lab.sh("kubectl get pod keep -o json")
        assert kept.returncode == 0, kept.stderr
        assert int(json.loads(kept.stdout)["metadata"]["resourceVersion"]) == rv_before
        assert lab.sh("kubectl run next --image=nginx --restart=Never").returncode == 0
        rv_next = int(json.loads(lab.sh("kubectl get pod next -o json").stdout)["metadata"]["resourceVersion"])
        assert rv_next > rv_before
    finally:
        stop(lab)


def test_non_loopback_lab_uses_https_and_a_token(tmp_path, kubectl):
    """Listen on every address, but talk to it only over loopback: the certificate also names 127.0.0.1."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "observatory", "lab", "serve", "--host", "0.0.0.0", "--port", "0",
         "--kubeconfig-out", str(tmp_path / "kubeconfig")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url_line = proc.stdout.readline()
        match = re.fullmatch(r"Lab API server: https://(\S+):(\d+)\n", url_line)
        assert match, url_line + proc.stderr.read()
        proc.stdout.readline()
        local = f"https://127.0.0.1:{match.group(2)}"
        env = {**os.environ, "KUBECONFIG": str(tmp_path / "kubeconfig")}
        ok = subprocess.run([kubectl, "--server", local, "get", "nodes", "-o", "name"], capture_output=True, text=True,
                            env=env, timeout=30)
        assert (ok.returncode, ok.stdout) == (0, "node/pair-control-plane\nnode/pair-worker\n"), ok.stderr
        config = yaml.safe_load((tmp_path / "kubeconfig").read_text())
        assert config["users"][0]["user"]["token"]
        assert config["clusters"][0]["cluster"]["certificate-authority-data"]
        denied = subprocess.run([kubectl, "--server", local, "--token", "wrong", "get", "--raw", "/api/v1/nodes"],
                                capture_output=True, text=True, env=env, timeout=30)
        assert denied.returncode == 1
        assert denied.stderr == "error: You must be logged in to the server (Unauthorized)\n"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)


def test_no_scheduler_flag_leaves_pods_pending_and_scheduler_name_adds_a_profile(tmp_path, kubectl):
    lab = start_lab(tmp_path, "--no-scheduler")
    try:
        assert lab.sh("kubectl run alone --image=nginx --restart=Never").returncode == 0
        time.sleep(0.5)  # a negative: the default bind delay has passed and nothing may have bound it
        assert lab.sh("kubectl get pod alone -o jsonpath='{.spec.nodeName}'").stdout == ""
    finally:
        stop(lab)
    lab = start_lab(tmp_path, "--scheduler-name", "my-scheduler", "--no-kubelet")
    try:
        pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: mine}\n"
               "spec: {schedulerName: my-scheduler, containers: [{name: c, image: nginx}]}\n")
        assert lab.sh("kubectl apply -f -", stdin=pod).returncode == 0
        waited = lab.sh("kubectl wait --for=jsonpath='{.spec.nodeName}'=pair-worker pod/mine --timeout=20s")
        assert waited.returncode == 0, waited.stderr
        time.sleep(0.3)
        assert lab.sh("kubectl get pod mine -o jsonpath='{.status.phase}'").stdout == "Pending"  # no kubelet
    finally:
        stop(lab)


def one_paragraph_failure(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and result.stdout == ""
    message = result.stderr.strip()
    assert "\n\n" not in message and "--lab" in message
    return message


def test_missing_kubeconfig_file_is_one_paragraph_and_exit_2(tmp_path):
    missing = tmp_path / "nope" / "config"
    message = one_paragraph_failure(observatory("--kubeconfig", str(missing)))
    assert str(missing) in message


def test_unknown_context_is_one_paragraph_and_exit_2(tmp_path):
    from observatory.lab.kubeconfig import write_kubeconfig

    config = write_kubeconfig(tmp_path / "kc", "http://127.0.0.1:9")
    message = one_paragraph_failure(observatory("--kubeconfig", str(config), "--context", "no-such-context"))
    assert "no-such-context" in message


def test_unreachable_cluster_is_one_paragraph_and_exit_2(tmp_path):
    import socket

    from observatory.lab.kubeconfig import write_kubeconfig

    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")
    message = one_paragraph_failure(observatory("--kubeconfig", str(config)))
    assert f"127.0.0.1:{port}" in message


def test_garbage_kubeconfig_is_one_paragraph_and_exit_2(tmp_path):
    bad = tmp_path / "kc"
    bad.write_text("apiVersion: v1\nclusters: [unclosed\n")
    one_paragraph_failure(observatory("--kubeconfig", str(bad)))


def test_output_that_cannot_be_written_is_a_sentence_not_a_traceback():
    with open("/dev/full", "w") as full:  # every write fails with ENOSPC
        result = subprocess.run([sys.executable, "-m", "observatory", "lab", "scenarios"], stdout=full,
                                stderr=subprocess.PIPE, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr == "observatory: cannot write the output: No space left on device\n"


def test_a_reader_that_leaves_early_ends_the_command_quietly():
    proc = subprocess.Popen([sys.executable, "-m", "observatory", "lab", "scenarios"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdout.close()  # like `| head -0`: the first write gets EPIPE
    assert proc.wait(timeout=60) == 1
    assert proc.stderr.read() == ""
