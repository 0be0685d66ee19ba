"""PriorityClass and the Priority admission plugin on the lab, driven with kubectl; the HTTP codes over plain HTTP.

Expected texts: kube-apiserver v1.34.1 ``plugin/pkg/admission/priority/admission.go`` (403 Forbidden through
``admission.NewForbidden``), ``pkg/apis/scheduling/validation/validation.go`` (422 Invalid),
``pkg/registry/scheduling/priorityclass/storage/storage.go`` (403 on deleting a system class), and
``pkg/printers/internalversion/printers.go`` ``printPriorityClass`` for ``kubectl get pc``.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.e2e.test_kubectl_seed import Lab, serving

PC_PATH = "/apis/scheduling.k8s.io/v1/priorityclasses"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("pc"), "--scenario", "pair", "--no-scheduler", "--no-kubelet") as lab:
        yield lab


def run(lab: Lab, line: str, stdin: str | None = None) -> tuple[int, str, str]:
    done = lab.sh(line, stdin=stdin)
    return done.returncode, done.stdout, done.stderr


def post(lab: Lab, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(lab.url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def test_the_system_classes_exist_and_kubectl_get_pc_prints_upstreams_columns(lab: Lab):
    code, out, err = run(lab, "kubectl get pc")
    assert (code, err) == (0, "")
    lines = [line.split() for line in out.splitlines()]
    assert lines[0] == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    rows = {row[0]: (row[1], row[2], row[4]) for row in lines[1:]}
    assert rows["system-cluster-critical"] == ("2000000000", "false", "PreemptLowerPriority")
    assert rows["system-node-critical"] == ("2000001000", "false", "PreemptLowerPriority")
    code, out, err = run(lab, "kubectl describe pc system-cluster-critical")
    assert (code, err) == (0, "")
    assert out.splitlines()[:5] == [
        "Name:              system-cluster-critical", "Value:             2000000000",
        "GlobalDefault:     false", "PreemptionPolicy:  PreemptLowerPriority",
        "Description:       Used for system critical pods that must run in the cluster, but can be moved to another "
        "node if necessary."]


def test_validation_refusals_byte_for_byte(lab: Lab):
    assert run(lab, "kubectl create priorityclass too-high --value=1000000001") == (
        1, "", 'error: failed to create priorityclass: PriorityClass.scheduling.k8s.io "too-high" is invalid: value: '
               "Forbidden: maximum allowed value of a user defined priority is 1000000000\n")
    assert run(lab, "kubectl create priorityclass system-mine --value=5") == (
        1, "", 'error: failed to create priorityclass: PriorityClass.scheduling.k8s.io "system-mine" is invalid: '
               "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use "
               "only. error: system-mine is not a known system priority class\n")
    status, body = post(lab, PC_PATH, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                       "metadata": {"name": "too-high"}, "value": 1000000001})
    assert (status, body["reason"], body["details"]["group"], body["details"]["kind"]) == (
        422, "Invalid", "scheduling.k8s.io", "PriorityClass")


def test_only_one_global_default_and_system_classes_cannot_be_deleted(lab: Lab):
    assert run(lab, "kubectl create priorityclass first-default --value=10 --global-default")[0] == 0
    assert run(lab, "kubectl create priorityclass second-default --value=20 --global-default") == (
        1, "", 'error: failed to create priorityclass: priorityclasses.scheduling.k8s.io "second-default" is '
               "forbidden: PriorityClass first-default is already marked as default. Only one default can exist\n")
    assert run(lab, "kubectl delete pc system-node-critical") == (
        1, "", 'Error from server (Forbidden): priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: '
               "this is a system priority class and cannot be deleted\n")
    # a pod naming no class gets the default's name, value and preemptionPolicy
    assert run(lab, "kubectl apply -f -", json.dumps(pod("defaulted")))[0] == 0
    code, out, _ = run(lab, "kubectl get pod defaulted -o jsonpath='{.spec.priorityClassName} {.spec.priority} "
                            "{.spec.preemptionPolicy}'")
    assert (code, out) == (0, "first-default 10 PreemptLowerPriority")
    assert run(lab, "kubectl delete pc first-default")[0] == 0
    assert run(lab, "kubectl apply -f -", json.dumps(pod("plain")))[0] == 0
    code, out, _ = run(lab, "kubectl get pod plain -o jsonpath='{.spec.priorityClassName}/{.spec.priority}/"
                            "{.spec.preemptionPolicy}'")
    assert (code, out) == (0, "/0/PreemptLowerPriority")


def test_priority_admission_refusals_byte_for_byte_with_403(lab: Lab):
    assert run(lab, "kubectl apply -f -", json.dumps(pod("x", priorityClassName="high"))) == (
        1, "", 'Error from server (Forbidden): error when creating "STDIN": pods "x" is forbidden: no PriorityClass '
               "with name high was found\n")
    assert run(lab, "kubectl create priorityclass mid --value=1000 --preemption-policy=Never")[0] == 0
    assert run(lab, "kubectl apply -f -", json.dumps(pod("y", priorityClassName="mid", priority=5))) == (
        1, "", 'Error from server (Forbidden): error when creating "STDIN": pods "y" is forbidden: the integer value '
               "of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from "
               "the given PriorityClass name\n")
    assert run(lab, "kubectl apply -f -", json.dumps(pod("z", priorityClassName="mid",
                                                         preemptionPolicy="PreemptLowerPriority")))[2] == (
        'Error from server (Forbidden): error when creating "STDIN": pods "z" is forbidden: the string value of '
        "PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller "
        "computed Never from the given PriorityClass name\n")
    status, body = post(lab, "/api/v1/namespaces/default/pods", pod("x", priorityClassName="high"))
    assert (status, body) == (403, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'pods "x" is forbidden: no PriorityClass with name high was found', "reason": "Forbidden",
        "details": {"name": "x", "kind": "pods"}, "code": 403})
    status, body = post(lab, "/api/v1/namespaces/default/pods", pod("y", priorityClassName="mid", priority=5))
    assert (status, body["reason"]) == (403, "Forbidden")
    assert run(lab, "kubectl apply -f -", json.dumps(pod("resolved", priorityClassName="mid")))[0] == 0
    code, out, _ = run(lab, "kubectl get pod resolved -o jsonpath='{.spec.priority} {.spec.preemptionPolicy}'")
    assert (code, out) == (0, "1000 Never")


def test_value_and_preemption_policy_are_immutable(lab: Lab):
    assert run(lab, "kubectl create priorityclass fixed --value=3")[0] == 0
    assert run(lab, "kubectl patch pc fixed --type=merge -p '{\"value\": 4}'") == (
        1, "", 'The PriorityClass "fixed" is invalid: value: Forbidden: may not be changed in an update.\n')
