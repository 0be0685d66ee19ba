"""The one quantity parser: apimachinery's ParseQuantity errors, and the values of what it accepts."""

from __future__ import annotations

from decimal import Decimal

import pytest

from observatory.scheduling.quantity import LIMIT, InvalidQuantity, milli_value, parse, quantity_error

FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SUFFIX = "unable to parse quantity's suffix"


@pytest.mark.parametrize("raw, expected", [
    ("0", Decimal(0)), ("000", Decimal(0)), ("+", Decimal(0)), (".", Decimal(0)), ("-0.0", Decimal(0)),
    ("+1.5Gi", Decimal("1.5") * 2**30), ("-250m", Decimal("-0.25")), ("1Ei", Decimal(2**60)), ("1E", Decimal(10**18)),
    ("5e-2", Decimal("0.05")), ("1.000000001", Decimal("1.000000001")), ("123456789012345678901234567890.5",
                                                                         Decimal("123456789012345678901234567890.5")),
])
def test_values_are_exact(raw, expected):
    assert parse(raw) == expected.min(LIMIT)


@pytest.mark.parametrize("raw, error", [
    ("1K", SUFFIX), ("1ki", SUFFIX), ("1Mb", FORMAT), ("1e3m", FORMAT), ("1.2.3", FORMAT), (" 1", FORMAT),
    ("1 ", FORMAT), ("1_000", FORMAT), ("", FORMAT), ("0x10", FORMAT), ("NaN", FORMAT), ("1e", SUFFIX),
])
def test_what_parse_quantity_refuses_is_an_invalid_quantity_with_its_error(raw, error):
    assert quantity_error(raw) == error
    assert parse(raw) == InvalidQuantity(raw, error)


def test_huge_and_tiny_values_clamp_or_round_away_from_zero():
    assert parse("1e999999999") == LIMIT and parse("-8Ei") == -LIMIT
    assert milli_value(parse("1n")) == 1
