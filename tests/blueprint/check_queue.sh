#!/usr/bin/env bash
# Replicas sharing one queue lose nothing (docs/blueprint.md, "Replicas"):
# `culprit run --once --queue` by 2 and then 3 replicas on one real
# PostgreSQL store (started once for this test on 127.0.0.1, stopped by its
# PID), over a static cluster of 120 example bundles. Replica r1 starts
# alone; once it has stored some verdicts it is frozen while the store
# shows it holding leases, the other replicas start, and r1 is SIGKILLed;
# the survivors take its attempts over once its lease (2 s) expires. The store must end with exactly the rows of one uninterrupted
# single-process run (tests/blueprint/dump_store.py), every queue row done,
# and the killed replica's leased attempts finished by another replica.
# Also: --queue refuses a SQLite store (exit 2), and a replica started on
# an attributed store only skips.
#
#   check_queue.sh CULPRIT SOURCE_DIR      (KEEP=1 keeps the scratch directory)
set -euo pipefail
CULPRIT=$(readlink -f "$1")
SRC=$(readlink -f "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/pg_server.sh"
D=$(mktemp -d /tmp/culprit-queue.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  pg_stop
  if [ "${KEEP:-0}" = 1 ]; then echo "check_queue: kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
fail() { echo "check_queue: FAIL: $*"; exit 1; }
t0=$(date +%s)

# 120 bundles: the examples, then the real incidents, in name order.
. "$HERE/example_bundles.sh"
example_bundles "$SRC" 120
n=$BUNDLE_COUNT
[ $n -ge 100 ] || fail "only $n example bundles found"
cat > "$D/run.yaml" <<CONF
cluster: queue-test
discovery:
  static:
    bundles: [$BUNDLES]
output:
  stdout: none
CONF

# SQLite serves one process: --queue says so.
set +e
"$CULPRIT" run --config "$D/run.yaml" --once --queue --store "sqlite:$D/q.db" > /dev/null 2> "$D/sqlite.err"
rc=$?
set -e
[ $rc = 2 ] || fail "--queue with SQLite exited $rc, not 2: $(cat "$D/sqlite.err")"
grep -q "needs a PostgreSQL store" "$D/sqlite.err" || fail "--queue with SQLite: $(cat "$D/sqlite.err")"

pg_start "$D" || fail "PostgreSQL"
echo "check_queue: PostgreSQL up on 127.0.0.1:$PG_PORT, $n bundles"
# The server's own psql binary: Debian's /usr/bin/psql wrapper costs ~0.1 s a call.
sql() { "$PGBIN/psql" -X -q -At "$1" -c "$2"; }

# The reference: one process, no queue.
pg_createdb ref
"$CULPRIT" run --config "$D/run.yaml" --once --store "$PG_URL_BASE/ref" --concurrency 1 2> "$D/ref.log" \
  || fail "the reference run failed: $(tail -5 "$D/ref.log")"
python3 "$HERE/dump_store.py" "$PG_URL_BASE/ref" | grep -v "^== work_queue" > "$D/ref.dump"
grep -q "^== verdicts ($n rows)" "$D/ref.dump" || fail "the reference stored $(grep '^== verdicts' "$D/ref.dump")"

for replicas in 2 3; do
  db="q$replicas"
  url="$PG_URL_BASE/$db"
  pg_createdb "$db"
  # r1 starts alone; once it has stored some verdicts and holds leases it
  # is frozen (SIGSTOP: its leases stay as they are), the others start,
  # and r1 is SIGKILLed: a replica killed mid-attempt, at a known instant.
  start_replica() {
    "$CULPRIT" run --config "$D/run.yaml" --once --queue --lease 2s --replica "r$1" --concurrency 2 \
      --store "$url" 2> "$D/$db.r$1.log" &
    PIDS+=($!)
  }
  PIDS=()
  start_replica 1
  victim=${PIDS[0]}
  held=0 stored=0
  for _ in $(seq 1 12000); do  # minutes at most: a sanitizer build starts slowly
    stored=$(sql "$url" "SELECT count(*) FROM work_queue WHERE state = 'done'" 2>/dev/null || echo 0)
    if [ "${stored:-0}" -ge 10 ]; then
      kill -STOP "$victim"
      held=$(sql "$url" "SELECT count(*) FROM work_queue WHERE state = 'leased' AND owner = 'r1'")
      [ "$held" -ge 1 ] && break
      kill -CONT "$victim"
    fi
    kill -0 "$victim" 2>/dev/null || break
    sleep 0.01
  done
  [ "${held:-0}" -ge 1 ] || fail "$replicas replicas: replica r1 was never caught holding a lease"
  stored=$(sql "$url" "SELECT count(*) FROM work_queue WHERE state = 'done'")
  orphans=$(sql "$url" "SELECT attempt_key FROM work_queue WHERE state = 'leased' AND owner = 'r1' ORDER BY 1")
  for r in $(seq 2 "$replicas"); do start_replica "$r"; done
  kill -KILL "$victim"
  { wait "$victim"; } 2>/dev/null || true
  echo "check_queue: $replicas replicas: r1 SIGKILLed holding $(echo "$orphans" | grep -c .) lease(s), $stored attempts done"
  for p in "${PIDS[@]:1}"; do
    wait "$p" || fail "$replicas replicas: a surviving replica exited $?: $(tail -5 "$D/$db".r*.log)"
  done
  PIDS=()
  python3 "$HERE/dump_store.py" "$url" | grep -v "^== work_queue" > "$D/$db.dump"
  diff "$D/ref.dump" "$D/$db.dump" > "$D/$db.diff" || fail "$replicas replicas: the store differs from one uninterrupted run: $(head -20 "$D/$db.diff")"
  open=$(sql "$url" "SELECT count(*) FROM work_queue WHERE state <> 'done'")
  [ "$open" = 0 ] || fail "$replicas replicas: $open queue rows not done: $(sql "$url" "SELECT attempt_key, state, owner FROM work_queue WHERE state <> 'done'")"
  rows=$(sql "$url" "SELECT count(*) FROM work_queue")
  [ "$rows" = "$n" ] || fail "$replicas replicas: $rows queue rows for $n attempts"
  while read -r key; do
    [ -n "$key" ] || continue
    owner=$(sql "$url" "SELECT claims FROM work_queue WHERE attempt_key = '$key'")
    [ "$owner" -ge 2 ] || fail "$replicas replicas: $key, leased by the killed replica, was claimed $owner time(s)"
  done <<< "$orphans"
  by=$(sql "$url" "SELECT count(*) FROM attempts WHERE status = 'attributed'")
  [ "$by" = "$n" ] || fail "$replicas replicas: $by of $n attempts attributed"
  took=$(cat "$D/$db".r[2-9].log | grep -c "earlier start\|ended while other attempts were in flight" || true)
  echo "check_queue: $replicas replicas: store equals the single run; $took taken-over start(s) reported by the survivors"
done

# A replica on a store that has everything only skips.
"$CULPRIT" run --config "$D/run.yaml" --once --queue --replica late --store "$PG_URL_BASE/q3" 2> "$D/late.log" \
  || fail "a replica on a finished store: $(tail -3 "$D/late.log")"
grep -q "skipped $n already stored, queued 0" "$D/late.log" || fail "a replica on a finished store: $(grep poll "$D/late.log")"
echo "check_queue: ok in $(( $(date +%s) - t0 )) s"
