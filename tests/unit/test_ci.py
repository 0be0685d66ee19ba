"""CI runs the README's test command word for word, after the gates, and every marker it names is registered."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def commands(readme: str) -> list[str]:
    return re.findall(r"```sh\n(.+?)\n```", readme, flags=re.S)


def test_ci_runs_the_readmes_test_command_after_ruff_lint_imports_and_mypy():
    setup = [c for c in commands((REPO / "README.md").read_text()) if c.startswith("python3 -m venv")]
    assert len(setup) == 2, setup  # run, and test
    test = next(c for c in setup if "pytest" in c)
    script = (REPO / ".ci" / "run").read_text().splitlines()
    assert test in script
    gates = [i for i, line in enumerate(script) if line.startswith((".venv/bin/ruff check", ".venv/bin/lint-imports",
                                                                     ".venv/bin/mypy"))]
    assert len(gates) == 3 and max(gates) < script.index(test)


def test_the_markers_conftest_applies_are_registered():
    from tests import conftest

    registered = {m.split(":", 1)[0] for m in
                  tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]}
    applied = {*conftest.FOLDER_MARKS.values(), *conftest.FILE_MARKS.values(), *conftest.FIXTURE_MARKS.values()}
    assert applied == registered == {"e2e", "lab", "pilot", "snapshot"}
