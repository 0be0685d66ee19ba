"""What the HTTP fuzz test (tests/lab/test_fuzz_http.py) sends: hypothesis strategies for paths, query parameters,
headers and bodies, and whole requests as raw bytes (reads, writes, coherent writes an admin would send, and
requests with bytes no client library would send)."""

from __future__ import annotations

import base64
import json
import urllib.parse
from typing import Any

import yaml
from hypothesis import strategies as st

from observatory.lab.resources import ALL, CORE_V1, GROUP_VERSIONS
from tests.rbac_fixtures import TOKENS

# -- parts of a request -------------------------------------------------------------------------------------------


ODD = st.sampled_from(["", ".", "..", "a b", "a/b", "%", "\x00", "ü", "\U0001f600", "a" * 300, "A", "-a-", "a\tb",
                       "\x7f", "web", "team-a"])
NAMESPACES = st.sampled_from(["default", "team-a", "team-b", "kube-system", "sched-lab", "nope"]) | ODD
NAMES = st.sampled_from(["web", "waiting", "other", "pair-worker", "pair-control-plane", "default", "fz"]) | ODD | \
    st.text(max_size=12)
RESOURCES = st.sampled_from([*CORE_V1, "bindings", "podz", "Pods", "", "services", "configmaps"])
SUBRESOURCES = st.sampled_from(["", "", "status", "binding", "eviction", "log", "exec", "scale", "bogus"])
GROUPS = st.sampled_from([*GROUP_VERSIONS, "apps/v1", "storage.k8s.io/v2", "bogus/v1", "events.k8s.io",
                          "coordination.k8s.io/v1beta1"])


def _segment(draw: st.DrawFn, text: str) -> str:
    """A path segment percent-encoded the usual way, or every byte of it, or (rarely) not at all."""
    how = draw(st.sampled_from(["quote", "quote", "quote", "all", "raw"]))
    if how == "all":
        return "".join(f"%{b:02X}" for b in text.encode())
    if how == "raw" and text.isascii() and text.isprintable() and " " not in text:
        return text
    return urllib.parse.quote(text, safe="")


REAL_NAMESPACES = st.sampled_from(["team-a", "team-a", "team-b", "default", "kube-system"])
REAL_NAMES = st.sampled_from(["web", "waiting", "other", "fz", "fz-1", "pair-worker", "team-a", "default"])


@st.composite
def real_paths(draw: st.DrawFn) -> str:
    """A well-formed path of a resource the lab serves: collection, object or subresource."""
    rt = draw(st.sampled_from(sorted(ALL.values(), key=lambda r: (r.api_version, r.name))))
    prefix = "/api/v1" if rt.api_version == "v1" else f"/apis/{rt.api_version}"
    ns = f"/namespaces/{draw(REAL_NAMESPACES)}" if rt.namespaced and draw(st.integers(0, 4)) else ""
    path = f"{prefix}{ns}/{rt.name}"
    if draw(st.booleans()) and (ns or not rt.namespaced):
        path += "/" + draw(REAL_NAMES)
        if rt.subresources and draw(st.booleans()):
            path += "/" + draw(st.sampled_from(sorted(rt.subresources)))
    return path


@st.composite
def paths(draw: st.DrawFn) -> str:
    """Real API paths, as they are or mutated (group/version, namespace, resource, name, subresource, encoding, dot
    segments, slashes), and the discovery, version, health and OpenAPI paths."""
    if draw(st.integers(0, 1)) == 0:
        return draw(real_paths())
    if draw(st.integers(0, 5)) == 0:
        return draw(st.sampled_from(["/", "/version", "/healthz", "/livez", "/readyz", "/api", "/api/", "/apis",
                                     "/apis/storage.k8s.io", "/openapi/v2", "/openapi/v3", "/openapi/v3/api/v1",
                                     "/api/v1", "/apis/coordination.k8s.io/v1", "/metrics", "/lab", "//api/v1"]))
    prefix = "/api/v1" if draw(st.booleans()) else f"/apis/{draw(GROUPS)}"
    parts: list[str] = []
    if draw(st.booleans()):
        parts += ["namespaces", draw(NAMESPACES)]
    parts.append(draw(RESOURCES) if prefix == "/api/v1" else draw(st.sampled_from(
        [*{r for table in GROUP_VERSIONS.values() for r in table}, "pods", "bogus"])))
    if draw(st.booleans()):
        parts.append(draw(NAMES))
        sub = draw(SUBRESOURCES)
        if sub:
            parts.append(sub)
    path = prefix + "".join("/" + _segment(draw, p) for p in parts)
    mutation = draw(st.sampled_from(["none", "none", "none", "trailing", "dot", "dotdot", "double", "extra"]))
    if mutation == "trailing":
        path += "/"
    elif mutation == "dot":
        path = path.replace("/v1/", "/v1/./", 1)
    elif mutation == "dotdot":
        path += "/../" + draw(st.sampled_from(["pods", "x", ".."]))
    elif mutation == "double":
        path = path.replace("/", "//", 2)
    elif mutation == "extra":
        path += "/" + _segment(draw, draw(NAMES))
    return path


QUERY_VALUES: dict[str, st.SearchStrategy[str]] = {
    "labelSelector": st.sampled_from(["", "a=b", "a in (x,y)", "!a", "a!=", "=", "a==b==c", "a in (", "a,b", "ü=1",
                                      "app notin ()", "x" * 70 + "=1"]),
    "fieldSelector": st.sampled_from(["", "metadata.name=web", "spec.nodeName=", "status.phase!=Running",
                                      "bogus=1", "metadata.name", "metadata.namespace==team-a", "spec.nodeName=a,b=c",
                                      "involvedObject.name=web", "type=Normal"]),
    "limit": st.sampled_from(["", "0", "1", "2", "-1", "abc", "1e3", "99999999999999999999", " 1"]),
    "continue": st.sampled_from(["", "abc", "!!", "e30", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6SW5maW5pdHl9"]) |
    st.builds(lambda doc: base64.urlsafe_b64encode(json.dumps(doc).encode()).decode().rstrip("="),
              st.fixed_dictionaries({"v": st.sampled_from(["meta.k8s.io/v1", "v2"]),
                                     "rv": st.integers(-5, 2**70) | st.floats(allow_nan=False) | st.text(max_size=3),
                                     "start": st.sampled_from(["", "team-a/web\x00", "../x", "a//b", "/"])})),
    "resourceVersion": st.sampled_from(["", "0", "1", "5", "abc", "-1", "99999999999", "1_0", "+5", "1.5", " 1"]),
    "resourceVersionMatch": st.sampled_from(["", "NotOlderThan", "Exact", "Bogus", "notolderthan"]),
    "watch": st.sampled_from(["", "1", "true", "0", "false", "yes", "True"]),
    "timeoutSeconds": st.sampled_from(["", "0", "1", "-1", "abc", "99999999999999999999"]),
    "dryRun": st.sampled_from(["", "All", "Bogus", "all"]),
    "fieldManager": st.sampled_from(["", "fuzz", "x" * 200, "\x00", "ü"]),
    "propagationPolicy": st.sampled_from(["", "Foreground", "Background", "Orphan", "Bogus"]),
    "gracePeriodSeconds": st.sampled_from(["", "0", "30", "-1", "abc"]),
    "fieldValidation": st.sampled_from(["", "Strict", "Warn", "Ignore", "Bogus"]),
    "includeObject": st.sampled_from(["", "None", "Object", "Metadata", "Bogus"]),
    "allowWatchBookmarks": st.sampled_from(["", "true", "junk"]),
    "sendInitialEvents": st.sampled_from(["", "true", "false", "junk"]),
    "pretty": st.sampled_from(["", "true", "junk"]),
    "force": st.sampled_from(["", "true", "junk"]),
}


@st.composite
def queries(draw: st.DrawFn) -> str:
    keys = draw(st.lists(st.sampled_from(sorted(QUERY_VALUES)), max_size=4, unique=True))
    pairs = [(k, draw(QUERY_VALUES[k])) for k in keys]
    if ("watch", "") not in pairs and any(k == "watch" for k, _ in pairs):
        pairs.append(("timeoutSeconds", "1"))  # a watch that gets through ends by itself
    if draw(st.integers(0, 9)) == 0:
        pairs.append((draw(st.text(max_size=6)), draw(st.text(max_size=6))))
    return urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote) if pairs else ""


CONTENT_TYPES = st.sampled_from([
    None, "application/json", "application/json", "application/yaml", "application/vnd.kubernetes.protobuf",
    "application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json",
    "application/apply-patch+yaml", "text/plain", "", "application/json; charset=latin1", "multipart/form-data",
    "application/x-www-form-urlencoded", "junk/\x01", "application/json;;;"])
ACCEPTS = st.sampled_from([
    None, "application/json", "application/json;as=Table;v=v1;g=meta.k8s.io",
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", "application/vnd.kubernetes.protobuf",
    "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", "*/*", "text/html", "junk",
    "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", "application/yaml", ""])
AUTHORIZATIONS = st.sampled_from([
    *[b"Bearer " + TOKENS["admin"].encode()] * 30, b"Bearer " + TOKENS["alice"].encode(),
    b"Bearer " + TOKENS["alice"].encode(), None, b"Bearer ", b"Bearer  x", b"Basic YTpi", b"Bearer \xff\xfe\x80",
    b"bearer " + TOKENS["admin"].encode(), b"Bearer " + b"x" * 5000, b"Bearer \xc3\x28" + TOKENS["admin"].encode()])

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False) |
    st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12)

POD_FIELDS = [("metadata", "name"), ("metadata", "namespace"), ("metadata", "labels"), ("metadata", "annotations"),
              ("metadata", "resourceVersion"), ("metadata", "uid"), ("metadata", "generateName"),
              ("metadata", "finalizers"), ("metadata", "ownerReferences"), ("metadata", "deletionTimestamp"),
              ("metadata", "creationTimestamp"), ("spec", "containers"), ("spec", "nodeName"),
              ("spec", "schedulerName"), ("spec", "priority"), ("spec", "priorityClassName"), ("spec", "tolerations"),
              ("spec", "affinity"), ("spec", "nodeSelector"), ("spec", "volumes"), ("spec", "schedulingGates"),
              ("spec", "overhead"), ("status",), ("kind",), ("apiVersion",), ("metadata",), ("spec",)]


@st.composite
def pods(draw: st.DrawFn) -> dict[str, Any]:
    """A valid pod, with up to three fields replaced by random JSON values."""
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": draw(st.sampled_from(["fz", "fz-1", "web"])), "namespace": "team-a",
                                        "labels": {"app": "fz"}},
                           "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                                    "resources": {"requests": {"cpu": "100m"}}}]}}
    for path in draw(st.lists(st.sampled_from(POD_FIELDS), max_size=3)):
        target = pod
        for key in path[:-1]:
            if not isinstance(target.get(key), dict):
                target[key] = {}
            target = target[key]
        target[path[-1]] = draw(JSON_VALUES | st.sampled_from(["-1", "1e400", "a b", "\x1b[2J", "x" * 300]))
    return pod


PATCHES = st.one_of(
    st.lists(st.fixed_dictionaries({
        "op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
        "path": st.sampled_from(["/metadata", "/metadata/name", "/metadata/labels/a", "/spec/containers/0", "/",
                                 "/spec/containers/-", "/spec/nodeName", "", "/status", "x", "/spec/containers/9"]),
        "value": JSON_VALUES, "from": st.sampled_from(["/metadata/labels", "/spec", "/nope"])}), max_size=3),
    st.dictionaries(st.sampled_from(["metadata", "spec", "status", "$patch", "kind", "apiVersion"]),
                    JSON_VALUES | st.just("delete") | st.just({"$patch": "delete"}), max_size=3),
)

RAW_BODIES = st.sampled_from([
    b"", b"{", b"[" * 20000 + b"]" * 20000, b'{"a":' * 3000 + b"1" + b"}" * 3000, b"1e999",
    b"123456789012345678901234567890",
    b"NaN", b'{"metadata":{"name":"x"},"spec":Infinity}', b"\xff\xfe\x00", b"a: &a [*a]", b"!!binary aGk=",
    b"!!python/object:os.system {}", b'{"apiVersion":"v1","kind":"Pod","metadata":"x"}', b"null", b"[]", b'"s"',
    b"a: [" * 200, b'{"kind":"Status"}', b"\x0a\x03\x6b\x38\x73"])


def _encode(value: Any, content_type: str | None) -> bytes:
    if content_type in ("application/yaml", "application/apply-patch+yaml"):
        return yaml.safe_dump(value).encode()
    return json.dumps(value).encode()


@st.composite
def bodies(draw: st.DrawFn, content_type: str | None) -> bytes:
    kind = draw(st.sampled_from(["pod", "pod", "patch", "json", "raw"]))
    if kind == "pod":
        return _encode(draw(pods()), content_type)
    if kind == "patch":
        return _encode(draw(PATCHES), content_type)
    if kind == "json":
        return _encode(draw(JSON_VALUES), content_type)
    return draw(RAW_BODIES | st.binary(max_size=200))  # random bytes: protobuf, YAML and JSON decoders meet junk



# -- whole requests -----------------------------------------------------------------------------------------------


def build(method: str, path: str, query: str, headers: dict[str, bytes], body: bytes) -> bytes:
    target = (path + ("?" + query if query else "")).encode("utf-8", "surrogateescape")
    lines = [method.encode() + b" " + target + b" HTTP/1.1", b"Host: 127.0.0.1"]
    lines += [name.encode() + b": " + value for name, value in headers.items()]
    if body or method in ("POST", "PUT", "PATCH"):
        lines.append(b"Content-Length: " + str(len(body)).encode())
    lines.append(b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def _headers(draw: st.DrawFn, content_type: str | None) -> dict[str, bytes]:
    headers: dict[str, bytes] = {}
    auth = draw(AUTHORIZATIONS)
    if auth is not None:
        headers["Authorization"] = auth
    accept = draw(ACCEPTS)
    if accept is not None:
        headers["Accept"] = accept.encode("latin-1")
    if content_type is not None:
        headers["Content-Type"] = content_type.encode("latin-1")
    if draw(st.integers(0, 7)) == 0:
        headers[draw(st.sampled_from(["X-Junk", "User-Agent", "Impersonate-User", "Audit-ID", "Expect"]))] = draw(
            st.binary(max_size=20).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b"")))
    return headers


@st.composite
def reads(draw: st.DrawFn) -> tuple[str, bytes]:
    method = draw(st.sampled_from(["GET"] * 6 + ["DELETE"] * 3 + ["OPTIONS", "CONNECT", "TRACE", "get", "BREW"]))
    headers = _headers(draw, draw(st.sampled_from([None, None, "application/json", "junk"])))
    body = draw(st.sampled_from([b"", b"", b"", b"{}", b'{"gracePeriodSeconds":"x"}', b'{"dryRun":"All"}',
                                 b'{"preconditions":{"uid":1}}', b"[", b'{"propagationPolicy":5}']))
    return method, build(method, draw(paths()), draw(queries()), headers, body)


@st.composite
def writes(draw: st.DrawFn) -> tuple[str, bytes]:
    method = draw(st.sampled_from(["POST", "POST", "PUT", "PATCH", "PATCH"]))
    content_type = draw(CONTENT_TYPES)
    headers = _headers(draw, content_type)
    return method, build(method, draw(paths()), draw(queries()), headers, draw(bodies(content_type)))


ADMIN = {"Authorization": b"Bearer " + TOKENS["admin"].encode()}
OBJECT_TYPES = st.sampled_from([None, "application/json", "application/json", "application/yaml"])
PATCH_TYPES = st.sampled_from(["application/json-patch+json", "application/merge-patch+json",
                               "application/strategic-merge-patch+json", "application/apply-patch+yaml"])


@st.composite
def coherent_writes(draw: st.DrawFn) -> tuple[str, bytes]:
    """Writes an admin would send to objects that exist, with the body the route expects, then mutated: what reaches
    admission, validation and patch application rather than routing."""
    pod = draw(pods())
    what = draw(st.sampled_from(["create", "create", "update", "status", "patch", "patch", "bind", "node"]))
    if what in ("create", "update", "status"):
        content_type = draw(OBJECT_TYPES)
        name = "web" if what != "create" else pod["metadata"].get("name") if isinstance(pod.get("metadata"), dict) \
            else "fz"
        path = "/api/v1/namespaces/team-a/pods" + ("" if what == "create" else f"/{name}")
        if what == "status":
            path += "/status"
        method = "POST" if what == "create" else "PUT"
        if what != "create" and isinstance(pod.get("metadata"), dict):
            pod["metadata"]["name"] = "web"
        body = _encode(pod, content_type)
    elif what == "patch":
        method, content_type = "PATCH", draw(PATCH_TYPES)
        path = "/api/v1/namespaces/team-a/pods/" + draw(st.sampled_from(["web", "waiting"])) + draw(
            st.sampled_from(["", "", "/status"]))
        body = _encode(draw(PATCHES), content_type)
    elif what == "bind":
        method, content_type = "POST", "application/json"
        path = "/api/v1/namespaces/team-a/pods/waiting/binding"
        binding: dict[str, Any] = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "waiting"},
                                   "target": {"kind": "Node", "name": "pair-worker"}}
        for key in draw(st.lists(st.sampled_from(["metadata", "target", "kind", "apiVersion"]), max_size=2)):
            binding[key] = draw(JSON_VALUES)
        body = _encode(binding, content_type)
    else:
        method, content_type = "POST", "application/json"
        path = "/api/v1/nodes"
        node: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "fz-node"},
                                "spec": {}, "status": {"capacity": {"cpu": "1"}}}
        for key in draw(st.lists(st.sampled_from(["metadata", "spec", "status"]), max_size=2)):
            node[key] = draw(JSON_VALUES)
        body = _encode(node, content_type)
    headers = dict(ADMIN)
    if content_type is not None:
        headers["Content-Type"] = content_type.encode()
    return method, build(method, path, draw(st.sampled_from(["", "", "dryRun=All", "fieldValidation=Strict",
                                                             "fieldManager=fz"])), headers, body)


@st.composite
def raw_requests(draw: st.DrawFn) -> tuple[str, bytes]:
    """Requests with bytes no client library would send: raw non-ASCII and control bytes in the request line and
    header values, odd versions, duplicate headers, bad lengths."""
    method, data = draw(st.one_of(reads(), writes()))
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    mutation = draw(st.sampled_from(["target", "version", "header", "duplicate", "length", "chunked"]))
    if mutation == "target":
        junk = draw(st.binary(min_size=1, max_size=6).map(lambda b: b.replace(b" ", b"").replace(b"\r", b"")
                                                          .replace(b"\n", b"")))
        verb, target, version = lines[0].split(b" ", 2)
        lines[0] = verb + b" " + target + junk + b" " + version
    elif mutation == "version":
        lines[0] = lines[0].rsplit(b" ", 1)[0] + b" " + draw(st.sampled_from(
            [b"HTTP/1.0", b"HTTP/2.0", b"HTTP/0.9", b"HTTP/1.2", b"HTTP/9", b"JUNK"]))
    elif mutation == "header":
        lines.insert(1, draw(st.sampled_from([b"X-A: \x01", b"X-A: a\x7fb", b"Bad Name: x", b": empty", b"X-A:\xff"])))
    elif mutation == "duplicate":
        lines.append(draw(st.sampled_from([b"Host: other", b"Content-Type: text/plain",
                                           b"Authorization: Bearer " + TOKENS["alice"].encode()])))
    elif mutation == "length":
        lines = [line for line in lines if not line.startswith(b"Content-Length")]
        lines.append(b"Content-Length: " + draw(st.sampled_from([b"-1", b"abc", b"1, 2", b"0x10", b"+1"])))
    else:
        lines = [line for line in lines if not line.startswith(b"Content-Length")]
        lines.append(b"Transfer-Encoding: " + draw(st.sampled_from([b"chunked", b"gzip", b"bogus", b"gzip, chunked"])))
        body = (f"{len(body):x}\r\n".encode() + body + b"\r\n" if body else b"") + b"0\r\n\r\n"
    return method, b"\r\n".join(lines) + b"\r\n\r\n" + body
