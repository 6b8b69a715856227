#!/usr/bin/env bash
# Builds fuel-opt with AddressSanitizer and UndefinedBehaviorSanitizer
# (FUEL_ENABLE_SANITIZERS) and runs with it the lit suite, the fuzzer's short
# run, the verifier's mutants (test/fuzz/rule_cases.py) and fuel-fuse on the
# near matches of test/fuzz/fuse_misses.py; any sanitizer report fails the
# run.
#
#   bash scripts/sanitize.sh            # after scripts/test.sh (its venv)
#
# Environment: FUEL_VENV (default .venv), FUEL_SAN_BUILD_DIR (default
# build-sanitize), FUEL_FUZZ_CASES (default 300), FUEL_FUSE_MUTANTS (default
# 20 per input).
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

echo "==> every verifier rule's mutants under the sanitizers"
python test/fuzz/rule_cases.py --fuel-opt "$build/bin/fuel-opt" --out "$build/invalid-rules.mlir"

echo "==> fuel-fuse on mutated near matches under the sanitizers"
python test/fuzz/fuse_misses.py --write "$build/fuse-inputs.mlir" --mutants "${FUEL_FUSE_MUTANTS:-20}"
status=0
"$build/bin/fuel-opt" -split-input-file "$build/fuse-inputs.mlir" \
  --fuel-fuse=report=misses -o /dev/null 2>"$build/fuse-inputs.log" || status=$?
if [ "$status" -gt 1 ] || grep -q "Sanitizer" "$build/fuse-inputs.log"; then
  grep -A30 "Sanitizer" "$build/fuse-inputs.log" | head -60
  echo "fuel-fuse crashed or a sanitizer reported (exit $status); see $build/fuse-inputs.log"
  exit 1
fi
echo "no sanitizer report"
