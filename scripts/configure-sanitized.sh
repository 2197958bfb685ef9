#!/usr/bin/env bash
# Configures the sanitizer build: clang, AddressSanitizer + UBSan (UBSan
# reports fatal), libFuzzer coverage instrumentation, -O1 -g1 (what ASan
# recommends, with line numbers in its reports), no benchmarks. One build
# serves both the sanitizer test stage (scripts/sanitize.sh) and fuzzing
# (scripts/fuzz.sh): its fuzz targets are libFuzzer binaries, whose corpus
# replays run in ctest (-runs=0), so CI compiles the instrumented tree once.
#
#   scripts/configure-sanitized.sh BUILD_DIR
# Environment: CMAKE_CXX_COMPILER_LAUNCHER (e.g. ccache; optional, CI does
# not set it).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: scripts/configure-sanitized.sh BUILD_DIR" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
launcher=()
[ -n "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER="$CMAKE_CXX_COMPILER_LAUNCHER")
CC=clang CXX=clang++ cmake -S "$root" -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DCULPRIT_SANITIZE=ON -DCULPRIT_FUZZ=ON -DCULPRIT_BENCH=OFF "${launcher[@]}" > /dev/null
