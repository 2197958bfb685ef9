#!/usr/bin/env bash
# Runs libFuzzer targets of the sanitizer build (scripts/sanitize.sh builds
# them into build-asan/fuzz/).
#
#   scripts/fuzz.sh TARGET SECONDS      one target, e.g. fuzz_http 600
#   scripts/fuzz.sh --smoke [SECONDS]   every target for SECONDS (default 30) each: what CI runs
#
# Each run starts from the seeds in tests/fuzz/corpus/TARGET/ (copied: the
# repository's corpus is not written to) and puts what it finds in
# $FUZZ_OUT (default build-asan/fuzz-out/TARGET/): the grown corpus, and
# crash-*/timeout-*/oom-* inputs, which fail the run. A crash becomes a
# regression test (docs/robustness.md). The last lines of each run's log
# (execs, coverage, corpus size) are printed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SANITIZE_BUILD_DIR:-$root/build-asan}
targets=(fuzz_attr fuzz_observations fuzz_context fuzz_timestamp fuzz_bundle fuzz_http)

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:handle_sigbus=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_one() {
  local target=$1 seconds=$2
  local bin="$build/fuzz/$target"
  [ -x "$bin" ] || { echo "fuzz.sh: $bin not built (run scripts/sanitize.sh --build-only)"; return 1; }
  local out=${FUZZ_OUT:-$build/fuzz-out}/$target
  mkdir -p "$out/corpus" "$out/artifacts"
  cp -n "$root/tests/fuzz/corpus/$target/"* "$out/corpus/" 2> /dev/null || true
  local log="$out/run.log"
  local rc=0
  # -rss_limit_mb: an input that makes a target hold more is a finding;
  # -timeout: one input taking longer is a finding too.
  "$bin" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=3072 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/" "$out/corpus" > "$log" 2>&1 || rc=$?
  local stats
  stats=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  local execs
  execs=$(grep -E 'stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
  echo "$target: ${seconds}s, ${execs:-?} execs; last: ${stats:-none}"
  if [ "$rc" -ne 0 ] || ls "$out/artifacts/" | grep -q .; then
    echo "fuzz.sh: $target found a problem (exit $rc); see $log and $out/artifacts/"
    tail -40 "$log"
    return 1
  fi
}

if [ "${1:-}" = "--smoke" ]; then
  seconds=${2:-30}
  failed=0
  for t in "${targets[@]}"; do run_one "$t" "$seconds" || failed=1; done
  exit $failed
fi
[ $# -eq 2 ] || { echo "usage: scripts/fuzz.sh TARGET SECONDS | --smoke [SECONDS]"; exit 2; }
run_one "$1" "$2"
