"""kubectl drives ``observatory lab serve --audit-log-path``: the audit log holds, field by field, the events
kube-apiserver writes for a create, a Binding (201, then 409), a status patch and a delete, and a reader nobody here
wrote (a JSON schema of ``audit.k8s.io/v1`` Event taken from upstream's ``types.go``) accepts every line.

Upstream behaviour checked (``staging/src/k8s.io/apiserver/pkg/audit/request.go``, ``context.go``,
``endpoints/filters/audit.go``): ``RequestReceived`` has the RequestInfo's objectRef and no status; the
``ResponseComplete`` of a create has the objectRef's name from the request object; a success answered with an
object has ``responseStatus`` ``{"metadata":{},"code":N}``, one answered with a Status (a Binding) its
``status``/``message``/``reason``/``details``/``code``; at ``RequestResponse`` the request body and the answer
(a failure's Status included) are both there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from observatory.model.audit import parse_line

SCHEMA = json.loads((Path(__file__).parent / "data" / "audit_event_v1.schema.json").read_text())
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "manual"},
       "spec": {"schedulerName": "nobody-at-all", "containers": [{"name": "pause",
                                                                  "image": "registry.k8s.io/pause:3.9"}]}}
BINDING = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "manual"},
           "target": {"apiVersion": "v1", "kind": "Node", "name": "pair-worker"}}
STATUS_PATCH = {"status": {"conditions": [{"type": "PodScheduled", "status": "True"}]}}
CONFLICT = ('Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node '
            '"pair-worker"')
ADMIN = {"username": "kubernetes-admin", "groups": ["kubeadm:cluster-admins", "system:authenticated"]}


class Served:
    """The lab's audit log after the exercise, and what kubectl answered to each step."""

    def __init__(self, log: Path, results: dict[str, subprocess.CompletedProcess[str]], url: str) -> None:
        self.log, self.results, self.url = log, results, url

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def of(self, verb: str, uri_prefix: str, stage: str = "ResponseComplete") -> list[dict[str, Any]]:
        return [e for e in self.events()
                if e["verb"] == verb and e["requestURI"].startswith(uri_prefix) and e["stage"] == stage]


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Served]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.fail("kubectl is not on PATH; the lab's kubectl tests require it")
    tmp = tmp_path_factory.mktemp("audit")
    log = tmp / "audit" / "audit.log"
    proc = subprocess.Popen([sys.executable, "-m", "observatory", "lab", "serve", "--port", "0", "--scenario", "pair",
                             "--no-scheduler", "--no-kubelet", "--kubeconfig-out", str(tmp / "kubeconfig"),
                             "--audit-log-path", str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url_line = proc.stdout.readline()
    proc.stdout.readline()
    match = re.fullmatch(r"Lab API server: (http://127\.0\.0\.1:\d+)\n", url_line)
    if match is None:
        proc.kill()
        pytest.fail(f"lab did not start: {url_line!r}")
    (tmp / "pod.json").write_text(json.dumps(POD))
    (tmp / "binding.json").write_text(json.dumps(BINDING))
    env = {**os.environ, "KUBECONFIG": str(tmp / "kubeconfig")}
    steps = {
        "create": [kubectl, "create", "-f", "pod.json"],
        "bind": [kubectl, "create", "--raw", "/api/v1/namespaces/default/pods/manual/binding", "-f", "binding.json"],
        "bind again": [kubectl, "create", "--raw", "/api/v1/namespaces/default/pods/manual/binding", "-f",
                       "binding.json"],
        "patch status": [kubectl, "patch", "pod", "manual", "--subresource=status", "--type=merge", "-p",
                         json.dumps(STATUS_PATCH)],
        "delete": [kubectl, "delete", "pod", "manual", "--wait=false"],
    }
    try:
        results = {name: subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp, timeout=30)
                   for name, argv in steps.items()}
        yield Served(log, results, match.group(1))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)


def test_kubectl_got_the_answers_of_the_exercise(served):
    assert [r.returncode for r in served.results.values()] == [0, 0, 1, 0, 0]
    assert CONFLICT in served.results["bind again"].stderr


def test_every_line_is_an_audit_event_by_upstreams_schema_and_the_screens_reader(served):
    events = served.events()
    assert len(events) >= 10
    for event in events:
        jsonschema.validate(event, SCHEMA)
        assert list(event)[:8] == ["kind", "apiVersion", "level", "auditID", "stage", "requestURI", "verb", "user"]
        assert list(event)[-2:] in (["requestReceivedTimestamp", "stageTimestamp"],
                                    ["stageTimestamp", "annotations"])
    parsed = [parse_line(line) for line in served.log.read_text().splitlines()]
    assert {e.audit_id for e in parsed} == {e["auditID"] for e in events}
    assert not [e for e in events if e["verb"] in ("get", "list", "watch")]  # reads are not audited by default


def _pair(served: Served, verb: str, uri: str) -> tuple[dict[str, Any], dict[str, Any]]:
    [done] = served.of(verb, uri)
    [received] = [e for e in served.events() if e["auditID"] == done["auditID"] and e["stage"] == "RequestReceived"]
    return received, done


def _common(received: dict[str, Any], done: dict[str, Any]) -> None:
    for event in (received, done):
        assert event["level"] == "RequestResponse"
        assert event["user"] == ADMIN
        assert event["sourceIPs"] == ["127.0.0.1"]
        assert event["userAgent"].startswith("kubectl/v1.")
    assert "responseStatus" not in received and "requestObject" not in received and "annotations" not in received
    assert received["stageTimestamp"] == received["requestReceivedTimestamp"] == done["requestReceivedTimestamp"]
    assert done["stageTimestamp"] >= done["requestReceivedTimestamp"]
    assert done["annotations"] == {"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": ""}


def test_create_of_a_pod(served):
    received, done = _pair(served, "create", "/api/v1/namespaces/default/pods?")
    _common(received, done)
    assert received["objectRef"] == {"resource": "pods", "namespace": "default", "apiVersion": "v1"}
    assert done["objectRef"] == {"resource": "pods", "namespace": "default", "name": "manual", "apiVersion": "v1"}
    assert done["responseStatus"] == {"metadata": {}, "code": 201}
    assert done["requestObject"]["metadata"] == {"name": "manual", "namespace": "default"}  # as kubectl sent it
    assert done["requestObject"]["spec"]["schedulerName"] == "nobody-at-all"
    assert done["responseObject"]["kind"] == "Pod"
    assert done["responseObject"]["metadata"]["resourceVersion"]


def test_binding_201_and_409_with_the_conflict_status(served):
    [first, second] = served.of("create", "/api/v1/namespaces/default/pods/manual/binding")
    for done in (first, second):
        received = next(e for e in served.events() if e["auditID"] == done["auditID"] and e["stage"] ==
                        "RequestReceived")
        _common(received, done)
        ref = {"resource": "pods", "namespace": "default", "name": "manual", "apiVersion": "v1",
               "subresource": "binding"}
        assert received["objectRef"] == ref and done["objectRef"] == ref
        assert done["requestObject"] == BINDING
    assert first["responseStatus"] == {"metadata": {}, "status": "Success", "code": 201}
    conflict = {"metadata": {}, "status": "Failure", "message": CONFLICT, "reason": "Conflict",
                "details": {"name": "manual", "kind": "pods/binding"}, "code": 409}
    assert second["responseStatus"] == conflict
    assert second["responseObject"] == {"kind": "Status", "apiVersion": "v1", **conflict}


def test_status_patch(served):
    received, done = _pair(served, "patch", "/api/v1/namespaces/default/pods/manual/status")
    _common(received, done)
    ref = {"resource": "pods", "namespace": "default", "name": "manual", "apiVersion": "v1", "subresource": "status"}
    assert received["objectRef"] == ref and done["objectRef"] == ref  # a patch fills nothing from an object
    assert done["requestObject"] == STATUS_PATCH
    assert done["responseStatus"] == {"metadata": {}, "code": 200}
    assert done["responseObject"]["kind"] == "Pod"
    assert int(done["responseObject"]["metadata"]["resourceVersion"]) > 0


def test_delete(served):
    received, done = _pair(served, "delete", "/api/v1/namespaces/default/pods/manual")
    _common(received, done)
    ref = {"resource": "pods", "namespace": "default", "name": "manual", "apiVersion": "v1"}
    assert received["objectRef"] == ref and done["objectRef"] == ref
    assert done["requestObject"]["propagationPolicy"] == "Background"  # the DeleteOptions kubectl sent
    assert done["responseStatus"] == {"metadata": {}, "code": 200}
    assert done["responseObject"]["metadata"]["deletionTimestamp"]


def test_every_response_carries_the_audit_id_of_its_events(served):
    request = urllib.request.Request(served.url + "/api/v1/namespaces/default/pods/nobody/binding", method="POST",
                                     data=json.dumps(BINDING | {"metadata": {"name": "nobody"}}).encode(),
                                     headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=10)
    audit_id = raised.value.headers["Audit-Id"]
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", audit_id)
    [done] = [e for e in served.events() if e["auditID"] == audit_id and e["stage"] == "ResponseComplete"]
    assert done["responseStatus"]["code"] == 404
    with urllib.request.urlopen(served.url + "/version", timeout=10) as answer:  # not audited, still an ID
        assert answer.headers["Audit-Id"] and answer.headers["Audit-Id"] != audit_id
    client = urllib.request.Request(served.url + "/version", headers={"Audit-ID": "chosen-by-the-client"})
    with urllib.request.urlopen(client, timeout=10) as answer:
        assert answer.headers["Audit-Id"] == "chosen-by-the-client"
