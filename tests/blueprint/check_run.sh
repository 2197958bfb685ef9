#!/usr/bin/env bash
# `culprit run` end to end on the bundled examples: the README quick start
# writes the SQLite store with one verdict per example (the verdict
# `culprit diagnose` gives; check_run_equivalence.py holds every bundle and
# variant to it byte for byte), the files collector's template workload gets the same
# verdict as the bundle it reads, stdout carries JSON lines, configuration
# errors are precise, and `--service` against a real `culprit serve` stores
# the same rows as in-process attribution.
#
#   check_run.sh CULPRIT SOURCE_DIR
set -euo pipefail
CULPRIT=$(readlink -f "$1")
ROOT=$(readlink -f "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d /tmp/culprit-run.XXXXXX)
SERVE_PID=""
cleanup() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
  rm -rf "$D"
}
trap cleanup EXIT
fail() { echo "check_run: FAIL: $*"; exit 1; }
CONFIG=$ROOT/examples/blueprint/static.yaml

# --- the quick start: the default store in the working directory
(cd "$D" && "$CULPRIT" run --config "$CONFIG" --once > "$D/out.txt" 2> "$D/err.txt") || { cat "$D/err.txt"; fail "culprit run --once exited $?"; }
[ -f "$D/culprit.db" ] || fail "no culprit.db in the working directory"
bundles=$(for d in "$ROOT"/examples/*/; do [ -f "$d/context.json" ] && echo x; done | wc -l)
python3 - "$D/culprit.db" "$CULPRIT" "$ROOT" "$bundles" <<'PY' || fail "stored verdicts"
import json, sqlite3, subprocess, sys
db, culprit, root, bundles = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = sqlite3.connect(db)
rows = c.execute("select a.attempt_key, v.verdict_json from verdicts v join attempts a on a.id = v.attempt_ref").fetchall()
assert len(rows) == bundles + 1, f"{len(rows)} verdicts for {bundles} bundles + 1 template workload"
keys = ("status", "domain", "sub_domain", "culprit_nodes", "root_cause", "candidates", "affected_nodes")
stored = {k: json.loads(v) for k, v in rows}
bad = []


def comparable(v):
    """The verdict without what a collector adds and what each release changes."""
    v = json.loads(json.dumps(v))
    v.pop("engine", None)
    v["coverage"].pop("collectors", None)
    v["coverage"]["warnings"] = [w for w in v["coverage"]["warnings"] if not w.startswith("collector ")]
    return v


for key, v in stored.items():
    if not key.startswith("bundle/"):
        continue
    name = key.split("@", 1)[1]
    # The golden verdict is what `culprit diagnose` prints for the bundle
    # (tests/golden/check_verdict.sh holds it to that).
    ref = json.load(open(f"{root}/examples/{name}/expected-verdict.json"))
    if comparable(v) != comparable(ref):
        diff = [k for k in v if v.get(k) != ref.get(k) and k != "engine"]
        bad.append(f"{name}: the stored verdict differs from culprit diagnose's in {diff}")
    # A bundle is its own evidence: no collector report, as in diagnose.
    if v["coverage"].get("collectors"):
        bad.append(f"{name}: collectors {v['coverage']['collectors']}")
t = stored["slurm/examples/48213-by-template"]
b = stored["bundle/examples/48213@nvlink-xid149"]
for k in keys[:4]:
    if t[k] != b[k]:
        bad.append(f"template workload: {k} {t[k]} != the bundle's {b[k]}")
files = {(r["source"], r["status"]) for r in t["coverage"]["collectors"]}
if files != {("app", "ok"), ("kernel", "ok"), ("fabricmanager", "ok"), ("scheduler", "ok")}:
    bad.append(f"template workload collectors: {files}")
for x in bad:
    print("  PROBLEM:", x)
sys.exit(1 if bad else 0)
PY
grep -q "attributed hardware/nvlink.signal_integrity on node-02" "$D/out.txt" || fail "the text summary lacks the NVLink verdict"
# Text is one line per attempt, its actions on it; --verbose gives each a block.
[ "$(wc -l < "$D/out.txt")" = $((bundles + 1)) ] || fail "text: $(wc -l < "$D/out.txt") lines for $((bundles + 1)) attempts"
grep -q "^bundle/examples/48213@nvlink-xid149  FAILED 1  attributed hardware/nvlink.signal_integrity on node-02  -> .*would drain node-02 (dry run)" "$D/out.txt" ||
  fail "text: the NVLink attempt's line lacks its actions: $(grep 48213@ "$D/out.txt")"
"$CULPRIT" run --config "$CONFIG" --once --store "sqlite:$D/v.db" --format text -v > "$D/verbose.txt" 2> /dev/null || fail "run -v"
grep -q "^  would drain node-02 (dry run; --apply runs scontrol)" "$D/verbose.txt" && grep -q "^  warning: " "$D/verbose.txt" ||
  fail "--verbose: no block per attempt"
set +e
"$CULPRIT" run --config "$CONFIG" --once --store "sqlite:$D/v2.db" --format jsonl --verbose > /dev/null 2> "$D/verr.txt"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q "verbose applies only with --format text" "$D/verr.txt" || fail "--verbose with jsonl: exit $rc"
echo "check_run: quick start stored $((bundles + 1)) verdicts, each the verdict culprit diagnose gives (its golden file)"

# --- JSON lines on stdout, and a second run adds nothing
"$CULPRIT" run --config "$CONFIG" --once --store "sqlite:$D/j.db" --format jsonl > "$D/out.jsonl" 2>/dev/null || fail "jsonl run"
python3 -c "
import json,sys
lines=[json.loads(l) for l in open(sys.argv[1])]
assert len(lines)==int(sys.argv[2]), len(lines)
assert all(l['verdict']['schema']=='culprit.verdict/v2' and l['attempt']['key'] for l in lines)
" "$D/out.jsonl" $((bundles + 1)) || fail "stdout JSON lines"
"$CULPRIT" run --config "$CONFIG" --once --store "sqlite:$D/j.db" --format jsonl > "$D/out2.jsonl" 2> "$D/err2.txt" || fail "second run"
[ ! -s "$D/out2.jsonl" ] || fail "a second run printed verdicts again"
grep -q "skipped $((bundles + 1)) already stored, attributed 0" "$D/err2.txt" || fail "second run: $(tail -1 "$D/err2.txt")"

# --- attempts in flight at once: the same stdout and the same rows, in the same order
for c in 1 3; do
  "$CULPRIT" run --config "$CONFIG" --once --store "sqlite:$D/c$c.db" --format jsonl --concurrency $c > "$D/c$c.jsonl" 2> "$D/c$c.txt" \
    || fail "--concurrency $c exited $?"
done
cmp -s "$D/c1.jsonl" "$D/c3.jsonl" || fail "--concurrency 3 printed other verdicts, or in another order, than --concurrency 1"
python3 - "$D/c1.db" "$D/c3.db" <<'PY' || fail "--concurrency 3 stored other rows than --concurrency 1"
import sqlite3, sys
def rows(path):
    db = sqlite3.connect(path)
    return (db.execute("select v.id, a.attempt_key, v.status, v.verdict_sha256 from verdicts v "
                       "join attempts a on a.id = v.attempt_ref order by v.id").fetchall(),
            db.execute("select id, attempt_key, status from attempts order by id").fetchall())
one, three = rows(sys.argv[1]), rows(sys.argv[2])
assert one == three and len(one[0]) > 40, (len(one[0]), len(three[0]))
PY
echo "check_run: --concurrency 3 stores and prints what --concurrency 1 does, in the same order"

# --- --watch with a poll limit
printf 'discovery: {static: {bundles: "%s/examples/*/"}}\nwatch: {interval: 1s}\n' "$ROOT" > "$D/watch.yaml"
"$CULPRIT" run --config "$D/watch.yaml" --watch --polls 2 --store "sqlite:$D/w.db" --format none 2> "$D/watch.txt" || fail "--watch --polls 2"
grep -q "poll 2: discovered $bundles, skipped $bundles already stored, attributed 0" "$D/watch.txt" || fail "--watch: $(tail -2 "$D/watch.txt")"
[ "$(grep -c 'poll [12]:' "$D/watch.txt")" = 2 ] || fail "--watch did not poll twice"

# --- configuration and usage errors
cat > "$D/bad.yaml" <<'CONF'
discovery:
  static:
    bundles: "nowhere/*/"
collectors:
  filez: []
store: postgresql://u:pw@db/culprit
CONF
set +e
"$CULPRIT" run --config "$D/bad.yaml" --once > /dev/null 2> "$D/bad.txt"; rc=$?
set -e
[ "$rc" = 2 ] || fail "a bad configuration exited $rc, not 2"
grep -q "bad.yaml:5:3: error\[B0102\]: unknown key 'filez' in 'collectors'" "$D/bad.txt" || { cat "$D/bad.txt"; fail "unknown key message"; }
grep -q "= help: did you mean 'files'?" "$D/bad.txt" || { cat "$D/bad.txt"; fail "unknown key hint"; }
grep -q "bad.yaml:6:8: error\[B0106\]: the store URL carries a password" "$D/bad.txt" || { cat "$D/bad.txt"; fail "password message"; }
grep -q "warning\[B0201\]: 'nowhere/\*/' matches no bundle directory" "$D/bad.txt" || { cat "$D/bad.txt"; fail "empty glob warning"; }
"$CULPRIT" run --config "$CONFIG" --check | grep "^ok: " > /dev/null || fail "--check"
expect_usage() {
  set +e; "$CULPRIT" run "$@" > /dev/null 2> "$D/usage.txt"; rc=$?; set -e
  [ "$rc" = 2 ] && grep -q "$1" "$D/usage.txt" 2>/dev/null || grep -q "culprit run:" "$D/usage.txt" || fail "culprit run $*: exit $rc: $(cat "$D/usage.txt")"
  [ "$rc" = 2 ] || fail "culprit run $*: exit $rc, not 2"
}
expect_usage --config "$CONFIG"
expect_usage --config "$CONFIG" --once --watch
expect_usage --once
expect_usage --config "$CONFIG" --once --store postgresql://u:pw@h/db
expect_usage --config "$CONFIG" --once --format xml
expect_usage --config "$CONFIG" --once --concurrency 0
expect_usage --config "$CONFIG" --once --concurrency many
expect_usage --config "$CONFIG" --once --lease 5s
expect_usage --config "$CONFIG" --once --queue --lease 0s
expect_usage --config "$CONFIG" --once --replica r1
expect_usage --config "$CONFIG" --once --alerts-listen 127.0.0.1:0
expect_usage --config "$CONFIG" --watch --alerts-port-file "$D/p"
expect_usage --config "$D/missing.yaml" --once
"$CULPRIT" run --help | grep "Usage: culprit run" > /dev/null || fail "--help"
set +e; "$CULPRIT" run --config "$CONFIG" --once --store "postgresql://nobody@127.0.0.1:1/x" > /dev/null 2> "$D/pg.txt"; rc=$?; set -e
[ "$rc" = 3 ] && grep -q "cannot connect to the PostgreSQL store" "$D/pg.txt" || fail "an unreachable store: exit $rc: $(cat "$D/pg.txt")"
echo "check_run: configuration and usage errors ok"

# --- through a real `culprit serve`, with a token: the same rows
echo "t0ken-$$" > "$D/token"
"$CULPRIT" serve --listen 127.0.0.1:0 --port-file "$D/port" --token-file "$D/token" --no-access-log 2> "$D/serve.log" &
SERVE_PID=$!
for _ in $(seq 1 600); do [ -s "$D/port" ] && curl -sf "http://127.0.0.1:$(cat "$D/port")/readyz" >/dev/null && break; sleep 0.1; done
URL=http://127.0.0.1:$(cat "$D/port")
set +e; "$CULPRIT" run --config "$CONFIG" --once --service "$URL" --store "sqlite:$D/nok.db" --format none 2> "$D/noauth.txt"; rc=$?; set -e
[ "$rc" = 2 ] && grep -q "refused a request without a token (HTTP 401)" "$D/noauth.txt" || fail "without the token: exit $rc: $(tail -3 "$D/noauth.txt")"
"$CULPRIT" run --config "$CONFIG" --once --service "$URL" --token-file "$D/token" --store "sqlite:$D/svc.db" --format none 2> "$D/svc.txt" \
  || { tail "$D/svc.txt"; fail "culprit run --service"; }
python3 "$HERE/dump_store.py" "sqlite:$D/j.db" > "$D/local.dump"
python3 "$HERE/dump_store.py" "sqlite:$D/svc.db" | sed "s#$URL#in-process#g" > "$D/svc.dump"
cmp -s "$D/local.dump" "$D/svc.dump" || { diff "$D/local.dump" "$D/svc.dump" | head -10; fail "--service stored different rows"; }
# A service that refuses large evidence (413): those attempts are recorded as
# failed, the run exits 1, and the next run (with a service that takes them)
# attributes exactly those.
"$CULPRIT" serve --listen 127.0.0.1:0 --port-file "$D/port2" --max-body 1M --no-access-log 2> "$D/serve2.log" &
SERVE2_PID=$!
for _ in $(seq 1 600); do [ -s "$D/port2" ] && curl -sf "http://127.0.0.1:$(cat "$D/port2")/readyz" >/dev/null && break; sleep 0.1; done
set +e; "$CULPRIT" run --config "$CONFIG" --once --service "http://127.0.0.1:$(cat "$D/port2")" --store "sqlite:$D/retry.db" --format none 2> "$D/small.txt"; rc=$?; set -e
kill "$SERVE2_PID"; wait "$SERVE2_PID" 2>/dev/null || true
[ "$rc" = 1 ] || fail "refused evidence: exit $rc, not 1"
failed=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"select count(*) from attempts where status='error'\").fetchone()[0])" "$D/retry.db")
[ "$failed" -gt 0 ] && [ "$failed" -le "$bundles" ] || fail "$failed attempts recorded as failed by a service with a 1 MiB body limit"
grep -q "the service answered 413" "$D/small.txt" || fail "no 413 reported: $(grep 'not attributed' "$D/small.txt" | head -2)"
"$CULPRIT" run --config "$CONFIG" --once --service "$URL" --token-file "$D/token" --store "sqlite:$D/retry.db" --format none 2> "$D/retry.txt" || fail "retry run exited $?"
grep -q "skipped $((bundles + 1 - failed)) already stored, attributed $failed, failed 0" "$D/retry.txt" || fail "retry: $(tail -1 "$D/retry.txt")"
echo "check_run: $failed attempts refused by a small service were retried and attributed by the next run"
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true; SERVE_PID=""
set +e; "$CULPRIT" run --config "$CONFIG" --once --service "$URL" --store "sqlite:$D/down.db" > /dev/null 2> "$D/down.txt"; rc=$?; set -e
[ "$rc" = 3 ] && grep -q "cannot reach" "$D/down.txt" || fail "service down: exit $rc: $(cat "$D/down.txt")"
echo "check_run: --service stores the same rows as in-process attribution"
echo "check_run: ok"
