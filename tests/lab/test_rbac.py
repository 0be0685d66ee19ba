"""The lab's RBAC mode (``LabSettings.rbac``, ``lab serve --rbac FILE``): users by bearer token, kube-apiserver's
403 Forbidden for the rest, byte for byte, and SelfSubjectAccessReview as ``kubectl auth can-i`` asks it.

Expected texts are upstream's formats, written out here: the Status layout of reference §2.1, ``NewForbidden``'s
``%s is forbidden: %v`` / ``%s %q is forbidden: %v`` (reference §2.2) around ``responsewriters.forbiddenMessage``
(k8s.io/apiserver endpoints/handlers/responsewriters/errors.go: ``User %q cannot %s resource %q in API group %q at
the cluster scope`` / ``... in the namespace %q`` / ``User %q cannot %s path %q``), the RBAC authorizer's
``RBAC: allowed by %s`` with ``clusterRoleBindingDescriber``/``roleBindingDescriber`` (rbac.go, rule.go), and
kubectl's ``Error from server (Forbidden): <message>`` (reference §2.2, ``checkErr``) and ``auth can-i`` yes/no.
"""

from __future__ import annotations

import asyncio
import json
import signal
import ssl
import subprocess
import sys

import aiohttp
import pytest
import yaml

from observatory import cli
from observatory.embedded import EmbeddedLab
from observatory.kube.access import review_access
from observatory.kube.connect import connect
from observatory.lab import rbac
from observatory.lab.server import LabError
from observatory.settings import LabSettings, Settings
from tests.conftest import API_ONLY
from tests.kube.helpers import FakeAPI
from tests.rbac_fixtures import TOKENS


def forbidden_body(message: str, details: str) -> bytes:
    """A 403 as kube-apiserver writes it: Status fields in Go order, Go's HTML-safe escaping, one newline."""
    quoted = json.dumps(message).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (f'{{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":{quoted},'
            f'"reason":"Forbidden","details":{details},"code":403}}\n').encode()


def session(lab: EmbeddedLab, user: str | None) -> aiohttp.ClientSession:
    context = ssl.create_default_context(cadata=lab.ca_pem.decode("ascii"))
    headers = {"Authorization": f"Bearer {TOKENS[user]}"} if user else {}
    return aiohttp.ClientSession(base_url=lab.url, headers=headers, connector=aiohttp.TCPConnector(ssl=context))


async def run(*argv: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode()


# -- 403 bodies -----------------------------------------------------------------------------------------------------

REFUSALS = [
    # (method, path, message, details): cluster scope (list, watch, a cluster-scoped object), a namespace, a
    # subresource of a named object, another API group, deletecollection, a non-resource path
    ("GET", "/api/v1/pods",
     'pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope',
     '{"kind":"pods"}'),
    ("GET", "/api/v1/events?watch=true&resourceVersion=1",
     'events is forbidden: User "alice" cannot watch resource "events" in API group "" at the cluster scope',
     '{"kind":"events"}'),
    ("GET", "/api/v1/nodes/pair-worker",
     'nodes "pair-worker" is forbidden: User "alice" cannot get resource "nodes" in API group "" at the cluster scope',
     '{"name":"pair-worker","kind":"nodes"}'),
    ("GET", "/api/v1/namespaces/team-b/pods",
     'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"',
     '{"kind":"pods"}'),
    ("POST", "/api/v1/namespaces/team-a/pods/waiting/binding",
     'pods "waiting" is forbidden: User "alice" cannot create resource "pods/binding" in API group "" in the '
     'namespace "team-a"',
     '{"name":"waiting","kind":"pods"}'),
    ("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler",
     'leases.coordination.k8s.io "kube-scheduler" is forbidden: User "alice" cannot get resource "leases" in API '
     'group "coordination.k8s.io" in the namespace "kube-system"',
     '{"name":"kube-scheduler","group":"coordination.k8s.io","kind":"leases"}'),
    ("DELETE", "/api/v1/namespaces/team-a/pods",
     'pods is forbidden: User "alice" cannot deletecollection resource "pods" in API group "" in the namespace '
     '"team-a"',
     '{"kind":"pods"}'),
    ("GET", "/api/v1/namespaces/team-a/pods?fieldSelector=metadata.name%3Dweb&watch=1",
     None, None),  # allowed: alice may watch team-a's pods
    ("GET", "/no/such/path",
     'forbidden: User "alice" cannot get path "/no/such/path"', "{}"),
]


@pytest.mark.parametrize(("method", "path", "message", "details"), REFUSALS,
                         ids=[f"{m} {p.split('?')[0]}" for m, p, _, _ in REFUSALS])
async def test_what_alice_may_not_do_gets_the_exact_403(rbac_lab, method, path, message, details):
    async with session(rbac_lab, "alice") as client:
        async with client.request(method, path, json={} if method == "POST" else None) as resp:
            if message is None:
                assert resp.status == 200
                return
            assert resp.status == 403
            assert resp.content_type == "application/json"
            assert await resp.read() == forbidden_body(message, details)


async def test_what_a_user_may_do_is_served(rbac_lab):
    async with session(rbac_lab, "alice") as client:
        async with client.get("/api/v1/namespaces/team-a/pods") as resp:
            assert resp.status == 200
            assert sorted(p["metadata"]["name"] for p in (await resp.json())["items"]) == ["waiting", "web"]
        for path in ("/api", "/apis", "/api/v1", "/apis/authorization.k8s.io/v1", "/version", "/openapi/v3"):
            async with client.get(path) as resp:  # discovery: system:discovery, for every authenticated user
                assert resp.status == 200, path
    async with session(rbac_lab, "admin") as client:
        async with client.get("/api/v1/pods") as resp:
            assert resp.status == 200
            assert len((await resp.json())["items"]) == 3
        async with client.get("/no/such/path") as resp:  # resources "*" is not nonResourceURLs "*": as in RBAC
            assert resp.status == 403
    async with session(rbac_lab, "binder") as client:
        async with client.get("/api/v1/nodes") as resp:
            assert resp.status == 200


async def test_tokens_authenticate_and_the_health_checks_stay_anonymous(rbac_lab):
    async with session(rbac_lab, None) as client:
        async with client.get("/api/v1/namespaces/team-a/pods") as resp:
            assert resp.status == 401
        async with client.get("/readyz") as resp:
            assert (resp.status, await resp.text()) == (200, "ok")
        async with client.get("/api/v1/namespaces/team-a/pods",
                              headers={"Authorization": "Bearer not-a-users-token"}) as resp:
            assert resp.status == 401


async def test_the_kubeconfigs_carry_each_users_token_and_namespace(rbac_lab):
    assert rbac_lab.url.startswith("https://127.0.0.1:")
    main = yaml.safe_load(rbac_lab.kubeconfig_path.read_text())
    assert main["users"][0]["user"] == {"token": TOKENS["alice"]}  # the first user
    assert main["contexts"][0]["context"]["namespace"] == "team-a"
    assert set(rbac_lab.user_kubeconfigs) == {"alice", "binder", "carol", "admin"}
    admin = yaml.safe_load(rbac_lab.user_kubeconfigs["admin"].read_text())
    assert admin["users"][0]["user"] == {"token": TOKENS["admin"]}
    assert admin["contexts"][0]["context"]["namespace"] == "default"  # "*" only: the default namespace
    assert rbac_lab.user_kubeconfigs["admin"].name == "kubeconfig-admin"


# -- SelfSubjectAccessReview ----------------------------------------------------------------------------------------

def ssar(**attributes: str) -> dict:
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes}}


async def test_ssar_allowed_names_the_binding_and_denied_has_no_reason(rbac_lab):
    path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    spec = {"namespace": "team-a", "verb": "create", "resource": "pods", "subresource": "binding"}
    async with session(rbac_lab, "binder") as client:
        async with client.post(path, json=ssar(**spec)) as resp:
            assert resp.status == 201
            assert await resp.json() == {
                "kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
                "metadata": {"creationTimestamp": None}, "spec": {"resourceAttributes": spec},
                "status": {"allowed": True, "reason": 'RBAC: allowed by RoleBinding "observatory-lab:binder/team-a" '
                                                      'of Role "observatory-lab:binder" to User "binder"'}}
        async with client.post(path, json=ssar(verb="list", resource="nodes")) as resp:
            assert (await resp.json())["status"] == {
                "allowed": True, "reason": 'RBAC: allowed by ClusterRoleBinding "observatory-lab:binder" of '
                                           'ClusterRole "observatory-lab:binder" to User "binder"'}
    async with session(rbac_lab, "alice") as client:
        async with client.post(path, json=ssar(**spec)) as resp:
            assert resp.status == 201
            assert (await resp.json())["status"] == {"allowed": False}
        async with client.post(path, json=ssar(namespace="team-b", verb="list", resource="pods")) as resp:
            assert (await resp.json())["status"] == {"allowed": False}
        async with client.post(path, json={"apiVersion": "authorization.k8s.io/v1",
                                           "kind": "SelfSubjectAccessReview", "spec": {}}) as resp:
            assert resp.status == 422
            assert (await resp.json())["message"] == (
                'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: '
                'null: exactly one of nonResourceAttributes or resourceAttributes must be specified')
        async with client.get(path) as resp:  # authorization comes before routing
            assert (resp.status, (await resp.json())["message"]) == (403, (
                'selfsubjectaccessreviews.authorization.k8s.io is forbidden: User "alice" cannot list resource '
                '"selfsubjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope'))
    async with session(rbac_lab, "admin") as client:
        async with client.get(path) as resp:  # create only: no GET route
            assert resp.status == 405


async def test_ssar_in_discovery_and_a_lab_without_rbac_allows_everything(http):
    async with http.get("/apis/authorization.k8s.io/v1") as resp:
        doc = await resp.json()
    assert doc["resources"] == [{"name": "selfsubjectaccessreviews", "singularName": "selfsubjectaccessreview",
                                 "namespaced": False, "kind": "SelfSubjectAccessReview", "verbs": ["create"]}]
    async with http.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                         json=ssar(namespace="sched-lab", verb="create", resource="pods",
                                   subresource="binding")) as resp:
        assert resp.status == 201
        assert (await resp.json())["status"] == {"allowed": True}  # AlwaysAllow gives no reason


async def test_the_access_client_reads_allowed_denied_and_unknown(rbac_lab, tmp_path):
    for user, allowed in (("binder", True), ("alice", False)):
        conn = await connect(str(rbac_lab.user_kubeconfigs[user]))
        try:
            review = await review_access(conn.api, "create", "pods", subresource="binding", namespace="team-a")
        finally:
            await conn.close()
        assert (review.allowed, review.what, review.namespace) == (allowed, "create pods/binding", "team-a")
        assert review.reason.startswith("RBAC: allowed by RoleBinding") if allowed else review.reason == ""
    assert review.notice("Bind") == "Bind disabled: not allowed to create pods/binding in team-a (RBAC)"
    api = await FakeAPI().start()  # a server without the endpoint: access unknown, never refused
    api.post_response = (404, [("Content-Type", "application/json")],
                         b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server '
                         b'could not find the requested resource","reason":"NotFound","details":{},"code":404}\n')
    conn = await connect(str(api.kubeconfig(tmp_path / "fake-kc")))
    try:
        review = await review_access(conn.api, "create", "pods", subresource="binding", namespace="team-a")
    finally:
        await conn.close()
        await api.stop()
    assert review.allowed is None and not review.refused
    assert review.notice("Bind") == ("Bind: access unknown in team-a (the API server does not serve "
                                     "SelfSubjectAccessReview (404))")


# -- kubectl --------------------------------------------------------------------------------------------------------

async def test_kubectl_get_pods_all_namespaces_prints_the_forbidden_message(rbac_lab, kubectl):
    code, out, err = await run(kubectl, "--kubeconfig", str(rbac_lab.kubeconfig_path), "get", "pods", "-A")
    assert (code, out) == (1, "")
    assert err == ('Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API '
                   'group "" at the cluster scope\n')
    code, out, err = await run(kubectl, "--kubeconfig", str(rbac_lab.kubeconfig_path), "get", "pods", "-o", "name")
    assert (code, out) == (0, "pod/waiting\npod/web\n"), err  # the context's namespace, team-a


async def test_kubectl_auth_can_i_create_pods_binding(rbac_lab, kubectl):
    """kubectl reads ``pods/binding`` as TYPE/NAME (create a pod named "binding"): the subresource is asked with
    ``--subresource`` (kubectl auth can-i --help). Both are answered as kube-apiserver's RBAC would."""
    async def can_i(user: str, *what: str) -> tuple[int, str]:
        code, out, err = await run(kubectl, "--kubeconfig", str(rbac_lab.user_kubeconfigs[user]), "auth", "can-i",
                                   "create", *what)
        assert "Warning" not in err and "error" not in err, err
        return code, out

    subresource = ("pods", "--subresource=binding", "-n", "team-a")
    assert await can_i("binder", *subresource) == (0, "yes\n")
    assert await can_i("alice", *subresource) == (1, "no\n")
    assert await can_i("binder", "pods", "--subresource=binding", "-n", "team-b") == (1, "no\n")
    assert await can_i("binder", "pods/binding", "-n", "team-a") == (1, "no\n")  # a pod named binding: not pods
    assert await can_i("admin", "pods/binding", "-n", "team-a") == (0, "yes\n")


# -- the file, the setting, the command line ------------------------------------------------------------------------

def test_the_setting_comes_from_the_environment(monkeypatch, tmp_path):
    assert Settings().lab.rbac is None
    monkeypatch.setenv("OBSERVATORY_LAB__RBAC", str(tmp_path / "rbac.yaml"))
    assert Settings().lab.rbac == tmp_path / "rbac.yaml"


@pytest.mark.parametrize(("text", "problem"), [
    ("users: []", "an RBAC file needs a non-empty 'users' list"),
    ("users:\n- name: a\n  rules: []", "users[0] (a): 'token' must be a non-empty string without spaces"),
    ("users:\n- {name: a, token: t}\n- {name: b, token: t}", "users[1] (b): the token is already another user's"),
    ("users:\n- name: a\n  token: t\n  rules:\n  - {resources: [pods]}",
     "users[0] (a): rules[0]: 'verbs' must list at least one verb (or '*')"),
    ("users:\n- name: a\n  token: t\n  rules:\n  - {verbs: [get], resource: [pods]}",
     "users[0] (a): rules[0]: unknown field 'resource'"),
    ("users: [", "not YAML"),
    # break-it findings: a typo at the user level widened the user to every namespace; names overwrote kubeconfigs
    ("users:\n- name: a\n  token: t\n  namespace: [team-a]", "users[0] (a): unknown field 'namespace'"),
    ("users:\n- {name: a, token: t}\n- {name: a, token: u}", "users[1] (a): the name is already another user's"),
    ("users:\n- {name: a, token: t, namespaces: []}", "users[0] (a): 'namespaces' is empty"),
    ("users: [{name: a, token: t}]\nuser: []", "unknown field 'user'"),
])
def test_a_bad_file_is_one_readable_sentence(tmp_path, text, problem):
    path = tmp_path / "rbac.yaml"
    path.write_text(text)
    with pytest.raises(rbac.RbacError) as caught:
        rbac.load_policy(path)
    assert str(caught.value).startswith(f"{path}: ") and problem in str(caught.value)


@pytest.mark.parametrize(("text", "problem"), [
    ("users: [5]", "users[0]: not a mapping with name, token, namespaces and rules"),
    ("users: [{name: '', token: t, zz: 1}]", "users[0]: 'name' must be a non-empty string"),
    ("users: [{name: a, token: 5}]", "users[0] (a): 'token' must be a non-empty string without spaces"),
    ("users: [{name: a, token: t, namespaces: [5]}]", "users[0] (a): namespaces: must be a list of strings"),
    ("users: [{name: a, token: t, rules: ~}]", "users[0] (a): 'rules' must be a list"),
    ("users: [{name: a, token: t, rules: [5]}]", "users[0] (a): rules[0]: not a mapping with verbs and resources"),
    ("users: [{name: a, token: t, rules: [{verbs: [get], resources: [p]}, {verbs: [], b: 1}]}]",
     "users[0] (a): rules[1]: unknown field 'b' (known: apiGroups, namespaces, nonResourceURLs, resourceNames, "
     "resources, verbs)"),
    ("users: [{name: a, token: t, rules: [{verbs: [get], resources: [p], apiGroups: 5}]}]",
     "users[0] (a): rules[0]: apiGroups: must be a list of strings"),
    ("users: [{name: a, token: t}, {name: a, token: 5}]", "users[1] (a): the name is already another user's"),
    ("users: [{name: a, token: t}, {name: a, token: t, zz: 1}]",
     "users[1] (a): unknown field 'zz' (a user has name, token, namespaces, rules)"),
])
def test_the_first_problem_of_a_file_is_the_one_reported(tmp_path, text, problem):
    path = tmp_path / "rbac.yaml"
    path.write_text(text)
    with pytest.raises(rbac.RbacError) as caught:
        rbac.load_policy(path)
    assert str(caught.value) == f"{path}: {problem}"


def test_one_string_is_a_list_of_it(tmp_path):
    path = tmp_path / "rbac.yaml"
    path.write_text("users: [{name: a, token: t, namespaces: team-a, rules: [{verbs: get, resources: pods}]}]")
    (user,) = rbac.load_policy(path).users
    assert user.namespaces == ("team-a",)
    assert user.rules == (rbac.Rule(("get",), ("pods",), namespaces=("team-a",)),)


async def test_a_lab_with_a_bad_file_does_not_start(tmp_path):
    lab = EmbeddedLab(LabSettings(rbac=tmp_path / "missing.yaml", **API_ONLY), kubeconfig_path=tmp_path / "kc")
    with pytest.raises(LabError, match=r"missing.yaml: cannot read the RBAC file: No such file or directory"):
        await lab.start()


def test_lab_serve_rbac_with_a_missing_file_exits_1_with_one_line(tmp_path, capsys):
    code = cli.main(["lab", "serve", "--rbac", str(tmp_path / "none.yaml"), "--kubeconfig-out",
                     str(tmp_path / "kc")])
    err = capsys.readouterr().err
    assert code == 1
    assert err == f"observatory: {tmp_path / 'none.yaml'}: cannot read the RBAC file: No such file or directory\n"


def test_lab_serve_rbac_prints_a_kubeconfig_per_user_and_refuses_as_the_first(tmp_path, rbac_files, kubectl):
    policy, scenario = rbac_files
    proc = subprocess.Popen([sys.executable, "-m", "observatory", "lab", "serve", "--rbac", str(policy), "--scenario",
                             str(scenario), "--kubeconfig-out", str(tmp_path / "kc" / "kubeconfig"),
                             "--no-scheduler", "--no-kubelet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(6)]
        assert lines[0].startswith("Lab API server: https://127.0.0.1:")
        assert lines[1:] == [f"Kubeconfig: {tmp_path / 'kc' / 'kubeconfig'}\n"] + [
            f"Kubeconfig for {user}: {tmp_path / 'kc' / f'kubeconfig-{user}'}\n"
            for user in ("alice", "binder", "carol", "admin")]
        got = subprocess.run([kubectl, "--kubeconfig", str(tmp_path / "kc" / "kubeconfig"), "get", "nodes"],
                             capture_output=True, text=True, timeout=60)
        assert (got.returncode, got.stderr) == (1, 'Error from server (Forbidden): nodes is forbidden: User "alice" '
                                                   'cannot list resource "nodes" in API group "" at the cluster '
                                                   'scope\n')
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
        assert "Traceback" not in proc.stderr.read()


@pytest.mark.parametrize(("method", "path", "expected"), [
    # RequestInfoFactory: verb from the method (list/watch/deletecollection without a name), namespace, resource,
    # name, subresource; a namespace's own status is a subresource of the namespace
    ("GET", "/api/v1/namespaces/a/pods?watch=true", ("watch", "a", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/a/pods?fieldSelector=metadata.name%3Dweb", ("list", "a", "", "pods", "", "web")),
    ("PATCH", "/api/v1/nodes/n1/status", ("patch", "", "", "nodes", "status", "n1")),
    ("PUT", "/api/v1/namespaces/a/status", ("update", "a", "", "namespaces", "status", "a")),
    ("POST", "/api/v1/namespaces/a/bindings", ("create", "a", "", "bindings", "", "")),
    ("DELETE", "/apis/coordination.k8s.io/v1/namespaces/a/leases", ("deletecollection", "a", "coordination.k8s.io",
                                                                     "leases", "", "")),
])
def test_request_attributes_as_kube_apiserver_reads_them(method, path, expected):
    from yarl import URL

    url = URL(path)
    attrs = rbac.attributes(method, url.path, url.query)
    assert (attrs.verb, attrs.namespace, attrs.group, attrs.resource, attrs.subresource, attrs.name) == expected
    assert attrs.resource_request


def test_rules_match_as_upstream_rule_allows():
    attrs = rbac.Attributes("create", True, namespace="a", resource="pods", subresource="binding", name="web")
    assert rbac.Rule(("create",), ("*/binding",)).allows(attrs)
    assert not rbac.Rule(("create",), ("pods",)).allows(attrs)  # the subresource must be named
    assert rbac.Rule(("*",), ("pods/binding",), resource_names=("web",)).allows(attrs)
    assert not rbac.Rule(("*",), ("pods/binding",), resource_names=("db",)).allows(attrs)
    assert not rbac.Rule(("create",), ("pods/binding",), api_groups=("apps",)).allows(attrs)
    assert rbac.Rule(("get",), non_resource_urls=("/lab/*",)).allows(rbac.Attributes("get", False, path="/lab/x"))
    assert not rbac.Rule(("create",), ("pods/binding",), namespaces=("b",)).applies_in("a")
    assert not rbac.Rule(("list",), ("pods",), namespaces=("a",)).applies_in("")  # cluster scope: "*" only
