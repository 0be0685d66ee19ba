"""The writes pane and the timeline's writers against a real lab, fed by the lab's own audit events (the in-process
feed the screen gets on the embedded lab): exercise 1's kubectl Bindings sent with kubectl itself, twice, and the
simulated kubelet's status patches after them."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import AsyncIterator

import pytest
from rich.text import Text

from observatory.kube.audit_feed import InProcessAuditFeed
from observatory.kube.connect import connect
from observatory.kube.source import ClusterSource
from observatory.settings import LabSettings
from observatory.ui.app import ObservatoryApp
from observatory.ui.widgets.exchange_pane import ExchangePane
from tests.ui.helpers import MANUAL, until

BINDING = ('{"apiVersion":"v1","kind":"Binding",\n'
           ' "metadata":{"name":"manual","namespace":"sched-lab"},\n'
           ' "target":{"apiVersion":"v1","kind":"Node","name":"pair-worker"}}\n')
ALREADY_ASSIGNED = ('Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node '
                    '"pair-worker"')


@pytest.fixture
def lab_settings() -> LabSettings:
    """The simulated cluster on, with a quick kubelet."""
    return LabSettings(kubelet_start_seconds=0.3)


@pytest.fixture
async def audited_app(lab) -> AsyncIterator[ObservatoryApp]:
    """The screen over the lab's kubeconfig, every namespace, with the lab auditor's in-process feed."""
    async with InProcessAuditFeed(lab.auditor.subscribe) as feed:
        connection = await connect(str(lab.kubeconfig_path), "observatory-lab", None)
        source = ClusterSource(connection, namespace=None, lab=True, read_only=False, audit=feed)
        try:
            yield ObservatoryApp(source, refresh_interval=0.05)
        finally:
            await source.close()


def kubectl_bind(kubectl: str, lab, tmp_path) -> subprocess.CompletedProcess:
    (tmp_path / "binding.json").write_text(BINDING)
    return subprocess.run([kubectl, "create", "--raw", "/api/v1/namespaces/sched-lab/pods/manual/binding", "-f",
                           str(tmp_path / "binding.json")], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "KUBECONFIG": str(lab.kubeconfig_path)})


def lines(app: ObservatoryApp) -> list[list[str]]:
    rows = app.query_one("#writes-list")
    return [[c.plain if isinstance(c, Text) else str(c) for c in rows.get_row(key)] for key in rows.row_keys]


def timeline(app: ObservatoryApp) -> list[str]:
    rows = app.query_one("#timeline")
    return [f'{rows.get_cell(key, "RV").plain} {rows.get_cell(key, "WRITE").plain}' for key in rows.row_keys]


async def test_exercise_1s_kubectl_bindings_and_the_kubelets_writes_with_their_writers(audited_app, lab, kubectl,
                                                                                       tmp_path) -> None:
    app = audited_app
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: MANUAL in app.query_one("#pending").rows)
        app.query_one("#pending").select(MANUAL)
        await until(pilot, lambda: app.query_one(ExchangePane).border_title == f"Writes: {MANUAL}")
        first = await asyncio.to_thread(kubectl_bind, kubectl, lab, tmp_path)
        assert first.returncode == 0, first.stderr
        second = await asyncio.to_thread(kubectl_bind, kubectl, lab, tmp_path)
        assert second.stderr == f"Error from server (Conflict): {ALREADY_ASSIGNED}\n"
        bindings = lambda: [line for line in lines(app) if line[2] == "POST binding"]  # noqa: E731
        await until(pilot, lambda: len(bindings()) == 2, "both Bindings in the writes pane")
        assert [(b[1], b[3], b[4]) for b in bindings()] == [("kubectl", "201 Created", ""),
                                                           ("kubectl", "409 Conflict", ALREADY_ASSIGNED)]
        # the kubelet's status writes follow; the bind frame names kubectl, the kubelet's frames the kubelet
        await until(pilot, lambda: any("kubelet pair-worker" in rv for rv in timeline(app)), "a kubelet frame")
        frames = timeline(app)
        bind = next(i for i, rv in enumerate(frames) if "← POST pods/manual/binding · kubectl · 201" in rv)
        assert any("PATCH pods/manual/status · kubelet pair-worker · 200" in rv for rv in frames[bind + 1:])


async def test_observatorys_own_binding_is_joined_to_its_audit_event_by_audit_id(audited_app) -> None:
    """The lab answers with the request's ``Audit-Id``: the Binding sent with ``b`` is one line, observatory's,
    shown with its raw exchange."""
    app = audited_app
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: MANUAL in app.query_one("#pending").rows)
        app.query_one("#pending").select(MANUAL)
        await until(pilot, lambda: app.main.selected == MANUAL)
        await pilot.press("b", *"worker", "enter")
        await until(pilot, lambda: len(app.main.exchanges) == 1)
        exchange = app.main.exchanges[0]
        audit_id = dict((k.lower(), v) for k, v in exchange.response_headers)["audit-id"]
        await until(pilot, lambda: app.main.writes.store.get(audit_id) is not None, "the Binding's audit event")
        await until(pilot, lambda: [line[1:4] for line in lines(app) if line[2] == "POST binding"]
                    == [["observatory", "POST binding", "201 Created"]], "one line for the Binding")
        pane = app.query_one(ExchangePane)
        rows = app.query_one("#writes-list")
        key = next(k for k in rows.row_keys if rows.get_cell(k, "write").plain == "POST binding")
        rows.select(key)  # the kubelet's later writes took the cursor along
        await until(pilot, lambda: pane.query_one(".exchange").display, "its raw exchange shown for its line")
        assert app.main.writes.store.get(audit_id).event.writer == "observatory"
