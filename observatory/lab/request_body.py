"""What the lab's routes read from a request: the body, content negotiation and query parameters.

Follows kube-apiserver's ``pkg/endpoints/handlers``: the body is read up to the 3 MiB request limit and decoded from
JSON, YAML or protobuf (:mod:`observatory.lab.decoding`, :mod:`observatory.lab.protobuf`); ``dryRun`` accepts only
``All``; ``fieldValidation`` Strict rejects unknown fields and Warn answers them with ``Warning`` headers
(``create.go`` ``addStrictDecodingWarnings``, via :mod:`observatory.lab.schema`); a Table is wanted when ``Accept``
asks for ``as=Table;g=meta.k8s.io`` as kubectl sends it, with ``includeObject`` validated (``response.go``);
integer query parameters fail with ``strconv.ParseInt``'s text. Every refusal is a
:class:`~observatory.lab.errors.StatusError` (reference §2, §6).
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

from observatory.lab import decoding, errors, printing, protobuf, schema

JSON = "application/json"
RAW_BODY_KEY = web.RequestKey("observatory.lab.raw_body", bytes)
"""The body :func:`_read_raw` read, kept on the request for its audit event (lab/audit/http.py)."""
SUPPORTED_BODIES = "application/json, application/yaml, application/vnd.kubernetes.protobuf"


def _wants_table(request: web.Request) -> bool:
    accept = request.headers.get("Accept", "")
    for part in accept.split(","):
        params = {k.strip(): v.strip() for k, _, v in (p.partition("=") for p in part.split(";")[1:])}
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1"):
            return True
    return False


def _include_object(request: web.Request) -> str:
    """``includeObject`` for Table responses, validated before anything is written (400 when invalid)."""
    value = request.query.get("includeObject", "Metadata") or "Metadata"
    message = printing.include_object_error(value)
    if message is not None:
        raise errors.bad_request(message)
    return value


def _dry_run(request: web.Request, options: dict[str, Any] | None = None) -> bool:
    values = list(request.query.getall("dryRun", []))
    body_values = (options or {}).get("dryRun") or []
    if not isinstance(body_values, list):
        raise errors.bad_request("DeleteOptions: dryRun must be a list")
    values += body_values
    for v in values:
        if v != "All":
            raise errors.bad_request(f'unsupported dry run value "{v}"')
    return bool(values)


async def _read_body(request: web.Request, rt_kind: str) -> dict[str, Any]:
    raw = await _read_raw(request)
    if not raw:
        raise errors.bad_request("the body of the request was empty")
    ctype = request.content_type
    if ctype == protobuf.CONTENT_TYPE:
        try:
            body = decoding.sanitize(protobuf.decode(raw))
        except protobuf.ProtobufError as exc:
            raise errors.unsupported_media_type(f"{SUPPORTED_BODIES} ({exc})") from None
    elif ctype in ("application/json", "application/yaml", "application/x-yaml", "application/octet-stream", ""):
        body = decoding.decode(raw, ctype)
    else:
        raise errors.unsupported_media_type(SUPPORTED_BODIES)
    if not isinstance(body, dict):
        raise errors.bad_request(f"the object provided is unrecognized (must be of type {rt_kind})")
    if body.get("metadata") is None:
        body["metadata"] = {}
    if not isinstance(body["metadata"], dict):
        raise errors.bad_request(f"{rt_kind} in version \"v1\" cannot be handled as a {rt_kind}: json: cannot "
                                 f"unmarshal {_json_type(body['metadata'])} into Go struct field "
                                 f"{rt_kind}.metadata of type v1.ObjectMeta")
    return body


async def _read_raw(request: web.Request) -> bytes:
    """The request body, refused with 413 past kube-apiserver's 3 MiB limit before it is all read."""
    if request.content_length is not None and request.content_length > decoding.MAX_BODY_BYTES:
        raise decoding.request_too_large()
    chunks, size = [], 0
    async for chunk in request.content.iter_any():  # the whole body, however many segments it arrives in
        size += len(chunk)
        if size > decoding.MAX_BODY_BYTES:
            raise decoding.request_too_large()
        chunks.append(chunk)
    body = request[RAW_BODY_KEY] = b"".join(chunks)
    return body


def _json_type(value: Any) -> str:
    """Go's name for a JSON value's type in ``json: cannot unmarshal <type> into …``."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(value), "null")


def _field_validation(request: web.Request, kind: str, body: dict[str, Any]) -> CIMultiDict[str]:
    """``fieldValidation``: Strict rejects unknown fields (400), Warn answers with Warning headers, Ignore ignores.
    A kind whose model the lab does not ship (:data:`observatory.lab.schema.KIND_MODELS`) is not field-checked."""
    mode = request.query.get("fieldValidation", "")
    if mode not in ("", "Ignore", "Warn", "Strict"):
        raise errors.bad_request(f"fieldValidation parameter unsupported: {mode}")
    headers: CIMultiDict[str] = CIMultiDict()
    if mode not in ("Warn", "Strict") or kind not in schema.KIND_MODELS:
        return headers
    unknown = schema.unknown_fields(kind, body)
    if unknown and mode == "Strict":
        raise errors.bad_request(schema.strict_decoding_message(kind, unknown))
    for text in schema.warning_texts(unknown):
        # One RFC 7234 Warning header per field, the text quoted with inner quotes escaped, as kube-apiserver sends.
        escaped = text.replace("\\", "\\\\").replace('"', '\\"')
        headers.add("Warning", f'299 - "{escaped}"')
    return headers


def _sanitized_patch(raw: bytes) -> bytes:
    """A patch body re-encoded from its sanitised JSON value; unparsable bytes pass through so the patch module can
    report them with Go's wording. JSON nested too deep to parse at all is refused here with the 400 a body nested
    beyond :data:`decoding.MAX_DEPTH` gets (Go's decoder refuses past 10000 levels: ``exceeded max depth``)."""
    try:
        value = json.loads(raw, parse_constant=decoding.reject_constant)
    except RecursionError:
        raise errors.bad_request(decoding.too_deep_message()) from None
    except ValueError:
        return raw
    return json.dumps(decoding.sanitize(value)).encode()


def _int_param(request: web.Request, key: str) -> int | None:
    text = request.query.get(key, "")
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{text}": invalid syntax') from None
