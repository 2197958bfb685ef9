#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds Culprit and runs every test:
#  1. the plain build (build/) and its ctest suite: unit tests, golden
#     diagnostics and verdicts, the catalog's inline tests, the CLI,
#     service, blueprint (real Slurm, Prometheus, PostgreSQL) and dashboard
#     checks, the fuzz corpora replayed;
#  2. a short load run of `culprit serve` (tests/service/check_load.py:
#     wrk at 64 connections while 200 slow clients hold connections, then
#     an over-budget burst), asserting 0 errors, /healthz within 100 ms,
#     flat RSS, and 429s instead of memory over the budget;
#  3. the sanitizer stage (scripts/sanitize.sh: an ASan + UBSan build in
#     build-asan/ and ctest there) and a 30-second libFuzzer smoke of every
#     fuzz target in that same build (scripts/fuzz.sh --all 30).
# The sanitizer build is compiled in the background at the lowest priority
# while step 1 runs, so it takes the CPU the plain build and the tests leave
# idle (links, tests waiting on their servers), not theirs.
# CI runs this script as is (docs/robustness.md, "Cost", has its time on 2
# cores). For quicker local runs: CULPRIT_LOAD=0 skips step 2,
# CULPRIT_SANITIZE=0 skips step 3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
stage() { echo "== test.sh: $1 ($(date -u +%H:%M:%S))"; }
stage "dependencies"
"$root/scripts/install-deps.sh"

asan_pid="" asan_log=""
if [ "${CULPRIT_SANITIZE:-1}" = 1 ]; then
  asan_log=$(mktemp)
  # Its own process group (setsid), so an early exit stops the whole build.
  setsid nice -n 19 "$root/scripts/sanitize.sh" --build-only > "$asan_log" 2>&1 &
  asan_pid=$!
  trap 'if [ -n "$asan_pid" ]; then kill -- "-$asan_pid" 2>/dev/null || kill "$asan_pid" 2>/dev/null; fi; rm -f "$asan_log"' EXIT
fi

stage "plain build"
"$root/scripts/build.sh"
stage "ctest"
(cd "$build" && ctest --output-on-failure -j "${JOBS:-$(nproc)}")

if [ -n "$asan_pid" ]; then
  stage "waiting for the sanitizer build"
  if ! wait "$asan_pid"; then
    asan_pid=""
    tail -60 "$asan_log"
    echo "test.sh: the sanitizer build failed"
    exit 1
  fi
  asan_pid=""
  tail -1 "$asan_log"
fi
if [ "${CULPRIT_LOAD:-1}" = 1 ]; then
  stage "load run"
  python3 "$root/tests/service/check_load.py" "$build/cli/culprit" --duration 20 --overload-seconds 10
fi
if [ "${CULPRIT_SANITIZE:-1}" = 1 ]; then
  stage "sanitizer stage"
  "$root/scripts/sanitize.sh"
  stage "fuzz smoke"
  "$root/scripts/fuzz.sh" --all 30
fi
stage "done"
