#!/usr/bin/env bash
# End-to-end `culprit diagnose` on a large generated bundle, with each engine.
#
#   bench/diagnose_bench.sh [BUILD_DIR] [BUNDLE_DIR] [-- generate_bundle.py options]
#
# Generates the bundle once (default: 8 nodes x 64 MiB, an injected NVLink
# fault, seed 1, error rate 0.01 so the rules see many events), warms a
# private compile cache, then times `diagnose --format json` RUNS times (default
# 3) per engine, checks that both engines give the same verdict (the `engine`
# block aside) and prints the best and median wall times. hyperfine is used
# when installed; plain `date` timing otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
bundle=${2:-/tmp/culprit-bench-bundle}
shift $(( $# >= 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
gen_args=("$@")
[ ${#gen_args[@]} -gt 0 ] || gen_args=(--nodes 8 --bytes-per-node 64M --inject nvlink-xid149 --seed 1 --error-rate 0.01)
runs=${RUNS:-3}
bin="$build/cli/culprit"
[ -x "$bin" ] || { echo "no culprit binary at $bin (build first)"; exit 2; }

if [ ! -f "$bundle/context.json" ]; then
  echo "generating $bundle: ${gen_args[*]}"
  python3 "$root/bench/generate_bundle.py" "$bundle" --quiet "${gen_args[@]}"
fi
echo "bundle: $bundle ($(du -sh "$bundle" | cut -f1), $(find "$bundle/logs" -type f | wc -l) log files)"

export CULPRIT_CACHE_DIR
CULPRIT_CACHE_DIR=$(mktemp -d)
tmp=$(mktemp -d)
trap 'rm -rf "$CULPRIT_CACHE_DIR" "$tmp"' EXIT

for engine in jit interp; do
  "$bin" diagnose "$bundle" --format json --engine "$engine" > "$tmp/$engine.json"  # warm-up: fills the cache
done
python3 "$root/tests/golden/verdict_tool.py" strip-engine "$tmp/jit.json" > "$tmp/jit.stripped"
python3 "$root/tests/golden/verdict_tool.py" strip-engine "$tmp/interp.json" > "$tmp/interp.stripped"
if cmp -s "$tmp/jit.stripped" "$tmp/interp.stripped"; then
  summary=$(python3 -c 'import json,sys
v = json.load(open(sys.argv[1]))
src = v["coverage"]["sources"].values()
print("{}, {} symptoms, {} events from {} lines".format(v["status"], len(v["symptoms"]),
      sum(s["events"] for s in src), sum(s["lines_read"] for s in src)))' "$tmp/jit.json")
  echo "verdicts: identical on both engines ($summary)"
else
  echo "verdicts DIFFER between the engines"; diff "$tmp/jit.stripped" "$tmp/interp.stripped" | head -20; exit 1
fi

if command -v hyperfine > /dev/null; then
  hyperfine --warmup 1 --runs "$runs" \
    -n jit "$bin diagnose $bundle --format json --engine jit" \
    -n interp "$bin diagnose $bundle --format json --engine interp"
  exit 0
fi
for engine in jit interp; do
  times=()
  for ((i = 0; i < runs; i++)); do
    start=$(date +%s.%N)
    "$bin" diagnose "$bundle" --format json --engine "$engine" > /dev/null
    end=$(date +%s.%N)
    times+=("$(echo "$end - $start" | bc -l)")
  done
  sorted=$(printf '%s\n' "${times[@]}" | sort -n)
  printf '%-7s best %.3f s  median %.3f s  (%s runs)\n' "$engine" "$(head -1 <<<"$sorted")" \
    "$(sed -n "$(( (runs + 1) / 2 ))p" <<<"$sorted")" "$runs"
done
