#!/usr/bin/env bash
# The sanitizer stage, opt-in (scripts/test.sh runs it when CULPRIT_SANITIZE=1; docs/robustness.md
# "Sanitizers"): clang with AddressSanitizer + UndefinedBehaviorSanitizer
# (UBSan reports are fatal), in its own build directory (build-asan/, or
# $SANITIZE_BUILD_DIR), building only what the sanitized tests run: the
# culprit binary, the unit-test binaries and the fuzz targets' replay
# drivers (no benchmarks, no libFuzzer). Then ctest on every test but those
# listed in `skipped` below, which are left out for CI time (each says why;
# they run in the plain build, and in full here with --all).
#
#   scripts/sanitize.sh [--build-only] [--all]
# Environment: JOBS (parallel jobs, default nproc), SANITIZE_BUILD_DIR,
# CMAKE_CXX_COMPILER_LAUNCHER (e.g. ccache; optional, CI does not set it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SANITIZE_BUILD_DIR:-$root/build-asan}
jobs=${JOBS:-$(nproc)}
build_only=0 all=0
for a in "$@"; do
  case $a in
    --build-only) build_only=1 ;;
    --all) all=1 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "usage: scripts/sanitize.sh [--build-only] [--all]" >&2; exit 2 ;;
  esac
done

# Left out of the CI stage (the plain build runs them all):
skipped=(
  '^bench: '                          # benchmark harness checks: peer tools' patterns, speed
  '^golden verdict: .* \(jit\)$'      # the same bundles run on the interpreter here; JIT code is LLVM's, not instrumented
  '^unit:jit: differential'           # minutes of random-expression compilation inside LLVM (uninstrumented)
  '^unit:jit: object code cache'      # repeated full-catalog compiles
  '^jit: engines and cache$'          # the same, end to end
  '^blueprint: SQLite and PostgreSQL' # starts PostgreSQL; the store code is also covered by the unit tests
  '^blueprint: real Slurm$'           # starts a Slurm cluster (minutes)
)
exclude=$(IFS='|'; echo "${skipped[*]}")

t0=$(date +%s)
launcher=()
[ -n "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER="$CMAKE_CXX_COMPILER_LAUNCHER")
# -O1 -g1 (line tables): what AddressSanitizer recommends, and line numbers in its reports.
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DCULPRIT_SANITIZE=ON -DCULPRIT_FUZZ=OFF -DCULPRIT_BENCH=OFF "${launcher[@]}" > /dev/null
targets=(culprit culprit_unit_tests culprit_blueprint_tests
         fuzz_attr fuzz_observations fuzz_context fuzz_timestamp fuzz_bundle fuzz_http)
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
t1=$(date +%s)
echo "sanitize.sh: sanitizer build took $((t1 - t0)) s"
[ "$build_only" = 1 ] && exit 0

# Leaks are not checked in the test run: the process-lifetime caches
# (ANTLR's, LLVM's, the compile cache's) are not freed at exit by design.
# The fuzzers check them per input (scripts/fuzz.sh).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:handle_sigbus=0:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The robustness tests limit address space to catch memory blow-ups; the
# sanitizers reserve terabytes of it, so that check is for the plain build.
export CULPRIT_TEST_AS_LIMIT_MB=0
# Time and RSS bounds of the service checks measure the plain build: reported, not asserted here.
export CULPRIT_TEST_SANITIZED=1
cd "$build"
if [ "$all" = 1 ]; then
  ctest --output-on-failure -j "$jobs" -E '^bench: run.sh'
else
  ctest --output-on-failure -j "$jobs" -E "$exclude"
fi
echo "sanitize.sh: tests under the sanitizers took $(( $(date +%s) - t1 )) s"
