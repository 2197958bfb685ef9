#!/usr/bin/env bash
# The dashboard in a real browser: `culprit run --once` writes the examples
# into a SQLite store, `culprit dashboard` serves it on 127.0.0.1 (a free
# port), and browser_test.mjs drives Debian's headless Chromium through it
# (list, filters, a workload page, the fleet view, dark mode, no JavaScript),
# writing a screenshot of each page into SCREENSHOT_DIR. The store's bytes
# must be the same afterwards, and the access log must hold GETs only. The server is stopped by its PID.
#
#   check_browser.sh CULPRIT SOURCE_DIR SCREENSHOT_DIR
set -euo pipefail
CULPRIT=$(readlink -f "$1")
ROOT=$(readlink -f "$2")
SHOTS=$3
HERE=$(cd "$(dirname "$0")" && pwd)
fail() { echo "check_browser: FAIL: $*"; exit 1; }
[ -x /usr/bin/chromium ] || fail "no /usr/bin/chromium (scripts/install-deps.sh installs it)"
[ -d "$HERE/node_modules/puppeteer-core" ] || fail "no puppeteer-core in $HERE/node_modules (scripts/install-deps.sh runs npm ci there)"
D=$(mktemp -d /tmp/culprit-browser.XXXXXX)
PID=
cleanup() {
  if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  rm -rf "$D"
}
trap cleanup EXIT

( cd "$ROOT/examples/blueprint" && "$CULPRIT" run --config static.yaml --once --store "sqlite:$D/store.db" --format none ) \
  2> "$D/run.log" || { cat "$D/run.log"; fail "culprit run"; }
sha_before=$(sha256sum < "$D/store.db")
read -r total first last < <(python3 - "$D/store.db" <<'PY'
import sqlite3, sys, datetime
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
n, lo, hi = db.execute("SELECT COUNT(*), MIN(end_ns), MAX(end_ns) FROM verdicts").fetchone()
day = lambda ns: datetime.datetime.fromtimestamp(ns // 10**9, datetime.timezone.utc).strftime("%Y-%m-%d")
print(n, day(lo), day(hi))
PY
)

"$CULPRIT" dashboard --store "sqlite:$D/store.db" --listen 127.0.0.1:0 --port-file "$D/port" 2> "$D/dashboard.log" &
PID=$!
for _ in $(seq 100); do [ -s "$D/port" ] && break; kill -0 "$PID" 2>/dev/null || { cat "$D/dashboard.log"; fail "the dashboard exited"; }; sleep 0.1; done
[ -s "$D/port" ] || fail "the dashboard did not start"
BASE="http://127.0.0.1:$(cat "$D/port")"
echo "check_browser: $total verdicts, dashboard on $BASE"

expect=$(printf '{"total": %s, "job": "48213-by-template", "cause": "hardware / nvlink.signal_integrity", "culprit": "node-02", "first_day": "%s", "last_day": "%s"}' "$total" "$first" "$last")
rc=0
node "$HERE/browser_test.mjs" "$BASE" "$SHOTS" "$expect" || rc=$?

kill "$PID"
wait "$PID" || fail "the dashboard exited $? on SIGTERM"
PID=
grep -q '"method":"GET"' "$D/dashboard.log" || fail "the access log has no requests"
if grep -v '"method":"GET"' "$D/dashboard.log" | grep -q '"method":'; then
  grep -v '"method":"GET"' "$D/dashboard.log" | grep '"method":' | head -3
  fail "the browser sent a request other than GET"
fi
# A reader of a WAL-mode SQLite file makes an empty -wal and a -shm index
# beside it (SQLite's read protocol); the store's own bytes must not change
# and the -wal must hold no frame.
[ "$(sha256sum < "$D/store.db")" = "$sha_before" ] || fail "the store's bytes changed"
[ ! -s "$D/store.db-wal" ] || fail "the store's -wal holds frames: something was written"
[ "$rc" = 0 ] || fail "browser checks failed (screenshots in $SHOTS)"
echo "check_browser: ok (screenshots in $SHOTS; the store's bytes unchanged)"
