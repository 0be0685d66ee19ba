"""Audit events of an RBAC lab with a policy by user, verb and ``omitStages``: who each requester is, the
authorizer's annotations, a 403 and a 401 as kube-apiserver audits them, a watch's three stages, and the pure
event rules (levels, omitManagedFields, Panic).

Upstream sources: ``endpoints/filters/authorization.go`` (``authorization.k8s.io/decision`` ``allow``/``forbid``
and ``authorization.k8s.io/reason``), ``authn_audit.go`` (a failed authentication is one ``ResponseStarted`` event
with ``Authentication failed, attempted: bearer`` or ``Authentication failed, no credentials provided``),
``audit.go`` (long-running requests get ``ResponseStarted``), ``audit_init.go`` (the client's ``Audit-ID``).
"""

from __future__ import annotations

import asyncio
import ssl
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from observatory.embedded import EmbeddedLab
from observatory.lab.audit.auditor import LabAuditor
from observatory.lab.audit.event import micro_time
from observatory.lab.audit.policy import Policy, PolicyRule
from observatory.lab.audit.types import AuditedRequest, Requester, UserInfo
from observatory.settings import LabSettings
from tests.conftest import API_ONLY
from tests.rbac_fixtures import POLICY, SCENARIO, TOKENS

module_loop = pytest.mark.asyncio(loop_scope="module")

AUDIT_POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Request
  users: [binder]
  verbs: [create]
  omitStages: [RequestReceived]
- level: Metadata
"""
BINDING = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "waiting"},
           "target": {"apiVersion": "v1", "kind": "Node", "name": "pair-worker"}}
BINDING_URL = "/api/v1/namespaces/team-a/pods/waiting/binding"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("audit-rbac")
    (tmp / "rbac.yaml").write_text(POLICY)
    (tmp / "teams.yaml").write_text(SCENARIO)
    (tmp / "audit.yaml").write_text(AUDIT_POLICY)
    server = EmbeddedLab(LabSettings(rbac=tmp / "rbac.yaml", audit_policy_file=tmp / "audit.yaml", **API_ONLY),
                         scenario=str(tmp / "teams.yaml"), kubeconfig_path=tmp / "kc" / "kubeconfig")
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def events(lab) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    lab.auditor.subscribe(seen.append)
    return seen


def client(lab: EmbeddedLab, token: str | None) -> aiohttp.ClientSession:
    context = ssl.create_default_context(cadata=lab.ca_pem.decode("ascii"))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return aiohttp.ClientSession(base_url=lab.url, headers=headers, connector=aiohttp.TCPConnector(ssl=context))


async def request(lab: EmbeddedLab, events: list[dict[str, Any]], token: str | None, method: str, path: str,
                  **kwargs: Any) -> tuple[int, list[dict[str, Any]]]:
    """Send one request; its status and the events of its audit ID (waiting, boundedly, for its last one)."""
    async with client(lab, token) as http, http.request(method, path, **kwargs) as answer:
        await answer.read()
        audit_id = answer.headers["Audit-Id"]
        status = answer.status
    for _ in range(100):
        mine = [e for e in events if e["auditID"] == audit_id]
        if mine and mine[-1]["stage"] in ("ResponseComplete", "ResponseStarted") and (
                status == 401 or mine[-1]["stage"] == "ResponseComplete"):
            return status, mine
        await asyncio.sleep(0.05)
    return status, [e for e in events if e["auditID"] == audit_id]


@module_loop
async def test_a_rule_by_user_and_verb_with_omit_stages(lab, events):
    status, mine = await request(lab, events, TOKENS["binder"], "POST", BINDING_URL, json=BINDING)
    assert status == 201
    assert [e["stage"] for e in mine] == ["ResponseComplete"]  # RequestReceived omitted by the rule
    [done] = mine
    assert done["level"] == "Request"
    assert done["user"] == {"username": "binder", "groups": ["system:authenticated"]}
    assert done["requestObject"] == BINDING
    assert "responseObject" not in done  # Request level: the request, not the answer
    assert done["responseStatus"] == {"metadata": {}, "status": "Success", "code": 201}
    assert done["annotations"] == {
        "authorization.k8s.io/decision": "allow",
        "authorization.k8s.io/reason": 'RBAC: allowed by RoleBinding "observatory-lab:binder/team-a" of Role '
                                       '"observatory-lab:binder" to User "binder"'}


@module_loop
async def test_a_403_is_audited_with_the_forbid_decision(lab, events):
    status, mine = await request(lab, events, TOKENS["alice"], "POST", BINDING_URL, json=BINDING)
    assert status == 403
    assert [e["stage"] for e in mine] == ["RequestReceived", "ResponseComplete"]
    done = mine[-1]
    assert done["level"] == "Metadata" and "requestObject" not in done and "responseObject" not in done
    assert done["annotations"] == {"authorization.k8s.io/decision": "forbid", "authorization.k8s.io/reason": ""}
    assert done["responseStatus"] == {
        "metadata": {}, "status": "Failure", "reason": "Forbidden", "code": 403,
        "message": 'pods "waiting" is forbidden: User "alice" cannot create resource "pods/binding" in API group "" '
                   'in the namespace "team-a"', "details": {"name": "waiting", "kind": "pods"}}


@module_loop
@pytest.mark.parametrize(("token", "message"), [
    ("not-a-token", "Authentication failed, attempted: bearer"),
    (None, "Authentication failed, no credentials provided")])
async def test_a_401_is_one_response_started_event_without_a_user(lab, events, token, message):
    status, mine = await request(lab, events, token, "GET", "/api/v1/pods")
    assert status == 401
    [event] = mine
    assert event["stage"] == "ResponseStarted" and event["verb"] == "list" and event["user"] == {}
    assert event["responseStatus"] == {"metadata": {}, "message": message, "code": 401}
    assert "annotations" not in event


@module_loop
async def test_who_the_anonymous_and_control_plane_requests_are(lab, events):
    _, health = await request(lab, events, None, "GET", "/healthz")
    assert health[-1]["user"] == {"username": "system:anonymous", "groups": ["system:unauthenticated"]}
    assert "objectRef" not in health[-1] and health[-1]["verb"] == "get"
    _, nodes = await request(lab, events, lab.control_plane_token, "GET", "/api/v1/nodes")
    assert nodes[-1]["user"] == {"username": "system:kube-scheduler", "groups": ["system:authenticated"]}
    assert nodes[-1]["objectRef"] == {"resource": "nodes", "apiVersion": "v1"}


@module_loop
async def test_a_watch_has_a_response_started_stage(lab, events):
    status, mine = await request(lab, events, TOKENS["alice"], "GET", "/api/v1/namespaces/team-a/pods",
                                 params={"watch": "1", "timeoutSeconds": "1"})
    assert status == 200
    assert [e["stage"] for e in mine] == ["RequestReceived", "ResponseStarted", "ResponseComplete"]
    assert mine[0]["verb"] == "watch"
    assert mine[1]["responseStatus"] == {"metadata": {}, "code": 200} == mine[2]["responseStatus"]


@module_loop
async def test_the_clients_audit_id_is_kept_and_sources_follow_forwarded_headers(lab, events):
    headers = {"Audit-ID": "from-the-client", "X-Forwarded-For": "10.0.0.1, bogus, 10.0.0.2",
               "X-Real-Ip": "10.0.0.2", "User-Agent": "x" * 1030}
    _, mine = await request(lab, events, TOKENS["alice"], "GET", "/api/v1/namespaces/team-a/pods", headers=headers)
    assert {e["auditID"] for e in mine} == {"from-the-client"}
    assert mine[-1]["sourceIPs"] == ["10.0.0.1", "10.0.0.2", "127.0.0.1"]
    assert mine[-1]["userAgent"] == "x" * 1024 + "...TRUNCATED"


# -- pure event rules -------------------------------------------------------------------------------------------


def _auditor(level: str, **rule: Any) -> tuple[LabAuditor, list[dict[str, Any]]]:
    auditor = LabAuditor(Policy((PolicyRule(level, **rule),)))
    seen: list[dict[str, Any]] = []
    auditor.subscribe(seen.append)
    return auditor, seen


def _update(body: Any) -> AuditedRequest:
    return AuditedRequest(Requester(UserInfo("someone")), "update", "/api/v1/namespaces/a/pods/p", resource="pods",
                          namespace="a", name="p", api_version="v1", request_object=body,
                          received=datetime(2026, 12, 2, 3, 4, 5, 678901, tzinfo=UTC))


POD = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "uid": "u-1", "resourceVersion": "7",
                                                       "managedFields": [{"manager": "kubectl"}]}}


@pytest.mark.parametrize(("level", "request_kept", "response_kept"), [
    ("Metadata", False, False), ("Request", True, False), ("RequestResponse", True, True)])
def test_each_level_records_what_upstream_records(level, request_kept, response_kept):
    auditor, seen = _auditor(level)
    handle = auditor.begin(_update(POD))
    handle.finish(200, POD)
    received, done = seen
    assert received["objectRef"] == {"resource": "pods", "namespace": "a", "name": "p", "apiVersion": "v1"}
    assert done["objectRef"] == {"resource": "pods", "namespace": "a", "name": "p", "uid": "u-1", "apiVersion": "v1",
                                 "resourceVersion": "7"}  # filled from the request object, at every level
    assert ("requestObject" in done) is request_kept and ("responseObject" in done) is response_kept
    assert received["stageTimestamp"] == received["requestReceivedTimestamp"] == "2026-12-02T03:04:05.678901Z"


def test_omit_managed_fields_drops_them_from_both_objects():
    auditor, seen = _auditor("RequestResponse", omit_managed_fields=True)
    handle = auditor.begin(_update(POD))
    handle.finish(200, {"kind": "PodList", "items": [POD]})
    done = seen[-1]
    assert "managedFields" not in done["requestObject"]["metadata"]
    assert "managedFields" not in done["responseObject"]["items"][0]["metadata"]
    assert POD["metadata"]["managedFields"]  # the objects themselves are untouched


def test_a_panic_is_a_500_panic_event_and_level_none_emits_nothing():
    auditor, seen = _auditor("Metadata")
    auditor.begin(_update(None)).finish(500, "boom", panic=True)
    assert seen[-1]["stage"] == "Panic"
    assert seen[-1]["responseStatus"] == {"metadata": {}, "status": "Failure", "message": "APIServer panic'd: boom",
                                          "reason": "InternalError", "code": 500}
    quiet, nothing = _auditor("None")
    handle = quiet.begin(_update(POD))
    handle.finish(200, POD)
    assert nothing == [] and handle.audit_id


def test_micro_time_is_rfc3339_micro_in_utc():
    from datetime import timedelta, timezone

    assert micro_time(datetime(2026, 1, 2, 5, 4, 5, 7, tzinfo=timezone(timedelta(hours=2)))) == \
        "2026-01-02T03:04:05.000007Z"
