"""``metav1.ListOptions`` from a query string, as kube-apiserver decodes, defaults and validates them.

* Decoding (apimachinery ``pkg/runtime/conversion.go``, generated ``Convert_url_Values_To_v1_ListOptions``): the first
  value of each parameter; booleans (``watch``, ``allowWatchBookmarks``, ``sendInitialEvents``) are false only when
  absent, ``0`` or ``false`` in any case, so ``watch=yes`` and ``watch=`` are watches; ``timeoutSeconds`` and ``limit``
  go through ``strconv.ParseInt`` (400 BadRequest ``strconv.ParseInt: parsing "abc": invalid syntax`` or ``...: value
  out of range``), before the selectors are parsed.
* Defaulting (``SetListOptionsDefaults`` with the WatchList feature, on by default in v1.34): a watch from
  resourceVersion ``""`` or ``"0"`` that sets neither sendInitialEvents nor resourceVersionMatch gets
  ``sendInitialEvents=true`` and ``resourceVersionMatch=NotOlderThan``.
* Validation (``pkg/apis/meta/internalversion/validation`` ``ValidateListOptions``), a 422 on
  ``ListOptions.meta.k8s.io``: for lists ``resourceVersionMatch is forbidden unless resourceVersion is provided``,
  ``resourceVersionMatch is forbidden when continue is provided``, ``Unsupported value: "Bogus": supported values:
  "Exact", "NotOlderThan", ""``, ``resourceVersionMatch "exact" is forbidden for resourceVersion "0"``,
  ``sendInitialEvents is forbidden for list``; for watches ``sendInitialEvents requires setting resourceVersionMatch
  to NotOlderThan``, ``resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided``,
  ``supported values: "NotOlderThan"`` and the continue rule.
* resourceVersions are ``strconv.ParseUint`` in base 10: no sign, no ``_``, no spaces (``APIObjectVersioner``). The
  storage error is ``resourceVersion: Invalid value: "1_0": strconv.ParseUint: parsing "1_0": invalid syntax``.
  Watches and lists served from the watch cache pass it through unwrapped, so kube-apiserver v1.34 answers 500 with an
  empty reason (``ErrorToAPIStatus`` of an error that is not a Status, apiserver
  ``pkg/endpoints/handlers/responsewriters/status.go``); lists that go to etcd (``limit`` with a resourceVersion,
  ``Exact``) wrap it as 400 ``invalid resource version: ...``.
* A resourceVersion newer than the store's: from the watch cache, 504 ``Timeout: Too large resource version: 999,
  current: 42`` with cause ``ResourceVersionTooLarge`` / ``Too large resource version`` and ``retryAfterSeconds`` 1
  (``storage.NewTooLargeResourceVersionError``, after the cache waited 3 s; the lab has nothing to wait for); from
  etcd, 500 ``etcdserver: mvcc: required revision is a future revision`` (etcd's ``rpctypes.ErrFutureRev``, passed
  through unwrapped the same way).
  A list with ``continue`` may not also name a resourceVersion other than 0: 400 ``specifying resource version is not
  allowed when using continue``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from observatory.lab import errors
from observatory.lab.selectors import go_quote
from observatory.lab.validation import field
from observatory.lab.validation.field import Cause

_UINT64_MAX = 2 ** 64 - 1
_INT64_MAX = 2 ** 63 - 1
_DIGITS = frozenset("0123456789")
TOO_LARGE_MESSAGE = "Too large resource version"
FUTURE_REVISION = "etcdserver: mvcc: required revision is a future revision"
CONTINUE_WITH_RV = "specifying resource version is not allowed when using continue"


def go_bool(values: Mapping[str, str], key: str) -> bool | None:
    """``Convert_Slice_string_To_Pointer_bool``: None when absent, else False only for ``0``/``false``."""
    if key not in values:
        return None
    return values[key] != "0" and values[key].lower() != "false"


def parse_uint(text: str) -> int | str:
    """``strconv.ParseUint(text, 10, 64)``: the value, or the error text."""
    if not text or any(c not in _DIGITS for c in text):
        return f"strconv.ParseUint: parsing {go_quote(text)}: invalid syntax"
    value = int(text)
    return value if value <= _UINT64_MAX else f"strconv.ParseUint: parsing {go_quote(text)}: value out of range"


def parse_int(text: str) -> int | str:
    """``strconv.ParseInt(text, 10, 64)``: the value, or the error text."""
    digits = text[1:] if text[:1] in "+-" else text
    if not digits or any(c not in _DIGITS for c in digits):
        return f"strconv.ParseInt: parsing {go_quote(text)}: invalid syntax"
    value = int(text)
    if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
        return f"strconv.ParseInt: parsing {go_quote(text)}: value out of range"
    return value


def int_param(values: Mapping[str, str], key: str) -> int | None:
    """An int64 query parameter; 400 BadRequest with ``strconv.ParseInt``'s text when it does not parse."""
    if key not in values:
        return None
    parsed = parse_int(values[key])
    if isinstance(parsed, str):
        raise errors.bad_request(parsed)
    return parsed


@dataclass(frozen=True)
class Options:
    """The decoded, defaulted options that matter past the selectors."""

    watch: bool = False
    resource_version: str = ""
    resource_version_match: str = ""
    send_initial_events: bool | None = None
    allow_watch_bookmarks: bool = False
    timeout_seconds: int | None = None
    limit: int = 0
    continue_token: str = ""


DEFAULT = Options()
"""No options given: a list of everything."""


def decode(values: Mapping[str, str]) -> Options:
    """Decode and default the options (400 for integers that do not parse); selectors are the caller's."""
    timeout = int_param(values, "timeoutSeconds")
    limit = int_param(values, "limit") or 0
    options = Options(watch=bool(go_bool(values, "watch")), resource_version=values.get("resourceVersion", ""),
                      resource_version_match=values.get("resourceVersionMatch", ""),
                      send_initial_events=go_bool(values, "sendInitialEvents"),
                      allow_watch_bookmarks=bool(go_bool(values, "allowWatchBookmarks")), timeout_seconds=timeout,
                      limit=limit, continue_token=values.get("continue", ""))
    if (options.watch and options.send_initial_events is None and not options.resource_version_match
            and options.resource_version in ("", "0")):
        options = Options(**{**options.__dict__, "send_initial_events": True,
                             "resource_version_match": "NotOlderThan"})
    return options


def validation_causes(options: Options) -> list[Cause]:
    """``ValidateListOptions`` (WatchList enabled)."""
    causes: list[Cause] = []
    match, path = options.resource_version_match, "resourceVersionMatch"
    if options.watch:
        if options.send_initial_events is not None and match != "NotOlderThan":
            causes.append(field.forbidden(path, "sendInitialEvents requires setting resourceVersionMatch to "
                                          "NotOlderThan"))
        if match:
            if options.send_initial_events is None:
                causes.append(field.forbidden(path, "resourceVersionMatch is forbidden for watch unless "
                                              "sendInitialEvents is provided"))
            if match != "NotOlderThan":
                causes.append(field.not_supported(path, match, ("NotOlderThan",)))
            if options.continue_token:
                causes.append(field.forbidden(path, "resourceVersionMatch is forbidden when continue is provided"))
        return causes
    if match:
        if not options.resource_version:
            causes.append(field.forbidden(path, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if options.continue_token:
            causes.append(field.forbidden(path, "resourceVersionMatch is forbidden when continue is provided"))
        if match not in ("Exact", "NotOlderThan"):
            causes.append(field.not_supported(path, match, ("Exact", "NotOlderThan", "")))
        if match == "Exact" and options.resource_version == "0":
            causes.append(field.forbidden(path, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if options.send_initial_events is not None:
        causes.append(field.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    return causes


def validate(options: Options) -> None:
    """422 Invalid on ``ListOptions.meta.k8s.io`` when :func:`validation_causes` finds anything."""
    causes = validation_causes(options)
    if causes:
        raise field.invalid_error("ListOptions", "", causes, group="meta.k8s.io")


def storage_rv_error(text: str) -> str | None:
    """The ``APIObjectVersioner.ParseResourceVersion`` error for ``text`` ("" and "0" are fine), or None."""
    if text in ("", "0"):
        return None
    parsed = parse_uint(text)
    return f"resourceVersion: Invalid value: {go_quote(text)}: {parsed}" if isinstance(parsed, str) else None


def check_watch_resource_version(options: Options) -> None:
    """The cacher's ``ParseResourceVersion``: an unparsable resourceVersion is upstream's 500."""
    problem = storage_rv_error(options.resource_version)
    if problem is not None:
        raise errors.unknown(problem)


def too_large(requested: int, current: int) -> errors.StatusError:
    """504 Timeout as ``storage.NewTooLargeResourceVersionError(requested, current, 1)`` builds it."""
    return errors.StatusError(errors.status_failure(
        504, "Timeout", f"Timeout: {TOO_LARGE_MESSAGE}: {requested}, current: {current}",
        {"causes": [{"reason": "ResourceVersionTooLarge", "message": TOO_LARGE_MESSAGE}], "retryAfterSeconds": 1}))


def delegated_to_etcd(options: Options) -> bool:
    """``shouldDelegateList``: Exact, other matches, legacy paging from a resourceVersion, and continue go to etcd."""
    match = options.resource_version_match
    if match == "Exact" or match not in ("", "NotOlderThan"):
        return True
    if not match and options.limit > 0 and options.resource_version not in ("", "0"):
        return True
    return bool(options.continue_token)


def check_list_resource_version(options: Options, current: int) -> None:
    """A list's resourceVersion against the store's current one (see the module docstring)."""
    rv = options.resource_version
    etcd = delegated_to_etcd(options)
    if options.continue_token:
        if rv not in ("", "0"):
            raise errors.bad_request(CONTINUE_WITH_RV)
        return
    problem = storage_rv_error(rv)
    if problem is not None:
        raise errors.bad_request(f"invalid resource version: {problem}") if etcd else errors.unknown(problem)
    if rv in ("", "0"):
        return
    requested = int(rv)
    if requested > current:
        raise errors.unknown(FUTURE_REVISION) if etcd else too_large(requested, current)
