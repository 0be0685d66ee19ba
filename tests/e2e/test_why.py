"""``observatory why POD``: the diagnosis and the node fit of one pod, printed once, against ``observatory lab serve``.

Every expected value is worked out by hand from observatory/lab/scenarios/{pair,refusals,gated}.yaml: both nodes have
4 CPU and 8Gi allocatable; pair-control-plane carries the kubeadm taint node-role.kubernetes.io/control-plane (no
value, NoSchedule); the running refusals/filler holds 500m cpu and 6Gi of pair-worker. The 404 text is from
../shared/k8s-api-reference.md §1.7. Units in the JSON: cpu millicores, memory bytes.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from observatory import cli, why
from observatory.lab.kubeconfig import write_kubeconfig
from observatory.settings import Settings
from tests.e2e.test_cli import one_paragraph_failure
from tests.e2e.test_kubectl_seed import Lab, serving
from tests.kube.helpers import closed_port

GiB, MiB = 1 << 30, 1 << 20
TAINT = "untolerated taint node-role.kubernetes.io/control-plane:NoSchedule"
LABEL = "observatory's prediction from cached objects"
COMMAND = str(Path(sys.executable).parent / "observatory")


def get(lab: Lab, path: str) -> dict[str, Any]:
    with urllib.request.urlopen(lab.url + path, timeout=10) as resp:
        return json.loads(resp.read())


def wait_for_pod_scheduled(lab: Lab, namespace: str, names: tuple[str, ...], timeout: float = 20.0) -> None:
    """Poll until each pod has a PodScheduled condition (the scheduler, or the API server for a gated pod, spoke)."""
    deadline = time.monotonic() + timeout
    for name in names:
        while True:
            pod = get(lab, f"/api/v1/namespaces/{namespace}/pods/{name}")
            if any(c["type"] == "PodScheduled" for c in pod["status"].get("conditions") or []):
                break
            assert time.monotonic() < deadline, f"{namespace}/{name} never got a PodScheduled condition"
            time.sleep(0.05)


REFUSED = ("too-much-cpu", "no-ssd", "needs-the-tainted-node")
GATED = ("quota-gated", "twice-gated", "gated-too-big")


@pytest.fixture(scope="module")
def refusals(tmp_path_factory) -> Iterator[Lab]:
    with serving(tmp_path_factory.mktemp("refusals"), "--scenario", "refusals") as lab:
        wait_for_pod_scheduled(lab, "sched-lab", REFUSED)
        yield lab


@pytest.fixture(scope="module")
def gated(tmp_path_factory) -> Iterator[Lab]:
    with serving(tmp_path_factory.mktemp("gated"), "--scenario", "gated") as lab:
        wait_for_pod_scheduled(lab, "sched-lab", GATED)
        yield lab


def why_json(capsys, lab: Lab, pod: str, *args: str) -> dict[str, Any]:
    code = cli.main(["why", pod, "-n", "sched-lab", "-o", "json", "--kubeconfig", lab.kubeconfig, *args])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    return json.loads(out)


def nodes(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    assert doc["nodeFit"]["label"] == LABEL and doc["nodeFit"]["source"] == "observatory"
    assert [n["node"] for n in doc["nodeFit"]["nodes"]] == ["pair-control-plane", "pair-worker"]
    return {n["node"]: n for n in doc["nodeFit"]["nodes"]}


def resource(node: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in node["resources"] if r["resource"] == name)


def test_refusals_json_names_the_filter_and_the_numbers_per_node(refusals, capsys):
    expected = {
        # 100 CPU asked; the worker has 4 allocatable, 500m held by filler.
        "too-much-cpu": ("NodeResourcesFit", ["cpu: requests 100, free 3500m of 4 (500m in use)"],
                         ("cpu", 100_000, 500, 4000, 3500), {"Insufficient cpu": 1}),
        # nodeSelector disktype=ssd; no node has a disktype label.
        "no-ssd": ("NodeAffinity", ["nodeSelector disktype=ssd: node has no disktype label"], None,
                   {"node(s) didn't match Pod's node affinity/selector": 1}),
        # 4Gi asked; the worker has 8Gi allocatable, 6Gi held by filler.
        "needs-the-tainted-node": ("NodeResourcesFit", ["memory: requests 4Gi, free 2Gi of 8Gi (6Gi in use)"],
                                   ("memory", 4 * GiB, 6 * GiB, 8 * GiB, 2 * GiB), {"Insufficient memory": 1}),
    }
    for pod, (worker_filter, worker_why, numbers, buckets) in expected.items():
        doc = why_json(capsys, refusals, pod)
        assert (doc["apiVersion"], doc["kind"], doc["pod"]) == ("observatory/v1", "Why", f"sched-lab/{pod}")
        fit = nodes(doc)
        assert doc["nodeFit"]["feasible"] == [] and doc["nodeFit"]["scope"] is None
        control, worker = fit["pair-control-plane"], fit["pair-worker"]
        assert (control["fits"], control["filter"], control["why"]) == (False, "TaintToleration", [TAINT])
        assert (worker["fits"], worker["filter"], worker["why"]) == (False, worker_filter, worker_why)
        if numbers is not None:
            name, requested, used, allocatable, free = numbers
            assert resource(worker, name) == {"resource": name, "requested": requested, "used": used,
                                              "allocatable": allocatable, "free": free}
        diagnosis = doc["diagnosis"]
        assert (diagnosis["state"], diagnosis["schedulerName"]) == ("refused", "default-scheduler")
        failed = diagnosis["failedScheduling"]
        assert (failed["available"], failed["total"], failed["reportedBy"]) == (0, 2, "default-scheduler")
        counts = {r["text"]: r["count"] for r in failed["reasons"]}
        assert counts == {**buckets, "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }": 1}
        assert failed["preemption"]["total"] == 2 and failed["count"] >= 1
        assert failed["raw"].startswith("0/2 nodes are available: ")
        assert "default-scheduler" in diagnosis["schedulersSeen"]
        assert doc["warnings"] == []


def test_gated_json_lists_the_gates_and_still_computes_the_fit(gated, capsys):
    expected = {
        "quota-gated": (["example.com/quota-check"], True, None),
        "twice-gated": (["example.com/quota-check", "example.com/data-ready"], True, None),
        # 100 CPU asked of the worker's 4, nothing else on it: refused once the gate is lifted.
        "gated-too-big": (["example.com/quota-check"], False, "cpu: requests 100, free 4 of 4 (0 in use)"),
    }
    for pod, (gates, fits, worker_why) in expected.items():
        doc = why_json(capsys, gated, pod)
        diagnosis = doc["diagnosis"]
        assert (diagnosis["state"], diagnosis["title"], diagnosis["gates"]) == ("gated", "SchedulingGated", gates)
        assert diagnosis["failedScheduling"] is None
        assert any(", ".join(gates) in line for line in diagnosis["explanation"])
        fit = nodes(doc)
        assert (fit["pair-control-plane"]["filter"], fit["pair-control-plane"]["why"]) == ("TaintToleration", [TAINT])
        worker = fit["pair-worker"]
        assert worker["fits"] is fits
        if fits:
            assert worker["filter"] is None and doc["nodeFit"]["feasible"] == ["pair-worker"]
            assert resource(worker, "cpu")["requested"] == 100 and resource(worker, "memory")["requested"] == 64 * MiB
        else:
            assert (worker["filter"], worker["why"]) == ("NodeResourcesFit", [worker_why])


def test_text_report_from_the_installed_command(refusals):
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "KUBECONFIG")}
    result = subprocess.run([COMMAND, "why", "needs-the-tainted-node", "-n", "sched-lab", "--kubeconfig",
                             refusals.kubeconfig], capture_output=True, text=True, env=env, timeout=60)
    assert (result.returncode, result.stderr) == (0, "")
    text = result.stdout
    lines = text.splitlines()
    assert "Traceback" not in text and "\x1b[" not in text  # not a terminal: no colour
    assert max(len(line) for line in lines) <= 80
    assert lines[0].split() == ["Pod:", "sched-lab/needs-the-tainted-node"]
    assert lines[1].split() == ["schedulerName:", "default-scheduler"]
    assert lines[2].startswith("State:") and "Refused by a scheduler" in lines[2]
    assert "  0/2 nodes are available." in lines
    assert "    1 × Insufficient memory" in lines
    assert "FailedScheduling message (verbatim from default-scheduler" in text
    assert lines.index(f"Node fit ({LABEL})") < next(i for i, line in enumerate(lines) if line.startswith("NODE"))
    assert lines[lines.index(f"Node fit ({LABEL})") + 1].split() == ["NODE", "FIT", "FILTER", "WHY"]
    assert re.search(r"^pair-control-plane\s+no\s+TaintToleration\s+untolerated taint", text, re.M)
    assert re.search(r"^pair-worker\s+no\s+NodeResourcesFit\s+memory: requests 4Gi, free 2Gi of 8Gi", text, re.M)


def test_text_report_in_process_names_each_node_and_its_filter(refusals, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    assert cli.main(["why", "no-ssd", "-n", "sched-lab", "--kubeconfig", refusals.kubeconfig]) == 0
    text = capsys.readouterr().out
    assert f"Node fit ({LABEL})" in text
    assert re.search(rf"^pair-control-plane\s+no\s+TaintToleration\s+{re.escape(TAINT)}$", text, re.M)
    assert re.search(r"^pair-worker\s+no\s+NodeAffinity\s+nodeSelector disktype=ssd: node has no disktype label$",
                     text, re.M)


def test_connection_flags_before_or_after_the_subcommand(refusals, capsys, monkeypatch):
    # Were the subcommand's copies of the flags to default to None, they would clobber the ones given before it:
    # without a kubeconfig ($KUBECONFIG names a missing file, HOME has none) the command would start the embedded
    # manual-binding lab, and without -n look in namespace default; either way no-ssd would not be found.
    monkeypatch.setenv("KUBECONFIG", str(Path(refusals.tmp) / "missing-kubeconfig"))
    monkeypatch.setenv("HOME", str(refusals.tmp))
    k = refusals.kubeconfig
    for argv in (["--kubeconfig", k, "--context", "observatory-lab", "-n", "sched-lab", "why", "no-ssd",
                  "-o", "json"],
                 ["why", "no-ssd", "-n", "sched-lab", "-o", "json", "--kubeconfig", k, "--context", "observatory-lab"],
                 ["-n", "sched-lab", "why", "pod/no-ssd", "--kubeconfig", k, "-o", "json"],
                 ["--kubeconfig", k, "why", "no-ssd", "-o", "json", "-n", "sched-lab"]):
        code = cli.main(argv)
        out, err = capsys.readouterr()
        assert (code, err) == (0, ""), argv
        assert json.loads(out)["pod"] == "sched-lab/no-ssd"


def test_missing_pod_prints_the_servers_404_and_exits_1(refusals, capsys):
    assert cli.main(["why", "nope", "-n", "default", "--kubeconfig", refusals.kubeconfig]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", 'Error from server (NotFound): pods "nope" not found\n')


def test_the_namespace_defaults_to_the_contexts(refusals, capsys):
    # The lab's kubeconfig context has namespace default, like kubectl's.
    assert cli.main(["why", "too-much-cpu", "--kubeconfig", refusals.kubeconfig]) == 1
    assert capsys.readouterr().err == 'Error from server (NotFound): pods "too-much-cpu" not found\n'


def test_a_scheduler_name_nobody_serves(refusals, capsys):
    body = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "orphan"},
                       "spec": {"schedulerName": "nobody-at-all",
                                "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10"}]}})
    request = urllib.request.Request(refusals.url + "/api/v1/namespaces/default/pods", data=body.encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as resp:
        assert resp.status == 201
    assert cli.main(["why", "orphan", "--kubeconfig", refusals.kubeconfig, "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    diagnosis = doc["diagnosis"]
    assert (diagnosis["state"], diagnosis["schedulerName"]) == ("no-scheduler", "nobody-at-all")
    assert "nobody-at-all" in diagnosis["likely"]
    assert "default-scheduler" in diagnosis["schedulersSeen"]
    lease = doc["schedulerLease"]
    assert (lease["name"], lease["problem"], lease["leaseDurationSeconds"]) == ("kube-system/kube-scheduler", "", 15)
    assert lease["holder"].startswith("pair-control-plane_") and lease["renewTime"].endswith("Z")
    assert nodes(doc)["pair-worker"]["fits"] is True  # a pause container with no requests fits the worker


def test_embedded_lab_waits_for_its_scheduler(tmp_path):
    env = {**{k: v for k, v in os.environ.items() if k != "KUBECONFIG"}, "HOME": str(tmp_path),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    result = subprocess.run([COMMAND, "why", "too-much-cpu", "-n", "sched-lab", "--lab", "--scenario", "refusals",
                             "-o", "json"], capture_output=True, text=True, env=env, timeout=60)
    assert (result.returncode, result.stderr) == (0, "")
    doc = json.loads(result.stdout)
    assert doc["diagnosis"]["state"] == "refused"
    assert nodes(doc)["pair-worker"]["why"] == ["cpu: requests 100, free 3500m of 4 (500m in use)"]
    assert not (tmp_path / "cache").exists()  # the one-shot lab's kubeconfig went to a temporary directory


def test_unreachable_cluster_is_one_paragraph_and_exit_2(tmp_path):
    port = closed_port()
    config = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")
    result = subprocess.run([COMMAND, "why", "web", "--kubeconfig", str(config)], capture_output=True, text=True,
                            timeout=60)
    assert f"127.0.0.1:{port}" in one_paragraph_failure(result)


def test_bad_input_is_a_usage_error(capsys):
    assert cli.main(["why", "a/b", "-n", "sched-lab", "--kubeconfig", "unused"]) == 2
    assert capsys.readouterr().err == "observatory why: 'a/b' is not a pod name: it may not contain '/'\n"
    assert cli.main(["-A", "why", "web"]) == 2
    assert "-A/--all-namespaces" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        cli.main(["why", "web", "-o", "yaml"])
    assert exited.value.code == 2 and "invalid choice: 'yaml'" in capsys.readouterr().err


# -- a scripted API server: 403 fallbacks and a cluster that dies mid-fetch ---------------------------------------

POD = {"metadata": {"name": "web", "namespace": "team", "uid": "u1", "resourceVersion": "7"},
       "spec": {"schedulerName": "default-scheduler",
                "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "3"}}}]},
       "status": {"phase": "Pending"}}
NODE = {"metadata": {"name": "n1", "resourceVersion": "3"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True"}]}}
BOUND = {"metadata": {"name": "db", "namespace": "team", "uid": "u2", "resourceVersion": "5"},
         "spec": {"nodeName": "n1",
                  "containers": [{"name": "c", "image": "db", "resources": {"requests": {"cpu": "2"}}}]},
         "status": {"phase": "Running"}}


def status(code: int, reason: str, message: str) -> web.Response:
    return web.json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": message, "reason": reason, "code": code}, status=code)


def listing(*items: dict[str, Any]) -> web.Response:
    return web.json_response({"kind": "List", "apiVersion": "v1", "metadata": {"resourceVersion": "9"},
                              "items": list(items)})


async def scripted(tmp_path, answer) -> tuple[web.AppRunner, Path, list[str]]:
    seen: list[str] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        seen.append(f"{request.path} {request.query.get('fieldSelector', '')} {request.query.get('limit', '')}")
        if request.path == "/version":
            return web.json_response({"major": "1", "minor": "34", "gitVersion": "v1.34.1"})
        return await answer(request)

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handle)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}", namespace="team"), seen


async def run_why(config: Path, output: str = "json") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = await why.run(Settings(), pod="web", namespace=None, output=output, kubeconfig=str(config), context=None,
                         lab=False, scenario="pair", out=out, err=err)
    return code, out.getvalue(), err.getvalue()


async def test_forbidden_cluster_wide_lists_fall_back_to_the_namespace(tmp_path):
    forbidden = 'is forbidden: User "viewer" cannot list resource'

    async def answer(request: web.Request) -> web.StreamResponse:
        path = request.path
        if path == "/api/v1/namespaces/team/pods/web":
            return web.json_response(POD)
        if path == "/api/v1/nodes":
            return listing(NODE)
        if path in ("/api/v1/pods", "/api/v1/events") or path.startswith("/apis/"):
            return status(403, "Forbidden", f"{path.rsplit('/', 1)[1]} {forbidden}")
        if path == "/api/v1/namespaces/team/pods":
            return listing(POD, BOUND)
        if path == "/api/v1/namespaces/team/events":
            return listing()
        return status(404, "NotFound", "not served here")

    runner, config, seen = await scripted(tmp_path, answer)
    try:
        code, out, err = await run_why(config)
    finally:
        await runner.cleanup()
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc["pod"] == "team/web" and doc["nodeFit"]["scope"] == "team" and doc["warnings"] == []
    n1 = doc["nodeFit"]["nodes"][0]
    # 3 CPU asked of n1's 4, of which db (in team, so counted) holds 2.
    assert (n1["node"], n1["filter"], n1["why"]) == ("n1", "NodeResourcesFit",
                                                     ["cpu: requests 3, free 2 of 4 (2 in use)"])
    assert doc["schedulerLease"]["problem"] == f"forbidden: kube-scheduler {forbidden}"
    assert "in namespace team" in " ".join(doc["diagnosis"]["explanation"])
    assert seen == ["/version  ", "/api/v1/namespaces/team/pods/web  ", "/api/v1/nodes  500",
                    "/api/v1/pods spec.nodeName!= 500", "/api/v1/namespaces/team/pods spec.nodeName!= 500",
                    "/api/v1/namespaces/team/events involvedObject.name=web,involvedObject.namespace=team 500",
                    "/api/v1/events reason=FailedScheduling 500",
                    "/api/v1/namespaces/team/events reason=FailedScheduling 500",
                    "/api/v1/namespaces/team/events reason=Scheduled 500",
                    "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler  ",
                    "/api/v1/namespaces/team/events reason=Preempted 500"]


async def test_with_nodes_forbidden_a_bound_pod_is_not_on_a_missing_node(tmp_path):
    """Break-it finding: with nodes forbidden, a bound pod that has not started was "bound to a missing node"."""
    on_n1 = {**POD, "spec": {**POD["spec"], "nodeName": "n1"}}
    refused = 'nodes is forbidden: User "viewer" cannot list resource "nodes" in API group "" at the cluster scope'

    async def answer(request: web.Request) -> web.StreamResponse:
        path = request.path
        if path == "/api/v1/namespaces/team/pods/web":
            return web.json_response(on_n1)
        if path == "/api/v1/nodes":
            return status(403, "Forbidden", refused)
        if path in ("/api/v1/pods", "/api/v1/namespaces/team/pods"):
            return listing(on_n1)
        if path.endswith("/events"):
            return listing()
        return status(404, "NotFound", "not served here")

    runner, config, _ = await scripted(tmp_path, answer)
    try:
        code, out, err = await run_why(config)
    finally:
        await runner.cleanup()
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc["warnings"] == [f"Nodes cannot be listed, so no node fit is computed: {refused}"]
    assert doc["diagnosis"]["state"] != "node-missing"
    assert "missing" not in doc["diagnosis"]["headline"] and "node details forbidden" in doc["diagnosis"]["headline"]


async def test_a_cluster_dying_mid_fetch_is_one_paragraph_and_exit_2(tmp_path):
    async def answer(request: web.Request) -> web.StreamResponse:
        if request.path == "/api/v1/namespaces/team/pods/web":
            return web.json_response(POD)
        assert request.transport is not None
        request.transport.close()  # the node list gets no answer at all
        return web.Response()

    runner, config, _ = await scripted(tmp_path, answer)
    try:
        code, out, err = await run_why(config, output="text")
    finally:
        await runner.cleanup()
    assert (code, out) == (2, "")
    assert err.startswith('observatory: Lost the cluster of context "observatory-lab" while reading pod team/web.')
    assert err.count("\n") == 1 and "Traceback" not in err and "--lab" in err


async def test_another_error_answer_is_printed_as_kubectl_does(tmp_path):
    async def answer(request: web.Request) -> web.StreamResponse:
        if request.path == "/api/v1/namespaces/team/pods/web":
            return web.json_response(POD)
        return status(500, "InternalError", "Internal error occurred: etcdserver: request timed out")

    runner, config, _ = await scripted(tmp_path, answer)
    try:
        code, out, err = await run_why(config)
    finally:
        await runner.cleanup()
    assert (code, out, err) == (1, "", "Error from server (InternalError): Internal error occurred: etcdserver: "
                                       "request timed out\n")


def test_text_output_never_passes_terminal_control_sequences_through():
    """Break-it finding: an Event message with ESC sequences, NUL or a bidi override reached the terminal as is."""
    from observatory.why import safe

    hostile = "0/2 nodes are available: 1 Insufficient \u202e\x00cpu\x1b[31mRED\x1b[0m."
    cleaned = safe(hostile)
    assert "\x1b" not in cleaned and "\x00" not in cleaned and "\u202e" not in cleaned
    assert cleaned == "0/2 nodes are available: 1 Insufficient \\u202e\\x00cpu\\x1b[31mRED\\x1b[0m."
    assert safe("tabs\tand plain text stay") == "tabs\tand plain text stay"


def post(lab: Lab, path: str, obj: dict[str, Any]) -> None:
    request = urllib.request.Request(lab.url + path, data=json.dumps(obj).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as resp:
        assert resp.status == 201


def test_the_installed_command_to_a_pipe_sends_no_raw_control(refusals, capsys):
    """A FailedScheduling Event whose message would retitle the terminal, fill its clipboard (OSC 52), clear it and
    send C1 controls (from a scheduler of its own, so the lab's leaves the pod alone): ``why``'s text and JSON on a
    pipe hold none of those bytes; the text shows them as escapes, the JSON keeps the message."""
    from tests.unit.test_clean_output import HOSTILE, raw_controls

    post(refusals, "/api/v1/namespaces/default/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "planted"},
        "spec": {"schedulerName": "planted-scheduler",
                 "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10"}]}})
    message = f"0/2 nodes are available: {HOSTILE}"
    post(refusals, "/api/v1/namespaces/default/events", {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "planted.1"}, "type": "Warning",
        "reason": "FailedScheduling", "message": message, "source": {"component": "planted-scheduler"},
        "reportingComponent": "planted-scheduler", "lastTimestamp": "2026-11-29T09:29:00Z", "count": 1,
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "planted", "apiVersion": "v1"}})
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "KUBECONFIG")}
    result = subprocess.run([COMMAND, "why", "planted", "--kubeconfig", refusals.kubeconfig], capture_output=True,
                            env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert raw_controls(result.stdout) == [] and raw_controls(result.stderr) == []
    assert b"\\x1b]52;c;aGk=\\x07" in result.stdout
    # -o json in process (the same writer; one subprocess is enough to show the pipe)
    assert cli.main(["why", "planted", "--kubeconfig", refusals.kubeconfig, "-o", "json"]) == 0
    out, err = capsys.readouterr()
    assert raw_controls(out.encode("utf-8")) == [] and err == ""
    assert json.loads(out)["diagnosis"]["failedScheduling"]["raw"] == message
