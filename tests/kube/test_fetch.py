"""get_json and list_all: raw one-shot reads with paging and field selectors, errors as ApiError / Unreachable."""

from __future__ import annotations

import json

import pytest

from observatory.kube.connect import connect
from observatory.kube.fetch import ApiError, Unreachable, get_json, list_all
from observatory.lab.kubeconfig import write_kubeconfig
from observatory.lab.resources import CORE_V1
from tests.kube.helpers import closed_port, pod

PODS = CORE_V1["pods"]


async def test_get_json_returns_the_object_without_managed_fields(lab, conn):
    obj = await get_json(conn.api, "/api/v1/namespaces/sched-lab/pods/manual")
    assert (obj["metadata"]["namespace"], obj["metadata"]["name"]) == ("sched-lab", "manual")
    assert "managedFields" not in obj["metadata"]


async def test_a_missing_pod_is_kubectls_not_found(lab, conn):
    with pytest.raises(ApiError) as caught:
        await get_json(conn.api, "/api/v1/namespaces/default/pods/nope")
    # ../shared/k8s-api-reference.md §1.7: Error from server (NotFound): pods "p" not found
    assert (caught.value.status, caught.value.reason) == (404, "NotFound")
    assert caught.value.kubectl() == 'Error from server (NotFound): pods "nope" not found'


async def test_list_all_pages_and_filters(lab, conn):
    for name in ("a", "b"):
        lab.registry.create(PODS, "sched-lab", pod(name))
    bound = pod("bound")
    bound["spec"]["nodeName"] = "pair-worker"
    lab.registry.create(PODS, "sched-lab", bound)
    items, rv = await list_all(conn.api, "/api/v1/namespaces/sched-lab/pods", page_size=1)
    assert sorted(i["metadata"]["name"] for i in items) == ["a", "b", "bound", "manual"] and rv
    assert all("managedFields" not in i["metadata"] for i in items)
    on_nodes, _ = await list_all(conn.api, "/api/v1/pods", field_selector="spec.nodeName!=", page_size=1)
    assert [i["metadata"]["name"] for i in on_nodes] == ["bound"]


async def test_an_expired_continue_token_restarts_the_list(fake):
    api, conn = fake
    page = {"kind": "PodList", "apiVersion": "v1", "metadata": {"continue": "t1", "resourceVersion": "5"},
            "items": [pod("a")]}
    expired = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired", "code": 410,
               "message": "The provided continue parameter is too old to display a consistent list result."}
    whole = {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "9"}, "items": [pod("a"), pod("b")]}
    api.list_script += [(200, {}, page), (410, {}, expired), (200, {}, whole)]
    items, rv = await list_all(conn.api, "/api/v1/pods", page_size=1)
    assert ([i["metadata"]["name"] for i in items], rv) == (["a", "b"], "9")
    assert [qs for _, qs in api.requests] == ["/api/v1/pods?limit=1", "/api/v1/pods?limit=1&continue=t1",
                                              "/api/v1/pods?limit=1"]


async def test_an_error_that_is_not_a_status_keeps_its_text(fake):
    api, conn = fake
    api.list_script.append((503, {}, b"upstream connect error"))
    with pytest.raises(ApiError) as caught:
        await list_all(conn.api, "/api/v1/nodes")
    assert (caught.value.status, caught.value.kubectl()) == (503, "Error from server: upstream connect error")
    api.list_script.append((200, {}, json.dumps([1, 2]).encode()))
    with pytest.raises(ApiError):
        await get_json(conn.api, "/api/v1/nodes/x")


async def test_no_answer_is_unreachable(tmp_path):
    port = closed_port()
    conn = await connect(str(write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")))
    try:
        with pytest.raises(Unreachable) as caught:
            await get_json(conn.api, "/api/v1/nodes", timeout=5)
    finally:
        await conn.close()
    assert caught.value.reason == "refused" and f"127.0.0.1:{port}" in str(caught.value)


async def test_hostile_list_answers_are_errors_not_hangs(fake):
    api, conn = fake
    not_a_list = {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "5"}, "items": {"a": 1}}
    api.list_script.append((200, {}, not_a_list))
    with pytest.raises(ApiError, match="items that are not a list"):
        await list_all(conn.api, "/api/v1/pods")
    looping = {"kind": "PodList", "apiVersion": "v1", "metadata": {"continue": "again", "resourceVersion": "5"},
               "items": [pod("a")]}
    api.list_script += [(200, {}, looping), (200, {}, looping)]
    with pytest.raises(ApiError, match="repeats the continue token"):
        await list_all(conn.api, "/api/v1/pods", page_size=1)
    assert [qs for _, qs in api.requests][-2:] == ["/api/v1/pods?limit=1", "/api/v1/pods?limit=1&continue=again"]


async def test_a_request_that_cannot_be_sent_is_one_sentence_without_the_token(fake):
    """Every request goes through one helper: a failure before anything is sent (here the credential hook) is
    Unreachable in one wording, with the client's token redacted."""
    api, conn = fake
    token = "fake-token-123456"

    async def broken_hook(configuration) -> None:
        raise ValueError(f"cannot refresh {token}")

    conn.api.configuration.refresh_api_key_hook = broken_hook
    with pytest.raises(Unreachable) as caught:
        await get_json(conn.api, "/api/v1/nodes/x")
    assert str(caught.value) == ("The request GET /api/v1/nodes/x could not be sent (ValueError: cannot refresh "
                                 "<redacted>).")
    assert caught.value.reason == "unreachable" and api.requests == []
