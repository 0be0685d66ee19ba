"""The lab's shipped model schema (``observatory/lab/data/schema.json``) is what ``tools/lab_schema.py`` generates
from the installed kubernetes_asyncio, and the lab reads it without importing kubernetes_asyncio."""

from __future__ import annotations

import subprocess
import sys

from tools import lab_schema


def test_the_shipped_schema_is_what_the_generator_gives_for_the_installed_kubernetes_asyncio():
    shipped = lab_schema.OUTPUT.read_text(encoding="utf-8")
    assert shipped == lab_schema.render(lab_schema.generate()), "run: python -m tools.lab_schema"


def test_validation_and_openapi_do_not_load_kubernetes_asyncio():
    code = ("import sys\n"
            "from observatory.lab import openapi, schema, gotypes\n"
            "assert schema.unknown_fields('Pod', {'spec': {'foo': 1}}) == ['spec.foo']\n"
            "assert openapi.openapi_v3_core_v1()\n"
            "assert gotypes.type_error('Pod', {'spec': {'priority': 'high'}}) is not None\n"
            "print(sorted(m for m in sys.modules if m.startswith('kubernetes')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"
