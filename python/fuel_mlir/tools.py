"""Entry points of the command-line tools installed with the package."""

import os
import sys
from pathlib import Path


def _tool_path(name: str) -> Path:
    """The native executable shipped in the package's _bin directory."""
    return Path(__file__).resolve().parent / "_bin" / name


def fuel_opt_main() -> None:
    """`fuel-opt`: runs the native driver shipped in the package."""
    exe = _tool_path("fuel-opt")
    if not exe.is_file():
        sys.stderr.write(f"fuel-opt: the native driver is missing at {exe}\n")
        sys.exit(127)
    os.execv(str(exe), [str(exe)] + sys.argv[1:])
