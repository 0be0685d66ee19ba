"""The audit policy: reading and validating a Policy file as kube-apiserver does, and matching rules as its checker
does (cases from upstream's ``staging/src/k8s.io/apiserver/pkg/audit/policy/checker_test.go``)."""

from __future__ import annotations

import json

import pytest

from observatory.lab.audit.identity import CLUSTER_ADMIN, KUBE_SCHEDULER, node_user
from observatory.lab.audit.policy import (
    DEFAULT_POLICY,
    NOTHING,
    GroupResources,
    Policy,
    PolicyError,
    PolicyRule,
    evaluate,
    load_policy_file,
    parse_policy,
)
from observatory.lab.audit.types import UserInfo
from observatory.lab.requestinfo import Attributes, attributes

TIM = UserInfo("tim@k8s.io", ("humans", "developers"))
ATTRS = {
    "namespaced": (Attributes("get", True, "/api/v1/namespaces/default/pods/busybox", "default", "", "v1", "pods",
                              "", "busybox"), TIM),
    "cluster": (Attributes("get", True, "/apis/rbac.authorization.k8s.io/v1beta1/clusterroles/edit", "",
                           "rbac.authorization.k8s.io", "v1beta1", "clusterroles", "", "edit"), TIM),
    "nonResource": (Attributes("get", False, "/logs/kubelet.log"), TIM),
    "subresource": (Attributes("get", True, "/api/v1/namespaces/default/pods/busybox", "default", "", "v1", "pods",
                               "log", "busybox"), TIM),
    "Unauthorized": (Attributes("get", True, "/api/v1/namespaces/default/pods/busybox", "default", "", "v1", "pods",
                                "", "busybox"), None),
}
RULES = {
    "default": PolicyRule("Metadata"),
    "create": PolicyRule("Request", verbs=("create",)),
    "tims": PolicyRule("Metadata", users=("tim@k8s.io",)),
    "humans": PolicyRule("Metadata", user_groups=("humans",)),
    "serviceAccounts": PolicyRule("Request", user_groups=("system:serviceaccounts",)),
    "getPods": PolicyRule("RequestResponse", verbs=("get",), resources=(GroupResources(resources=("pods",)),)),
    "getPodLogs": PolicyRule("Request", verbs=("get",), resources=(GroupResources(resources=("pods/log",)),)),
    "getPodWildcardMatching": PolicyRule("Request", verbs=("get",), resources=(GroupResources(resources=("*",)),)),
    "getPodResourceWildcardMatching": PolicyRule("Request", verbs=("get",),
                                                 resources=(GroupResources(resources=("*/log",)),)),
    "getPodSubResourceWildcardMatching": PolicyRule("Request", verbs=("get",),
                                                    resources=(GroupResources(resources=("pods/*",)),)),
    "getClusterRoles": PolicyRule("RequestResponse", verbs=("get",), namespaces=("",), resources=(
        GroupResources("rbac.authorization.k8s.io", ("clusterroles",)),)),
    "getLogs": PolicyRule("RequestResponse", verbs=("get",), non_resource_urls=("/logs*",)),
    "getMetrics": PolicyRule("Request", verbs=("get",), non_resource_urls=("/metrics",)),
    "clusterRoleEdit": PolicyRule("Request", resources=(
        GroupResources("rbac.authorization.k8s.io", ("clusterroles",), ("edit",)),)),
    "omit RequestReceived": PolicyRule("Request", omit_stages=("RequestReceived",)),
    "only audit panic": PolicyRule("Request", omit_stages=("RequestReceived", "ResponseStarted",
                                                           "ResponseComplete")),
}
# (request, expected level, rules in order): testAuditLevel in checker_test.go
LEVEL_CASES = [
    ("namespaced", "Metadata", ["default"]), ("namespaced", "None", ["create"]),
    ("namespaced", "Metadata", ["tims"]), ("namespaced", "Metadata", ["humans"]),
    ("namespaced", "None", ["serviceAccounts"]), ("namespaced", "RequestResponse", ["getPods"]),
    ("namespaced", "None", ["getClusterRoles"]), ("namespaced", "None", ["getLogs"]),
    ("namespaced", "None", ["getMetrics"]), ("namespaced", "Metadata", ["getMetrics", "serviceAccounts", "default"]),
    ("namespaced", "RequestResponse", ["getMetrics", "getPods", "default"]),
    ("namespaced", "RequestResponse", ["getPodLogs", "getPods"]),
    ("cluster", "Metadata", ["default"]), ("cluster", "None", ["create"]), ("cluster", "Metadata", ["tims"]),
    ("cluster", "Metadata", ["humans"]), ("cluster", "None", ["serviceAccounts"]), ("cluster", "None", ["getPods"]),
    ("cluster", "RequestResponse", ["getClusterRoles"]), ("cluster", "Request", ["clusterRoleEdit", "getClusterRoles"]),
    ("cluster", "None", ["getLogs"]), ("cluster", "None", ["getMetrics"]),
    ("cluster", "Metadata", ["getMetrics", "serviceAccounts", "default"]),
    ("cluster", "RequestResponse", ["getMetrics", "getClusterRoles", "default"]),
    ("cluster", "None", ["getPodLogs", "getPods"]),
    ("nonResource", "Metadata", ["default"]), ("nonResource", "None", ["create"]),
    ("nonResource", "Metadata", ["tims"]), ("nonResource", "Metadata", ["humans"]),
    ("nonResource", "None", ["serviceAccounts"]), ("nonResource", "None", ["getPods"]),
    ("nonResource", "None", ["getClusterRoles"]), ("nonResource", "RequestResponse", ["getLogs"]),
    ("nonResource", "None", ["getMetrics"]), ("nonResource", "Metadata", ["getMetrics", "serviceAccounts", "default"]),
    ("nonResource", "RequestResponse", ["getLogs", "getClusterRoles", "default"]),
    ("nonResource", "None", ["getPodLogs", "getPods"]),
    ("subresource", "Request", ["getPodLogs", "getPods"]), ("subresource", "Request", ["getPodWildcardMatching"]),
    ("subresource", "Request", ["getPodResourceWildcardMatching"]),
    ("subresource", "Request", ["getPodSubResourceWildcardMatching"]),
    ("Unauthorized", "None", ["tims"]), ("Unauthorized", "Metadata", ["tims", "default"]),
    ("Unauthorized", "None", ["humans"]), ("Unauthorized", "Metadata", ["humans", "default"]),
]


@pytest.mark.parametrize("policy_stages", [(), ("RequestReceived", "ResponseStarted")])
@pytest.mark.parametrize(("request_name", "level", "rules"), LEVEL_CASES)
def test_the_first_matching_rule_decides_the_level(request_name, level, rules, policy_stages):
    attrs, user = ATTRS[request_name]
    config = evaluate(Policy(tuple(RULES[r] for r in rules), policy_stages), attrs, user)
    assert config.level == level
    assert config.omit_stages == frozenset(policy_stages)


@pytest.mark.parametrize("policy_stages", [(), ("RequestReceived", "ResponseStarted")])
@pytest.mark.parametrize("request_name", ["namespaced", "cluster", "nonResource"])
def test_omit_stages_are_the_union_of_the_rules_and_the_policys(request_name, policy_stages):
    attrs, user = ATTRS[request_name]
    first = evaluate(Policy((RULES["omit RequestReceived"], RULES["getPods"], RULES["default"]), policy_stages),
                     attrs, user)
    assert (first.level, first.omit_stages) == ("Request", {"RequestReceived", *policy_stages})
    panic = evaluate(Policy((RULES["only audit panic"], RULES["getPods"], RULES["default"]), policy_stages),
                     attrs, user)
    assert panic.omit_stages == {"RequestReceived", "ResponseStarted", "ResponseComplete"}


@pytest.mark.parametrize(("policy_default", "rule", "want"), [
    (False, None, False), (True, None, True), (True, False, False), (False, True, True)])
def test_omit_managed_fields_of_the_rule_overrides_the_policys(policy_default, rule, want):
    # TestOmitManagedFields
    policy = Policy((PolicyRule("RequestResponse", verbs=("get",), omit_managed_fields=rule),),
                    omit_managed_fields=policy_default)
    assert evaluate(policy, Attributes("get", False), None).omit_managed_fields is want


def test_without_a_policy_file_nothing_is_audited():
    assert evaluate(NOTHING, ATTRS["namespaced"][0], TIM).level == "None"


def _level(method: str, path: str, user: UserInfo = CLUSTER_ADMIN, query: dict[str, str] | None = None) -> str:
    return evaluate(DEFAULT_POLICY, attributes(method, path, query or {}), user).level


def test_the_default_policy_records_pod_and_node_writes_in_full_and_no_reads():
    assert _level("POST", "/api/v1/namespaces/sched-lab/pods/manual/binding") == "RequestResponse"
    assert _level("POST", "/api/v1/namespaces/sched-lab/bindings", KUBE_SCHEDULER) == "RequestResponse"
    assert _level("PATCH", "/api/v1/namespaces/sched-lab/pods/manual/status", node_user("pair-worker")) == \
        "RequestResponse"
    assert _level("POST", "/api/v1/namespaces/sched-lab/pods") == "RequestResponse"
    assert _level("DELETE", "/api/v1/namespaces/sched-lab/pods/manual") == "RequestResponse"
    assert _level("PATCH", "/api/v1/nodes/pair-worker/status", node_user("pair-worker")) == "RequestResponse"
    assert _level("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/pair-worker") == "Metadata"
    assert _level("POST", "/api/v1/namespaces/sched-lab/events") == "Metadata"
    assert _level("GET", "/api/v1/namespaces/sched-lab/pods/manual") == "None"
    assert _level("GET", "/api/v1/pods", query={"watch": "1"}) == "None"
    assert _level("GET", "/version") == "None"


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/api/v1/namespaces/default/secrets"), ("PUT", "/api/v1/namespaces/default/configmaps/c"),
    ("POST", "/apis/authentication.k8s.io/v1/tokenreviews"), ("GET", "/api/v1/namespaces/default/secrets/s")])
def test_the_default_policy_never_records_secrets_configmaps_or_tokenreviews_above_metadata(method, path):
    assert _level(method, path) in ("None", "Metadata")


def _doc(**rule: object) -> dict[str, object]:
    return {"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [rule]}


@pytest.mark.parametrize(("doc", "message"), [
    (_doc(), "rules[0].level: Required value"),
    (_doc(level="Bogus"), 'rules[0].level: Unsupported value: "Bogus": supported values: "None", "Metadata", '
                          '"Request", "RequestResponse"'),
    (_doc(level="None", nonResourceURLs=["metrics"]),
     "rules[0].nonResourceURLs[0]: Invalid value: \"metrics\": non-resource URL rules must begin with a '/' "
     "character"),
    (_doc(level="None", nonResourceURLs=["/a*/b"]),
     "rules[0].nonResourceURLs[0]: Invalid value: \"/a*/b\": non-resource URL wildcards '*' must be the final "
     "character of the rule"),
    (_doc(level="None", nonResourceURLs=["/x"], namespaces=["a"]),
     'rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources and '
     'non-resource URLs'),
    (_doc(level="None", resources=[{"resourceNames": ["x"]}]),
     'rules[0].resources.resourceNames: Invalid value: []string{"x"}: using resourceNames requires at least one '
     'resource'),
    (_doc(level="None", omitStages=["Done"]),
     'rules[0].omitStages[0]: Invalid value: "Done": allowed stages are RequestReceived,ResponseStarted,'
     'ResponseComplete,Panic'),
    ({"apiVersion": "audit.k8s.io/v1", "kind": "Policy"}, "loaded illegal policy with 0 rules"),
    ({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{}, {"level": "X"}]},
     '[rules[0].level: Required value, rules[1].level: Unsupported value: "X": supported values: "None", '
     '"Metadata", "Request", "RequestResponse"]'),
])
def test_a_bad_policy_gets_upstreams_validation_error(doc, message):
    with pytest.raises(PolicyError) as raised:
        parse_policy(doc)
    assert str(raised.value) == message


def test_a_policy_file_is_read_as_yaml_or_json_and_named_in_its_error(tmp_path):
    good = tmp_path / "policy.json"
    good.write_text(json.dumps(_doc(level="Metadata", users=["alice"], omitStages=["RequestReceived"])))
    policy = load_policy_file(good)
    assert policy.rules == (PolicyRule("Metadata", users=("alice",), omit_stages=("RequestReceived",)),)
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n")
    with pytest.raises(PolicyError, match=r'^rules\[0\]\.level: Unsupported value: "Everything": .*: from file '):
        load_policy_file(bad)
    with pytest.raises(PolicyError, match=r'^failed to read file path ".*missing\.yaml"'):
        load_policy_file(tmp_path / "missing.yaml")


@pytest.mark.parametrize(("flags", "message"), [
    (["--audit-policy-file", "{dir}/bad.yaml"], 'observatory: loading audit policy file: rules[0].level: Unsupported '
                                                'value: "Loud": supported values: "None", "Metadata", "Request", '
                                                '"RequestResponse": from file {dir}/bad.yaml\n'),
    (["--audit-log-format", "legacy"], 'observatory: --audit-log-format "legacy" (one line of text per event) is '
                                       'not supported by the lab; use "json", the default\n'),
    (["--audit-webhook-mode", "eager"], 'observatory: invalid audit webhook mode eager, allowed modes are '
                                        '"batch,blocking,blocking-strict"\n'),
])
def test_lab_serve_refuses_bad_audit_settings_with_one_sentence_and_exit_2(tmp_path, capsys, flags, message):
    from observatory import cli

    (tmp_path / "bad.yaml").write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Loud}]\n")
    argv = ["lab", "serve", *[f.format(dir=tmp_path) for f in flags]]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == message.format(dir=tmp_path)


def test_lab_serve_refuses_a_negative_log_size_as_kube_apiserver_does(capsys):
    from observatory import cli

    with pytest.raises(SystemExit) as raised:
        cli.main(["lab", "serve", "--audit-log-maxsize", "-1"])
    assert raised.value.code == 2
    assert "--audit-log-maxsize -1 can't be a negative number" in capsys.readouterr().err


async def test_a_lab_with_bad_audit_settings_does_not_start(tmp_path):
    from observatory.lab.server import LabError, LabServer
    from observatory.settings import LabSettings

    lab = LabServer(LabSettings(audit_log_format="legacy"), kubeconfig_path=tmp_path / "kubeconfig")
    assert lab.auditor is not None  # always present, even when the settings are refused
    with pytest.raises(LabError, match=r'^--audit-log-format "legacy"'):
        await lab.start()


def test_an_unknown_field_is_dropped_with_upstreams_lenient_decoding_warning(caplog):
    policy = parse_policy({**_doc(level="Metadata", colour="red"), "extra": 1})
    assert policy.rules == (PolicyRule("Metadata"),)
    [warning] = [r.getMessage() for r in caplog.records if r.name == "observatory.lab.audit.policy"]
    assert warning.startswith("Audit policy contains errors, falling back to lenient decoding: ")
    assert 'unknown field "extra"' in warning and 'unknown field "rules[0].colour"' in warning
