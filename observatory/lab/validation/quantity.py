"""``resource.Quantity`` as validation messages print it: ``Quantity.String()`` of apimachinery
``pkg/api/resource/quantity.go`` (``ParseQuantity`` then ``CanonicalizeBytes``), and its value for comparisons.

A quantity keeps the text it was written in when that text is already canonical (``100m``, ``1Gi``, ``+5``: decimal
numbers of at most 18 digits whose scale is a multiple of 3, that do not end in ``000`` or start with ``0``; binary
numbers whose digits are not a multiple of 8). Otherwise it prints canonically: zero is ``0``; binary quantities of
at least 1024 that are whole numbers as the largest power of 1024 (``1024Mi`` -> ``1Gi``, ``1.5Gi`` -> ``1536Mi``),
smaller or fractional ones as decimal; decimal ones with the exponent lowered to a multiple of 3 and the SI suffix
(``2000m`` -> ``2``, ``0.5`` -> ``500m``, ``1.5`` -> ``1500m``), or ``e<n>`` for numbers written with an exponent.
Values that need more than nanounit precision are rounded away from zero to the nanounit, as ``ParseQuantity`` does.
Callers pass valid quantities (the typed decoder refuses the others with upstream's 400 first).
"""

from __future__ import annotations

import re
from decimal import ROUND_UP, Context, Decimal
from typing import Any

_SYNTAX = re.compile(r"([+-]?)(0*)([0-9]*)(?:\.([0-9]*))?(.*)")
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DEC_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BIN_SUFFIX = {0: "", 1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi", 6: "Ei"}
_MAX = Decimal(2 ** 63 - 1)
_NANO = Decimal("1e-9")
_CTX = Context(prec=400)


def _read(raw: Any) -> tuple[Decimal, str, str | None]:
    """(value, format, kept text or None): format is ``DecimalSI``, ``BinarySI`` or ``DecimalExponent``."""
    text = raw.strip() if isinstance(raw, str) else repr(raw) if isinstance(raw, float) else str(raw)
    match = _SYNTAX.fullmatch(text)
    if match is None:  # not a quantity: callers validate first; treat as zero
        return Decimal(0), "DecimalSI", None
    sign, _, num, denom, suffix = match.groups()
    num, denom = num or "0", denom or ""
    if suffix in _BINARY:
        fmt, exponent = "BinarySI", _BINARY[suffix]
    elif suffix in _DECIMAL:
        fmt, exponent = "DecimalSI", _DECIMAL[suffix]
    else:
        fmt, exponent = "DecimalExponent", int(suffix[1:] or 0)
    digits = Decimal(f"{num}.{denom}" if denom else num)
    base = Decimal(2) ** exponent if fmt == "BinarySI" else Decimal(10) ** exponent
    value = _CTX.multiply(digits, base)
    shifted = num + denom
    kept = None
    if fmt == "BinarySI":
        fast = not denom and 15 - len(num) - int(exponent * 3 / 10) - 1 >= 0
        if fast and int(shifted) & 0x07:
            kept = text
    else:
        scale = exponent - len(denom)
        fast = 18 - len(num) - len(denom) >= 0 and scale >= -9
        if fast and scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
            kept = text
    if not fast:  # the inf.Dec path: rounded up to the nanounit, capped, tiny binary values shown as decimal
        if value != 0 and value != value.quantize(_NANO, rounding=ROUND_UP):
            value = value.quantize(_NANO, rounding=ROUND_UP)
        value = min(value, _MAX)
        if fmt == "BinarySI" and 0 < value < 1:
            fmt = "DecimalSI"
    return (-value if sign == "-" else value), fmt, kept


def value(raw: Any) -> Decimal:
    """The quantity's value in base units (``Cmp`` compares these)."""
    return _read(raw)[0]


def string(raw: Any) -> str:
    """``Quantity.String()``."""
    amount, fmt, kept = _read(raw)
    if kept is not None:
        return kept
    if amount == 0:
        return "0"
    if fmt == "BinarySI" and (-1024 < amount < 1024 or amount != amount.to_integral_value()):
        fmt = "DecimalSI"
    if fmt == "BinarySI":
        number, times = int(amount), 0
        while abs(number) >= 1024 and number % 1024 == 0:
            number, times = number // 1024, times + 1
        return f"{number}{_BIN_SUFFIX[times]}"
    sign, digits, exponent = amount.normalize(_CTX).as_tuple()
    mantissa = int("".join(map(str, digits))) * (-1 if sign else 1)
    exp = int(exponent)
    while exp % 3:
        mantissa, exp = mantissa * 10, exp - 1
    if fmt == "DecimalExponent":
        return f"{mantissa}" + (f"e{exp}" if exp else "")
    return f"{mantissa}{_DEC_SUFFIX.get(exp, '')}"
