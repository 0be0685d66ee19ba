"""The stylesheet is found wherever observatory runs: inside the installed package (``observatory/styles``, shipped
by pyproject's force-include), or the source tree's top-level ``styles/`` for an editable install."""

from __future__ import annotations

from pathlib import Path

import observatory
from observatory.ui.app import STYLES, ObservatoryApp


def test_the_app_reads_an_existing_stylesheet():
    [css] = ObservatoryApp.CSS_PATH
    assert Path(css).is_file(), css


def test_the_packaged_styles_win_when_they_are_installed():
    packaged = Path(observatory.__file__).resolve().parent / "styles"
    assert STYLES == (packaged if packaged.is_dir() else Path(observatory.__file__).resolve().parents[1] / "styles")
