#!/usr/bin/env bash
# Builds fuel-opt with AddressSanitizer and UndefinedBehaviorSanitizer
# (FUEL_ENABLE_SANITIZERS) and runs the lit suite and the fuzzer's short run
# with it; any sanitizer report fails the run.
#
#   bash scripts/sanitize.sh            # after scripts/test.sh (its venv)
#
# Environment: FUEL_VENV (default .venv), FUEL_SAN_BUILD_DIR (default
# build-sanitize), FUEL_FUZZ_CASES (default 300).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${FUEL_VENV:-$root/.venv}"
build="${FUEL_SAN_BUILD_DIR:-$root/build-sanitize}"
cd "$root"
# shellcheck disable=SC1091
. "$venv/bin/activate"

# The MLIR and LLVM libraries are prebuilt without instrumentation, while
# the project's code inlines their headers with it: LLVM's allocators then
# poison memory (ASan annotations in the inlined headers) that the
# uninstrumented code uses legitimately, so manual poisoning is ignored
# (allow_user_poisoning=0); heap errors, leaks and UB are all reported.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allow_user_poisoning=0:detect_container_overflow=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

echo "==> configure and build fuel-opt with sanitizers ($build)"
cmake -G Ninja -S . -B "$build" -DFUEL_ENABLE_SANITIZERS=ON \
  -DFUEL_ENABLE_PYTHON=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build" fuel-opt fuel-tblgen

echo "==> lit under the sanitizers"
ninja -C "$build" check-fuel-lit

echo "==> the fuzzer's short run under the sanitizers"
python test/fuzz/fuzz.py --fuel-opt "$build/bin/fuel-opt" \
  --cases "${FUEL_FUZZ_CASES:-300}" --seed 1 --out "$build/fuzz-crashes"
