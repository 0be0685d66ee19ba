"""The lab's :class:`~observatory.lab.audit.types.Auditor`: policy, event records, backends and subscribers.

:meth:`LabAuditor.begin` decides the request's level by the policy (:func:`.policy.evaluate`), and for any level
above None emits ``RequestReceived`` (unless omitted) and returns a :class:`LabAuditHandle`, whose
:meth:`~LabAuditHandle.started` (long-running requests) and :meth:`~LabAuditHandle.finish` emit ``ResponseStarted``
and ``ResponseComplete`` (or ``Panic``). Every event goes to each backend in the order of :attr:`LabAuditor.backends`
(log first, then webhook, as kube-apiserver unions them), then to each subscriber. A request at level None costs
one policy evaluation and an audit ID (a UUID, or the client's ``Audit-ID`` header, as ``WithAuditInit`` takes it).

:func:`auditor_from_settings` builds it from :class:`~observatory.settings.LabSettings`: the policy file or the
lab's :data:`~.policy.DEFAULT_POLICY`, the log backend when ``audit_log_path`` is set and the webhook backend when
``audit_webhook_config_file`` is. Bad settings raise :class:`AuditConfigError` (the command line exits 2).
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from observatory.lab.audit import backends as backends_module
from observatory.lab.audit.event import EventRecord, panic_status
from observatory.lab.audit.policy import (
    DEFAULT_POLICY,
    Policy,
    PolicyError,
    RequestAuditConfig,
    evaluate,
    load_policy_file,
)
from observatory.lab.audit.types import AuditedRequest, AuditListener, UserInfo
from observatory.lab.encoding import go_json
from observatory.lab.requestinfo import Attributes
from observatory.settings import LabSettings

__all__ = ["AuditConfigError", "LabAuditHandle", "LabAuditor", "attributes_of", "auditor_from_settings",
           "check_settings"]

log = logging.getLogger(__name__)


class AuditConfigError(ValueError):
    """Audit settings kube-apiserver would refuse at start (a bad policy, log format or webhook file)."""


def attributes_of(request: AuditedRequest) -> Attributes:
    """The authorizer attributes the policy matches on, from what the request says of itself."""
    return Attributes(verb=request.verb, resource_request=bool(request.resource),
                      path=request.request_uri.partition("?")[0], namespace=request.namespace, group=request.api_group,
                      version=request.api_version, resource=request.resource, subresource=request.subresource,
                      name=request.name)


def _user(request: AuditedRequest) -> UserInfo | None:
    user = request.requester.user
    return user if user.username else None


class LabAuditHandle:
    """One request being audited at a level above None (see :class:`~.types.AuditHandle`)."""

    __slots__ = ("_auditor", "_finished", "_started", "record")

    def __init__(self, auditor: LabAuditor, record: EventRecord) -> None:
        self._auditor = auditor
        self.record = record
        self._started = False
        self._finished = False

    @property
    def audit_id(self) -> str:
        return self.record.audit_id

    @property
    def level(self) -> str:
        return self.record.level

    def annotate(self, key: str, value: str) -> None:
        """``audit.AddAuditAnnotation``: an annotation on the events after this point."""
        self.record.annotations[key] = value

    def log_request_object(self, obj: Any, *, patch: bool = False) -> None:
        """The request body the handler decoded (see :meth:`EventRecord.log_request_object`)."""
        self.record.log_request_object(obj, patch=patch)

    def started(self, code: int) -> None:
        if self._started or self._finished or not self.record.request.long_running:
            return
        self._started = True
        self.record.set_code(code)
        self._auditor.emit(self.record, "ResponseStarted")

    def finish(self, code: int, response_object: Any = None, *, panic: bool = False) -> None:
        if self._finished:
            return
        self._finished = True
        if panic:
            self.record.response_status = panic_status(str(response_object) if response_object else "panic")
            self._auditor.emit(self.record, "Panic")
            return
        if not self._started:
            if code:
                self.record.log_response(code, response_object)
            else:  # nothing was written: WithAudit fakes the status ("Connection closed early")
                self.record.response_status = {"metadata": {}, "status": "Success",
                                               "message": "Connection closed early", "code": 200}
            if self.record.request.long_running:  # its ResponseStarted is the answer's first line
                self._started = True
                self._auditor.emit(self.record, "ResponseStarted")
        self._auditor.emit(self.record, "ResponseComplete")


class UnauditedHandle:
    """A request at level None: it has an audit ID and nothing else."""

    __slots__ = ("audit_id",)
    level = "None"

    def __init__(self, audit_id: str) -> None:
        self.audit_id = audit_id

    def annotate(self, key: str, value: str) -> None:
        pass

    def log_request_object(self, obj: Any, *, patch: bool = False) -> None:
        pass

    def started(self, code: int) -> None:
        pass

    def finish(self, code: int, response_object: Any = None, *, panic: bool = False) -> None:
        pass


class LabAuditor:
    """The audit pipeline of one lab: ``policy`` and ``backends`` (fed in order), plus subscribers."""

    def __init__(self, policy: Policy = DEFAULT_POLICY,
                 backends: Sequence[backends_module.Backend] = ()) -> None:
        self.policy = policy
        self.backends = list(backends)
        self._listeners: list[AuditListener] = []
        self.emitted = 0
        """Events emitted (after omitStages)."""

    def config(self, request: AuditedRequest, attrs: Attributes | None = None) -> RequestAuditConfig:
        return evaluate(self.policy, attrs or attributes_of(request), _user(request))

    def begin(self, request: AuditedRequest, audit_id: str = "",
              attrs: Attributes | None = None) -> LabAuditHandle | UnauditedHandle:
        """Start auditing ``request`` (see :meth:`~.types.Auditor.begin`); ``audit_id`` is the client's
        ``Audit-ID`` header when it sent one; ``attrs`` its RequestInfo when the caller has it already."""
        audit_id = audit_id or str(uuid.uuid4())
        config = self.config(request, attrs)
        if config.level == "None":
            return UnauditedHandle(audit_id)
        record = EventRecord(audit_id, request, config, request.received or datetime.now(UTC))
        self.emit(record, "RequestReceived")
        if request.request_object is not None:
            record.log_request_object(request.request_object, patch=request.verb == "patch")
        return LabAuditHandle(self, record)

    def failed_authentication(self, request: AuditedRequest, code: int, message: str, audit_id: str) -> None:
        """``WithFailedAuthenticationAudit``: one ``ResponseStarted`` event (no user) whose status carries
        ``message`` (``Authentication failed, attempted: bearer`` or ``..., no credentials provided``)."""
        config = evaluate(self.policy, attributes_of(request), None)
        if config.level == "None":
            return
        record = EventRecord(audit_id, request, config, request.received or datetime.now(UTC))
        record.response_status = {"metadata": {}, "message": message, "code": code}
        self.emit(record, "ResponseStarted")

    def emit(self, record: EventRecord, stage: str) -> None:
        """``processAuditEvent``: drop an omitted stage, else render the event and hand it to every backend in
        order, then to every subscriber. A failing subscriber is logged and kept."""
        if stage in record.config.omit_stages:
            return
        event = record.event(stage, datetime.now(UTC))
        self.emitted += 1
        line = go_json(event) if self.backends else b""
        for backend in self.backends:
            backend.process(event, line)
        for listener in tuple(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("audit subscriber failed on event %s", record.audit_id)

    def subscribe(self, listener: AuditListener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)
        return unsubscribe

    async def close(self) -> None:
        """Flush and close the backends (the webhook sends what it holds, once)."""
        for backend in self.backends:
            try:
                await backend.close()
            except Exception:
                log.exception("closing the audit backend %s", type(backend).__name__)


def check_settings(settings: LabSettings) -> Policy:
    """The policy the settings name (their file, else the default), after checking every audit setting as
    kube-apiserver's ``AuditOptions.Validate`` does. Raises :class:`AuditConfigError`."""
    if settings.audit_log_format != "json":
        if settings.audit_log_format == "legacy":
            raise AuditConfigError('--audit-log-format "legacy" (one line of text per event) is not supported by '
                                   'the lab; use "json", the default')
        raise AuditConfigError(f'invalid audit log format {settings.audit_log_format}, allowed formats are '
                               '"legacy,json"')
    if settings.audit_webhook_mode not in ("batch", "blocking", "blocking-strict"):
        raise AuditConfigError(f'invalid audit webhook mode {settings.audit_webhook_mode}, allowed modes are '
                               '"batch,blocking,blocking-strict"')
    if settings.audit_policy_file is None:
        return DEFAULT_POLICY
    try:
        return load_policy_file(settings.audit_policy_file)
    except PolicyError as exc:
        raise AuditConfigError(f"loading audit policy file: {exc}") from None


def auditor_from_settings(settings: LabSettings) -> LabAuditor:
    """The lab's auditor for ``settings`` (module docstring). Raises :class:`AuditConfigError`."""
    policy = check_settings(settings)
    chosen: list[backends_module.Backend] = []
    if settings.audit_log_path:
        try:
            chosen.append(backends_module.LogBackend(settings.audit_log_path, settings.audit_log_maxage,
                                                     settings.audit_log_maxbackup, settings.audit_log_maxsize))
        except OSError as exc:
            raise AuditConfigError(f"--audit-log-path {settings.audit_log_path}: cannot open the audit log: "
                                   f"{exc.strerror or exc}") from None
    if settings.audit_webhook_config_file:
        try:
            config = backends_module.load_webhook_config(settings.audit_webhook_config_file)
        except backends_module.WebhookConfigError as exc:
            raise AuditConfigError(str(exc)) from None
        chosen.append(backends_module.WebhookBackend(
            config, mode="batch" if settings.audit_webhook_mode == "batch" else "blocking",
            max_batch_size=settings.audit_webhook_batch_max_size,
            max_batch_wait=settings.audit_webhook_batch_max_wait,
            initial_backoff=settings.audit_webhook_initial_backoff))
    return LabAuditor(policy, chosen)
