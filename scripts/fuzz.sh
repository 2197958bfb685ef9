#!/usr/bin/env bash
# Fuzzing (docs/robustness.md "Fuzzing"): builds the libFuzzer targets with
# clang, ASan and UBSan into build-asan/ (or $FUZZ_BUILD_DIR; the same build
# as the sanitizer stage, scripts/configure-sanitized.sh) and runs them.
# CI runs the smoke (--all 30: every target for 30 s); long runs are by hand.
#
#   scripts/fuzz.sh TARGET[,TARGET...] SECONDS   e.g. fuzz_http 600
#   scripts/fuzz.sh --all SECONDS       every target, JOBS at a time
#   scripts/fuzz.sh --build-only
#
# Each run starts from tests/fuzz/corpus/TARGET/ (copied: the repository's
# corpus is not written to) and keeps what it finds in $FUZZ_OUT (default
# BUILD/fuzz-out/TARGET/): the grown corpus, and crash-*/timeout-*/
# oom-*/leak-* inputs, which fail the run. A crash becomes a regression
# test by copying the input into tests/fuzz/corpus/TARGET/ (after the fix).
# Printed per target: execs, execs/s, coverage (cov: edges, ft: features)
# at the seeds and at the end, corpus size, peak RSS, findings.
# Environment: JOBS (targets fuzzed at once and build jobs, default nproc),
# CMAKE_CXX_COMPILER_LAUNCHER (optional, e.g. ccache).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-asan}
jobs=${JOBS:-$(nproc)}
targets=(fuzz_attr fuzz_observations fuzz_context fuzz_timestamp fuzz_bundle fuzz_http fuzz_files fuzz_config fuzz_policy fuzz_lsp fuzz_flight_recorder fuzz_ras_report)

usage() { echo "usage: scripts/fuzz.sh TARGET[,TARGET...] SECONDS | --all SECONDS | --build-only" >&2; exit 2; }
[ $# -ge 1 ] || usage
case $1 in
  --build-only) [ $# -eq 1 ] || usage; chosen=("${targets[@]}") ;;
  --all) [ $# -eq 2 ] || usage; chosen=("${targets[@]}"); seconds=$2 ;;
  -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) [ $# -eq 2 ] || usage; IFS=, read -r -a chosen <<< "$1"; seconds=$2
     for t in "${chosen[@]}"; do
       [[ " ${targets[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target '$t' (${targets[*]})" >&2; exit 2; }
     done ;;
esac
if [ "$1" != --build-only ]; then
  [[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: SECONDS must be a positive integer, not '$seconds'" >&2; exit 2; }
fi

"$root/scripts/configure-sanitized.sh" "$build"
cmake --build "$build" -j "$jobs" --target "${chosen[@]}"
[ "$1" = --build-only ] && exit 0

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:handle_sigbus=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export CULPRIT_CACHE_DIR=$build/test-cache
outroot=${FUZZ_OUT:-$build/fuzz-out}

# Runs one target; its summary goes to $out/summary, its status to $out/status.
run_one() {
  local target=$1 seconds=$2
  local out=$outroot/$target
  rm -rf "$out/artifacts"
  mkdir -p "$out/corpus" "$out/artifacts"
  cp -n "$root/tests/fuzz/corpus/$target/"* "$out/corpus/" 2> /dev/null || true
  local log="$out/run.log" rc=0
  # -rss_limit_mb: an input that makes a target hold more is a finding;
  # -timeout: one input taking longer is a finding too.
  "$build/fuzz/$target" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=3072 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/" "$out/corpus" > "$log" 2>&1 || rc=$?
  local seeds last execs rate rss found
  seeds=$(grep -E '^#[0-9]+\s+INITED' "$log" | sed -E 's/.*(cov: [0-9]+ ft: [0-9]+).*/\1/' | head -1 || true)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -E 's/.*(cov: [0-9]+ ft: [0-9]+).*/\1/' || true)
  execs=$(awk '/stat::number_of_executed_units/ {print $2; exit}' "$log")
  rate=$(awk '/stat::average_exec_per_sec/ {print $2; exit}' "$log")
  rss=$(awk '/stat::peak_rss_mb/ {print $2; exit}' "$log")
  found=$(ls "$out/artifacts/" | wc -l)
  echo "$target: ${seconds} s, ${execs:-?} execs (${rate:-?}/s), seeds ${seeds:-?} -> end ${last:-?}, corpus $(ls "$out/corpus" | wc -l) files, peak RSS ${rss:-?} MB, $found findings" > "$out/summary"
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    { echo "fuzz.sh: $target found a problem (exit $rc); see $log and $out/artifacts/"; tail -40 "$log"; } >> "$out/summary"
    echo 1 > "$out/status"
  else
    echo 0 > "$out/status"
  fi
}

# JOBS targets at a time; summaries printed in the targets' order.
running=0
for t in "${chosen[@]}"; do
  run_one "$t" "$seconds" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
done
wait || true
failed=0
for t in "${chosen[@]}"; do
  cat "$outroot/$t/summary"
  [ "$(cat "$outroot/$t/status" 2>/dev/null || echo 1)" = 0 ] || failed=1
done
exit $failed
