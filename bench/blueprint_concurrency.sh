#!/usr/bin/env bash
# The blueprint with attempts in flight at once, against a remote log store.
# ATTEMPTS static workloads of 4 nodes each (default 24) read their evidence
# from the Loki test server (tests/blueprint/loki_server.py, the 64-node
# fixture of tests/blueprint/make_loki_fixture.py), which holds every query
# LATENCY seconds (default 0.1, a remote store's round trip). `culprit run
# --once` attributes them into a fresh SQLite store with --concurrency 1 and
# then with each of LEVELS (default "2 4 8"); the script prints wall time,
# attempts per second and peak RSS of each, the speed-up over 1, and fails
# when a run's stdout differs from the run with 1 (same verdicts, same
# order). It asserts nothing about speed.
#
#   bench/blueprint_concurrency.sh [CULPRIT]      ATTEMPTS=24 LATENCY=0.1 LEVELS="2 4 8"
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
culprit=$(readlink -f "${1:-$root/build/cli/culprit}")
attempts=${ATTEMPTS:-24}
latency=${LATENCY:-0.1}
levels=${LEVELS:-2 4 8}
[ -x "$culprit" ] || { echo "blueprint_concurrency.sh: no culprit binary at $culprit (build first)" >&2; exit 2; }
D=$(mktemp -d /tmp/culprit-bp-bench.XXXXXX)
LOKI_PID=""
cleanup() { [ -n "$LOKI_PID" ] && kill "$LOKI_PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$D"; }
trap cleanup EXIT

python3 "$root/tests/blueprint/make_loki_fixture.py" "$root/examples/xid79-unnumbered" "$D/fixture.json"
python3 "$root/tests/blueprint/loki_server.py" "$D/fixture.json" --port-file "$D/port" --latency "$latency" \
  --request-log "$D/requests.jsonl" 2> "$D/loki.err" &
LOKI_PID=$!
for _ in $(seq 1 100); do [ -s "$D/port" ] && break; sleep 0.1; done
[ -s "$D/port" ] || { cat "$D/loki.err"; echo "the Loki test server did not start" >&2; exit 1; }
url=http://127.0.0.1:$(cat "$D/port")

{
  echo "cluster: bench"
  echo "discovery:"
  echo "  static:"
  echo "    workloads:"
  for i in $(seq 0 $((attempts - 1))); do
    first=$(( (i * 4) % 64 + 1 ))
    printf '      - id: "w%03d"\n        start: "2026-05-11T06:00:00Z"\n        end: "2026-05-11T09:02:05Z"\n' "$i"
    printf '        nodes: "node-[%02d-%02d]"\n        state: FAILED\n        exit_code: 1\n' "$first" $((first + 3))
  done
  cat <<CONF
collectors:
  loki:
    url: "$url"
    host_label: host
    limit: 1000
    chunk: 30m
    nodes_per_query: 40
    streams:
      - selector: '{job="node-logs"}'
        source_label: source
output:
  stdout: jsonl
CONF
} > "$D/config.yaml"

echo "blueprint concurrency: $attempts attempts of 4 nodes, Loki test server at ${latency} s per query; $(nproc) cores"
printf '%-12s %9s %11s %10s %9s %9s\n' concurrency "wall (s)" attempts/s "queries" "RSS (MB)" speed-up
base=""
for c in 1 $levels; do
  : > "$D/requests.jsonl"
  /usr/bin/time -f "%e %M" -o "$D/time" "$culprit" run --config "$D/config.yaml" --once --store "sqlite:$D/c$c.db" \
    --concurrency "$c" > "$D/c$c.jsonl" 2> "$D/c$c.log" || { tail -3 "$D/c$c.log"; echo "culprit run --concurrency $c failed" >&2; exit 1; }
  read -r wall rss < "$D/time"
  [ "$(wc -l < "$D/c$c.jsonl")" = "$attempts" ] || { echo "--concurrency $c: $(wc -l < "$D/c$c.jsonl") verdicts for $attempts attempts" >&2; exit 1; }
  if [ "$c" != 1 ]; then cmp -s "$D/c1.jsonl" "$D/c$c.jsonl" || { echo "--concurrency $c printed other verdicts than 1" >&2; exit 1; }; fi
  [ -n "$base" ] || base=$wall
  awk -v c="$c" -v w="$wall" -v n="$attempts" -v q="$(wc -l < "$D/requests.jsonl")" -v r="$rss" -v b="$base" \
    'BEGIN { printf "%-12s %9.2f %11.1f %10s %9d %8.2fx\n", c, w, n / w, q, r / 1024, b / w }'
done
echo "every level printed the verdicts of --concurrency 1, in the same order"
