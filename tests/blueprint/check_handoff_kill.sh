#!/usr/bin/env bash
# Recommendations survive SIGKILL at any instant (docs/recovery.md, "Hand-off"):
# `culprit run --once` over 20 example bundles (16 of them recommend a drain,
# several reset_gpu, replace_suspect; a policy whose decisions depend on the
# store's history), with --emit-recommendations and a loopback webhook, is
# killed at KILLS (50) random instants spread over an uninterrupted run's
# duration, then restarted to completion; the final rows (verdicts,
# recommendations with decision and hand-off outcome) must equal the
# uninterrupted run's, and every recommendation must have been emitted and
# POSTed at least once. On SQLite, then on a real PostgreSQL (started once
# for the suite on 127.0.0.1, stopped by its PID), whose rows must also equal
# SQLite's. handoff_kill.py does the killing and comparing.
#
#   check_handoff_kill.sh CULPRIT SOURCE_DIR     (KILLS=N, SEED=S, STORES="sqlite postgresql", KEEP=1)
set -euo pipefail
CULPRIT=$(readlink -f "$1")
SRC=$(readlink -f "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
KILLS=${KILLS:-50}
SEED=${SEED:-$(date +%s)}
STORES=${STORES:-sqlite postgresql}
. "$HERE/pg_server.sh"
D=$(mktemp -d /tmp/culprit-handoff-kill.XXXXXX)
WEBHOOK_PID=""
cleanup() {
  if [ -n "$WEBHOOK_PID" ]; then kill "$WEBHOOK_PID" 2>/dev/null || true; wait "$WEBHOOK_PID" 2>/dev/null || true; fi
  pg_stop
  if [ "${KEEP:-0}" = 1 ]; then echo "check_handoff_kill: kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
fail() { echo "check_handoff_kill: FAIL: $*"; exit 1; }
t0=$(date +%s)

bundles=""
for b in nvlink-xid149 xid48-dbe xid79-unnumbered xid119-gsp xid109-ctxsw sxid-nvswitch-fatal fabric-manager-start \
         ib-link-down mce-host-memory pcie-aer-fatal nvml-mismatch nodefail-outranks-ib node-reboot-midjob \
         nccl-port-error-unrecovered xid13-repeat-same-gpu xid95-uncontained time-limit cuda-oom-one-rank \
         python-keyerror boot-fail; do
  [ -d "$SRC/examples/$b" ] || fail "examples/$b is missing"
  bundles+="\"$SRC/examples/$b\", "
done
cat > "$D/run.yaml" <<CONF
cluster: kill-test
discovery:
  static:
    bundles: [${bundles%, }]
output:
  stdout: none
CONF
# Decisions that read the history: the order of storing matters, and a
# restart must decide exactly as the uninterrupted run did.
cat > "$D/policy.yaml" <<'POLICY'
rules:
  - action: drain
    domain: hardware
    faults: 2
    within: 3650d
    then: act
  - action: drain
    then: hold
replace_suspect: {faults: 2, within: 3650d}
default: act
POLICY

python3 "$HERE/webhook_server.py" "$D/webhook.port" "$D/webhook.requests" ok &
WEBHOOK_PID=$!
for _ in $(seq 1 100); do [ -s "$D/webhook.port" ] && break; sleep 0.05; done
[ -s "$D/webhook.port" ] || fail "the webhook receiver did not start"
WEBHOOK="http://127.0.0.1:$(cat "$D/webhook.port")"

common=(--culprit "$CULPRIT" --config "$D/run.yaml" --policy "$D/policy.yaml" --work "$D" --kills "$KILLS" --seed "$SEED"
        --webhook "$WEBHOOK" --webhook-log "$D/webhook.requests")
failed=()
for store in $STORES; do
  case $store in
    sqlite)
      python3 "$HERE/handoff_kill.py" "${common[@]}" --store sqlite || failed+=(SQLite) ;;
    postgresql)
      if [ -z "$PG_DIR" ]; then
        pg_start "$D" || fail "PostgreSQL"
        echo "check_handoff_kill: PostgreSQL up on 127.0.0.1:$PG_PORT"
      fi
      ref=()
      [ -f "$D/ref-sqlite.dump" ] && ref=(--reference "$D/ref-sqlite.dump")
      python3 "$HERE/handoff_kill.py" "${common[@]}" --store postgresql --pg-base "$PG_URL_BASE" "${ref[@]}" \
        || failed+=(PostgreSQL) ;;
    *) fail "unknown store kind $store" ;;
  esac
done
[ ${#failed[@]} = 0 ] || fail "${failed[*]}: a killed run lost or changed rows (SEED=$SEED reproduces the instants)"
echo "check_handoff_kill: ok in $(( $(date +%s) - t0 )) s"
