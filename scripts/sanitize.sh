#!/usr/bin/env bash
# The sanitizer stage (scripts/test.sh runs it after the plain tests;
# docs/robustness.md "Sanitizers"): clang with AddressSanitizer +
# UndefinedBehaviorSanitizer (UBSan reports are fatal), in its own build
# directory (build-asan/, or $SANITIZE_BUILD_DIR; configured by
# scripts/configure-sanitized.sh, the build scripts/fuzz.sh fuzzes with),
# building only what the sanitized tests run: the culprit binary, the
# unit-test binaries and the libFuzzer targets (no benchmarks). Then ctest
# on every test but those listed in `skipped` below, which are left out for
# CI time (each says why; they run in the plain build, and in full here
# with --all).
#
#   scripts/sanitize.sh [--build-only] [--all | --skipped]
# --all: every test; --skipped: only those the CI stage leaves out.
# Environment: JOBS (parallel jobs, default nproc), SANITIZE_BUILD_DIR,
# CMAKE_CXX_COMPILER_LAUNCHER (e.g. ccache; optional, CI does not set it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SANITIZE_BUILD_DIR:-$root/build-asan}
jobs=${JOBS:-$(nproc)}
build_only=0 all=0 only_skipped=0
for a in "$@"; do
  case $a in
    --build-only) build_only=1 ;;
    --all) all=1 ;;
    --skipped) only_skipped=1 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: scripts/sanitize.sh [--build-only] [--all | --skipped]" >&2; exit 2 ;;
  esac
done

# Left out of the CI stage for time (the plain build runs them all; --all
# runs them here too, and docs/robustness.md "Sanitizers" gives the last
# full run). Each says why, and what runs its code here instead where
# something does:
skipped=(
  '^bench: '                          # benchmark harness checks: peer tools' patterns, speed
  '^golden verdict: '                 # a process per diagnosis, four per bundle; "eval: examples" and "eval: real incidents" diagnose every bundle here in one process
  '^recovery: recommendations of every example' # the same 320 diagnoses again, a process each; the eval tests compute every recommendation
  '^report: every example keeps its cause' # 517 text reports, a process each; the text renderer runs here in the golden report and unit tests
  '^unit:jit: differential'           # minutes of random-expression compilation inside LLVM (uninstrumented)
  '^unit:jit: object code cache'      # repeated full-catalog compiles
  '^jit: engines and cache$'          # the same, end to end
  '^blueprint: SQLite and PostgreSQL' # starts PostgreSQL; the store code is also covered by the unit tests
  '^blueprint: hand-offs survive SIGKILL' # 100 killed runs on two stores; resuming is also run by check_recovery.sh
  '^blueprint: real Slurm$'           # starts a Slurm cluster (minutes)
  '^dashboard: headless Chromium$'    # the browser's side; the dashboard's HTTP side runs in "dashboard: HTTP, ..."
  '^dashboard: 100,000 verdicts$'     # a large store built and read: time, not new paths
  '^hang: 8,192 ranks'                # 16,384 dumps generated and read: time; the reader runs here in its unit tests, the examples and the fuzz replay
)
exclude=$(IFS='|'; echo "${skipped[*]}")

t0=$(date +%s)
"$root/scripts/configure-sanitized.sh" "$build"
targets=(culprit culprit_unit_tests culprit_blueprint_tests culprit_dashboard_tests
         fuzz_attr fuzz_observations fuzz_context fuzz_timestamp fuzz_bundle fuzz_http fuzz_files
         fuzz_config fuzz_policy fuzz_lsp fuzz_flight_recorder fuzz_ras_report)
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
elif [ "$only_skipped" = 1 ]; then
  ctest --output-on-failure -j "$jobs" -R "$exclude" -E '^bench: run.sh'
else
  ctest --output-on-failure -j "$jobs" -E "$exclude"
  # The eval tests above run the JIT (the default engine), whose emitted code
  # is LLVM's; every bundle again on the instrumented interpreter, one
  # process per corpus (the golden verdicts left out above are the same
  # bundles, a process per run).
  for corpus in examples examples/real; do
    ./cli/culprit eval "$root/$corpus" --engine interp --threads "$jobs" > "$build/eval-interp.txt" \
      || { cat "$build/eval-interp.txt"; echo "sanitize.sh: eval $corpus on the interpreter failed"; exit 1; }
    tail -1 "$build/eval-interp.txt"
  done
fi
echo "sanitize.sh: tests under the sanitizers took $(( $(date +%s) - t1 )) s"
