"""Package boundaries of the house style: only ui/ imports textual; ui/ never imports kubernetes_asyncio."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

NON_UI = ["observatory.lab.server", "observatory.lab.api", "observatory.kube", "observatory.model",
          "observatory.scheduling", "observatory.settings", "observatory.cli", "observatory.why",
          "observatory.lessons", "observatory.recorder", "observatory.replay", "observatory.classroom"]


@pytest.mark.parametrize("module", NON_UI)
def test_non_ui_packages_do_not_load_textual(module):
    code = f"import sys, {module}; print('textual' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_import_linter_contracts_hold():
    lint = shutil.which("lint-imports", path=str(__import__("pathlib").Path(sys.executable).parent))
    assert lint is not None, "import-linter is part of the test extra"
    result = subprocess.run([lint], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
