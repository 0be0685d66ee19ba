"""observatory.model stays pure: no async, HTTP or UI modules, even after building records and applying deltas."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
from observatory.model import BindingExchange, ClusterState, PodView, Relisted, Upserted
state = ClusterState()
state.apply(Relisted("nodes", [{"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "2"}}}], "1"))
state.apply(Upserted("pods", {"metadata": {"name": "p", "namespace": "d"}, "spec": {"nodeName": "n"}}))
state.pending(), state.placement(), state.events_for(None), state.timeline("d/p")
BindingExchange.__slots__
print(sorted(m for m in ("asyncio", "aiohttp", "textual", "kubernetes_asyncio")
             if m in sys.modules))
"""


def test_model_loads_no_io_async_or_ui_module():
    result = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
