#!/usr/bin/env bash
# Fuzzing by hand (docs/robustness.md "Fuzzing"): builds the libFuzzer
# targets with clang, ASan and UBSan into build-fuzz/ (or $FUZZ_BUILD_DIR)
# and runs them. CI does not fuzz; it replays each target's corpus as a
# ctest test (fuzz replay: TARGET) in the plain and the sanitizer build.
#
#   scripts/fuzz.sh TARGET SECONDS      one target, e.g. fuzz_http 600
#   scripts/fuzz.sh --all SECONDS       every target, one after the other
#   scripts/fuzz.sh --build-only
#
# Each run starts from tests/fuzz/corpus/TARGET/ (copied: the repository's
# corpus is not written to) and keeps what it finds in $FUZZ_OUT (default
# build-fuzz/fuzz-out/TARGET/): the grown corpus, and crash-*/timeout-*/
# oom-*/leak-* inputs, which fail the run. A crash becomes a regression
# test by copying the input into tests/fuzz/corpus/TARGET/ (after the fix).
# Printed per target: execs, execs/s, coverage (cov: edges, ft: features),
# corpus size, findings.
# Environment: JOBS, CMAKE_CXX_COMPILER_LAUNCHER (optional, e.g. ccache).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
targets=(fuzz_attr fuzz_observations fuzz_context fuzz_timestamp fuzz_bundle fuzz_http)

usage() { echo "usage: scripts/fuzz.sh TARGET SECONDS | --all SECONDS | --build-only" >&2; exit 2; }
[ $# -ge 1 ] || usage
case $1 in
  --build-only) [ $# -eq 1 ] || usage; chosen=("${targets[@]}") ;;
  --all) [ $# -eq 2 ] || usage; chosen=("${targets[@]}"); seconds=$2 ;;
  -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
  *) [ $# -eq 2 ] || usage; chosen=("$1"); seconds=$2
     [[ " ${targets[*]} " == *" $1 "* ]] || { echo "fuzz.sh: unknown target '$1' (${targets[*]})" >&2; exit 2; } ;;
esac

launcher=()
[ -n "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER="$CMAKE_CXX_COMPILER_LAUNCHER")
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DCULPRIT_SANITIZE=ON -DCULPRIT_FUZZ=ON -DCULPRIT_BENCH=OFF "${launcher[@]}" > /dev/null
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target "${chosen[@]}"
[ "$1" = --build-only ] && exit 0

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:handle_sigbus=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export CULPRIT_CACHE_DIR=$build/test-cache

run_one() {
  local target=$1 seconds=$2
  local out=${FUZZ_OUT:-$build/fuzz-out}/$target
  mkdir -p "$out/corpus" "$out/artifacts"
  cp -n "$root/tests/fuzz/corpus/$target/"* "$out/corpus/" 2> /dev/null || true
  local log="$out/run.log" rc=0
  # -rss_limit_mb: an input that makes a target hold more is a finding;
  # -timeout: one input taking longer is a finding too.
  "$build/fuzz/$target" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=3072 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/" "$out/corpus" > "$log" 2>&1 || rc=$?
  local last execs rate
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
  rate=$(awk '/stat::average_exec_per_sec/ {print $2}' "$log")
  local found
  found=$(ls "$out/artifacts/" | wc -l)
  echo "$target: ${seconds}s, ${execs:-?} execs (${rate:-?}/s), corpus $(ls "$out/corpus" | wc -l) files, $found findings; last: ${last:-none}"
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    echo "fuzz.sh: $target found a problem (exit $rc); see $log and $out/artifacts/"
    tail -40 "$log"
    return 1
  fi
}

failed=0
for t in "${chosen[@]}"; do run_one "$t" "$seconds" || failed=1; done
exit $failed
