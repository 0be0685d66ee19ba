"""Event TTL: each Event is deleted ``--event-ttl`` after its last write, as its etcd lease runs out, and the flag
parses a Go duration as kube-apiserver's does (``time.ParseDuration``, cases from Go's ``src/time/time_test.go``).

A fake clock drives :class:`~observatory.lab.eventttl.EventTTL`; nothing here sleeps.
"""

from __future__ import annotations

import pytest

from observatory.cli import build_parser
from observatory.lab.eventttl import EventTTL
from observatory.lab.goparse import parse_duration
from observatory.lab.store import Store

SECOND = 1_000_000_000
MINUTE, HOUR = 60 * SECOND, 3600 * SECOND


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def event(name: str, ns: str = "default", **fields) -> dict:
    return {"metadata": {"name": name, "namespace": ns}, "involvedObject": {"kind": "Pod", "name": "p"},
            "reason": "Scheduled", "message": "m", "count": 1, **fields}


def names(store: Store) -> list[str]:
    return [e["metadata"]["name"] for e in store.iter("events")]


def test_an_event_is_deleted_ttl_after_its_last_write_and_watchers_see_deleted():
    store, clock = Store(), Clock()
    ttl = EventTTL(store, 3600, clock=clock)
    ttl.start()
    watcher = store.watch("events", None, None, None)
    a = store.create("events", event("a"))
    clock.now += 1800
    store.create("events", event("b"))
    clock.now += 1200
    store.update("events", {**a, "count": 2})  # a's lease starts again at this write
    clock.now += 2400  # 3600 s after b was written, 2400 s after a's update
    assert ttl.expire() == clock.now + 1200 and names(store) == ["a"]
    clock.now += 1199.5
    assert ttl.expire() is not None and names(store) == ["a"]
    clock.now += 0.5
    assert ttl.expire() is None and names(store) == [] and ttl.expired == 2
    types = []
    while not watcher.queue.empty():
        change = watcher.queue.get_nowait()
        types.append((change.type, change.obj["metadata"]["name"]))
    assert types == [("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b"), ("DELETED", "a")]
    ttl.stop()


def test_other_resources_and_deleted_events_are_left_alone():
    store, clock = Store(), Clock()
    ttl = EventTTL(store, 60, clock=clock)
    ttl.start()
    store.create("pods", {"metadata": {"name": "p", "namespace": "default"}})
    store.create("events", event("gone"))
    store.delete("events", "default", "gone")
    recreated = store.create("events", event("gone"))
    assert ttl.pending == 1
    clock.now += 60
    ttl.expire()
    assert store.get("pods", "default", "p") is not None and names(store) == []
    assert int(store.resource_version) == int(recreated["metadata"]["resourceVersion"]) + 1  # one delete, the last


def test_events_stored_before_start_count_from_the_newest_time_they_carry():
    store, clock = Store(), Clock(now=1_800_000_000.0)  # 2027-01-15T08:00:00Z
    store.create("events", event("old", lastTimestamp="2027-01-15T06:00:00Z"))  # two hours before now
    store.create("events", event("recent", eventTime="2027-01-15T07:30:00.000000Z",
                                 lastTimestamp="2027-01-15T06:00:00Z"))
    store.create("events", event("series", series={"count": 3, "lastObservedTime": "2027-01-15T07:59:00.000000Z"}))
    ttl = EventTTL(store, 3600, clock=clock)
    ttl.start()
    assert ttl.expire() is not None
    assert sorted(names(store)) == ["recent", "series"]
    clock.now += 1800
    ttl.expire()
    assert names(store) == ["series"]


@pytest.mark.parametrize(("text", "nanoseconds"), [
    ("0", 0), ("5s", 5 * SECOND), ("30s", 30 * SECOND), ("1478s", 1478 * SECOND), ("-5s", -5 * SECOND),
    ("+5s", 5 * SECOND), ("-0", 0), ("+0", 0), ("5.0s", 5 * SECOND), ("5.6s", 5600 * 1_000_000),
    ("5.s", 5 * SECOND), (".5s", 500 * 1_000_000), ("1.004s", 1004 * 1_000_000), ("10ns", 10), ("11us", 11_000),
    ("12µs", 12_000), ("12μs", 12_000), ("13ms", 13 * 1_000_000), ("15m", 15 * MINUTE), ("16h", 16 * HOUR),
    ("3h30m", 3 * HOUR + 30 * MINUTE), ("10.5s4m", 4 * MINUTE + 10 * SECOND + 500_000_000),
    ("-2m3.4s", -(2 * MINUTE + 3 * SECOND + 400_000_000)), ("1h2m3s4ms5us6ns", HOUR + 2 * MINUTE + 3 * SECOND +
                                                             4_000_000 + 5_000 + 6),
    ("39h9m14.425s", 39 * HOUR + 9 * MINUTE + 14 * SECOND + 425_000_000), ("52763797000ns", 52763797000),
    ("0.3333333333333333333h", 20 * MINUTE), ("9007199254740993ns", (1 << 53) + 1),
    ("9223372036854775807ns", (1 << 63) - 1), ("9223372036854775.807us", (1 << 63) - 1),
    ("9223372036s854ms775us807ns", (1 << 63) - 1), ("-9223372036854775808ns", -(1 << 63)),
    ("-9223372036854775.808us", -(1 << 63)), ("-2562047h47m16.854775808s", -(1 << 63)),
    ("0.100000000000000000000h", 6 * MINUTE),
    ("0.830103483285477580700h", 49 * MINUTE + 48 * SECOND + 372539827),
])
def test_parse_duration_values(text, nanoseconds):
    assert parse_duration(text) == nanoseconds


@pytest.mark.parametrize(("text", "message"), [
    ("", 'time: invalid duration ""'), ("3", 'time: missing unit in duration "3"'),
    ("-", 'time: invalid duration "-"'), ("s", 'time: invalid duration "s"'), (".", 'time: invalid duration "."'),
    ("-.", 'time: invalid duration "-."'), (".s", 'time: invalid duration ".s"'),
    ("+.s", 'time: invalid duration "+.s"'), ("1d", 'time: unknown unit "d" in duration "1d"'),
    ("\ufffd", 'time: invalid duration "\\xef\\xbf\\xbd"'),
    ("9223372036854775810ns", 'time: invalid duration "9223372036854775810ns"'),
    ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
    ("-9223372036854775809ns", 'time: invalid duration "-9223372036854775809ns"'),
    ("9223372036854776us", 'time: invalid duration "9223372036854776us"'),
    ("3000000h", 'time: invalid duration "3000000h"'),
    ("9223372036854775.808us", 'time: invalid duration "9223372036854775.808us"'),
    ("9223372036854ms775us808ns", 'time: invalid duration "9223372036854ms775us808ns"'),
])
def test_parse_duration_errors_are_gos(text, message):
    with pytest.raises(ValueError) as exc:
        parse_duration(text)
    assert str(exc.value) == message


@pytest.mark.parametrize(("argv", "seconds"), [([], None), (["--event-ttl", "1h"], 3600),
                                                (["--event-ttl", "30m"], 1800), (["--event-ttl=90s"], 90),
                                                (["--event-ttl", "1.9s"], 1), (["--event-ttl", "500ms"], 0)])
def test_the_event_ttl_flag_takes_a_go_duration_in_whole_seconds(argv, seconds):
    args = build_parser().parse_args(["lab", "serve", *argv])
    assert args.event_ttl == seconds


@pytest.mark.parametrize(("value", "message"), [
    ("5x", 'argument --event-ttl: invalid argument "5x" for "--event-ttl" flag: time: unknown unit "x" in '
           'duration "5x"'),
    ("-5m", "argument --event-ttl: -5m: an Event TTL cannot be negative (0 keeps Events forever)"),
])
def test_a_bad_event_ttl_is_one_sentence_and_exit_2(value, message, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["lab", "serve", f"--event-ttl={value}"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"observatory lab serve: error: {message}"
