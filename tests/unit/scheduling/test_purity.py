"""observatory.scheduling stays pure: no asyncio, aiohttp, textual or kubernetes_asyncio, even after scheduling."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
import observatory.scheduling as s
s.schedule_one({"spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}},
               [{"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "2", "pods": "10"}}}])
print(sorted(m for m in ("asyncio", "aiohttp", "textual", "kubernetes_asyncio") if m in sys.modules))
"""


def test_scheduling_loads_no_async_or_ui_module():
    result = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
