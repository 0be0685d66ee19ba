"""List and watch options as kube-apiserver v1.34 decodes, defaults and validates them.

Exact texts, from apimachinery ``pkg/apis/meta/internalversion/validation/validation.go`` (``ValidateListOptions``),
``pkg/runtime/conversion.go`` (``strconv`` errors of integer parameters), apiserver ``pkg/storage`` (the versioner's
``ParseUint`` error, passed through unwrapped by the watch cache: upstream's 500 with no reason) and
``storage.NewTooLargeResourceVersionError`` (the 504 a real v1.2x cluster answers, quoted in kubernetes-client/java
issue 2190). One lab for the module; most checks are pure unit tests.
"""

from __future__ import annotations

import json

import pytest

from observatory.lab.requestinfo import attributes
from observatory.lab.validation import listoptions
from tests.lab.module_lab import module_http_fixture, module_lab_fixture

module_loop = pytest.mark.asyncio(loop_scope="module")
lab = module_lab_fixture()
http = module_http_fixture()


def status(code: int, message: str, reason: str = "", details: dict | None = None) -> dict:
    out: dict = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message}
    if reason:
        out["reason"] = reason
    if details is not None:
        out["details"] = details
    out["code"] = code
    return out


def invalid(*causes: tuple[str, str, str]) -> dict:
    texts = [f"{field}: {message}" for _, field, message in causes]
    aggregate = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return status(422, f'ListOptions.meta.k8s.io "" is invalid: {aggregate}', "Invalid", {
        "group": "meta.k8s.io", "kind": "ListOptions",
        "causes": [{"reason": r, "message": m, "field": f} for r, f, m in causes]})


async def get(http, path: str) -> tuple[int, dict | bytes]:
    async with http.get(path) as resp:
        raw = await resp.read()
        try:
            return resp.status, json.loads(raw)
        except ValueError:
            return resp.status, raw


# -- pure: Go's parsers -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "error"), [
    ("1_0", 'strconv.ParseUint: parsing "1_0": invalid syntax'),
    ("+5", 'strconv.ParseUint: parsing "+5": invalid syntax'),
    (" 5", 'strconv.ParseUint: parsing " 5": invalid syntax'),
    ("٥", 'strconv.ParseUint: parsing "٥": invalid syntax'),
    ("18446744073709551616", 'strconv.ParseUint: parsing "18446744073709551616": value out of range'),
])
def test_resource_versions_parse_as_strconv_parseuint(text, error):
    assert listoptions.parse_uint(text) == error


def test_int_parameters_parse_as_strconv_parseint():
    assert listoptions.parse_int("+5") == 5
    assert listoptions.parse_int("-5") == -5
    assert listoptions.parse_int("1_0") == 'strconv.ParseInt: parsing "1_0": invalid syntax'
    assert listoptions.parse_int("9223372036854775808") == (
        'strconv.ParseInt: parsing "9223372036854775808": value out of range')


def test_booleans_are_false_only_for_0_and_false():
    assert [listoptions.go_bool({"watch": v}, "watch") for v in ("1", "true", "yes", "", "0", "FALSE", "False")] == [
        True, True, True, True, False, False, False]
    assert listoptions.go_bool({}, "watch") is None


def test_request_info_reads_watch_as_the_decoder_does():
    assert attributes("GET", "/api/v1/pods", {"watch": "yes"}).verb == "watch"
    assert attributes("GET", "/api/v1/pods", {"watch": ""}).verb == "watch"
    assert attributes("GET", "/api/v1/pods", {"watch": "FALSE"}).verb == "list"


# -- over HTTP ----------------------------------------------------------------------------------------------------

@module_loop
async def test_bogus_resource_version_match(http):
    assert await get(http, "/api/v1/pods?resourceVersion=1&resourceVersionMatch=Bogus") == (422, invalid(
        ("FieldValueNotSupported", "resourceVersionMatch",
         'Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""')))


@module_loop
async def test_resource_version_match_needs_a_resource_version(http):
    assert await get(http, "/api/v1/pods?resourceVersionMatch=NotOlderThan") == (422, invalid(
        ("FieldValueForbidden", "resourceVersionMatch",
         "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided")))


@module_loop
async def test_exact_from_zero_and_continue_with_a_match(http):
    assert await get(http, "/api/v1/pods?resourceVersion=0&resourceVersionMatch=Exact") == (422, invalid(
        ("FieldValueForbidden", "resourceVersionMatch",
         'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"')))
    code, body = await get(http, "/api/v1/pods?resourceVersion=5&resourceVersionMatch=Exact&continue=abc")
    assert (code, body["message"]) == (422, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: '
                                       "Forbidden: resourceVersionMatch is forbidden when continue is provided")


@module_loop
async def test_send_initial_events_on_a_list_and_on_a_watch_without_the_match(http):
    assert await get(http, "/api/v1/pods?sendInitialEvents=false") == (422, invalid(
        ("FieldValueForbidden", "sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for list")))
    assert await get(http, "/api/v1/pods?watch=1&sendInitialEvents=true") == (422, invalid(
        ("FieldValueForbidden", "resourceVersionMatch",
         "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")))
    assert await get(http, "/api/v1/pods?watch=1&resourceVersion=5&resourceVersionMatch=Exact") == (422, invalid(
        ("FieldValueForbidden", "resourceVersionMatch",
         "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"),
        ("FieldValueNotSupported", "resourceVersionMatch",
         'Unsupported value: "Exact": supported values: "NotOlderThan"')))


@module_loop
async def test_unparsable_resource_version_on_a_list(http):
    message = 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'
    assert await get(http, "/api/v1/pods?resourceVersion=abc") == (500, status(500, message))
    assert await get(http, "/api/v1/pods?resourceVersion=abc&limit=500") == (
        400, status(400, f"invalid resource version: {message}", "BadRequest"))


@module_loop
@pytest.mark.parametrize(("rv", "query"), [("1_0", "1_0"), ("+5", "%2B5"), ("-1", "-1")])
async def test_watch_resource_versions_go_would_not_parse(http, rv, query):
    message = f'resourceVersion: Invalid value: "{rv}": strconv.ParseUint: parsing "{rv}": invalid syntax'
    assert await get(http, f"/api/v1/pods?watch=1&timeoutSeconds=1&resourceVersion={query}") == (
        500, status(500, message))


@module_loop
async def test_a_negative_timeout_seconds_ends_the_watch_at_once_with_200(http):
    """``ListResource`` passes any non-zero ``timeoutSeconds`` to ``serveWatch`` unchecked, whose ``time.After`` of
    a negative duration fires at once: an empty 200 stream, not a refusal (apiserver handlers/get.go, watch.go)."""
    async with http.get("/api/v1/pods?watch=1&timeoutSeconds=-1") as resp:
        assert resp.status == 200
        assert await resp.read() == b""


@module_loop
async def test_too_large_resource_version_on_a_list(http, lab):
    future = lab.store.resource_version + 1000
    code, body = await get(http, f"/api/v1/pods?resourceVersion={future}")
    assert (code, body) == (504, status(
        504, f"Timeout: Too large resource version: {future}, current: {lab.store.resource_version}", "Timeout",
        {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
         "retryAfterSeconds": 1}))
    assert await get(http, f"/api/v1/pods?resourceVersion={future}&resourceVersionMatch=Exact") == (
        500, status(500, "etcdserver: mvcc: required revision is a future revision"))


@module_loop
async def test_continue_with_a_resource_version(http):
    async with http.get("/api/v1/nodes?limit=1") as resp:
        token = (await resp.json())["metadata"]["continue"]
    assert await get(http, f"/api/v1/nodes?limit=1&continue={token}&resourceVersion=3") == (
        400, status(400, "specifying resource version is not allowed when using continue", "BadRequest"))


@module_loop
async def test_integer_parameters_of_a_list(http):
    assert await get(http, "/api/v1/pods?timeoutSeconds=abc") == (
        400, status(400, 'strconv.ParseInt: parsing "abc": invalid syntax', "BadRequest"))
    assert await get(http, "/api/v1/pods?limit=99999999999999999999") == (
        400, status(400, 'strconv.ParseInt: parsing "99999999999999999999": value out of range', "BadRequest"))
    assert await get(http, "/api/v1/pods?limit=1_0") == (
        400, status(400, 'strconv.ParseInt: parsing "1_0": invalid syntax', "BadRequest"))


@module_loop
async def test_watch_yes_is_a_watch(http, lab):
    rv = lab.store.resource_version
    async with http.get(f"/api/v1/nodes?watch=yes&timeoutSeconds=1&resourceVersion={rv}") as resp:
        assert resp.status == 200
        assert await resp.read() == b""  # a watch from the current version: nothing happened, no list body
