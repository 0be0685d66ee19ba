"""Fuzzing the lab's HTTP surface: random paths, query parameters, headers and bodies never get a 500 or an answer
that is not a Status, and never change a stored object except through a successful write.

One RBAC lab (TLS, tokens) serves the whole module from its own thread; every request goes over a raw socket, so
odd bytes reach the server as sent. The answers allowed:

* a 2xx (a watch is read only as far as its headers);
* anything else: a ``metav1.Status`` JSON body, ``kind: Status``, ``apiVersion: v1`` and ``code`` equal to the HTTP
  status, never 500 (but kube-apiserver's own 500s without a reason, for errors it passes through unwrapped, see
  :func:`_upstream_500`);
* or a refusal Go's ``net/http`` makes before the apiserver's handlers see the request (:mod:`observatory.lab.gohttp`:
  ``400 Bad Request[: detail]``, ``431 Request Header Fields Too Large``, ``505 HTTP Version Not Supported: ...`` in
  plain text, as Go writes them).

Before and after every request that is not a successful write the test lists every resource type from the store
(on the lab's own loop, so nothing runs meanwhile) and compares, resourceVersion included. ``/lab/faults`` is left
out: it is the lab's switch for injecting failures (500s on purpose), not part of the Kubernetes API.

Budget: the ``ci`` profile (tests/conftest.py, the default) draws a fixed set of examples, derandomized, about
20 s in all on one core (each test about 5 s); ``HYPOTHESIS_PROFILE=explore`` or ``--hypothesis-profile=explore``
draws ten times as many new ones. Each xdist worker that runs tests of this module starts its own lab.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis.errors import InvalidArgument

from observatory.embedded import EmbeddedLab
from observatory.lab import gohttp
from observatory.lab.listing import ListQuery
from observatory.lab.resources import ALL
from observatory.settings import LabSettings
from tests.conftest import API_ONLY
from tests.lab.fuzz_http_requests import build, coherent_writes, raw_requests, reads, writes
from tests.lab.raw_http import Answer, ThreadedLab, exchange
from tests.rbac_fixtures import POLICY, SCENARIO, TOKENS

SCALE = 10 if settings.get_current_profile_name() == "explore" else 1
FUZZ = settings(max_examples=400 * SCALE, deadline=None, suppress_health_check=list(HealthCheck))

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[ThreadedLab]:
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "rbac.yaml").write_text(POLICY)
    (folder / "teams.yaml").write_text(SCENARIO)
    server = EmbeddedLab(LabSettings(rbac=folder / "rbac.yaml", **API_ONLY), scenario=str(folder / "teams.yaml"),
                         kubeconfig_path=folder / "kc" / "kubeconfig")
    with ThreadedLab(server) as threaded:
        yield threaded


@dataclass(frozen=True)
class Dump:
    """Every stored object of every resource type (resource, namespace, name -> its JSON text) and the store's
    resourceVersion."""

    resource_version: int
    objects: dict[tuple[str, str, str], str]


async def _dump(server: EmbeddedLab) -> Dump:
    objects = {}
    for name, rt in ALL.items():
        for obj in server.registry.list(rt, ListQuery()).items:
            meta = obj["metadata"]
            objects[(name, meta.get("namespace", ""), meta["name"])] = json.dumps(obj, sort_keys=True)
    return Dump(server.store.resource_version, objects)


def dump(lab: ThreadedLab) -> Dump:
    return lab.call(_dump)

# -- the property -------------------------------------------------------------------------------------------------


def _go_refusal(answer: Answer) -> bool:
    """Whether the answer is one of Go's connection-level refusals: plain text byte for byte, or the empty 417 of
    ``sendExpectationFailed``."""
    if answer.status == 417:
        return answer.body == b"" and answer.headers.get("connection") == "close"
    if answer.status == 501:
        return answer.raw == gohttp.UNSUPPORTED_TE_WIRE
    line = answer.status_line.removeprefix("HTTP/1.1 ")
    return answer.status in (400, 431, 505) and answer.raw == gohttp.go_wire(answer.status, *_split(line))


def _split(line: str) -> tuple[str, str]:
    text = line.split(" ", 1)[1] if " " in line else ""
    reason, _, detail = text.partition(": ")
    return reason, detail


UPSTREAM_500 = re.compile(
    r"\[?target\.(name|kind): "  # ValidatePodBinding's aggregate (BindingREST.Create: errs.ToAggregate())
    r"|resourceVersion: Invalid value: .*: strconv\.ParseUint: "  # the cacher's ParseResourceVersion
    r"|etcdserver: mvcc: required revision is a future revision$"  # an Exact list from a future revision
    r"|map: .* does not contain declared merge key: "  # strategic merge patch errors passed through
    r"|unknown patch type: ")
"""The messages of the reasonless 500s kube-apiserver v1.34 itself gives for client input, each from an error that is
not a Status (``ErrorToAPIStatus``: code 500, empty reason, ``err.Error()``)."""


def _upstream_500(answer: Answer) -> bool:
    """Whether a 500 is one kube-apiserver itself gives (:data:`UPSTREAM_500`): the aggregate of ``ValidatePodBinding``
    (``target.name: Required value``), an unparsable or future resourceVersion the storage refuses (kubernetes
    issues 139485 and 132358), and the strategic merge patch errors ``interpretStrategicMergePatchError``
    (apiserver ``pkg/endpoints/handlers/patch.go``) passes through. Any other 500, the lab's own last resort
    ``InternalError`` (``Internal error occurred: ...``) first, is a failure."""
    if answer.status != 500 or answer.headers.get("content-type") != "application/json":
        return False
    status = json.loads(answer.body)
    return (status.get("kind") == "Status" and "reason" not in status
            and UPSTREAM_500.match(str(status.get("message", ""))) is not None)


def check(lab: ThreadedLab, data: bytes, method: str) -> Answer:
    before = dump(lab)
    answer = exchange(lab, data)
    with contextlib.suppress(InvalidArgument):  # outside a hypothesis test there is nothing to record
        event(f"{method} {answer.status}")  # the spread of answers, shown by --hypothesis-show-statistics
    assert answer.status != 500 or _upstream_500(answer), answer.raw[:2000]
    if 200 <= answer.status < 300:
        if method not in WRITES:
            assert dump(lab) == before, f"a {method} changed the store"
        return answer
    if not _go_refusal(answer):
        assert answer.headers.get("content-type") == "application/json", answer.raw[:2000]
        status = json.loads(answer.body)
        assert (status.get("kind"), status.get("apiVersion"), status.get("code")) == ("Status", "v1",
                                                                                      answer.status), answer.raw[:2000]
        assert status.get("status") == "Failure", answer.raw[:2000]
    after = dump(lab)
    if method == "DELETE" and after != before:
        # A deletecollection that fails part-way keeps what it deleted (registry Store.DeleteCollection deletes
        # item by item; the first error is the answer): objects may be gone, none added or changed.
        assert all(before.objects.get(key) == text for key, text in after.objects.items()), data[:500]
    else:
        assert after == before, f"{answer.status_line} changed the store: {data[:500]!r}"
    return answer


@FUZZ
@given(reads())
def test_reads_and_deletes_answer_with_a_status_and_change_nothing_unless_they_succeed(lab, case):
    check(lab, case[1], case[0])


@FUZZ
@given(writes())
def test_writes_answer_with_a_status_and_change_nothing_unless_they_succeed(lab, case):
    check(lab, case[1], case[0])


@FUZZ
@given(coherent_writes())
def test_coherent_writes_answer_with_a_status_and_change_nothing_unless_they_succeed(lab, case):
    check(lab, case[1], case[0])


@FUZZ
@given(raw_requests())
def test_odd_bytes_get_gos_refusal_or_a_status(lab, case):
    check(lab, case[1], case[0])


def test_the_fuzz_reaches_the_handlers(lab):
    """The generators are not all refused at the door: a known-good read and writes through the same builder, into a
    namespace of this test's own (the fuzz may have deleted the scenario's)."""
    admin = {"Authorization": b"Bearer " + TOKENS["admin"].encode(), "Content-Type": b"application/json"}
    read = check(lab, build("GET", "/api/v1/pods", "limit=1", admin, b""), "GET")
    assert read.status == 200 and json.loads(read.body)["kind"] == "PodList"
    namespace = json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fz-known"}}).encode()
    assert check(lab, build("POST", "/api/v1/namespaces", "", admin, namespace), "POST").status == 201
    body = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fz-known", "namespace": "fz-known"},
                       "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}}).encode()
    written = check(lab, build("POST", "/api/v1/namespaces/fz-known/pods", "", admin, body), "POST")
    assert written.status == 201


def test_a_bearer_token_that_is_not_utf8_is_unauthorized_in_an_rbac_lab(lab):
    token = b"Bearer \xff\xfe" + TOKENS["admin"].encode()
    answer = check(lab, build("GET", "/api/v1/pods", "", {"Authorization": token}, b""), "GET")
    assert (answer.status, json.loads(answer.body)["message"]) == (401, "Unauthorized")
