"""``resource.Quantity.String()``: the canonical text kube-apiserver stores and prints for a quantity.

apimachinery ``pkg/api/resource/quantity.go`` ``CanonicalizeBytes`` with ``amount.go``
``AsCanonicalBytes``/``AsCanonicalBase1024Bytes``:

* zero is ``0``;
* a quantity written with a binary suffix (``Ki`` ... ``Ei``) stays binary when it is a whole number of at least
  1024 in magnitude: the value is divided by 1024 while it divides evenly (``1.5Gi`` -> ``1536Mi``,
  ``1024Mi`` -> ``1Gi``); otherwise it is shown as decimal SI (``0.5Ki`` -> ``512``);
* a decimal quantity (no suffix or ``n u m k M G T P E``) is rounded up to nano units, its trailing zeros move
  into an exponent that is then lowered to a multiple of 3 (``1.5`` -> ``1500m``, ``500M`` -> ``500M``,
  ``1000`` -> ``1k``); written in ``e`` notation it keeps that notation (``1e3`` -> ``1e3``).

Used to canonicalise the quantities of stored PersistentVolumeClaims and PersistentVolumes and to print the
``Capacity`` cells, as ``Quantity.String()`` does in the printers.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from observatory.scheduling import quantity

__all__ = ["canonical"]

_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIXES = {0: "", 1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi", 6: "Ei"}


def _format_of(raw: str) -> str:
    """``BinarySI``, ``DecimalExponent`` or ``DecimalSI``, from the suffix as ParseQuantity reads it."""
    text = raw.strip()
    if text.endswith("i") and len(text) >= 2 and text[-2] in "KMGTPE":
        return "BinarySI"
    if "e" in text.lower().lstrip("+-0123456789."):
        return "DecimalExponent"
    return "DecimalSI"


def _decimal(value: Decimal, exponent_notation: bool) -> str:
    """``AsCanonicalBytes`` after rounding up to nano scale, with the SI or ``e`` suffix."""
    nanos = (value * Decimal(10) ** 9).to_integral_value(rounding=ROUND_CEILING if value > 0 else ROUND_FLOOR)
    mantissa, exponent = int(nanos), -9
    while mantissa != 0 and mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3
    mantissa, exponent = mantissa * 10 ** shift, exponent - shift
    if exponent_notation:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    suffix = _DECIMAL_SUFFIXES.get(exponent)
    return f"{mantissa}{suffix}" if suffix is not None else f"{mantissa}e{exponent}"


def canonical(raw: object) -> str:
    """The canonical string of a quantity (``str`` as written, or a JSON number); an invalid one is returned as
    given (validation reports it)."""
    text = raw if isinstance(raw, str) else str(raw)
    value = quantity.parse(raw)
    if not isinstance(value, Decimal):
        return text
    if value == 0:
        return "0"
    fmt = _format_of(text) if isinstance(raw, str) else "DecimalSI"
    if fmt == "BinarySI":
        if -1024 < value < 1024 or value != value.to_integral_value():
            return _decimal(value, False)
        amount, exponent = int(value), 0
        while amount % 1024 == 0 and exponent < 6:
            amount //= 1024
            exponent += 1
        return f"{amount}{_BINARY_SUFFIXES[exponent]}"
    return _decimal(value, fmt == "DecimalExponent")
