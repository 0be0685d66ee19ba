"""The TUI binds (key b, node chosen) while kubectl binds the same pod to another node: the UI
ends up showing the winner, whichever it is. The pod sits under the winning node in the nodes pane and the model,
its timeline goes from no node to the winner and nowhere else, and the HTTP exchange pane shows either the 201 or
the 409 text of reference §1.3 naming the winner.

Both requests go through a forward proxy on loopback (the cluster's ``proxy-url``) that holds the binding POSTs
until both are in flight, then lets the chosen one through first, so that each outcome is tested every run (the
free-for-all race is tests/e2e/test_bind_race.py). The lab is the shared ``lab`` fixture (tests/conftest.py); waits
are on conditions, never on time.
"""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from rich.console import Console

from observatory.kube.connect import connect
from observatory.kube.fetch import get_json
from observatory.kube.source import ClusterSource
from observatory.ui.app import ObservatoryApp
from observatory.ui.widgets.exchange_pane import ExchangePane
from observatory.ui.widgets.nodes_pane import NodesPane
from observatory.ui.widgets.pending_pods import PendingPodsPane
from tests.e2e.test_bind_race import CREATED_201, KUBECTL_409, is_binding, proxied_kubeconfig
from tests.kube.forward_proxy import ForwardProxy
from tests.kube.kc_tools import run
from tests.ui.helpers import until
from tests.ui.test_pilot import bind_via_keys, pending_keys

POD, OURS, THEIRS = "sched-lab/manual", "pair-worker", "pair-control-plane"
ALREADY = 'Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node "{node}"'


def plain(renderable) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(renderable)
    return console.file.getvalue()


def node_block(app: ObservatoryApp, node: str) -> str:
    texts = [plain(block.content) for block in app.query_one(NodesPane).query(".node")]
    return next((t for t in texts if t.startswith(node)), "")


def kubectl_first(first: str):
    def rank(method: str, target: str, headers: list[str]) -> int:
        agent = next((h.split(":", 1)[1].strip() for h in headers if h.lower().startswith("user-agent:")), "")
        return 0 if agent.startswith("kubectl/") == (first == "kubectl") else 1

    return rank


@pytest.mark.parametrize("first", ["observatory", "kubectl"])
async def test_ui_shows_the_winner_of_a_race_with_kubectl(lab, tmp_path, kubectl, first):
    async with ForwardProxy() as proxy:
        proxy.gate(is_binding, 2, rank=kubectl_first(first))
        kubeconfig = proxied_kubeconfig(tmp_path / "kc", lab.url, proxy.url)
        binding = tmp_path / "binding.json"
        binding.write_text(json.dumps({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "manual"},
                                       "target": {"apiVersion": "v1", "kind": "Node", "name": THEIRS}}))
        connection = await connect(str(kubeconfig))
        source = ClusterSource(connection, namespace=None, lab=True)
        app = ObservatoryApp(source, refresh_interval=0.05)
        try:
            async with app.run_test(size=(140, 45)) as pilot:
                await until(pilot, lambda: POD in pending_keys(app))
                app.query_one(PendingPodsPane).select(POD)
                await until(pilot, lambda: app.main.selected == POD)
                racer = asyncio.create_task(run(
                    kubectl, "--kubeconfig", str(kubeconfig), "create", "--raw",
                    "/api/v1/namespaces/sched-lab/pods/manual/binding", "-f", str(binding)))
                await bind_via_keys(pilot, app, "worker")
                theirs = await asyncio.wait_for(racer, timeout=90)
                ours = app.main.exchanges[-1]
                winner = (await get_json(connection.api, "/api/v1/namespaces/sched-lab/pods/manual"))["spec"][
                    "nodeName"]
                loser = THEIRS if winner == OURS else OURS
                assert winner == (THEIRS if first == "kubectl" else OURS)
                # exactly one 201
                assert (ours.status == 201) + (theirs.returncode == 0) == 1, (ours.status_line, theirs)
                shown = plain(app.query(".exchange-response").last().content)
                if winner == OURS:
                    assert ours.response_body == CREATED_201 and "201 Created" in shown
                    assert theirs.stderr == KUBECTL_409.format(pod="manual", node=OURS)
                else:
                    assert winner == THEIRS and theirs.stdout.encode() == CREATED_201
                    assert ours.status_line == "HTTP/1.1 409 Conflict"
                    assert ours.status_message == ALREADY.format(node=THEIRS)
                    assert "409 Conflict" in shown and ALREADY.format(node=THEIRS) in " ".join(shown.split())
                assert app.query_one(ExchangePane).border_title.endswith(ours.status_line)
                # the model and the nodes pane: the pod under the winner, not under the loser
                await until(pilot, lambda: any(p.node.name == winner and any(pod.key == POD for pod in p.pods)
                                               for p in app.main.state.placement()))
                await until(pilot, lambda: "sched-lab/manual" in node_block(app, winner))
                assert "sched-lab/manual" not in node_block(app, loser)
                # the timeline: no node, then the winner, never the loser
                nodes = [frame.node_name for frame in app.main.state.timeline(POD)]
                assert nodes[0] == "" and nodes[-1] == winner and loser not in nodes
        finally:
            await source.close()
        assert proxy.held == 2
