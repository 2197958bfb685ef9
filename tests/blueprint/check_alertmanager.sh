#!/usr/bin/env bash
# Event-driven discovery with Debian's real Prometheus Alertmanager on
# 127.0.0.1 (docs/blueprint.md, "Alerts"): `culprit run --watch` polls every
# hour over a spool directory of bundles (a static discovery glob, expanded
# again at each poll) and receives Alertmanager's webhook. A bundle appears
# in the spool and a job-failure alert naming its workload is posted to
# Alertmanager's API; Alertmanager delivers it to culprit, which polls at
# once: the verdict must be stored within seconds (measured and printed),
# not at the next hourly poll. Also: an alert for another cluster starts
# nothing, a payload without the bearer token gets 401, a malformed one 400.
#
#   check_alertmanager.sh CULPRIT SOURCE_DIR     (KEEP=1 keeps the scratch directory)
set -euo pipefail
CULPRIT=$(readlink -f "$1")
SRC=$(readlink -f "$2")
D=$(mktemp -d /tmp/culprit-alerts.XXXXXX)
RUN_PID="" AM_PID=""
cleanup() {
  for p in $RUN_PID $AM_PID; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  if [ "${KEEP:-0}" = 1 ]; then echo "check_alertmanager: kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
fail() { echo "check_alertmanager: FAIL: $*"; exit 1; }
AM=$(command -v prometheus-alertmanager || command -v alertmanager || true)
[ -n "$AM" ] || fail "Alertmanager is not installed (apt-get install prometheus-alertmanager)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

spool() {  # EXAMPLE WORKLOAD_ID: a copy of the example bundle under that workload id
  cp -r "$SRC/examples/$1" "$D/spool/.$2"
  python3 - "$D/spool/.$2/context.json" "$2" <<'PY'
import json, sys
p, wid = sys.argv[1], sys.argv[2]
c = json.load(open(p))
c["workload_id"] = wid
json.dump(c, open(p, "w"), indent=2)
PY
  mv "$D/spool/.$2" "$D/spool/$2"   # appears whole
}
mkdir -p "$D/spool"
spool cuda-oom-one-rank 7000
cat > "$D/run.yaml" <<CONF
cluster: am-test
discovery:
  static:
    bundles: ["$D/spool/*"]
watch:
  interval: 1h
output:
  stdout: none
CONF
echo "alert-t0ken-$$" > "$D/token"
"$CULPRIT" run --config "$D/run.yaml" --watch --store "sqlite:$D/a.db" --alerts-listen 127.0.0.1:0 \
  --alerts-port-file "$D/aport" --alerts-token-file "$D/token" 2> "$D/run.log" &
RUN_PID=$!
stored() { sqlite3 "file:$D/a.db?mode=ro" "SELECT count(*) FROM verdicts WHERE workload_id = '$1'" 2>/dev/null || echo 0; }
for _ in $(seq 1 1800); do [ "$(stored 7000)" = 1 ] && break; sleep 0.1; done  # up to 3 min (a sanitizer build starts slowly)
[ "$(stored 7000)" = 1 ] || fail "the first poll did not attribute the spooled bundle: $(tail -5 "$D/run.log")"
RECV="http://127.0.0.1:$(cat "$D/aport")/v1/alertmanager"

# The receiver refuses what Alertmanager would not send.
code=$(curl -s -o /dev/null -w '%{http_code}' -XPOST -H 'Content-Type: application/json' -d '{"alerts":[]}' "$RECV")
[ "$code" = 401 ] || fail "a payload without the token got HTTP $code, not 401"
code=$(curl -s -o "$D/bad.json" -w '%{http_code}' -XPOST -H "Authorization: Bearer $(cat "$D/token")" \
  -H 'Content-Type: application/json' -d '{"version":"4"}' "$RECV")
[ "$code" = 400 ] && grep -q "no 'alerts' array" "$D/bad.json" || fail "a malformed payload got HTTP $code: $(cat "$D/bad.json")"

AMPORT=$(free_port)
cat > "$D/am.yml" <<AMCONF
route:
  receiver: culprit
  group_by: ['alertname', 'job_id']
  group_wait: 0s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: culprit
    webhook_configs:
      - url: $RECV
        send_resolved: false
        http_config:
          authorization:
            type: Bearer
            credentials_file: $D/token
AMCONF
"$AM" --config.file="$D/am.yml" --storage.path="$D/am" --web.listen-address="127.0.0.1:$AMPORT" \
  --cluster.listen-address= > "$D/am.log" 2>&1 &
AM_PID=$!
for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$AMPORT/-/ready" > /dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$AMPORT/-/ready" > /dev/null || fail "Alertmanager did not start: $(tail -5 "$D/am.log")"
post_alert() {  # JOB_ID CLUSTER
  curl -sf -XPOST -H 'Content-Type: application/json' "http://127.0.0.1:$AMPORT/api/v2/alerts" -d "[{\"labels\":
    {\"alertname\":\"SlurmJobFailed\",\"job_id\":\"$1\",\"cluster\":\"$2\",\"severity\":\"page\"},
    \"annotations\":{\"summary\":\"job $1 failed\"}}]" > /dev/null || fail "Alertmanager refused the alert"
}

# Another cluster's alert: delivered, counted, no poll.
spool nvlink-xid149 7001
post_alert 7001 other-cluster
sleep 3
[ "$(stored 7001)" = 0 ] || fail "an alert for another cluster started a poll"
grep -q "alert SlurmJobFailed for workload 7001" "$D/run.log" && fail "an alert for another cluster was accepted"

# This cluster's alert: the verdict follows within seconds.
t0=$(date +%s.%N)
post_alert 7001 am-test
for _ in $(seq 1 300); do [ "$(stored 7001)" = 1 ] && break; sleep 0.05; done
t1=$(date +%s.%N)
[ "$(stored 7001)" = 1 ] || fail "the alert did not lead to a verdict within 15 s: $(tail -5 "$D/run.log")"
grep -q "alert SlurmJobFailed for workload 7001: polling now" "$D/run.log" || fail "no line for the alert: $(tail -5 "$D/run.log")"
printf 'check_alertmanager: alert posted to Alertmanager -> verdict stored in %.2f s (watch.interval 1h)\n' "$(echo "$t1 - $t0" | bc)"
kill -TERM "$RUN_PID"
rc=0
wait "$RUN_PID" || rc=$?
RUN_PID=""
[ $rc = 0 ] || fail "culprit run --watch exited $rc after SIGTERM: $(tail -5 "$D/run.log")"
echo "check_alertmanager: ok"
