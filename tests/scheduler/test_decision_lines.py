"""The decision line of ``observatory schedule`` and the queue order of decisions.
Pure: decisions are built by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from observatory.model.decisions import SchedulingDecision
from observatory.model.exchange import BindingExchange

T0 = datetime(2026, 8, 22, 9, 30, tzinfo=UTC)


def exchange(status: int = 201, reason: str = "Created") -> BindingExchange:
    return BindingExchange(pod="ns/p", node="a", method="POST", path="/api/v1/namespaces/ns/pods/p/binding",
                           request_headers={}, request_body=b"{}", http_version="HTTP/1.1", status=status,
                           reason=reason, response_headers={}, response_body=b"{}", sent_at=T0, elapsed_ms=4.0)


def decision(**kw: Any) -> SchedulingDecision:
    base: dict[str, Any] = dict(pod="ns/p", uid="u", scheduler_name="s", policy="least-allocated", attempt=1,
                                verdicts={"a": "", "b": "Insufficient cpu"}, scores={"a": 7}, node="a",
                                message=None, exchange=exchange(), outcome="bound", time=T0)
    base.update(kw)
    return SchedulingDecision(**base)


def test_a_retry_says_its_attempt_inside_the_one_parenthesis():
    line = decision(attempt=3).summary()
    assert line == "bound ns/p -> a (attempt 3; 1/2 feasible; top scores: a 7) 201 Created in 4 ms"
    dry = decision(attempt=2, outcome="dry-run", exchange=None, dry_run=True).summary()
    assert dry == "would bind ns/p -> a (attempt 2; 1/2 feasible; top scores: a 7) [dry run: nothing sent]"
    assert decision().summary() == "bound ns/p -> a (1/2 feasible; top scores: a 7) 201 Created in 4 ms"
    for line in (decision(attempt=3).summary(), dry):
        assert line.count("(") == 1 and line.count(")") == 1


def test_spread_names_the_pods_on_each_node_fewest_first():
    # spread scores minus the pods already on the node
    spread = decision(policy="spread", verdicts={"a": "", "b": "", "c": ""}, scores={"a": -3, "b": 0, "c": -1},
                      node="b")
    line = spread.summary()
    assert "(3/3 feasible; pods on node: b 0, c 1, a 3)" in line
    assert "top scores" not in line and " pods" not in line.split("pods on node:", 1)[1]


def test_first_fit_names_its_policy():
    line = decision(policy="first-fit", scores={}).summary()
    assert "(1/2 feasible; policy first-fit)" in line


def test_queue_order_is_when_the_cycle_started_not_when_the_outcome_came():
    # cycle 1 bound pod a, but its Binding was answered after cycle 2 refused pod huge
    bound = decision(pod="ns/a", cycle=1, started=T0, time=T0 + timedelta(seconds=2))
    refused = decision(pod="ns/huge", outcome="unschedulable", node=None, exchange=None, message="0/2 nodes …",
                       cycle=2, started=T0 + timedelta(milliseconds=5), time=T0 + timedelta(milliseconds=6))
    arrived = [refused, bound]
    assert [d.pod for d in sorted(arrived, key=lambda d: d.queue_order)] == ["ns/a", "ns/huge"]
    data = bound.to_json()
    assert (data["cycle"], data["cycleStarted"]) == (1, "2026-08-22T09:30:00Z")
