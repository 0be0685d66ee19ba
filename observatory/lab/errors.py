"""``metav1.Status`` errors as kube-apiserver builds them.

Each constructor mirrors one in ``k8s.io/apimachinery/pkg/api/errors/errors.go`` and returns a :class:`StatusError`
whose :attr:`StatusError.status` is the Status dict in upstream JSON field order (kind, apiVersion, metadata,
status, message, reason, details, code), ready to serialise. ``resource`` arguments are GroupResource strings
(``pods``, ``pods/binding``; ``leases.coordination.k8s.io`` for other groups).
"""

from __future__ import annotations

from typing import Any


class StatusError(Exception):
    """An API error carried as the Status object the server will answer with.

    ``status`` is the full Status dict; ``code`` is the HTTP status code; ``headers`` are extra response headers
    (``Retry-After`` for 429).
    """

    def __init__(self, status: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        super().__init__(status.get("message", ""))
        self.status = status
        self.headers = headers or {}

    @property
    def code(self) -> int:
        return int(self.status["code"])

    @property
    def reason(self) -> str:
        return str(self.status.get("reason", ""))

    @property
    def message(self) -> str:
        return str(self.status.get("message", ""))


def status_failure(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """A failure Status dict; empty reason and ``details=None`` are omitted as Go's omitempty does."""
    status: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
    if message:
        status["message"] = message
    if reason:
        status["reason"] = reason
    if details is not None:
        status["details"] = details
    status["code"] = code
    return status


def _details(name: str | None, resource: str, **extra: Any) -> dict[str, Any]:
    """StatusDetails in field order name, group, kind, uid, causes; ``resource`` may carry a group suffix."""
    res, _, group = resource.partition(".")
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    d["kind"] = res
    d.update({k: v for k, v in extra.items() if v})
    return d


def not_found(resource: str, name: str) -> StatusError:
    """404 NotFound: ``pods "x" not found`` (``NewNotFound``)."""
    return StatusError(status_failure(404, "NotFound", f'{resource} "{name}" not found', _details(name, resource)))


def already_exists(resource: str, name: str) -> StatusError:
    """409 AlreadyExists: ``pods "x" already exists`` (``NewAlreadyExists``)."""
    return StatusError(
        status_failure(409, "AlreadyExists", f'{resource} "{name}" already exists', _details(name, resource))
    )


def conflict(resource: str, name: str, err: str) -> StatusError:
    """409 Conflict: ``Operation cannot be fulfilled on pods "x": <err>`` (``NewConflict``)."""
    return StatusError(
        status_failure(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {resource} "{name}": {err}',
            _details(name, resource),
        )
    )


def forbidden(resource: str, name: str, err: str) -> StatusError:
    """403 Forbidden: ``pods "x" is forbidden: <err>``, or ``pods is forbidden: <err>`` without a name
    (``NewForbidden``; admission plugins reach it through ``admission.NewForbidden``)."""
    head = f'{resource} "{name}"' if name else resource
    return StatusError(status_failure(403, "Forbidden", f"{head} is forbidden: {err}", _details(name, resource)))


OPTIMISTIC_LOCK_MESSAGE = "the object has been modified; please apply your changes to the latest version and try again"
"""``OptimisticLockErrorMsg`` from apiserver ``pkg/registry/generic/registry/store.go``."""


def bad_request(message: str) -> StatusError:
    """400 BadRequest with the given text and no details (``NewBadRequest``)."""
    return StatusError(status_failure(400, "BadRequest", message))


def unknown(message: str, code: int = 500) -> StatusError:
    """A non-Status error as ``ErrorToAPIStatus`` reports it: code 500, empty reason, message ``err.Error()``."""
    return StatusError(status_failure(code, "", message))


def invalid(kind: str, name: str, causes: list[tuple[str, str, str]], group: str = "") -> StatusError:
    """422 Invalid as ``errors.NewInvalid`` builds it.

    ``causes`` are ``(type, field, detail)`` triples, e.g. ``("FieldValueRequired", "spec.containers[0].image",
    "Required value")``. The message aggregates their ``field: detail`` texts as ``field.ErrorList.ToAggregate``
    does: one as is, several as ``[a, b]``, identical texts once. ``details.causes`` keeps every cause, its empty
    members left out as ``StatusCause``'s ``omitempty`` does.
    """
    texts: list[str] = []
    for _, field, detail in causes:
        text = f"{field}: {detail}" if field else detail
        if text not in texts:
            texts.append(text)
    qualified = f"{kind}.{group}" if group else kind
    if not texts:
        message = f'{qualified} "{name}" is invalid'
    elif len(texts) == 1:
        message = f'{qualified} "{name}" is invalid: {texts[0]}'
    else:
        message = f'{qualified} "{name}" is invalid: [{", ".join(texts)}]'
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [{k: v for k, v in (("reason", t), ("message", detail), ("field", field)) if v}
                         for t, field, detail in causes]
    return StatusError(status_failure(422, "Invalid", message, details))


def method_not_supported(resource: str, action: str) -> StatusError:
    """405 MethodNotAllowed: ``<action> is not supported on resources of kind "<resource>"``."""
    res, _, group = resource.partition(".")
    details = {"group": group, "kind": res} if group else {"kind": res}
    return StatusError(
        status_failure(405, "MethodNotAllowed", f'{action} is not supported on resources of kind "{resource}"', details)
    )


def method_not_allowed() -> StatusError:
    """405 for an HTTP verb with no route (go-restful's ServiceError via ``NewGenericServerResponse``)."""
    return StatusError(
        status_failure(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})
    )


def path_not_found() -> StatusError:
    """404 for an unknown path, as kube-apiserver's ``serviceErrorHandler`` answers it."""
    return StatusError(status_failure(404, "NotFound", "the server could not find the requested resource", {}))


def expired(message: str) -> StatusError:
    """410 Expired (``NewResourceExpired``); the reason is ``Expired``, not ``Gone``."""
    return StatusError(status_failure(410, "Expired", message))


def unauthorized() -> StatusError:
    """401 Unauthorized, as the authentication filter answers an unauthenticated request."""
    return StatusError(status_failure(401, "Unauthorized", "Unauthorized"))


def unsupported_media_type(content_type: str) -> StatusError:
    """415 UnsupportedMediaType for a patch or body type the server does not accept."""
    return StatusError(
        status_failure(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                       f"accepted media types include: {content_type}")
    )


def internal_error(err: str) -> StatusError:
    """500 InternalError: ``Internal error occurred: <err>`` (``NewInternalError``)."""
    return StatusError(
        status_failure(500, "InternalError", f"Internal error occurred: {err}", {"causes": [{"message": err}]})
    )
