"""Kubernetes resource quantities (``100m``, ``8Gi``, ``1e3``), parsed once and rounded as apimachinery does.

The parsing itself is the ``kubernetes`` client library's ``kubernetes.utils.quantity.parse_quantity``; this module
only wraps it:

* results are cached per raw value (a cluster repeats the same few strings thousands of times);
* a bad value never raises: it comes back as an :class:`InvalidQuantity`, a clear error value that callers record
  and show (the scheduler must not crash on one odd object);
* the two integer views the scheduler uses are those of ``k8s.io/apimachinery pkg/api/resource/quantity.go``:
  ``Value()`` and ``MilliValue()``, both rounded *away from zero* (so ``0.5m`` cpu is 1 millicore and ``1.5`` of an
  extended resource is 2).

``kubernetes`` is imported on first use, not at import time: the package pulls in the whole generated client
(about 0.25 s), which the lab and the UI should not pay for until something is actually scheduled.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_UP, Decimal
from functools import lru_cache
from typing import Any

__all__ = ["LIMIT", "InvalidQuantity", "milli_value", "parse", "value"]

LIMIT = Decimal((2 ** 63 - 1) // 1000)
"""The largest magnitude kept, in base units: MilliValue() of it still fits an int64 (about 9.2e15 cores or
bytes)."""


@dataclass(frozen=True, slots=True)
class InvalidQuantity:
    """A quantity that could not be parsed: ``raw`` as given (``repr`` of non-strings) and the parser's error."""

    raw: str
    error: str

    def __str__(self) -> str:
        return f"invalid quantity {self.raw!r}: {self.error}"


_parse_quantity = None


def _parser():
    global _parse_quantity
    if _parse_quantity is None:
        from kubernetes.utils.quantity import parse_quantity  # deferred: see the module docstring

        _parse_quantity = parse_quantity
    return _parse_quantity


@lru_cache(maxsize=4096, typed=True)
def _parse_cached(raw: str | int | float) -> Decimal | InvalidQuantity:
    text = raw if isinstance(raw, str) else repr(raw)
    # Python's Decimal accepts spellings Kubernetes never does; refuse them before and after the library parses.
    if isinstance(raw, str) and (not raw or raw != raw.strip() or "_" in raw):
        return InvalidQuantity(text, "quantities must match the regular expression "
                                     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    try:
        parsed = _parser()(raw if isinstance(raw, str) else Decimal(repr(raw)) if isinstance(raw, float) else raw)
    except (ValueError, ArithmeticError) as exc:
        return InvalidQuantity(text, str(exc) or type(exc).__name__)
    except Exception as exc:
        return InvalidQuantity(text, f"{type(exc).__name__}: {exc}")
    if not parsed.is_finite():
        return InvalidQuantity(text, "not a finite number")
    # apimachinery keeps quantities in int64 counters; far larger values (1e999999999 parses) are clamped to
    # what MilliValue() can hold, so sums never overflow and every node is simply too small for them.
    if parsed.copy_abs().compare_total(LIMIT) > 0:  # compare_total: no arithmetic, so no Overflow
        return LIMIT if parsed > 0 else -LIMIT
    return parsed


def parse(raw: Any) -> Decimal | InvalidQuantity:
    """``raw`` (a JSON string or number) as an exact :class:`~decimal.Decimal` in base units, or an
    :class:`InvalidQuantity`. ``"100m"`` -> ``Decimal("0.100")``, ``"1Gi"`` -> ``Decimal(1073741824)``."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        return InvalidQuantity(repr(raw), "a quantity must be a string or a number")
    return _parse_cached(raw)


def value(q: Decimal) -> int:
    """apimachinery ``Quantity.Value()``: the integer value, rounded away from zero (bytes, counts)."""
    return int(q.to_integral_value(rounding=ROUND_UP))


def milli_value(q: Decimal) -> int:
    """apimachinery ``Quantity.MilliValue()``: thousandths, rounded away from zero (millicores for cpu)."""
    return int((q * 1000).to_integral_value(rounding=ROUND_UP))
