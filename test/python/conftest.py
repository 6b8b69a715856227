"""Shared fixtures for the pytest suite.

The suite runs against the package in the build tree (`ninja check-fuel`
sets PYTHONPATH and FUEL_OPT) or against an installed `fuel_mlir`.
"""

import importlib.util
import os
import re
import shutil
from pathlib import Path

import pytest

from fuel_mlir import ir

REPO_ROOT = Path(os.environ.get("FUEL_SOURCE_DIR", Path(__file__).resolve().parents[2]))


def source_strings(paths, pattern):
    """(file name, group 1) of every match of `pattern` in the files `paths`:
    the reasons and messages the code spells out, for the coverage tests."""
    for path in paths:
        for m in re.finditer(pattern, path.read_text()):
            yield path.name, m.group(1)


def is_listed(name, text, listed):
    """Whether (file `name`, `text`) is among `listed`, keyed by (file, start
    of the text): the exceptions a coverage test names."""
    return any(name == f and text.startswith(r) for f, r in listed)


def load_fuzz_tool(name):
    """The module test/fuzz/<name>.py (the fuzzers are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "test" / "fuzz" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def ctx():
    with ir.Context() as context, ir.Location.unknown():
        yield context


@pytest.fixture
def module(ctx):
    return ir.Module.create()


@pytest.fixture
def fuel_opt():
    exe = os.environ.get("FUEL_OPT") or shutil.which("fuel-opt")
    if not exe:
        pytest.skip("fuel-opt is not built or installed")
    return exe
