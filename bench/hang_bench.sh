#!/usr/bin/env bash
# Hang localisation at scale: a generated job of NODES x 8 ranks (default 1,024 x
# 8 = 8,192) that hangs, in two shapes (bench/generate_hang.py): a straggler (one
# rank never starts its data-parallel all_reduce) and a desync (one rank of a
# tensor-parallel group calls another collective). Each is diagnosed with every
# rank's Flight Recorder dump and, as the peer in the same run, with the c10d
# watchdog lines alone (the same bundle without traces/). Prints the wall time of
# each (best of RUNS, default 3), their ratio, the peak RSS, and whether the
# verdict's hang detail names what the generator put there (culprit eval on the
# bundles' labels; the script fails if it does not).
#
#   bench/hang_bench.sh [BUILD_DIR] [WORK_DIR]      NODES=1024 RUNS=3
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
work=${2:-/tmp/culprit-hang-bench}
nodes=${NODES:-1024}
runs=${RUNS:-3}
bin="$build/cli/culprit"
[ -x "$bin" ] || { echo "no culprit binary at $bin (build first)"; exit 2; }
laggard=$(( nodes * 8 * 4711 / 8192 ))

export CULPRIT_CACHE_DIR
CULPRIT_CACHE_DIR=$(mktemp -d)
trap 'rm -rf "$CULPRIT_CACHE_DIR"' EXIT
mkdir -p "$work"
for kind in straggler desync; do
  for form in traces logs; do
    dir="$work/$kind-$form"
    extra=()
    [ "$form" = logs ] && extra=(--no-traces)
    python3 "$root/bench/generate_hang.py" "$dir" --nodes "$nodes" --kind "$kind" --laggard "$laggard" "${extra[@]}" > /dev/null
  done
done
"$bin" diagnose "$work/straggler-logs" --format json > /dev/null  # warm the compile cache

best() {  # best wall seconds of $runs runs of `culprit diagnose DIR`, and the peak RSS (MB) of the last
  local dir=$1 t best_t="" rss
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f "%e %M" -o "$work/time" "$bin" diagnose "$dir" --format json > "$work/verdict.json"
    read -r t rss < "$work/time"
    if [ -z "$best_t" ] || awk "BEGIN{exit !($t < $best_t)}"; then best_t=$t; fi
  done
  echo "$best_t $((rss / 1024))"
}

echo "hang localisation: $((nodes * 8)) ranks on $nodes nodes, laggard rank $laggard; best of $runs"
printf '%-10s %-28s %10s %10s %12s\n' shape evidence "wall (s)" "RSS (MB)" "hang"
for kind in straggler desync; do
  read -r t_tr rss_tr < <(best "$work/$kind-traces")
  hang_tr=$(python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["hang"]; print(h["kind"] + (" " + ",".join(map(str, h["laggard_ranks"])) if h and h["laggard_ranks"] else "") if h else "none")' "$work/verdict.json")
  read -r t_lg rss_lg < <(best "$work/$kind-logs")
  hang_lg=$(python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["hang"]; print(h["kind"] + (" " + ",".join(map(str, h["laggard_ranks"])) if h and h["laggard_ranks"] else "") if h else "none")' "$work/verdict.json")
  printf '%-10s %-28s %10s %10s %12s\n' "$kind" "Flight Recorder + c10d lines" "$t_tr" "$rss_tr" "$hang_tr"
  printf '%-10s %-28s %10s %10s %12s\n' "$kind" "c10d lines only (peer)" "$t_lg" "$rss_lg" "$hang_lg"
  awk -v a="$t_tr" -v b="$t_lg" -v k="$kind" 'BEGIN { printf "%-10s dumps cost %.1fx the lines-only diagnosis\n", k, (b > 0 ? a / b : 0) }'
done

# The labels the generator wrote (expected.json) against the verdicts with dumps.
mkdir -p "$work/eval"
rm -f "$work/eval/"*
ln -sfn "$work/straggler-traces" "$work/eval/straggler"
ln -sfn "$work/desync-traces" "$work/eval/desync"
"$bin" eval "$work/eval" --threads 1 | tail -2
