"""The REST strategy of one kind: what kube-apiserver's ``rest.RESTCreateStrategy``/``RESTUpdateStrategy`` and the
scheme's defaulters do between decoding a body and storing it, for the kinds of :mod:`observatory.lab.kinds`.

The registry (:mod:`observatory.lab.registry`) calls, in upstream's order:

* create (``rest.BeforeCreate``): :meth:`KindStrategy.default` (the scheme's ``SetDefaults_*``), then
  :meth:`~KindStrategy.admit` (mutating admission, with a read-only view of the store), generateName, system
  metadata cleared, :meth:`~KindStrategy.prepare_for_create` (status reset, ``metadata.generation`` 1), then
  ObjectMeta validation and :meth:`~KindStrategy.validate` (422 with the returned causes);
* update (``rest.BeforeUpdate``): :meth:`~KindStrategy.default`, :meth:`~KindStrategy.prepare_for_update`
  (status kept from the stored object, generation bumped when the spec changed), then
  :meth:`~KindStrategy.validate_update`;
* status update (the ``/status`` strategy): the registry keeps everything but ``status`` (and labels and
  annotations), then :meth:`~KindStrategy.prepare_for_status_update` and
  :meth:`~KindStrategy.validate_status_update`.

Causes are ``(type, field, detail)`` triples for :func:`observatory.lab.validation.field.invalid_error`, e.g.
``("FieldValueRequired", "spec.selector", "Required value")``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Protocol

Cause = tuple[str, str, str]


class StoreView(Protocol):
    """What admission may read of the store: ``get`` and ``iter`` as :class:`observatory.lab.store.Store` has."""

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None: ...

    def iter(self, resource: str, namespace: str | None = None,
             after: tuple[str, str, str] | None = None) -> Iterable[dict[str, Any]]: ...


@dataclass(frozen=True)
class Printer:
    """A kind's server-side Table printer (``pkg/printers/internalversion/printers.go``): ``columns`` are the
    TableColumnDefinitions (``{"name","type","format","description","priority"}``, all of them, priority 1 for
    ``-o wide`` only), ``cells(obj, now)`` one row's cells in the same order."""

    columns: tuple[dict[str, Any], ...]
    cells: Callable[[dict[str, Any], datetime], list[Any]]


class KindStrategy:
    """Defaults, admission, create/update preparation and validation of one resource.

    The base class is the generic registry's behaviour for a kind with no rules of its own: nothing defaulted, the
    status reset on create and kept on update when :attr:`has_status`, ``metadata.generation`` kept by
    :attr:`has_generation` kinds, no validation beyond ObjectMeta's (which the registry runs). Subclasses override
    what their upstream strategy does.
    """

    resource: ClassVar[str] = ""
    """The plural resource name (``deployments``), the key of :data:`observatory.lab.kinds.STRATEGIES`."""
    has_status: ClassVar[bool] = True
    """The kind has a ``status`` the main resource may not write (``PrepareForCreate`` clears it)."""
    has_generation: ClassVar[bool] = False
    """``metadata.generation`` is 1 on create and grows by one each time an update changes ``spec``."""
    unconditional_update: ClassVar[bool] = True
    """``AllowUnconditionalUpdate``: a PUT without ``metadata.resourceVersion`` is allowed."""
    printer: ClassVar[Printer | None] = None
    """The kind's Table printer; None prints kube-apiserver's default Table (Name, Created At)."""

    def default(self, obj: dict[str, Any]) -> None:
        """The scheme's defaulting of a decoded body, in place (create and update bodies alike)."""

    def admit(self, obj: dict[str, Any], store: StoreView) -> None:
        """Mutating admission on create, in place."""

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        """``PrepareForCreate``, in place: the status reset, generation 1."""
        if self.has_status:
            obj["status"] = self.initial_status(obj)
        if self.has_generation:
            obj["metadata"]["generation"] = 1

    def initial_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The status a new object starts with (``{}`` unless the kind sets one, e.g. a Namespace's phase)."""
        return {}

    def validate(self, obj: dict[str, Any]) -> list[Cause]:
        """``Validate`` on create: the kind's own rules (ObjectMeta's are the registry's)."""
        return []

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any]) -> None:
        """``PrepareForUpdate``, in place: the stored status kept, the generation bumped on a spec change."""
        if self.has_status:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        if self.has_generation:
            generation = int(old["metadata"].get("generation") or 0)
            if new.get("spec") != old.get("spec"):
                generation += 1
            new["metadata"]["generation"] = generation

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
        """``ValidateUpdate``: the kind's own rules, immutable fields among them."""
        return self.validate(new)

    def prepare_for_status_update(self, new: dict[str, Any], old: dict[str, Any]) -> None:
        """The status strategy's ``PrepareForUpdate``, in place (the registry has already kept spec and metadata)."""

    def validate_status_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
        """The status strategy's ``ValidateUpdate``."""
        return []
