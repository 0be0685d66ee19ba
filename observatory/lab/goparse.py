"""The errors of Go's own parsers behind the typed decoder's Time and MicroTime fields, and Go's duration parser.

Reproduces, errors only, Go ``src/time/format.go`` ``time.Parse`` for the RFC3339 and RFC3339Micro layouts (what
``metav1.Time``/``metav1.MicroTime`` ``UnmarshalJSON`` return), plus ``unicode.IsSpace`` as ``strings.TrimSpace``
uses it. :mod:`observatory.lab.gotypes` reports these texts; the Quantity fields' errors are those of
:func:`observatory.scheduling.quantity.quantity_error`, the one port of apimachinery's ``ParseQuantity``.
:func:`parse_duration` is ``time.ParseDuration`` (values and errors), for duration flags such as ``--event-ttl``.
"""

from __future__ import annotations

# time.Parse layouts of metav1.Time and metav1.MicroTime.
_RFC3339 = "2006-01-02T15:04:05Z07:00"
_RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"

# Go's unicode.IsSpace, which strings.TrimSpace uses (Python's str.strip() also strips \x1c-\x1f).
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000"

# -- time.Parse(layout, value) (Go src/time/format.go) for RFC3339 and RFC3339Micro, errors only --------------------

# (prefix, element, layout text) per layout element, as time.nextStdChunk splits the two layouts.
_TIME_CHUNKS = {
    _RFC3339: (("", "year", "2006"), ("-", "month", "01"), ("-", "day", "02"), ("T", "hour", "15"),
               (":", "minute", "04"), (":", "second", "05"), ("", "tz", "Z07:00")),
    _RFC3339_MICRO: (("", "year", "2006"), ("-", "month", "01"), ("-", "day", "02"), ("T", "hour", "15"),
                     (":", "minute", "04"), (":", "second", "05"), ("", "frac", ".000000"), ("", "tz", "Z07:00")),
}


def _time_quote(b: bytes) -> str:
    """time's ``quote``: double quotes, ``\\"`` and ``\\\\`` escaped, every non-ASCII or control byte as ``\\xNN``."""
    out = ['"']
    for c in b:
        if c >= 0x80 or c < 0x20:
            out.append(f"\\x{c:02x}")
        else:
            out.append(("\\" if c in (0x22, 0x5C) else "") + chr(c))
    out.append('"')
    return "".join(out)


def _getnum(s: bytes, fixed: bool) -> tuple[int, bytes] | None:
    if not s[:1].isdigit():
        return None
    if not s[1:2].isdigit():
        return None if fixed else (s[0] - 48, s[1:])
    return (s[0] - 48) * 10 + s[1] - 48, s[2:]


def _atoi(s: bytes) -> int | None:
    neg = s[:1] == b"-"
    if s[:1] in (b"-", b"+"):
        s = s[1:]
    if s and not s.isdigit():
        return None
    number = int(s) if s else 0  # time's leadingInt reads nothing from "" without an error
    return -number if neg else number


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _time_error(text: str, layout: str) -> str | None:
    """The ``*time.ParseError`` text of ``time.Parse(layout, text)``, or None when it parses."""
    value = avalue = text.encode("utf-8")
    year, month, day = 0, -1, -1
    chunks = _TIME_CHUNKS[layout]

    def cannot(layout_elem: str, value_elem: bytes) -> str:
        return (f"parsing time {_time_quote(avalue)} as {_time_quote(layout.encode())}: cannot parse "
                f"{_time_quote(value_elem)} as {_time_quote(layout_elem.encode())}")

    def out_of_range(what: str) -> str:
        return f"parsing time {_time_quote(avalue)}: {what} out of range"

    for index, (prefix, elem, std) in enumerate(chunks):
        if prefix:
            if value[:1] != prefix.encode():
                return cannot(prefix, value)
            value = value[1:]
        hold, bad, range_err = value, False, ""
        if elem == "year":
            if len(value) < 4 or not value[:1].isdigit():
                bad = True
            else:
                parsed_year = _atoi(value[:4])
                value = value[4:]
                bad = parsed_year is None
                year = parsed_year or 0
        elif elem in ("month", "day", "hour", "minute", "second"):
            got = _getnum(value, elem != "hour")
            number = 0
            if got is None:
                bad = True
            else:
                number, value = got
            if elem == "month":
                month = number
                if not bad and not 1 <= number <= 12:
                    range_err = "month"
            elif elem == "day":
                day = number
            elif elem in ("hour", "minute") and number >= (24 if elem == "hour" else 60):
                range_err = elem
            elif elem == "second" and not bad:
                if number >= 60:
                    range_err = "second"
                elif value[:1] in (b".", b",") and value[1:2].isdigit() and chunks[index + 1][1] != "frac":
                    n = 2
                    while value[n:n + 1].isdigit():
                        n += 1
                    value = value[n:]  # a fraction the layout does not have: any number of digits
        elif elem == "frac":
            if len(value) < 7:
                bad = True
            else:
                nanos = _atoi(value[1:7]) if value[:1] in (b".", b",") else None
                bad = nanos is None
                if nanos is not None and nanos < 0:
                    range_err = "fractional second"
                value = value[7:]
        else:  # tz: Z or ±hh:mm
            if value[:1] == b"Z":
                value = value[1:]
            elif len(value) < 6 or value[3:4] != b":":
                bad = True
            else:
                sign, hh, mm, value = value[:1], value[1:3], value[4:6], value[6:]
                hours = _getnum(hh, True)
                minutes = _getnum(mm, True) if hours else None
                bad = hours is None or minutes is None or sign not in (b"+", b"-")
                if hours and hours[0] > 24:
                    range_err = "time zone offset hour"
                if minutes and minutes[0] > 60:
                    range_err = "time zone offset minute"
        if range_err:
            return out_of_range(range_err)
        if bad:
            return cannot(std, hold)
    if value:
        return f"parsing time {_time_quote(avalue)}: extra text: {_time_quote(value)}"
    if not 1 <= day <= _days_in(month, year):
        return out_of_range("day")
    return None


# -- time.ParseDuration (Go src/time/format.go) --------------------------------------------------------------------

_DURATION_UNITS = {"ns": 1, "us": 1_000, "\u00b5s": 1_000, "\u03bcs": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
                   "m": 60_000_000_000, "h": 3_600_000_000_000}
"""time's ``unitMap``: "µs" is both U+00B5 (micro sign) and U+03BC (Greek mu)."""


def parse_duration(text: str) -> int:
    """``time.ParseDuration(text)`` in nanoseconds: a possibly signed sequence of decimal numbers, each with an
    optional fraction and a unit ("300ms", "-1.5h", "2h45m"; units ns, us/µs, ms, s, m, h).

    Raises ValueError with Go's text: ``time: invalid duration "<text>"``, ``time: missing unit in duration
    "<text>"`` or ``time: unknown unit "<unit>" in duration "<text>"`` (quoted by time's ``quote``).
    """
    raw = text.encode("utf-8", "surrogateescape")
    invalid = ValueError(f"time: invalid duration {_time_quote(raw)}")
    s = raw
    neg = False
    if s[:1] in (b"-", b"+"):
        neg = s[:1] == b"-"
        s = s[1:]
    if s == b"0":
        return 0
    if not s:
        raise invalid
    total = 0
    while s:
        if not (s[:1] == b"." or s[:1].isdigit()):
            raise invalid
        digits = len(s) - len(s.lstrip(b"0123456789"))
        whole_text, s = s[:digits], s[digits:]
        whole = 0
        for c in whole_text:  # leadingInt: an overflow past 1<<63 is an invalid duration
            if whole > (1 << 63) // 10:
                raise invalid
            whole = whole * 10 + c - 48
            if whole > 1 << 63:
                raise invalid
        frac, scale, post = 0, 1.0, False
        if s[:1] == b".":
            s = s[1:]
            digits = len(s) - len(s.lstrip(b"0123456789"))
            post = digits > 0
            overflow = False
            for c in s[:digits]:  # leadingFraction: stops gaining precision instead of failing
                if overflow or frac > ((1 << 63) - 1) // 10 or frac * 10 + c - 48 > 1 << 63:
                    overflow = True
                    continue
                frac, scale = frac * 10 + c - 48, scale * 10
            s = s[digits:]
        if not whole_text and not post:
            raise invalid
        end = 0
        while end < len(s) and not (s[end:end + 1] == b"." or s[end:end + 1].isdigit()):
            end += 1
        if end == 0:
            raise ValueError(f"time: missing unit in duration {_time_quote(raw)}")
        unit_text, s = s[:end], s[end:]
        unit = _DURATION_UNITS.get(unit_text.decode("utf-8", "surrogateescape"))
        if unit is None:
            raise ValueError(f"time: unknown unit {_time_quote(unit_text)} in duration {_time_quote(raw)}")
        if whole > (1 << 63) // unit:
            raise invalid
        value = whole * unit
        if frac > 0:
            value += int(float(frac) * (float(unit) / scale))
            if value > 1 << 63:
                raise invalid
        total += value
        if total > 1 << 63:
            raise invalid
    if neg:
        return -total
    if total > (1 << 63) - 1:
        raise invalid
    return total


def flag_duration(flag: str, text: str) -> int:
    """A command-line duration flag's value (``time.ParseDuration``) in nanoseconds, as pflag's ``durationValue``
    reads it. Raises ``argparse.ArgumentTypeError`` with pflag's sentence (``flag.go``: ``invalid argument %q for %q
    flag: %v``) around Go's error."""
    import argparse

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f'invalid argument "{text}" for "{flag}" flag: {exc}') from None
