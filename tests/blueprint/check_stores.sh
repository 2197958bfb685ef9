#!/usr/bin/env bash
# The stores with real parts: the same `culprit run --once` on the examples
# writes the same rows into SQLite and into a real PostgreSQL 15 (an
# ephemeral cluster started here on 127.0.0.1 and stopped by its PID);
# re-running adds nothing to either; a run killed with SIGKILL in the middle
# leaves only whole attempts, and the next run completes the store to exactly
# what an uninterrupted run writes.
#
#   check_stores.sh CULPRIT SOURCE_DIR
set -euo pipefail
CULPRIT=$(readlink -f "$1")
ROOT=$(readlink -f "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/pg_server.sh"
D=$(mktemp -d /tmp/culprit-stores.XXXXXX)
cleanup() {
  pg_stop
  rm -rf "$D"
}
trap cleanup EXIT
fail() { echo "check_stores: FAIL: $*"; exit 1; }
t0=$(date +%s)

# --- PostgreSQL, on a free loopback port
pg_start "$D" || fail "PostgreSQL"
PORT=$PG_PORT
pg_createdb culprit
PG="$PG_URL_BASE/culprit"
echo "check_stores: PostgreSQL up on 127.0.0.1:$PORT in $(( $(date +%s) - t0 )) s"

CONFIG=$ROOT/examples/blueprint/static.yaml
run() { "$CULPRIT" run --config "$1" --once --store "$2" --format none 2> "$D/last.log" || { cat "$D/last.log"; fail "culprit run --store $2 exited $?"; }; }
dump() { python3 "$HERE/dump_store.py" "$1"; }

# --- the same run into both stores
run "$CONFIG" "sqlite:$D/a.db"
run "$CONFIG" "$PG"
dump "sqlite:$D/a.db" > "$D/a.dump"
dump "$PG" > "$D/pg.dump"
diff -q "$D/a.dump" "$D/pg.dump" >/dev/null || { diff "$D/a.dump" "$D/pg.dump" | head -20; fail "SQLite and PostgreSQL rows differ"; }
grep '^== ' "$D/a.dump" | tr '\n' ' ' | sed 's/^/check_stores: same rows in both: /'; echo

# --- re-running adds nothing
run "$CONFIG" "sqlite:$D/a.db"
grep -q "attributed 0, failed 0" "$D/last.log" || fail "SQLite re-run attributed again: $(tail -1 "$D/last.log")"
run "$CONFIG" "$PG"
grep -q "attributed 0, failed 0" "$D/last.log" || fail "PostgreSQL re-run attributed again: $(tail -1 "$D/last.log")"
dump "sqlite:$D/a.db" | cmp -s - "$D/a.dump" || fail "the SQLite re-run changed rows"
dump "$PG" | cmp -s - "$D/pg.dump" || fail "the PostgreSQL re-run changed rows"
echo "check_stores: re-runs added nothing"

# --- a run killed mid-way resumes without loss
# Three generated bundles large enough (~24 MB each) that a kill lands inside one.
for i in 1 2 3; do
  python3 "$ROOT/bench/generate_bundle.py" "$D/big/b$i" --nodes 8 --bytes-per-node 3M --seed "$i" --quiet
done
cat > "$D/big.yaml" <<CONF
cluster: kill-test
discovery:
  static:
    bundles: ["$D/big/*/", "$ROOT/examples/nvlink-xid149", "$ROOT/examples/cuda-oom-one-rank"]
CONF
run "$D/big.yaml" "sqlite:$D/whole.db"
dump "sqlite:$D/whole.db" > "$D/whole.dump"
total=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from verdicts').fetchone()[0])" "$D/whole.db")
for target in "sqlite:$D/killed.db" "$PG-killed"; do
  if [ "$target" = "$PG-killed" ]; then
    pg_createdb culprit-killed
    target="$PG_URL_BASE/culprit-killed"
  fi
  "$CULPRIT" run --config "$D/big.yaml" --once --store "$target" --format none 2> "$D/killed.log" &
  pid=$!
  # SIGKILL as soon as the first attempt is stored: the next one is in flight.
  for _ in $(seq 1 3000); do grep -q "after the job ended" "$D/killed.log" && break; sleep 0.01; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  partial=$(dump "$target" | sed -n 's/^== verdicts (\([0-9]*\) rows)/\1/p')
  [ "$partial" -lt "$total" ] || fail "the run finished before it could be killed ($partial of $total stored)"
  # Only whole attempts: every stored verdict has its coverage rows.
  dump "$target" > "$D/partial.dump"
  python3 - "$D/partial.dump" <<'PY' || fail "a killed run left a half-written attempt"
import sys
sec, rows = None, {}
for line in open(sys.argv[1]):
    if line.startswith("== "): sec = line.split()[1]; rows[sec] = []; continue
    rows[sec].append(line.rstrip("\n").split("\x1f"))
# (dump_store.py rows: verdicts start with attempt key and catalog digest, coverage with the verdict's key)
verdicts = {r[0] + "#" + r[1] for r in rows["verdicts"]}
covered = {r[0] for r in rows["coverage"]}
attributed = {r[1] for r in rows["attempts"] if r[12] == "attributed"}
sys.exit(0 if verdicts <= covered and len(attributed) == len(verdicts) else 1)
PY
  run "$D/big.yaml" "$target"
  echo "check_stores: killed after $partial of $total attempts ($target), resumed: $(tail -1 "$D/last.log" | sed 's/.*poll 1: //')"
  # The runs table aside, the resumed store is the uninterrupted one.
  if [[ "$target" == sqlite:* ]]; then
    dump "$target" | cmp -s - "$D/whole.dump" || { dump "$target" | diff - "$D/whole.dump" | head; fail "resumed SQLite store differs from an uninterrupted run"; }
  else
    dump "$target" | grep -v '^== watch_state' > "$D/resumed-pg.dump"
    # Compare with the SQLite reference: the stores agree row for row.
    grep -v '^== watch_state' "$D/whole.dump" | cmp -s - "$D/resumed-pg.dump" || { diff "$D/whole.dump" "$D/resumed-pg.dump" | head; fail "resumed PostgreSQL store differs from an uninterrupted run"; }
  fi
done
echo "check_stores: ok in $(( $(date +%s) - t0 )) s"
