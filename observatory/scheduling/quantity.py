"""Kubernetes resource quantities (``100m``, ``8Gi``, ``1e3``), parsed and rounded as apimachinery does.

One port of apimachinery ``pkg/api/resource/quantity.go``, used by the scheduler and by the lab's typed decoder:

* :func:`quantity_error` is the error ``ParseQuantity`` returns (``Quantity.UnmarshalJSON``), with its texts,
  or None for a valid quantity: the lab answers it in a 400, byte for byte;
* :func:`parse` gives a valid quantity's exact value as a :class:`~decimal.Decimal` in base units (number part
  times ``10**exponent`` or ``2**exponent`` of its suffix), cached per raw value (a cluster repeats the same few
  strings thousands of times). A bad value never raises: it comes back as an :class:`InvalidQuantity`, a clear
  error value that callers record and show (the scheduler must not crash on one odd object);
* the two integer views the scheduler uses are ``Value()`` and ``MilliValue()``, both rounded *away from zero*
  (so ``0.5m`` cpu is 1 millicore and ``1.5`` of an extended resource is 2).
"""

from __future__ import annotations

import decimal
import re
from dataclasses import dataclass
from decimal import ROUND_UP, Decimal
from functools import lru_cache
from typing import Any

__all__ = ["LIMIT", "InvalidQuantity", "milli_value", "parse", "quantity_error", "value"]

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


# -- resource.ParseQuantity (apimachinery pkg/api/resource/quantity.go) --------------------------------------------

_QTY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_QTY_NUMERIC = "unable to parse numeric part of quantity"
_QTY_SUFFIX = "unable to parse quantity's suffix"
_DEC_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BIN_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DIGITS = frozenset("0123456789")
_EXACT = decimal.Context(prec=200, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
"""Enough precision that the number part times its suffix's power is exact, as apimachinery's inf.Dec is."""


@dataclass(frozen=True, slots=True)
class _Parsed:
    number: str  # sign, digits and fraction as written ("" when the string is only zeros)
    binary: bool
    exponent: int


def _digits_end(s: str, i: int) -> int:
    while i < len(s) and s[i] in _DIGITS:
        i += 1
    return i


def _parse_quantity_string(s: str) -> _Parsed | str:
    """``ParseQuantity``'s reading of ``s``: number part and suffix, or its error text."""
    if not s:
        return _QTY_FORMAT
    end = len(s)
    pos = 1 if s[0] in "+-" else 0
    while pos < end and s[pos] == "0":  # leading zeros; all zeros is 0
        pos += 1
    if pos >= end:
        return _Parsed("", False, 0)
    i = _digits_end(s, pos)
    num, pos = s[pos:i] or "0", i
    denom = ""
    if pos < end and s[pos] == ".":
        i = _digits_end(s, pos + 1)
        denom, pos = s[pos + 1:i], i
    number, suffix_start = s[:pos], pos
    while pos < end and s[pos] in "eEinumkKMGTP":
        pos += 1
    if pos < end:
        if s[pos] in "+-":
            pos += 1
        if _digits_end(s, pos) < end:
            return _QTY_FORMAT
    suffix = s[suffix_start:]
    if suffix in _DEC_SUFFIXES:
        binary, exponent = False, _DEC_SUFFIXES[suffix]
    elif suffix in _BIN_SUFFIXES:
        binary, exponent = True, _BIN_SUFFIXES[suffix]
    elif len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?[0-9]+", suffix[1:]) \
            and -(1 << 63) <= int(suffix[1:]) < (1 << 63):
        binary, exponent = False, (int(suffix[1:]) + (1 << 31)) % (1 << 32) - (1 << 31)  # int32(parsed)
    else:
        return _QTY_SUFFIX
    # Only the inf.Dec slow path can fail (no digit to read); it runs when the int64 fast path cannot.
    if binary:
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1 if not denom else -1
        scale = 0
    else:
        precision, scale = 18 - len(num) - len(denom), exponent
    fast = precision >= 0 and scale - len(denom) >= -9
    if not fast and not any(c in _DIGITS for c in number):
        return _QTY_NUMERIC
    return _Parsed(number, binary, exponent)


def quantity_error(s: str) -> str | None:
    """The error ``ParseQuantity(s)`` returns, or None when ``s`` is a valid quantity."""
    parsed = _parse_quantity_string(s)
    return parsed if isinstance(parsed, str) else None


def _value(parsed: _Parsed) -> Decimal:
    digits = parsed.number.lstrip("+-")
    if not any(c in _DIGITS for c in digits):  # "", "+", "." and the like: zero
        return Decimal(0)
    number = Decimal(parsed.number)
    if parsed.binary:
        return _EXACT.multiply(number, Decimal(2) ** parsed.exponent)
    return number.scaleb(parsed.exponent, _EXACT)


@lru_cache(maxsize=4096, typed=True)
def _parse_cached(raw: str | int | float) -> Decimal | InvalidQuantity:
    text = raw if isinstance(raw, str) else repr(raw)
    if isinstance(raw, str):
        parsed = _parse_quantity_string(raw)
        if isinstance(parsed, str):
            return InvalidQuantity(text, parsed)
        result = _value(parsed)
    else:  # a JSON number
        result = Decimal(repr(raw)) if isinstance(raw, float) else Decimal(raw)
        if not result.is_finite():
            return InvalidQuantity(text, "not a finite number")
    # apimachinery keeps quantities in int64 counters; far larger values (1e999999999 parses) are clamped to
    # what MilliValue() can hold, so sums never overflow and every node is simply too small for them.
    if result.copy_abs().compare_total(LIMIT) > 0:  # compare_total: no arithmetic, so no Overflow
        return LIMIT if result > 0 else -LIMIT
    return result


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
