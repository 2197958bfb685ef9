#!/usr/bin/env bash
# The PromQL collector against a real Prometheus (Debian's prometheus 2.42):
# DCGM-exporter series backfilled with promtool at fixed historic times, the
# server started on 127.0.0.1 and stopped by its PID. A workload with no log
# at all gets a metric-only root cause (an XID 79 the DCGM gauge changed to on
# one GPU of one node), the collector report names the nodes it covered, a
# node without series is reported missing, and a Prometheus that is down
# gives an error report and no cause.
#
#   check_promql.sh CULPRIT
set -euo pipefail
CULPRIT=$(readlink -f "$1")
D=$(mktemp -d /tmp/culprit-promql.XXXXXX)
PROM_PID=""
cleanup() {
  if [ -n "$PROM_PID" ]; then kill "$PROM_PID" 2>/dev/null || true; wait "$PROM_PID" 2>/dev/null || true; fi
  [ -n "${KEEP:-}" ] || rm -rf "$D"
}
trap cleanup EXIT
fail() { echo "check_promql: FAIL: $*"; [ -f "$D/prometheus.log" ] && tail -5 "$D/prometheus.log"; exit 1; }
command -v prometheus >/dev/null && command -v promtool >/dev/null || fail "prometheus and promtool are needed (apt-get install prometheus)"

# --- fixtures: 2024-01-01T00:00:00Z .. +20 min, 15 s resolution, nodes
# node-01..node-03 with 2 GPUs each (node-04 exports nothing). GPU 1 of
# node-02 raises XID 79 at +10 min; every other XID gauge holds an old value
# (node-03 GPU 0 has shown 13 since before the window: not news).
BASE=1704067200
{
  echo '# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.'
  echo '# TYPE DCGM_FI_DEV_XID_ERRORS gauge'
  for n in 01 02 03; do for g in 0 1; do
    for i in $(seq 0 80); do t=$((BASE + i*15)); v=0
      [ "$n$g" = 021 ] && [ "$i" -ge 40 ] && v=79
      [ "$n$g" = 030 ] && v=13
      echo "DCGM_FI_DEV_XID_ERRORS{Hostname=\"node-$n\",gpu=\"$g\",UUID=\"GPU-$n$g\",job=\"dcgm\",instance=\"node-$n:9400\"} $v $t"
    done; done; done
  echo '# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).'
  echo '# TYPE DCGM_FI_DEV_GPU_TEMP gauge'
  for n in 01 02 03; do for g in 0 1; do
    for i in $(seq 0 80); do echo "DCGM_FI_DEV_GPU_TEMP{Hostname=\"node-$n\",gpu=\"$g\",UUID=\"GPU-$n$g\",job=\"dcgm\",instance=\"node-$n:9400\"} $((50 + i % 7)) $((BASE + i*15))"; done
  done; done
  echo '# EOF'
} > "$D/backfill.om"
mkdir -p "$D/data"
promtool tsdb create-blocks-from openmetrics "$D/backfill.om" "$D/data" > "$D/promtool.log" 2>&1 || { cat "$D/promtool.log"; fail "promtool backfill"; }

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'global:\n  scrape_interval: 1m\nscrape_configs: []\n' > "$D/prometheus.yml"
t0=$(date +%s.%N)
prometheus --config.file="$D/prometheus.yml" --storage.tsdb.path="$D/data" --storage.tsdb.retention.time=100y \
  --web.listen-address="127.0.0.1:$PORT" > "$D/prometheus.log" 2>&1 &
PROM_PID=$!
for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$PORT/-/ready" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$PORT/-/ready" >/dev/null || fail "prometheus did not become ready"
echo "check_promql: prometheus $(curl -s "http://127.0.0.1:$PORT/api/v1/status/buildinfo" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["version"])') ready on 127.0.0.1:$PORT in $(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')") s"

config() {  # config FILE URL [extra promql keys]
  cat > "$1" <<CONF
cluster: prom
discovery:
  static:
    workloads:
      - id: "metric-only"
        scheduler: kubernetes
        start: "2024-01-01T00:02:00Z"
        end: "2024-01-01T00:15:00Z"
        nodes: "node-[01-04]"
        state: FAILED
        exit_code: 1
collectors:
  promql:
    url: "$2"
    step: 15s
${3:-}
attribution:
  slack_before: 0s
  slack_after: 0s
output:
  stdout: jsonl
CONF
}

# --- the default queries (DCGM and InfiniBand fields)
config "$D/prom.yaml" "http://127.0.0.1:$PORT"
grep -q "collectors.promql (12 queries)" <<< "$("$CULPRIT" run --config "$D/prom.yaml" --check)" || fail "--check: $("$CULPRIT" run --config "$D/prom.yaml" --check)"
"$CULPRIT" run --config "$D/prom.yaml" --once --store "sqlite:$D/a.db" > "$D/a.jsonl" 2> "$D/a.err" || { cat "$D/a.err"; fail "culprit run exited $?"; }
python3 - "$D/a.jsonl" <<'PY' || fail "metric-only verdict"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 1, len(lines)
v = lines[0]["verdict"]
print("check_promql: verdict", v["status"], v.get("domain"), v.get("sub_domain"), v.get("culprit_nodes"))
assert v["status"] == "attributed", v["status"]
assert v["domain"] == "hardware", v["domain"]
assert v["culprit_nodes"] == ["node-02"], v["culprit_nodes"]
rc = json.dumps(v["root_cause"])
assert "XID 79" in rc and "gpu=1" in rc, rc
sym = [s for s in v["symptoms"] if s["kind"] == "gpu.fallen_off_bus"][0]
assert sym["first"] == "2024-01-01T00:10:00Z", sym["first"]  # the first sample of the new value
ev = sym["evidence"][0]
assert ev["source"] == "metrics" and ev["text"] == "DCGM_FI_DEV_XID_ERRORS{gpu=1} 79", ev
assert "node-03" not in v["culprit_nodes"], "the XID 13 gauge held since before the window is not news"
reps = [r for r in v["coverage"]["collectors"] if r["collector"] == "promql"]
assert len(reps) == 1, v["coverage"]["collectors"]
r = reps[0]
print("check_promql: report", json.dumps(r, sort_keys=True))
assert r["source"] == "metrics"
assert r["nodes_covered"] == ["node-01", "node-02", "node-03"], r["nodes_covered"]
assert r["nodes_expected"] == ["node-01", "node-02", "node-03", "node-04"], r
assert r["status"] == "partial", r["status"]
assert "node-04" in json.dumps(r), r
# 2 fields with series x 3 nodes x 2 GPUs x the samples of 00:02..00:15 at 15 s
assert r["observations"] == 2 * 3 * 2 * 53, r["observations"]
PY

# --- a custom query with {nodes} and {hostname_label}, labels kept as asked
config "$D/custom.yaml" "http://127.0.0.1:$PORT/" '    queries:
      - query: "max by ({hostname_label}, gpu) (DCGM_FI_DEV_XID_ERRORS{ {hostname_label}=~\"{nodes}\" })"
        name: DCGM_FI_DEV_XID_ERRORS
        labels: [gpu]'
"$CULPRIT" run --config "$D/custom.yaml" --once --store "sqlite:$D/b.db" > "$D/b.jsonl" 2> "$D/b.err" || { cat "$D/b.err"; fail "custom query run"; }
python3 - "$D/a.jsonl" "$D/b.jsonl" <<'PY' || fail "custom query verdict"
import json, sys
a, b = (json.loads(open(f).readline())["verdict"] for f in sys.argv[1:3])
for k in ("status", "domain", "sub_domain", "culprit_nodes"):
    assert a[k] == b[k], (k, a[k], b[k])
r = [r for r in b["coverage"]["collectors"] if r["collector"] == "promql"][0]
assert r["observations"] == 3 * 2 * 53, r["observations"]
PY

# --- a PromQL error answer is quoted in the report, and degrades nothing into a guess
config "$D/bad.yaml" "http://127.0.0.1:$PORT" '    queries:
      - query: "rate(DCGM_FI_DEV_XID_ERRORS[5m]"'
"$CULPRIT" run --config "$D/bad.yaml" --once --store "sqlite:$D/c.db" > "$D/c.jsonl" 2> "$D/c.err" || true
python3 - "$D/c.jsonl" <<'PY' || fail "error answer"
import json, sys
v = json.loads(open(sys.argv[1]).readline())["verdict"]
r = [r for r in v["coverage"]["collectors"] if r["collector"] == "promql"][0]
assert r["status"] == "failed", r
assert "bad_data" in json.dumps(r) or "parse error" in json.dumps(r), r
assert v["status"] != "attributed", v["status"]
print("check_promql: a bad query:", r.get("errors") or r.get("reason"))
PY

# --- Prometheus down: the report says so and the verdict names no cause
kill "$PROM_PID"; wait "$PROM_PID" 2>/dev/null || true; PROM_PID=""
config "$D/down.yaml" "http://127.0.0.1:$PORT" '    retries: 1
    timeout: 2s'
"$CULPRIT" run --config "$D/down.yaml" --once --store "sqlite:$D/d.db" > "$D/d.jsonl" 2> "$D/d.err" || true
python3 - "$D/d.jsonl" <<'PY' || fail "prometheus down"
import json, sys
v = json.loads(open(sys.argv[1]).readline())["verdict"]
r = [r for r in v["coverage"]["collectors"] if r["collector"] == "promql"][0]
assert r["status"] == "failed" and r["nodes_covered"] == [], r
assert v["status"] in ("unattributed", "ambiguous"), v["status"]
print("check_promql: prometheus down:", v["status"], "/", r.get("reason"))
PY
echo "check_promql: ok"
