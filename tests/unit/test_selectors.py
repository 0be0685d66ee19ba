"""Field and label selectors against apimachinery's parsing, matching and exact error texts."""

from __future__ import annotations

import pytest

from observatory.lab.labelselectors import parse_label_selector
from observatory.lab.selectors import (
    FIELD_SETS,
    FieldSelector,
    SelectorError,
    event_fields,
    namespace_fields,
    node_fields,
    parse_field_selector,
    pod_fields,
)

NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation "
    "is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)

POD = {
    "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "web"}},
    "spec": {"nodeName": "node-1", "restartPolicy": "Always", "schedulerName": "default-scheduler",
             "serviceAccountName": "default", "containers": [{"name": "nginx", "image": "nginx"}]},
    "status": {"phase": "Running", "podIP": "10.244.1.5", "podIPs": [{"ip": "10.244.1.5"}, {"ip": "fd00::5"}],
               "nominatedNodeName": ""},
}


def field_error(text: str) -> str:
    with pytest.raises(SelectorError) as info:
        parse_field_selector(text)
    return str(info.value)


def label_error(text: str) -> str:
    with pytest.raises(SelectorError) as info:
        parse_label_selector(text)
    return str(info.value)


# --- field selectors ----------------------------------------------------------------------------------------------

def test_empty_field_selector_selects_everything() -> None:
    sel = parse_field_selector("")
    assert sel.requirements == ()
    assert sel.empty
    assert sel.matches({}) and sel.matches({"metadata.name": "x"})


def test_field_operators_and_sorted_terms() -> None:
    sel = parse_field_selector("status.phase!=Running,metadata.name==nginx,spec.nodeName=node-1")
    assert sel.requirements == (
        ("metadata.name", "=", "nginx"),
        ("spec.nodeName", "=", "node-1"),
        ("status.phase", "!=", "Running"),
    )


def test_field_selector_first_operator_wins_and_empty_terms_skipped() -> None:
    assert parse_field_selector("a!=b,,").requirements == (("a", "!=", "b"),)
    assert parse_field_selector("a==").requirements == (("a", "=", ""),)


def test_field_selector_escapes() -> None:
    sel = parse_field_selector(r"metadata.name=a\,b\=c\\d,spec.nodeName=x")
    assert sel.requirements == (("metadata.name", "=", "a,b=c\\d"), ("spec.nodeName", "=", "x"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("spec.nodeName", "invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'"),
        ("a=b,foo", "invalid selector: 'a=b,foo'; can't understand 'foo'"),
        ("a=b=c", "invalid field selector: unescaped character in value: 61"),
        (r"a=b\q", r"invalid field selector: invalid escape sequence: \q"),
        ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
    ],
)
def test_field_selector_errors(text: str, message: str) -> None:
    assert field_error(text) == message


def test_field_label_not_supported() -> None:
    _fn, supported, aliases = FIELD_SETS["pods"]
    sel = parse_field_selector("spec.nodeName=n,foo.bar=baz")
    with pytest.raises(SelectorError) as info:
        sel.check_supported(supported, aliases)
    assert str(info.value) == "field label not supported: foo.bar"


def test_spec_host_alias_converts_to_node_name_in_place() -> None:
    _, supported, aliases = FIELD_SETS["pods"]
    sel = parse_field_selector("spec.host=node-1")
    assert sel.check_supported(supported, aliases) is sel
    assert sel.requirements == (("spec.nodeName", "=", "node-1"),)
    assert sel.matches(pod_fields(POD))


def test_field_matches_and_value_for() -> None:
    fields = pod_fields(POD)
    assert parse_field_selector("spec.nodeName=node-1").matches(fields)
    assert not parse_field_selector("spec.nodeName=node-2").matches(fields)
    assert parse_field_selector("status.phase!=Pending,metadata.namespace=default").matches(fields)
    assert not parse_field_selector("status.phase!=Running").matches(fields)
    assert parse_field_selector("metadata.name==nginx").value_for("metadata.name") == "nginx"
    assert parse_field_selector("metadata.name!=nginx").value_for("metadata.name") is None
    assert parse_field_selector("").value_for("metadata.name") is None


def test_unbound_pod_matches_empty_node_name() -> None:
    pod = {"metadata": {"name": "p", "namespace": "default"}, "spec": {}, "status": {"phase": "Pending"}}
    assert parse_field_selector("spec.nodeName=").matches(pod_fields(pod))
    assert not parse_field_selector("spec.nodeName!=").matches(pod_fields(pod))
    # a field the object set lacks reads as "" (fields.Set.Get)
    assert parse_field_selector("no.such=").matches({})


def test_pod_fields() -> None:
    assert pod_fields(POD) == {
        "metadata.name": "nginx",
        "metadata.namespace": "default",
        "spec.nodeName": "node-1",
        "spec.restartPolicy": "Always",
        "spec.schedulerName": "default-scheduler",
        "spec.serviceAccountName": "default",
        "spec.hostNetwork": "false",
        "status.phase": "Running",
        "status.podIP": "10.244.1.5",
        "status.podIPs": "",
        "status.nominatedNodeName": "",
    }


def test_pod_fields_defaults_and_host_network() -> None:
    fields = pod_fields({"spec": {"hostNetwork": True}})
    assert fields["spec.hostNetwork"] == "true"
    assert fields["status.podIP"] == ""
    assert fields["metadata.name"] == "" and fields["spec.nodeName"] == ""
    assert pod_fields({})["spec.hostNetwork"] == "false"


def test_event_fields_and_source_fallback() -> None:
    event = {
        "metadata": {"name": "nginx.17f", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "nginx", "uid": "u-1",
                           "apiVersion": "v1", "resourceVersion": "42"},
        "reason": "Scheduled", "type": "Normal", "source": {"component": "default-scheduler"},
    }
    assert event_fields(event) == {
        "involvedObject.kind": "Pod",
        "involvedObject.namespace": "default",
        "involvedObject.name": "nginx",
        "involvedObject.uid": "u-1",
        "involvedObject.apiVersion": "v1",
        "involvedObject.resourceVersion": "42",
        "involvedObject.fieldPath": "",
        "reason": "Scheduled",
        "reportingComponent": "",
        "source": "default-scheduler",
        "type": "Normal",
        "metadata.namespace": "default",
        "metadata.name": "nginx.17f",
    }
    series_style = {"reportingComponent": "kubelet", "source": {}}
    assert event_fields(series_style)["source"] == "kubelet"
    assert event_fields(series_style)["reportingComponent"] == "kubelet"


def test_node_and_namespace_fields() -> None:
    assert node_fields({"metadata": {"name": "n1"}, "spec": {"unschedulable": True}}) == {
        "metadata.name": "n1", "spec.unschedulable": "true"}
    assert node_fields({"metadata": {"name": "n2"}}) == {"metadata.name": "n2", "spec.unschedulable": "false"}
    assert namespace_fields({"metadata": {"name": "kube-system"}, "status": {"phase": "Active"}}) == {
        "metadata.name": "kube-system", "status.phase": "Active"}


def test_field_sets_supported_labels() -> None:
    assert set(FIELD_SETS) == {"pods", "events", "nodes", "namespaces"}
    assert FIELD_SETS["pods"][1] == {
        "metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
        "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs",
        "status.nominatedNodeName"}
    assert FIELD_SETS["pods"][2] == {"spec.host": "spec.nodeName"}
    assert FIELD_SETS["nodes"][1] == {"metadata.name", "spec.unschedulable"}
    assert FIELD_SETS["namespaces"][1] == {"metadata.name", "status.phase"}
    assert len(FIELD_SETS["events"][1]) == 13 and "reportingComponent" in FIELD_SETS["events"][1]
    for fn, supported, _ in FIELD_SETS.values():
        assert set(fn({})) == supported


def test_field_selector_repr() -> None:
    assert repr(FieldSelector((("a", "=", "b"),))) == "FieldSelector((('a', '=', 'b'),))"


# --- label selectors ----------------------------------------------------------------------------------------------

def test_empty_label_selector() -> None:
    sel = parse_label_selector("")
    assert sel.empty and sel.requirements == ()
    assert sel.matches(None) and sel.matches({"a": "b"})


def test_label_selector_grammar() -> None:
    sel = parse_label_selector("tier notin (frontend, backend),env in (prod,qa), app=web ,!legacy,team,x!=y,n>3")
    assert sel.requirements == (
        ("app", "=", ("web",)),
        ("env", "in", ("prod", "qa")),
        ("legacy", "!", ()),
        ("n", "gt", ("3",)),
        ("team", "exists", ()),
        ("tier", "notin", ("backend", "frontend")),
        ("x", "!=", ("y",)),
    )
    assert parse_label_selector("a==b").requirements == (("a", "==", ("b",)),)
    assert parse_label_selector("a=").requirements == (("a", "=", ("",)),)
    assert parse_label_selector("k in ()").requirements == (("k", "in", ("",)),)
    assert parse_label_selector("k in (,a,)").requirements == (("k", "in", ("", "a")),)
    assert parse_label_selector("in in (in,notin)").requirements == (("in", "in", ("in", "notin")),)
    assert parse_label_selector("example.com/role=db").requirements == (("example.com/role", "=", ("db",)),)


def test_label_matching() -> None:
    labels = {"app": "web", "env": "prod", "n": "5"}
    assert parse_label_selector("app=web,env in (prod,qa)").matches(labels)
    assert not parse_label_selector("app=db").matches(labels)
    assert parse_label_selector("tier!=x,tier notin (a)").matches(labels)
    assert not parse_label_selector("env notin (prod)").matches(labels)
    assert parse_label_selector("app,!tier").matches(labels)
    assert not parse_label_selector("!app").matches(labels)
    assert not parse_label_selector("tier").matches(labels)
    assert parse_label_selector("n>4,n<6").matches(labels)
    assert not parse_label_selector("n>5").matches(labels)
    assert not parse_label_selector("missing<100").matches(labels)
    assert not parse_label_selector("app>1").matches(labels)
    assert not parse_label_selector("app=web").matches(None)
    assert parse_label_selector("app!=web").matches(None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # kubectl get pods -l "app:monolith" (captured: Error from server (BadRequest): ... field selector "": ...)
        ("app:monolith", 'unable to parse requirement: <nil>: Invalid value: "app:monolith": ' + NAME_PART),
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("x in", "unable to parse requirement: found '' expected: '('"),
        ("x in (a", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"),
        ("x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
        ("x=(", "unable to parse requirement: found '(', expected: identifier"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        (")", "found ')', expected: !, identifier, or 'end of string'"),
        ("a,", "found '', expected: identifier after ','"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a>x", "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, "
                "the value must be an integer"),
        ("a>-1", 'unable to parse requirement: values[0][a]: Invalid value: "-1": ' + LABEL_VALUE),
        ("a=b c!", "found 'c', expected: ',' or 'end of string'"),
        ("app=bad$", 'unable to parse requirement: values[0][app]: Invalid value: "bad$": ' + LABEL_VALUE),
        ("app=" + "v" * 64, f'unable to parse requirement: values[0][app]: Invalid value: "{"v" * 64}": '
                            "must be no more than 63 characters"),
        ("/a=b", 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty'),
    ],
)
def test_label_selector_errors(text: str, message: str) -> None:
    assert label_error(text) == message


def test_label_key_prefix_and_length_errors() -> None:
    assert label_error("Example.com/a=b") == (
        'unable to parse requirement: <nil>: Invalid value: "Example.com/a": prefix part a lowercase RFC 1123 '
        "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'example.com', regex used for validation is "
        r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    )
    long_key = "k" * 64
    assert label_error(long_key) == (
        f'unable to parse requirement: <nil>: Invalid value: "{long_key}": name part must be no more than 63 '
        "characters"
    )
    assert label_error("a/b/c=d") == (
        'unable to parse requirement: <nil>: Invalid value: "a/b/c": a valid label key must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
        "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "
        "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    )


def test_several_value_errors_aggregate() -> None:
    assert label_error("a>x-") == (
        "unable to parse requirement: [values[0]: Invalid value: \"x-\": for 'Gt', 'Lt' operators, the value must "
        f'be an integer, values[0][a]: Invalid value: "x-": {LABEL_VALUE}]'
    )


def test_error_in_an_earlier_requirement_wins() -> None:
    assert label_error("a>x,)") == (
        "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be "
        "an integer"
    )


def test_quoted_key_uses_go_quoting() -> None:
    assert label_error('a"b') == 'unable to parse requirement: <nil>: Invalid value: "a\\"b": ' + NAME_PART


def test_label_selector_key_length_counts_utf8_bytes_as_go_len_does() -> None:
    """``content.IsLabelKey`` measures with Go's ``len`` (bytes): 32 two-byte letters are 64 bytes, over 63, though
    only 32 characters; the same check the lab applies to objects' labels."""
    with pytest.raises(SelectorError) as info:
        parse_label_selector("é" * 32 + "=x")
    assert "name part must be no more than 63 characters" in str(info.value)
    assert "name part must consist of alphanumeric characters" in str(info.value)
