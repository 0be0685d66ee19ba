"""Continue tokens read as apiserver ``storage.DecodeContinue`` reads them, every refusal a 400 with upstream's
text as etcd3 ``store.GetList`` wraps it (``invalid continue token: <err>``)."""

from __future__ import annotations

import base64

import pytest

from observatory.lab.errors import StatusError
from observatory.lab.listing import _decode_continue, _encode_continue


def token_of(doc: bytes) -> str:
    return base64.urlsafe_b64encode(doc).decode().rstrip("=")


@pytest.mark.parametrize(("doc", "why"), [
    (b'{"v":"meta.k8s.io/v1","rv":Infinity,"start":"a"}', "invalid character 'I' looking for beginning of value"),
    (b"[" * 5000 + b"]" * 5000, "exceeded max depth"),
    (b'{"v":"meta.k8s.io/v1","rv":1e400,"start":"a"}',
     "json: cannot unmarshal number 1e400 into Go struct field continueToken.rv of type int64"),
    (b'{"v":"meta.k8s.io/v1","rv":"5","start":"a"}',
     "json: cannot unmarshal string into Go struct field continueToken.rv of type int64"),
    (b'{"v":"meta.k8s.io/v1","rv":0,"start":"a"}', "incorrect encoded start resourceVersion (version meta.k8s.io/v1)"),
    (b'{"v":"meta.k8s.io/v1","rv":3,"start":""}', "encoded start key empty (version meta.k8s.io/v1)"),
    (b'{"v":"meta.k8s.io/v1","rv":3,"start":"../key"}', "../key"),
    (b'{"v":"v1","rv":3,"start":"key"}', "server does not recognize this encoded version v1"),
])
def test_bad_continue_tokens_get_storage_decode_continue_texts(doc, why):
    """Cases from apiserver pkg/storage/continue_test.go, and the two that crashed the lab (Infinity, nesting)."""
    with pytest.raises(StatusError) as caught:
        _decode_continue(token_of(doc), "pods")
    assert (caught.value.code, caught.value.message) == (400, f"invalid continue token: continue key is not valid: "
                                                              f"{why}")


def test_continue_keys_match_case_insensitively_and_round_trip():
    assert _decode_continue(token_of(b'{"V":"meta.k8s.io/v1","RV":7,"Start":"ns/name\\u0000"}'), "pods") == (
        7, ("pods", "ns", "name"))
    assert _decode_continue(_encode_continue(9, ("pods", "team-a", "web")), "pods") == (9, ("pods", "team-a", "web"))


