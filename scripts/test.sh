#!/usr/bin/env bash
# Installs fuel-mlir into a virtualenv and runs every test suite.
#
#   bash scripts/test.sh
#
# Environment: FUEL_VENV (default .venv), FUEL_BUILD_DIR (default build).
# Needs python3 (3.10+) with venv, a C++17 compiler and CMake >= 3.20;
# ccache is used when present.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${FUEL_VENV:-$root/.venv}"
build="${FUEL_BUILD_DIR:-$root/build}"
cd "$root"

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# shellcheck disable=SC1091
. "$venv/bin/activate"
python -m pip install -q --upgrade pip
python -m pip install -q -r requirements-dev.txt

# One build serves both the install and the tests: pip builds into $build,
# and the test targets reuse it.
echo "==> pip install (build dir: $build)"
python -m pip install -q --no-build-isolation -Cbuild-dir="$build" .

echo "==> lit and pytest against the build tree"
ninja -C "$build" check-fuel

echo "==> pytest against the installed package"
(cd /tmp && FUEL_SOURCE_DIR="$root" FUEL_OPT="$(command -v fuel-opt)" \
  python -m pytest -q -n auto "$root/test/python")
