#!/usr/bin/env bash
# Load test of `culprit serve` with wrk: one-shot attributions of a typical
# 64-node workload (a generated bundle with an injected NVLink Xid 149),
# reporting throughput and p50/p99 latency. See docs/service.md, "Performance".
#
#   bench/service/run_wrk.sh BIN [DURATION_S] [CONNECTIONS] [SERVER_THREADS] [BYTES_PER_NODE]
#   e.g. bench/service/run_wrk.sh build/cli/culprit 20 4 4 16K
#
# Needs wrk (scripts/install-deps.sh). The server binds 127.0.0.1 on a free
# port and is stopped with SIGTERM at the end.
set -euo pipefail
bin=$(realpath "${1:?usage: run_wrk.sh BIN [DURATION_S] [CONNECTIONS] [SERVER_THREADS] [BYTES_PER_NODE]}")
duration=${2:-20} conns=${3:-4} threads=${4:-4} per_node=${5:-16K}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
command -v wrk > /dev/null || { echo "run_wrk.sh: wrk is not installed (scripts/install-deps.sh)" >&2; exit 2; }
tmp=$(mktemp -d)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill -TERM "$server_pid" 2> /dev/null && wait "$server_pid" 2> /dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

python3 "$root/bench/generate_bundle.py" --nodes 64 --bytes-per-node "$per_node" --quiet "$tmp/bundle"
python3 "$here/bundle_to_ndjson.py" "$tmp/bundle" "$tmp/body.ndjson"
lines=$(($(wc -l < "$tmp/body.ndjson") - 1))
echo "workload: 64 nodes, $per_node of logs per node: $lines observations, $(wc -c < "$tmp/body.ndjson") request bytes"

# The body limit follows the request (a 100 MB workload is ~110 MB of NDJSON);
# the memory limits follow what such a request really holds (about 8 bytes
# per byte of short-line NDJSON, docs/service.md "Memory accounting").
body_bytes=$(wc -c < "$tmp/body.ndjson")
max_body=$(( body_bytes * 2 > 64 * 1024 * 1024 ? body_bytes * 2 : 64 * 1024 * 1024 ))
"$bin" serve --listen 127.0.0.1:0 --port-file "$tmp/port" --threads "$threads" --no-access-log \
  --max-body "$max_body" --max-session-bytes "$(( max_body * 6 ))" --max-total-bytes "$(( max_body * 6 * (conns + 1) ))" 2> "$tmp/serve.log" &
server_pid=$!
for _ in $(seq 1 600); do [ -f "$tmp/port" ] && break; sleep 0.2; done
[ -f "$tmp/port" ] || { echo "run_wrk.sh: the service did not start"; cat "$tmp/serve.log"; exit 1; }
url="http://127.0.0.1:$(cat "$tmp/port")"

# The verdict under load is the CLI's verdict.
"$bin" diagnose "$tmp/bundle" --format json > "$tmp/local.json"
curl -sf -X POST -H 'Content-Type: application/x-ndjson' --data-binary @"$tmp/body.ndjson" "$url/v1/attributions" > "$tmp/remote.json"
cmp -s "$tmp/local.json" "$tmp/remote.json" || { echo "run_wrk.sh: service verdict differs from the CLI verdict"; exit 1; }
echo "verdict: identical to culprit diagnose ($(python3 -c "import json,sys; o=json.load(open(sys.argv[1])); print(o['status'], o.get('domain'), o.get('culprit_nodes'))" "$tmp/local.json"))"

wrk_threads=$(( conns < 2 ? conns : 2 ))  # wrk needs connections >= threads
echo "wrk: ${duration}s, $conns connections, $wrk_threads wrk threads; server --threads $threads; $(nproc) cores shared by client and server"
CULPRIT_BENCH_BODY="$tmp/body.ndjson" wrk -t"$wrk_threads" -c"$conns" -d"${duration}s" --timeout 300s --latency -s "$here/post.lua" "$url/v1/attributions" | tee "$tmp/wrk.txt"
rps=$(awk '/Requests\/sec/ {print $2}' "$tmp/wrk.txt")
p50=$(awk '$1 == "50%" {print $2}' "$tmp/wrk.txt")
p99=$(awk '$1 == "99%" {print $2}' "$tmp/wrk.txt")
echo "SUMMARY: throughput ${rps} attributions/s, p50 ${p50}, p99 ${p99}"
