#!/usr/bin/env bash
# The recovery hand-off of `culprit run` (docs/recovery.md) on the examples:
#  * --emit-recommendations writes one JSON line per recommended action of
#    every new verdict, the store records the same rows with the decision;
#  * a policy (drain only after 2 faults in 7 days) holds the first drain of
#    a node and acts on the second, with the history read from the store, and
#    adds replace_suspect after 3 faults;
#  * --webhook POSTs every action to a loopback receiver that records
#    requests; a 503 is retried and delivered, a receiver that answers 500 or
#    is not there is reported (exit 1, "webhook failed" in the store); one
#    that accepts and never answers costs one action's retries x timeout,
#    the poll's other actions stay pending and the next run delivers them;
#  * a re-run hands off nothing again;
#  * culprit offenders lists the repeat offenders from the same store, text
#    and JSON, and agrees with the dashboard's GET /api/offenders.
#
#   check_recovery.sh CULPRIT SOURCE_DIR      (KEEP=1 keeps the directory)
set -euo pipefail
CULPRIT=$(readlink -f "$1")
SRC=$(readlink -f "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d /tmp/culprit-recovery.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ "${KEEP:-0}" = 1 ]; then echo "check_recovery: kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
fail() { echo "check_recovery: FAIL: $*"; for f in "$D"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -15 "$f"; }; done; exit 1; }

# webhook MODE NAME: starts a receiver, sets PORT; requests go to $D/NAME.requests
webhook() {
  rm -f "$D/$2.port"
  python3 "$HERE/webhook_server.py" "$D/$2.port" "$D/$2.requests" "$1" &
  PIDS+=($!)
  for _ in $(seq 1 100); do [ -s "$D/$2.port" ] && break; sleep 0.05; done
  PORT=$(cat "$D/$2.port")
}

# Three attempts of one GPU failing on the same node, a day apart, from the
# XID 48 example (its real kernel lines); the history makes the difference.
mkdir -p "$D/bundles"
for i in 1 2 3; do
  cp -r "$SRC/examples/xid48-dbe" "$D/bundles/dbe-$i"
  python3 - "$D/bundles/dbe-$i/context.json" "$i" <<'PY'
import json, sys
p, i = sys.argv[1], int(sys.argv[2])
c = json.load(open(p))
c["workload_id"] = f"{c['workload_id']}-{i}"
json.dump(c, open(p, "w"), indent=2)
PY
done
cat > "$D/bundles.yaml" <<CONF
cluster: lab
discovery:
  static:
    bundles: "$D/bundles/*/"
output:
  stdout: none
CONF
cat > "$D/policy.yaml" <<'POLICY'
rules:
  - action: drain
    faults: 2
    within: 7d
    then: act
  - action: drain
    then: hold
replace_suspect: {faults: 3, within: 30d}
default: act
POLICY

# --------------------------------------------- policy with the store's history
# One attempt per run, so each run's history holds the ones before it.
n=0
for i in 1 2 3; do
  mkdir -p "$D/one-$i"
  ln -s "$D/bundles/dbe-$i" "$D/one-$i/dbe-$i"
  sed "s#$D/bundles/\*/#$D/one-$i/*/#" "$D/bundles.yaml" > "$D/one-$i.yaml"
  "$CULPRIT" run --config "$D/one-$i.yaml" --once --store "sqlite:$D/history.db" --policy "$D/policy.yaml" \
    --emit-recommendations "$D/history.jsonl" 2> "$D/history-$i.log" || fail "policy run $i exited $?"
done
python3 - "$D" <<'PY' || fail "policy decisions"
import json, sqlite3, sys
d = sys.argv[1]
lines = [json.loads(l) for l in open(f"{d}/history.jsonl")]
drains = [l for l in lines if l["action"] == "drain"]
assert [l["decision"] for l in drains] == ["hold", "act", "act"], [(l["decision"], l["decision_reason"]) for l in drains]
assert drains[0]["decided_by"] == "policy.yaml:6", drains[0]
assert "policy.yaml:2 needs 2 faults of node-02 in 7d, it had 1" in drains[0]["decision_reason"], drains[0]["decision_reason"]
assert drains[1]["decided_by"] == "policy.yaml:2" and "culprit of 2 attempts in 7d" in drains[1]["decision_reason"]
rs = [l for l in lines if l["action"] == "replace_suspect"]
assert len(rs) == 1 and rs[0]["attempt"]["workload_id"].endswith("-3") and rs[0]["basis"] == "policy policy.yaml:8", rs
assert rs[0]["symptoms"] == ["gpu.memory@node-02#0000:3b:00"], rs[0]
resets = [l for l in lines if l["action"] == "reset_gpu"]
assert len(resets) == 3 and all(l["target"] == {"pci": "0000:3b:00"} and l["decision"] == "act" for l in resets)
db = sqlite3.connect(f"{d}/history.db")
rows = db.execute("select r.action, r.decision, r.decided_by, r.handoff from recommendations r "
                  "join verdicts v on v.id = r.verdict_ref order by v.workload_id, r.ordinal").fetchall()
assert len(rows) == len(lines), (len(rows), len(lines))
assert [(r[0], r[1]) for r in rows] == [(l["action"], l["decision"]) for l in lines]
assert all(r[3] in ("recorded", "held") or (r[0] == "drain" and r[3].startswith("printed: scontrol")) for r in rows), rows
print(f"check_recovery: policy: drains hold, act, act over 3 faults of node-02; replace_suspect on the third; {len(rows)} rows stored")
PY

# ------------------------------------------------------- the examples, a webhook
webhook ok good
"$CULPRIT" run --config "$SRC/examples/blueprint/static.yaml" --once --store "sqlite:$D/ex.db" --format none \
  --emit-recommendations "$D/ex.jsonl" --webhook "http://127.0.0.1:$PORT/hooks/culprit" 2> "$D/ex.log" \
  || fail "run over the examples exited $?"
python3 - "$D" <<'PY' || fail "emitted, posted and stored recommendations"
import json, sqlite3, sys
d = sys.argv[1]
lines = [json.loads(l) for l in open(f"{d}/ex.jsonl")]
reqs = [json.loads(l) for l in open(f"{d}/good.requests")]
assert all(r["path"] == "/hooks/culprit" and r["content_type"] == "application/json" for r in reqs)
posted = [r["body"] for r in reqs]
for l in lines:
    assert l["handoff"].endswith("webhook: HTTP 200") or "webhook: HTTP 200" in l["handoff"], l["handoff"]
    l.pop("handoff")
key = lambda x: (x["attempt"]["key"], x["scope"], x["node"] or "", x["action"], json.dumps(x.get("target")))
assert sorted(posted, key=key) == sorted(lines, key=key), "the webhook did not get what was emitted"
db = sqlite3.connect(f"{d}/ex.db")
n = db.execute("select count(*) from recommendations").fetchone()[0]
verdicts = db.execute("select count(*) from verdicts").fetchone()[0]
assert n == len(lines) and verdicts == 50, (n, len(lines), verdicts)
# Not attributed: the job's `none`, and `inspect` for an ambiguous verdict's
# candidates' nodes and for an unattributed one's hang laggards
# (docs/recovery.md), nothing else.
for l in lines:
    if l["verdict"]["status"] != "attributed":
        assert (l["scope"] == "job" and l["action"] == "none") or (
            l["scope"] == "node" and l["action"] == "inspect"
            and (l["verdict"]["status"], l["basis"]) in (("ambiguous", "candidate of an ambiguous verdict"),
                                                         ("unattributed", "hang straggler"))), l
assert any(l["verdict"]["status"] == "ambiguous" and l["action"] == "inspect" for l in lines), "no candidate was inspected"
jobs = [l for l in lines if l["scope"] == "job"]
assert len(jobs) == 50
drains = [l for l in lines if l["action"] == "drain"]
assert all(l["command"] and l["command"].startswith(f"scontrol update nodename={l['node']} state=drain reason='culprit: ")
           for l in drains if l["attempt"]["scheduler"] == "slurm"), drains[:2]
assert any(l["basis"] == "hang straggler" and l["node"] == "node-02" for l in lines), "the hang's laggard node was not inspected"
print(f"check_recovery: examples: {len(lines)} recommendations for 50 verdicts emitted, POSTed and stored; {len(drains)} drains")
PY
grep -q "to drain node-02 (--apply runs it): scontrol update nodename=node-02 state=drain reason='culprit: nvlink.signal_integrity" "$D/ex.log" \
  || fail "the drain command is not printed"
# A re-run: nothing new is stored, nothing is handed off again.
before=$(wc -l < "$D/good.requests")
"$CULPRIT" run --config "$SRC/examples/blueprint/static.yaml" --once --store "sqlite:$D/ex.db" --format none \
  --emit-recommendations "$D/ex.jsonl" --webhook "http://127.0.0.1:$PORT/hooks/culprit" 2> "$D/rerun.log" || fail "re-run exited $?"
[ "$(wc -l < "$D/good.requests")" = "$before" ] || fail "a re-run posted again"

# ------------------------------------------------- a webhook that fails, or is away
one="$D/one-1.yaml"
webhook flaky flaky
"$CULPRIT" run --config "$one" --once --store "sqlite:$D/flaky.db" --webhook "http://127.0.0.1:$PORT/h" 2> "$D/flaky.log" \
  || fail "a 503 then 200 is retried and delivered; exit $?"
python3 -c "
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute('select handoff from recommendations').fetchall()
assert rows and all(r[0].endswith('webhook: HTTP 200 after 2 attempts') for r in rows), rows
" "$D/flaky.db" || fail "retries are not recorded"
webhook fail broken
rc=0
"$CULPRIT" run --config "$one" --once --store "sqlite:$D/broken.db" --webhook "http://127.0.0.1:$PORT/h" --webhook-timeout 2s \
  2> "$D/broken.log" || rc=$?
[ "$rc" = 1 ] || fail "a webhook answering 500 must make the exit status 1, not $rc"
grep -q "webhook http://127.0.0.1:$PORT/h failed for drain node-02: HTTP 500" "$D/broken.log" || fail "no webhook failure reported"
python3 -c "
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute('select handoff from recommendations').fetchall()
assert rows and all('webhook failed: HTTP 500' in r[0] and '(4 attempts)' in r[0] for r in rows), rows
" "$D/broken.db" || fail "the failure is not recorded"
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
rc=0
"$CULPRIT" run --config "$one" --once --store "sqlite:$D/away.db" --webhook "http://127.0.0.1:$closed/h" 2> "$D/away.log" || rc=$?
[ "$rc" = 1 ] || fail "an unreachable webhook must make the exit status 1, not $rc"
grep -q "webhook http://127.0.0.1:$closed/h failed for" "$D/away.log" || fail "no report for an unreachable webhook"
echo "check_recovery: webhook: 503 retried and delivered; 500 and an unreachable receiver reported, exit 1, recorded"

# A receiver that accepts connections and never answers: the first action
# waits its retries x --webhook-timeout, the breaker then leaves the other 8
# actions of the poll pending (without it: 9 x that, ~50 s); the next run,
# with a receiver that answers, delivers exactly those.
rm -f "$D/hung.port"
python3 - "$D/hung.port" <<'PY' &
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
while True:
    held.append(s.accept()[0])  # read nothing, answer nothing
PY
PIDS+=($!)
for _ in $(seq 1 100); do [ -s "$D/hung.port" ] && break; sleep 0.05; done
HUNG=$(cat "$D/hung.port")
rc=0
t_hung=$(date +%s)
"$CULPRIT" run --config "$D/bundles.yaml" --once --store "sqlite:$D/hung.db" --webhook "http://127.0.0.1:$HUNG/h" \
  --webhook-timeout 1s --emit-recommendations "$D/hung.jsonl" 2> "$D/hung.log" || rc=$?
hung_s=$(( $(date +%s) - t_hung ))
[ "$rc" = 1 ] || fail "a webhook that never answers must make the exit status 1, not $rc"
[ "$hung_s" -le 15 ] || fail "a webhook that never answers stalled the run for ${hung_s} s (9 actions)"
grep -q "webhook http://127.0.0.1:$HUNG/h did not answer: the other hand-offs of this poll stay pending" "$D/hung.log" \
  || fail "the breaker did not say why hand-offs stay pending"
grep -q "8 hand-offs left pending (the webhook did not answer); the next run delivers them" "$D/hung.log" \
  || fail "pending hand-offs not reported"
python3 - "$D/hung.db" "$D/hung.jsonl" <<'PY' || fail "hung webhook: rows"
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("select handoff_state, handoff from recommendations order by verdict_ref, ordinal").fetchall()
assert len(rows) == 9, rows
assert rows[0][0] == "done" and "webhook failed" in rows[0][1] and "(4 attempts)" in rows[0][1], rows[0]
assert all(r == ("pending", "") for r in rows[1:]), rows
assert len(open(sys.argv[2]).readlines()) == 1, "only the delivered action is emitted"
PY
webhook ok resumed
"$CULPRIT" run --config "$D/bundles.yaml" --once --store "sqlite:$D/hung.db" --webhook "http://127.0.0.1:$PORT/h" \
  --emit-recommendations "$D/hung.jsonl" 2> "$D/resumed.log" || fail "the resuming run exited $?"
grep -q "resuming 8 pending hand-offs of stored verdicts" "$D/resumed.log" || fail "no resume: $(tail -3 "$D/resumed.log")"
python3 - "$D/hung.db" "$D/hung.jsonl" "$D/resumed.requests" <<'PY' || fail "hung webhook: resumed rows"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select record_id, handoff_state, handoff from recommendations order by verdict_ref, ordinal").fetchall()
assert all(r[1] == "done" for r in rows) and all(r[2].endswith("webhook: HTTP 200") for r in rows[1:]), rows
posted = [json.loads(l)["body"]["id"] for l in open(sys.argv[3])]
assert posted == [r[0] for r in rows[1:]], (posted, rows)
emitted = [json.loads(l)["id"] for l in open(sys.argv[2])]
assert sorted(emitted) == sorted(r[0] for r in rows), "every action emitted once, by the run that delivered it"
PY
echo "check_recovery: webhook that never answers: ${hung_s} s for 9 actions (1 failed, 8 left pending), all 8 delivered by the next run"

# ---------------------------------------------------------------- usage errors
rc=0; "$CULPRIT" run --config "$one" --once --format jsonl --emit-recommendations - 2> "$D/usage.log" || rc=$?
[ "$rc" = 2 ] && grep -q "emit-recommendations - shares stdout with the verdicts" "$D/usage.log" || fail "--emit-recommendations - with jsonl stdout"
rc=0; "$CULPRIT" run --config "$one" --once --apply 2> "$D/usage.log" || rc=$?
[ "$rc" = 2 ] && grep -q "apply runs Slurm drain commands: it needs discovery.slurm" "$D/usage.log" || fail "--apply without Slurm"
printf 'rules:\n  - action: drian\n    then: act\n' > "$D/bad-policy.yaml"
rc=0; "$CULPRIT" run --config "$one" --check --policy "$D/bad-policy.yaml" 2> "$D/usage.log" || rc=$?
[ "$rc" = 2 ] && grep -q "bad-policy.yaml:2:13: error\[B0904\]: 'drian' is not a valid value for 'action'" "$D/usage.log" || fail "a bad policy"

# ------------------------------------------------------------------- offenders
# The XID 48 example ended on 2026-05-11: a window around it.
"$CULPRIT" offenders --store "sqlite:$D/history.db" --since 30d --until 2026-06-01T00:00:00Z --min 2 > "$D/offenders.txt" \
  || fail "offenders exited $?"
grep -q "^1 node was the culprit of at least 2 attempts" "$D/offenders.txt" || fail "offenders: $(cat "$D/offenders.txt")"
grep -qE "^node-02 +3 +2026-.* hardware/gpu.memory 3$" "$D/offenders.txt" || fail "offenders row: $(cat "$D/offenders.txt")"
"$CULPRIT" offenders --store "sqlite:$D/history.db" --since 30d --until 2026-06-01T00:00:00Z --min 4 > "$D/none.txt"
grep -q "^0 nodes were the culprit of at least 4 attempts" "$D/none.txt" || fail "offenders --min 4: $(cat "$D/none.txt")"
"$CULPRIT" offenders --store "sqlite:$D/history.db" --since 30d --until 2026-06-01T00:00:00Z --format json > "$D/offenders.json"
rc=0; "$CULPRIT" offenders --store "sqlite:$D/history.db" --since yesterday 2> "$D/usage.log" || rc=$?
[ "$rc" = 2 ] && grep -q "since 'yesterday' is neither a duration" "$D/usage.log" || fail "offenders --since yesterday"
# The domains counted: hardware and infrastructure by default; a software
# filter finds no one here (every fault is a GPU's); a misspelt one is told.
"$CULPRIT" offenders --store "sqlite:$D/history.db" --since 30d --until 2026-06-01T00:00:00Z --min 2 --domain software > "$D/sw.txt"
grep -q "^0 nodes were the culprit of at least 2 attempts (software causes)" "$D/sw.txt" || fail "offenders --domain software: $(cat "$D/sw.txt")"
"$CULPRIT" offenders --store "sqlite:$D/history.db" --since 30d --until 2026-06-01T00:00:00Z --min 2 --all > "$D/all.txt"
grep -qE "^node-02 +3 " "$D/all.txt" || fail "offenders --all: $(cat "$D/all.txt")"
# Without a window, a store whose verdicts are all older than a week is
# read up to its newest verdict, and the line says so (not a nanosecond on).
"$CULPRIT" offenders --store "sqlite:$D/history.db" --min 2 > "$D/stale.txt" || fail "offenders without a window"
grep -qE "^1 node was the culprit of at least 2 attempts \(hardware and infrastructure causes\) from .* to 2026-[0-9-]+T[0-9:]+Z \(the newest verdict\)" "$D/stale.txt" ||
  fail "offenders on a stale store: $(head -1 "$D/stale.txt")"
rc=0; "$CULPRIT" offenders --store "sqlite:$D/history.db" --domain hardwar 2> "$D/usage.log" || rc=$?
[ "$rc" = 2 ] && grep -q "did you mean 'hardware'?" "$D/usage.log" || fail "offenders --domain hardwar: exit $rc: $(cat "$D/usage.log")"
rc=0; "$CULPRIT" offenders --store "sqlite:$D/missing.db" 2> "$D/usage.log" || rc=$?
[ "$rc" = 3 ] || fail "offenders on a missing store: exit $rc"
"$CULPRIT" dashboard --store "sqlite:$D/history.db" --listen 127.0.0.1:0 --port-file "$D/dash.port" --no-access-log 2> "$D/dash.log" &
PIDS+=($!)
for _ in $(seq 1 100); do [ -s "$D/dash.port" ] && break; sleep 0.05; done
python3 - "$D/offenders.json" "http://127.0.0.1:$(cat "$D/dash.port")" <<'PY' || fail "the dashboard's /api/offenders"
import json, sys, urllib.error, urllib.request
cli = json.load(open(sys.argv[1]))
assert cli["offenders"] == [{"node": "node-02", "attempts": 3, "causes": [{"domain": "hardware", "sub_domain": "gpu.memory", "attempts": 3}],
                             "last": cli["offenders"][0]["last"]}], cli
api = json.load(urllib.request.urlopen(sys.argv[2] + "/api/offenders?since=30d&until=2026-06-01T00:00:00Z"))
assert api == cli, (api, cli)
try:
    urllib.request.urlopen(sys.argv[2] + "/api/offenders?since=soon")
    raise SystemExit("a bad since was accepted")
except urllib.error.HTTPError as e:
    assert e.code == 400
print("check_recovery: offenders: node-02 x3 (hardware/gpu.memory), the CLI and GET /api/offenders agree")
PY
echo "check_recovery: ok"
