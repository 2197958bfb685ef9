#!/usr/bin/env bash
# The blueprint attributes through a real load balancer in front of three
# `culprit serve` replicas (docs/blueprint.md, "Replicas"): Debian's HAProxy
# on 127.0.0.1, health-checking each replica's /readyz. While
# `culprit run --once --service` works through every example bundle (350),
# replica r2 is stopped and started again with an empty compile cache, so
# it compiles and self-tests its catalog before /readyz turns 200, and once
# it is back replica r1 is SIGKILLed (it stays down). The run must exit 0 with every attempt
# attributed once, the store's rows equal to in-process attribution's
# (tests/blueprint/dump_store.py; only the service URL differs), HAProxy
# must have seen r2 answer /readyz 503 while it loaded (it took r2 out
# with its process alive) and then send it attributions again.
#
#   check_balanced_service.sh CULPRIT SOURCE_DIR     (KEEP=1 keeps the scratch directory)
set -euo pipefail
CULPRIT=$(readlink -f "$1")
SRC=$(readlink -f "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d /tmp/culprit-balanced.XXXXXX)
declare -A SERVE_PID
HAPROXY_PID="" RUN_PID=""
cleanup() {
  for p in "${SERVE_PID[@]}" $HAPROXY_PID $RUN_PID; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "${KEEP:-0}" = 1 ]; then echo "check_balanced_service: kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
fail() { echo "check_balanced_service: FAIL: $*"; exit 1; }
command -v haproxy > /dev/null || fail "haproxy is not installed (apt-get install haproxy)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
t0=$(date +%s)

. "$HERE/example_bundles.sh"
example_bundles "$SRC"
n=$BUNDLE_COUNT
cat > "$D/run.yaml" <<CONF
cluster: balanced-test
discovery:
  static:
    bundles: [$BUNDLES]
output:
  stdout: none
CONF

declare -A PORT
start_replica() {  # NAME [serve options...]
  local name=$1
  shift
  "$CULPRIT" serve --listen "127.0.0.1:${PORT[$name]}" --no-access-log --threads 2 "$@" 2>> "$D/$name.log" &
  SERVE_PID[$name]=$!
}
for r in r1 r2 r3; do
  PORT[$r]=$(free_port)
  start_replica "$r" --cache-dir "$D/cache"
done
for r in r1 r2 r3; do
  for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:${PORT[$r]}/readyz" > /dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:${PORT[$r]}/readyz" > /dev/null || fail "replica $r did not become ready: $(tail -3 "$D/$r.log")"
done

LB=$(free_port) STATS=$(free_port)
cat > "$D/haproxy.cfg" <<CFG
global
  maxconn 512
defaults
  mode http
  timeout connect 2s
  timeout client 120s
  timeout server 120s
  retries 3
  option redispatch
frontend culprit
  bind 127.0.0.1:$LB
  default_backend replicas
backend replicas
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server inter 100ms fall 1 rise 2
  server r1 127.0.0.1:${PORT[r1]} check
  server r2 127.0.0.1:${PORT[r2]} check
  server r3 127.0.0.1:${PORT[r3]} check
frontend stats
  bind 127.0.0.1:$STATS
  stats enable
  stats uri /stats
CFG
haproxy -c -f "$D/haproxy.cfg" > /dev/null || fail "haproxy rejects its configuration"
haproxy -db -f "$D/haproxy.cfg" > "$D/haproxy.log" 2>&1 &
HAPROXY_PID=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$LB/readyz" > /dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$LB/readyz" > /dev/null || fail "HAProxy does not answer: $(cat "$D/haproxy.log")"
# status and last check of server NAME, from HAProxy's CSV statistics
server_state() { curl -sf "http://127.0.0.1:$STATS/stats;csv" | awk -F, -v s="$1" '$1 == "replicas" && $2 == s { print $18 " " $37 }'; }
attributions() {  # attributions answered 200 by replica NAME (its /metrics)
  curl -sf "http://127.0.0.1:${PORT[$1]}/metrics" \
    | awk '/^culprit_http_requests_total\{route="\/v1\/attributions",method="POST",code="200"\}/ { print $2 }' | head -1
}

# The reference: in-process attribution.
"$CULPRIT" run --config "$D/run.yaml" --once --store "sqlite:$D/ref.db" --concurrency 2 2> "$D/ref.log" \
  || fail "in-process reference run: $(tail -3 "$D/ref.log")"

URL="http://127.0.0.1:$LB"
"$CULPRIT" run --config "$D/run.yaml" --once --service "$URL" --store "sqlite:$D/lb.db" --concurrency 2 2> "$D/lb.log" &
RUN_PID=$!
stored() { sqlite3 "file:$D/lb.db?mode=ro" "SELECT count(*) FROM verdicts" 2>/dev/null || echo 0; }
wait_stored() {  # N: until N verdicts are stored (or the run ended)
  for _ in $(seq 1 3000); do
    [ "$(stored)" -ge "$1" ] && return 0
    kill -0 "$RUN_PID" 2>/dev/null || return 0
    sleep 0.02
  done
}
# r2 first (stopped, restarted without a compile cache: it compiles and
# self-tests before /readyz turns 200), then r1 SIGKILLed once r2 is back.
wait_stored 10
kill -TERM "${SERVE_PID[r2]}"
{ wait "${SERVE_PID[r2]}"; } 2>/dev/null || true
start_replica r2 --no-cache
echo "check_balanced_service: r2 stopped and restarted (no compile cache) after $(stored) verdicts"
# While r2 compiles and self-tests, HAProxy's check must get its 503.
saw_loading=""
for _ in $(seq 1 600); do
  st=$(server_state r2)
  case "$st" in *L7STS*) saw_loading="$st"; break ;; esac
  curl -sf "http://127.0.0.1:${PORT[r2]}/readyz" > /dev/null && break
  sleep 0.05
done
[ -n "$saw_loading" ] || fail "HAProxy never saw r2's /readyz answer 503 while it loaded (state: $(server_state r2))"
echo "check_balanced_service: while r2 loaded its catalog HAProxy had it '$saw_loading'"
# Up to 2 minutes: a sanitizer build compiles its catalog much more slowly.
for _ in $(seq 1 2400); do case "$(server_state r2)" in UP*) break ;; esac; sleep 0.05; done
kill -9 "${SERVE_PID[r1]}"
{ wait "${SERVE_PID[r1]}"; } 2>/dev/null || true
echo "check_balanced_service: r2 back UP; r1 SIGKILLed after $(stored) verdicts"
rc=0
wait "$RUN_PID" || rc=$?
RUN_PID=""
[ $rc = 0 ] || fail "culprit run through HAProxy exited $rc: $(grep -v '^\s*$' "$D/lb.log" | tail -5)"
[ "$(stored)" = "$n" ] || fail "$(stored) verdicts stored for $n attempts"
failures=$(sqlite3 "$D/lb.db" "SELECT COALESCE(SUM(failures), 0) FROM attempts")
[ "$failures" = 0 ] || fail "$failures failed attempts recorded"
python3 "$HERE/dump_store.py" "sqlite:$D/ref.db" > "$D/ref.dump"
python3 "$HERE/dump_store.py" "sqlite:$D/lb.db" | sed "s#$URL#in-process#g" > "$D/lb.dump"
cmp -s "$D/ref.dump" "$D/lb.dump" || { diff "$D/ref.dump" "$D/lb.dump" | head -10; fail "through HAProxy the store differs from in-process"; }
r2_after=$(attributions r2)
r3_all=$(attributions r3)
[ "${r2_after:-0}" -ge 1 ] || fail "the restarted r2 answered no attribution (state: $(server_state r2))"
case "$(server_state r1)" in DOWN*) ;; *) fail "r1 (killed) is not DOWN: $(server_state r1)" ;; esac
echo "check_balanced_service: $n attempts through HAProxy, exit 0, rows equal to in-process; restarted r2 answered $r2_after, r3 $r3_all attributions"
echo "check_balanced_service: ok in $(( $(date +%s) - t0 )) s"
