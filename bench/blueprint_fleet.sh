#!/usr/bin/env bash
# The blueprint at fleet scale: a generated 12,500-node (100k-GPU) cluster's
# ended attempts (bench/generate_fleet.py: a typical mix of 1-8 nodes, one
# 1,250-node attempt, a burst of 300 that ended within a minute), evidence
# from the Loki test server holding every query LATENCY seconds (0.1, a
# remote store's round trip), PromQL from a real Prometheus (Debian's; an
# empty TSDB, so every attempt's queries are asked and answered), verdicts
# into a real PostgreSQL through the shared queue (`culprit run --once
# --queue`). Servers on 127.0.0.1, stopped by PID.
#
# Prints:
#  1. the typical mix (TYPICAL attempts) with 1 replica and with 2 replicas
#     (each --concurrency CONC): attempts/s, peak RSS per replica, Loki
#     queries, and per attempt (--attempt-timings) p50/p99 of the wait in the
#     queue, collection, attribution and the store write;
#  2. the 1,250-node attempt alone: time from its run's start to its stored
#     verdict, and what it pulled from Loki;
#  3. the burst: 300 attempts queued at once, drained by 2 replicas;
#  4. bytes pulled from Loki for 40 typical attempts with and without the
#     catalog's push-down;
#  5. a static cluster of bundles (every example with a context, in-process,
#     no Loki): 1 replica vs 2 on one queue, each --concurrency 1: the time
#     ratio (two replicas sharing the work, not both doing all of it).
# The time from a job's end to its verdict adds the discovery wait: with
# Alertmanager's webhook about a second (tests/blueprint/check_alertmanager.sh),
# otherwise up to watch.interval. Nothing here asserts speed; the script
# fails only when an attempt is not attributed.
#
#   bench/blueprint_fleet.sh [CULPRIT]     TYPICAL=600 CONC=8 LATENCY=0.1 KEEP=1
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
culprit=$(readlink -f "${1:-$root/build/cli/culprit}")
typical=${TYPICAL:-600}
conc=${CONC:-8}
latency=${LATENCY:-0.1}
[ -x "$culprit" ] || { echo "blueprint_fleet.sh: no culprit binary at $culprit (build first)" >&2; exit 2; }
for tool in prometheus psql; do command -v $tool > /dev/null || { echo "blueprint_fleet.sh: $tool is needed" >&2; exit 2; }; done
. "$root/tests/blueprint/pg_server.sh"
D=$(mktemp -d /tmp/culprit-fleet.XXXXXX)
LOKI_PID="" PROM_PID=""
cleanup() {
  for p in $LOKI_PID $PROM_PID; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pg_stop
  if [ "${KEEP:-0}" = 1 ]; then echo "blueprint_fleet: kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
fail() { echo "blueprint_fleet: FAIL: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

python3 "$here/generate_fleet.py" "$D/fleet" --typical "$typical"
python3 "$root/tests/blueprint/loki_server.py" "$D/fleet/fixture.json" --port-file "$D/loki.port" --latency "$latency" \
  --request-log "$D/loki.requests" 2> "$D/loki.err" &
LOKI_PID=$!
PROM_PORT=$(free_port)
printf 'global:\n  scrape_interval: 1h\nscrape_configs: []\n' > "$D/prometheus.yml"
prometheus --config.file="$D/prometheus.yml" --storage.tsdb.path="$D/prom" --web.listen-address="127.0.0.1:$PROM_PORT" \
  > "$D/prometheus.log" 2>&1 &
PROM_PID=$!
pg_start "$D" > /dev/null || fail "PostgreSQL did not start"
for _ in $(seq 1 600); do [ -s "$D/loki.port" ] && curl -sf "http://127.0.0.1:$(cat "$D/loki.port")/ready" > /dev/null && break; sleep 0.5; done
curl -sf "http://127.0.0.1:$(cat "$D/loki.port")/ready" > /dev/null || fail "the Loki test server did not start: $(tail -3 "$D/loki.err")"
for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" > /dev/null && break; sleep 0.1; done
LOKI=http://127.0.0.1:$(cat "$D/loki.port")

config() {  # OUT WORKLOADS_FILE... (push_down true|false as $PUSH)
  {
    echo "cluster: fleet"
    echo "discovery:"
    echo "  static:"
    echo "    workloads:"
    cat "${@:2}" | sed 's/^/  /'
    cat <<CONF
collectors:
  loki:
    url: "$LOKI"
    host_label: host
    push_down: ${PUSH:-true}
    nodes_per_query: 50
    streams:
      - selector: '{job="node-logs"}'
        source_label: source
  promql:
    url: "http://127.0.0.1:$PROM_PORT"
output:
  stdout: none
CONF
  } > "$1"
}
db=0
# run_replicas N CONFIG CONCURRENCY TAG: N replicas on a fresh database;
# sets WALL (s) and writes $D/TAG.r*.{log,time,timings}
run_replicas() {
  local n=$1 cfg=$2 c=$3 tag=$4 pids=() t0 t1
  db=$((db + 1))
  pg_createdb "f$db" > /dev/null
  local url="$PG_URL_BASE/f$db"
  t0=$(date +%s.%N)
  for r in $(seq 1 "$n"); do
    /usr/bin/time -f "%e %M %U %S" -o "$D/$tag.r$r.time" "$culprit" run --config "$cfg" --once --queue --replica "r$r" \
      --concurrency "$c" --store "$url" --attempt-timings "$D/$tag.r$r.timings" 2> "$D/$tag.r$r.log" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || fail "$tag: a replica exited $? ($(tail -2 "$D/$tag".r*.log))"; done
  t1=$(date +%s.%N)
  WALL=$(echo "$t1 - $t0" | bc)
  local stored
  stored=$(psql -X -q -At "$url" -c "SELECT count(*) FROM verdicts")
  local wanted
  wanted=$(grep -c '^    - id:' "$cfg")
  [ "$stored" = "$wanted" ] || fail "$tag: $stored verdicts stored for $wanted attempts"
  TAG_URL=$url
}
# split TAG: p50/p99 of the timings of a run (all its replicas)
split() {
  cat "$D/$1".r*.timings | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0
parts = {"queue wait": [(r["started_ns"] - r["queued_ns"]) / 1e6 for r in rows if r["queued_ns"]],
         "collection": [r["collect_ms"] for r in rows], "attribution": [r["attribute_ms"] for r in rows],
         "store": [r["store_ms"] for r in rows],
         "queued -> stored": [(r["stored_ns"] - r["queued_ns"]) / 1e6 for r in rows if r["queued_ns"]]}
print("    " + "  ".join(f"{k} p50 {pct(v, .5):.0f} ms / p99 {pct(v, .99):.0f} ms" for k, v in parts.items()))'
}
rss_max() { cat "$D/$1".r*.time | awk '{ if ($2 > m) m = $2 } END { printf "%.0f", m / 1024 }'; }
cpu_ms_per() { cat "$D/$1".r*.time | awk -v n="$2" '{ c += $3 + $4 } END { printf "%.1f", c * 1000 / n }'; }  # TAG ATTEMPTS

echo "blueprint fleet: $(nproc) cores; Loki test server at ${latency} s per query; a real Prometheus and PostgreSQL"
config "$D/typical.yaml" "$D/fleet/typical.yaml"
# The test server applies each line filter once over the whole fixture, the
# first time it sees it (loki_server.py, passing_lines): a warm-up run of a
# few attempts pays that before anything is timed.
head -n $((5 * 6)) "$D/fleet/typical.yaml" > "$D/warm.workloads"
config "$D/warm.yaml" "$D/warm.workloads"
run_replicas 1 "$D/warm.yaml" "$conc" warm
echo "1. typical mix: $typical attempts of 1-8 nodes, --concurrency $conc per replica"
for n in 1 2; do
  : > "$D/loki.requests"
  run_replicas "$n" "$D/typical.yaml" "$conc" "typical$n"
  printf '  %d replica%s: %6.1f s  %5.1f attempts/s  peak RSS %s MB per replica  %s Loki queries  culprit CPU %s ms per attempt\n' \
    "$n" "$([ "$n" = 1 ] || echo s)" "$WALL" "$(echo "$typical / $WALL" | bc -l)" "$(rss_max "typical$n")" \
    "$(wc -l < "$D/loki.requests")" "$(cpu_ms_per "typical$n" "$typical")"
  split "typical$n"
done

echo "2. one attempt of 1,250 nodes (10k GPUs), alone, --concurrency $conc"
config "$D/big.yaml" "$D/fleet/big.yaml"
: > "$D/loki.requests"
run_replicas 1 "$D/big.yaml" "$conc" big
python3 - "$D/big.r1.timings" "$WALL" "$(wc -l < "$D/loki.requests")" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
print(f"  run start -> verdict stored {float(sys.argv[2]):.1f} s (collection {r['collect_ms'] / 1000:.1f} s, attribution "
      f"{r['attribute_ms'] / 1000:.1f} s, store {r['store_ms'] / 1000:.2f} s); {r['wire_bytes'] / 1e6:.1f} MB from Loki in "
      f"{sys.argv[3]} queries")
PY
echo "   peak RSS $(rss_max big) MB"

echo "3. fabric-fault burst: 300 attempts of 4 nodes queued at once, 2 replicas, --concurrency $conc"
config "$D/burst.yaml" "$D/fleet/burst.yaml"
run_replicas 2 "$D/burst.yaml" "$conc" burst
printf '  drained in %.1f s (%.1f attempts/s), peak RSS %s MB per replica, culprit CPU %s ms per attempt\n' "$WALL" \
  "$(echo "300 / $WALL" | bc -l)" "$(rss_max burst)" "$(cpu_ms_per burst 300)"
split burst

echo "4. bytes pulled from Loki, 40 typical attempts"
head -n $((40 * 6)) "$D/fleet/typical.yaml" > "$D/sample.yaml"
for push in true false; do
  PUSH=$push config "$D/push-$push.yaml" "$D/sample.yaml"
  : > "$D/loki.requests"
  run_replicas 1 "$D/push-$push.yaml" "$conc" "push-$push"
  python3 - "$D/loki.requests" "$D/push-$push.r1.timings" "$push" <<'PY'
import json, sys
answers = sum(json.loads(l)["bytes"] for l in open(sys.argv[1]))
wire = sum(json.loads(l)["wire_bytes"] for l in open(sys.argv[2]))
print(f"  push_down: {sys.argv[3]:5}  Loki's answers {answers / 1e6:6.2f} MB; all of the attempts' traffic "
      f"(requests with their filters, answers, PromQL) {wire / 1e6:6.2f} MB")
PY
done

echo "5. static cluster: every example bundle, in-process, 1 replica vs 2 on one queue (--concurrency 1 each)"
. "$root/tests/blueprint/example_bundles.sh"
example_bundles "$root"
bundles=$BUNDLE_COUNT
printf 'cluster: static-fleet\ndiscovery:\n  static:\n    bundles: [%s]\noutput:\n  stdout: none\n' "$BUNDLES" > "$D/static.yaml"
run_static() {  # N TAG
  db=$((db + 1)); pg_createdb "f$db" > /dev/null
  local pids=() t0
  t0=$(date +%s.%N)
  for r in $(seq 1 "$1"); do
    "$culprit" run --config "$D/static.yaml" --once --queue --replica "r$r" --concurrency 1 --store "$PG_URL_BASE/f$db" \
      2> "$D/$2.r$r.log" & pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || fail "$2: a replica exited $?"; done
  WALL=$(echo "$(date +%s.%N) - $t0" | bc)
  [ "$(psql -X -q -At "$PG_URL_BASE/f$db" -c "SELECT count(*) FROM verdicts")" = "$bundles" ] || fail "$2: not every bundle attributed"
}
run_static 1 static1; one=$WALL
run_static 2 static2; two=$WALL
printf '  %d bundles: 1 replica %.1f s, 2 replicas %.1f s: %.2fx the time of one\n' "$bundles" "$one" "$two" "$(echo "$two / $one" | bc -l)"
