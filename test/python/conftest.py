"""Shared fixtures for the pytest suite.

The suite runs against the package in the build tree (`ninja check-fuel`
sets PYTHONPATH and FUEL_OPT) or against an installed `fuel_mlir`.
"""

import os
import shutil
from pathlib import Path

import pytest

from fuel_mlir import ir

REPO_ROOT = Path(os.environ.get("FUEL_SOURCE_DIR", Path(__file__).resolve().parents[2]))


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
