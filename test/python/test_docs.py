"""docs/FusedOps.md is generated from the registry and kept current."""

import os
import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT


def test_committed_docs_are_current():
    build_docs = os.environ.get("FUEL_GENERATED_DOCS")
    if not build_docs or not Path(build_docs).is_file():
        pytest.skip("run through `ninja check-fuel` to compare with the generated docs")
    committed = (REPO_ROOT / "docs" / "FusedOps.md").read_text()
    generated = Path(build_docs).read_text()
    assert committed == generated, "docs/FusedOps.md is stale: run `ninja fuel-update-docs`"


def test_docs_list_every_op():
    from fuel_mlir import registry

    text = (REPO_ROOT / "docs" / "FusedOps.md").read_text()
    for e in registry.entries():
        if not e.is_runtime:
            assert f"\n## {e.name}\n" in text
            assert f"| {e.id} | [`{e.name}`]" in text
