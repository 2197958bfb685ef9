#!/usr/bin/env bash
# The Loki collector against tests/blueprint/loki_server.py (Loki's
# query_range and series API; Loki itself has no Debian package), on a
# 64-node workload built from examples/xid79-unnumbered (node-17's GPU fell
# off the bus; NCCL timeouts on every node) and a 4-node workload whose
# node-68 has no kernel stream:
#   - the 64-node verdict names node-17, with and without push-down, and the
#     push-down saving (response bytes with and without the catalog's line
#     filter) is printed;
#   - pages (limit), time chunks and node batches are all exercised;
#   - 429 and 503 answers are retried; a tenant (X-Scope-OrgID) is sent;
#   - the node without a kernel stream is reported missing and the verdict
#     blames nobody; Loki refusing the tenant gives a failed report.
#
#   check_loki.sh CULPRIT SOURCE_DIR
set -euo pipefail
CULPRIT=$(readlink -f "$1")
ROOT=$(readlink -f "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d /tmp/culprit-loki.XXXXXX)
LOKI_PID=""
stop_loki() {
  if [ -n "$LOKI_PID" ]; then kill "$LOKI_PID" 2>/dev/null || true; wait "$LOKI_PID" 2>/dev/null || true; LOKI_PID=""; fi
}
cleanup() { stop_loki; [ -n "${KEEP:-}" ] || rm -rf "$D"; }
trap cleanup EXIT
fail() { echo "check_loki: FAIL: $*"; exit 1; }

python3 "$HERE/make_loki_fixture.py" "$ROOT/examples/xid79-unnumbered" "$D/fixture.json"
start_loki() {  # start_loki LOG [server options]
  stop_loki
  rm -f "$D/port"
  local log=$1; shift
  python3 "$HERE/loki_server.py" "$D/fixture.json" --port-file "$D/port" --request-log "$log" "$@" 2> "$D/loki.err" &
  LOKI_PID=$!
  for _ in $(seq 1 100); do [ -s "$D/port" ] && break; sleep 0.1; done
  [ -s "$D/port" ] || { cat "$D/loki.err"; fail "the Loki test server did not start"; }
  URL=http://127.0.0.1:$(cat "$D/port")
  grep -q ready <<< "$(curl -sf "$URL/ready")" || fail "/ready"
}

config() {  # config FILE [extra loki keys]
  cat > "$1" <<CONF
cluster: loki
discovery:
  static:
    workloads:
      # From 06:00: the healthy nodes' last kernel lines (06:06-07:15) are in
      # the window, so their kernel streams exist for it.
      - id: "xid79-64"
        start: "2026-05-11T06:00:00Z"
        end: "2026-05-11T09:02:05Z"
        nodes: "node-[01-64]"
        state: FAILED
        exit_code: 1
      - id: "nccl-only-4"
        start: "2026-05-11T06:00:00Z"
        end: "2026-05-11T09:02:05Z"
        nodes: "node-[65-68]"
        state: FAILED
        exit_code: 1
collectors:
  loki:
    url: "$URL"
    host_label: host
    limit: 1000
    chunk: 30m
    nodes_per_query: 40
    streams:
      - selector: '{job="node-logs"}'
        source_label: source
${2:-}
output:
  stdout: jsonl
CONF
}

verdicts() {  # verdicts JSONL -> checks, prints the summary
  python3 - "$1" <<'PY'
import json, sys
v = {json.loads(l)["attempt"]["key"]: json.loads(l)["verdict"] for l in open(sys.argv[1])}
a, b = v["static/loki/xid79-64"], v["static/loki/nccl-only-4"]
assert (a["status"], a["domain"], a["sub_domain"], a["culprit_nodes"]) == ("attributed", "hardware", "gpu.fallen_off_bus", ["node-17"]), \
    (a["status"], a["domain"], a["sub_domain"], a["culprit_nodes"])
reps = {r["source"]: r for r in a["coverage"]["collectors"] if r["collector"] == "loki"}
assert set(reps) >= {"app", "kernel"}, reps.keys()
for s in ("app", "kernel"):
    assert reps[s]["status"] == "ok" and len(reps[s]["nodes_covered"]) == 64, reps[s]
assert b["status"] in ("unattributed", "ambiguous") and b["culprit_nodes"] == [], (b["status"], b["culprit_nodes"])
k = [r for r in b["coverage"]["collectors"] if r["collector"] == "loki" and r["source"] == "kernel"][0]
assert k["status"] == "partial" and k["nodes_covered"] == ["node-65", "node-66", "node-67"] and "node-68" in k["reason"], k
assert "node-68" in b["coverage"]["sources"]["kernel"]["nodes_missing"], b["coverage"]["sources"]["kernel"]
print(f"  xid79-64: {a['status']} {a['sub_domain']} on {a['culprit_nodes']}; kernel {reps['kernel']['observations']} lines, "
      f"app {reps['app']['observations']} lines; nccl-only-4: {b['status']}, kernel report: {k['reason']}")
PY
}

wire() {  # wire REQUEST_LOG -> "pages bytes all_bytes tail_requests": query_range pages read forward,
         # the bytes of every query_range answer, of every answer, and the newest-first tail queries
  python3 -c "
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
q = [x for x in r if x['path'].endswith('query_range')]
pages = [x for x in q if x.get('direction') == 'forward']
print(len(pages), sum(x['bytes'] for x in q), sum(x['bytes'] for x in r), len(q) - len(pages))" "$1"
}

# --- push-down (the default)
start_loki "$D/req-filtered.log"
config "$D/loki.yaml"
grep -q "collectors.loki (1 stream)" <<< "$("$CULPRIT" run --config "$D/loki.yaml" --check)" || fail "--check"
t0=$(date +%s.%N)
"$CULPRIT" run --config "$D/loki.yaml" --once --store "sqlite:$D/f.db" > "$D/f.jsonl" 2> "$D/f.err" || { cat "$D/f.err"; fail "run with push-down"; }
t1=$(date +%s.%N)
echo "check_loki: with push-down ($(python3 -c "print(f'{$t1 - $t0:.1f}')") s):"
verdicts "$D/f.jsonl" || fail "verdicts with push-down"
grep -q 'over the network' "$D/f.err" || fail "the attempt line does not say what crossed the network"
python3 - "$D/req-filtered.log" <<'PY' || fail "the queries sent"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
q = [x["query"] for x in r if x["path"].endswith("query_range")]
assert q and all('|~ "(?i)' in x for x in q), q[:2]
assert all('host=~"' in x for x in q), q[:1]
assert any("node-40" in x and "node-41" not in x for x in q), "node batches of 40"
assert any(x["path"].endswith("/series") for x in r), "no series request"
assert all(x["status"] == 200 for x in r), [x for x in r if x["status"] != 200][:2]
PY
read -r nf bf af tf < <(wire "$D/req-filtered.log")

# --- the same without push-down: every line crosses the network
start_loki "$D/req-all.log"
config "$D/all.yaml" "    push_down: false"
"$CULPRIT" run --config "$D/all.yaml" --once --store "sqlite:$D/a.db" > "$D/a.jsonl" 2> "$D/a.err" || { cat "$D/a.err"; fail "run without push-down"; }
echo "check_loki: without push-down:"
verdicts "$D/a.jsonl" || fail "verdicts without push-down"
read -r na ba aa ta < <(wire "$D/req-all.log")
# The line filter loses no event: the same symptoms, states and counts.
python3 - "$D/f.jsonl" "$D/a.jsonl" <<'PY' || fail "push-down changed the symptoms"
import json, sys
def symptoms(f):
    return {json.loads(l)["attempt"]["key"]: sorted((s["id"], s["state"], s["count"], s["evidence_total"]) for s in json.loads(l)["verdict"]["symptoms"])
            for l in open(f)}
f, a = symptoms(sys.argv[1]), symptoms(sys.argv[2])
assert f == a, [(k, set(f[k]) ^ set(a[k])) for k in f if f[k] != a.get(k)]
print(f"check_loki: push-down kept every symptom ({sum(len(v) for v in f.values())}, with their counts and evidence totals)")
PY
python3 -c "
import sys
nf, bf, na, ba, tf, ta = map(int, sys.argv[1:7])
print(f'check_loki: push-down saving on 68 nodes: query_range answers {ba} B in {na} pages without the line filter, '
      f'{bf} B in {nf} pages and {tf} newest-first progress queries with it: {ba / max(bf, 1):.1f}x fewer bytes')
assert na > nf, 'pages: the unfiltered run must need more requests'
assert bf * 3 < ba, 'the line filter must cut the answer bytes at least 3x'
# Progress lines (keep last N) come as one newest-first query per node batch
# and selector, not as every step line of the log, and not per node.
assert int(ta) == 0 and 1 <= int(tf) <= 3, f'tail queries: {tf} with push-down, {ta} without'
" "$nf" "$bf" "$na" "$ba" "$tf" "$ta" || fail "push-down saving"

# --- 429 and 503 are retried; the tenant header is sent
start_loki "$D/req-retry.log" --tenant team-a --fail 429,503
config "$D/tenant.yaml" "    tenant: team-a
    retries: 3"
"$CULPRIT" run --config "$D/tenant.yaml" --once --store "sqlite:$D/t.db" > "$D/t.jsonl" 2> "$D/t.err" || { cat "$D/t.err"; fail "run with retries"; }
verdicts "$D/t.jsonl" > /dev/null || fail "verdicts after retries"
python3 -c "
import json, sys
s = [x['status'] for x in map(json.loads, open(sys.argv[1])) if x['path'].endswith('query_range')]
assert s[:2] == [429, 503] and s.count(429) == 1 and s.count(503) == 1, s[:5]
" "$D/req-retry.log" || fail "429/503 were not retried"
echo "check_loki: 429 and 503 answers were retried, X-Scope-OrgID sent"

# --- a tenant Loki refuses: failed reports, no cause
start_loki "$D/req-401.log" --tenant team-a
config "$D/other.yaml" "    tenant: team-b"
"$CULPRIT" run --config "$D/other.yaml" --once --store "sqlite:$D/o.db" > "$D/o.jsonl" 2> "$D/o.err" || true
python3 - "$D/o.jsonl" <<'PY' || fail "a refused tenant"
import json, sys
for l in open(sys.argv[1]):
    v = json.loads(l)["verdict"]
    reps = [r for r in v["coverage"]["collectors"] if r["collector"] == "loki"]
    assert reps and all(r["status"] == "failed" for r in reps), reps
    assert "401" in json.dumps(reps), reps
    assert v["status"] != "attributed", v["status"]
print("check_loki: a refused tenant:", reps[0]["reason"], "/", reps[0]["errors"][0][-60:])
PY
# --- every bundle of examples/ (labelled and real incidents) through Loki,
# with and without the line filter: the same symptoms for every workload.
python3 "$HERE/make_loki_corpus.py" "$ROOT/examples" "$D/fixture.json" "$D/corpus-workloads.yaml"
corpus_config() {  # corpus_config FILE PUSH_DOWN
  { printf 'cluster: corpus\ndiscovery:\n  static:\n    workloads:\n'; cat "$D/corpus-workloads.yaml"
    printf 'collectors:\n  loki:\n    url: "%s"\n    push_down: %s\n    streams:\n      - selector: '"'"'{job="corpus"}'"'"'\n        source_label: source\noutput:\n  stdout: jsonl\n' "$URL" "$2"; } > "$1"
}
start_loki "$D/req-corpus-f.log"
corpus_config "$D/corpus-f.yaml" true
"$CULPRIT" run --config "$D/corpus-f.yaml" --once --store "sqlite:$D/cf.db" > "$D/cf.jsonl" 2> "$D/cf.err" || { tail -3 "$D/cf.err"; fail "corpus with push-down"; }
start_loki "$D/req-corpus-a.log"
corpus_config "$D/corpus-a.yaml" false
"$CULPRIT" run --config "$D/corpus-a.yaml" --once --store "sqlite:$D/ca.db" > "$D/ca.jsonl" 2> "$D/ca.err" || { tail -3 "$D/ca.err"; fail "corpus without push-down"; }
read -r ncf bcf _ < <(wire "$D/req-corpus-f.log")
read -r nca bca _ < <(wire "$D/req-corpus-a.log")
python3 - "$D/cf.jsonl" "$D/ca.jsonl" "$bcf" "$bca" <<'PY' || fail "push-down changed a verdict of the corpus"
import json, sys
def load(f):
    out = {}
    for l in open(f):
        j = json.loads(l)
        v = j["verdict"]
        out[j["attempt"]["key"]] = (v["status"], v["domain"], v["sub_domain"], v["culprit_nodes"],
                                    sorted((s["id"], s["state"], s["count"], s["evidence_total"]) for s in v["symptoms"]))
    return out
f, a = load(sys.argv[1]), load(sys.argv[2])
assert set(f) == set(a) and len(f) > 90, (len(f), len(a))
bad = [k for k in sorted(f) if f[k] != a[k]]
for k in bad[:5]:
    print("  DIFFERS:", k, "\n    filtered:  ", f[k][:4], set(f[k][4]) - set(a[k][4]), "\n    unfiltered:", a[k][:4], set(a[k][4]) - set(f[k][4]))
assert not bad, f"{len(bad)} of {len(f)} workloads differ"
syms = sum(len(x[4]) for x in f.values())
print(f"check_loki: {len(f)} bundles of examples/ through Loki: identical verdicts and {syms} identical symptoms with and without "
      f"push-down; answers {int(sys.argv[4])} B unfiltered, {int(sys.argv[3])} B filtered ({int(sys.argv[4]) / max(int(sys.argv[3]), 1):.1f}x)")
PY
stop_loki
echo "check_loki: ok"
