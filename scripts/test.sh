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

# The installed package: what installing can break (the Python modules and
# dialects, fuel-opt on PATH, the JIT's runtime libraries, every op compiled
# and run, the registry and its docs, the GPU emulator's runtime and the
# NVVM pipeline's tools), about 2 minutes; the whole suite has run on the
# build tree above.
echo "==> pytest against the installed package"
installed_tests=(test_package.py test_builders.py test_registry.py test_docs.py
  test_runner.py test_runner_out.py test_runner_fast_call.py test_all_ops.py
  test_gpu_emulator.py test_gpu_nvvm.py)
(cd /tmp && FUEL_SOURCE_DIR="$root" FUEL_OPT="$(command -v fuel-opt)" \
  python -m pytest -q -n auto "${installed_tests[@]/#/$root/test/python/}")
