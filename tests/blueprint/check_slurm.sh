#!/usr/bin/env bash
# `culprit run --watch` against a real Slurm 22.05 (slurmctld + slurmd +
# slurmdbd + MariaDB + munge) started here on 127.0.0.1: jobs that fail,
# time out, are cancelled and hit NODE_FAIL (with and without requeue) are
# discovered with the state, nodes and window sacct reports, their output
# files are collected, verdicts land in the store, SIGTERM stops the run
# cleanly and a second run adds nothing. Then the recovery hand-off: a job
# that fails with an XID 79 on node1 is drained by `culprit run --apply`
# (sinfo -R shows culprit's reason), the policy holds the other drains, and
# node1 is resumed. Prints the time from each job's end to its stored verdict.
#
#   check_slurm.sh CULPRIT        (KEEP=1 keeps the directory for a look)
set -euo pipefail
CULPRIT=$(readlink -f "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
for tool in slurmctld slurmd slurmdbd mariadbd munged sbatch sacct; do
  command -v "$tool" >/dev/null || { echo "check_slurm: $tool is not installed (scripts/install-deps.sh installs it)"; exit 1; }
done
D=$(mktemp -d /tmp/culprit-slurm.XXXXXX)
RUN_PID=""
cleanup() {
  [ -n "$RUN_PID" ] && kill -0 "$RUN_PID" 2>/dev/null && kill -9 "$RUN_PID"
  D=$D "$HERE/slurm_cluster.sh" stop || true
  if [ "${KEEP:-0}" = 1 ]; then echo "check_slurm: kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
fail() { echo "check_slurm: FAIL: $*"; echo "--- culprit run log:"; cat "$D/run.log" 2>/dev/null | tail -40; exit 1; }
t0=$(date +%s)

D=$D "$HERE/slurm_cluster.sh" start > /dev/null || fail "the Slurm cluster did not start (logs in $D/log)"
export SLURM_CONF=$D/slurm.conf
echo "check_slurm: Slurm up in $(( $(date +%s) - t0 )) s"
mkdir -p "$D/jobs"
cat > "$D/blueprint.yaml" <<CONF
cluster: testcluster
discovery:
  slurm:
    slurm_conf: $D/slurm.conf
    lookback: 1h
collectors:
  files:
    - source: app                 # the job's own output (sbatch -o)
      path: "$D/jobs/{job_id}.out"
      host: "{batch_node}"
    - source: scheduler           # the controller's log
      path: "$D/log/slurmctld.log"
      host: slurmctl
    - source: scheduler           # the node daemon's log
      path: "$D/log/slurmd.log"
      host: "{batch_node}"
watch:
  interval: 1s
  overlap: 2m
output:
  stdout: jsonl
CONF
"$CULPRIT" run --config "$D/blueprint.yaml" --watch --store "sqlite:$D/bp.db" > "$D/verdicts.jsonl" 2> "$D/run.log" &
RUN_PID=$!

state() { scontrol show job -o "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
wait_state() {  # wait_state JOB SECONDS STATE...
  local j=$1 n=$(( $2 * 5 )); shift 2
  for _ in $(seq 1 "$n"); do
    s=$(state "$j")
    for want in "$@"; do [ "$s" = "$want" ] && return 0; done
    sleep 0.2
  done
  fail "job $j is $(state "$j"), not $*"
}
sub() { sbatch --parsable -o "$D/jobs/%j.out" "$@"; }

# A training job that dies of a CUDA out-of-memory error (PyTorch 2.4+ wording).
J_FAIL=$(sub -J oom --wrap 'echo "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in use."; exit 3')
wait_state "$J_FAIL" 30 FAILED
# Two jobs running when their node goes down: one not requeued (NODE_FAIL),
# one requeued (NODE_FAIL, then a second run that exits 2).
J_NF=$(sub -J nodefail --no-requeue --wrap 'echo training; sleep 300')
J_RQ=$(sub -J requeue --requeue --wrap 'if [ "${SLURM_RESTART_COUNT:-0}" -gt 0 ]; then echo "second run failed"; exit 2; fi; echo training; sleep 300')
wait_state "$J_NF" 30 RUNNING
wait_state "$J_RQ" 30 RUNNING
sleep 1
scontrol update NodeName=node1 State=DOWN Reason="XID 79 GPU fell off the bus"
wait_state "$J_NF" 30 NODE_FAIL
wait_state "$J_RQ" 30 PENDING
# Before the requeued run may start, the killed one must be gone from slurmd
# (else slurmctld sees a duplicate job id and drains the node).
for _ in $(seq 1 100); do
  grep -q "_job_complete: JobId=$J_RQ " "$D/log/slurmctld.log" && grep -q "_job_complete: JobId=$J_NF " "$D/log/slurmctld.log" &&
    sinfo -h -o %T | grep -qE '^idle' && break
  sleep 0.2
done
sleep 2
scontrol update JobId="$J_RQ" StartTime=now   # skip the 2-minute requeue delay
# A job cancelled while it runs.
J_CAN=$(sub -J cancelled --wrap 'echo training; sleep 300')
wait_state "$J_CAN" 30 RUNNING
scancel "$J_CAN"
wait_state "$J_CAN" 30 CANCELLED
wait_state "$J_RQ" 60 FAILED
# A job over its time limit (1 minute is Slurm's smallest; ~90 s in all).
# A training loop that reports its steps until the limit stops it: the time
# limit is the cause (a job silent before its limit would be a hang).
J_TO=$(sub -J timeout -t 0:01:00 --wrap 'for i in $(seq 1 300); do echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) train: step $i loss 1.25"; sleep 1; done')
wait_state "$J_TO" 200 TIMEOUT
echo "check_slurm: jobs done after $(( $(date +%s) - t0 )) s: fail=$J_FAIL nodefail=$J_NF requeue=$J_RQ cancelled=$J_CAN timeout=$J_TO"

# All six attempts stored by the watching run.
for _ in $(seq 1 300); do
  n=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from verdicts').fetchone()[0])" "$D/bp.db" 2>/dev/null || echo 0)
  [ "$n" -ge 6 ] && break
  sleep 0.2
done
[ "$n" -ge 6 ] || fail "only $n verdicts stored after 60 s"
kill -TERM "$RUN_PID"
rc=0; wait "$RUN_PID" || rc=$?
RUN_PID=""
[ "$rc" = 0 ] || fail "culprit run --watch exited $rc after SIGTERM"
grep -q "stopped by a signal" "$D/run.log" || fail "no clean-stop message after SIGTERM"

# A restarted --watch goes on from the cursor it stored: nothing new to do.
python3 -c "import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute(\"select value_ns from watch_state where name='cursor:slurm'\").fetchone(); sys.exit(0 if r else 1)" "$D/bp.db" \
  || fail "no watch cursor in the store"
"$CULPRIT" run --config "$D/blueprint.yaml" --watch --polls 1 --store "sqlite:$D/bp.db" --format none 2> "$D/restart.log" || fail "restarted --watch exited $?"
grep -q "poll 1: discovered [0-9]*, skipped [0-9]* already stored, attributed 0, failed 0" "$D/restart.log" || fail "restarted --watch: $(tail -1 "$D/restart.log")"

TZ=UTC SLURM_TIME_FORMAT=standard sacct -P -n -D -a -S 1970-01-01T00:00:00 \
  -o JobIDRaw,State,ExitCode,Start,End,NodeList > "$D/sacct.txt"
python3 "$HERE/check_slurm.py" "$D" "$J_FAIL" "$J_NF" "$J_RQ" "$J_CAN" "$J_TO" || fail "store check"

# A second run finds every attempt stored and adds nothing.
before=$(python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print([c.execute(f'select count(*) from {t}').fetchone()[0] for t in ('attempts','verdicts','symptoms','evidence','coverage')])" "$D/bp.db")
"$CULPRIT" run --config "$D/blueprint.yaml" --once --store "sqlite:$D/bp.db" --format none 2> "$D/rerun.log" || fail "re-run exited $?"
after=$(python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print([c.execute(f'select count(*) from {t}').fetchone()[0] for t in ('attempts','verdicts','symptoms','evidence','coverage')])" "$D/bp.db")
[ "$before" = "$after" ] || fail "re-run changed the store: $before -> $after"
grep -q "attributed 0" "$D/rerun.log" || fail "re-run attributed something: $(cat "$D/rerun.log")"
echo "check_slurm: re-run added nothing ($after rows in attempts, verdicts, symptoms, evidence, coverage)"
# ------------------------------------------------------------ hand-off
# A job fails on node1 with a hardware-class cause: the driver's XID 79 in
# the node's kernel log (the real line shape, open-gpu-kernel-modules'
# "NVRM: Xid (PCI:...): 79, pid=..., name=..., GPU has fallen off the bus.",
# as the catalog's tests spell it), then the training process dies.
J_HW=$(sub -J gpu-fell-off --wrap "TZ=UTC; export TZ; echo training; sleep 1
echo \"\$(date '+%b %e %H:%M:%S') node1 kernel: [175800.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=\$\$, name=python3, GPU has fallen off the bus.\" >> $D/jobs/\$SLURM_JOB_ID.kern
echo 'RuntimeError: CUDA error: unspecified launch failure'; exit 1")
wait_state "$J_HW" 30 FAILED
# slurmctld knows the job ended before slurmdbd does; discovery reads sacct,
# so `run --once` below sees the job as ended only once its accounting
# record does (on a loaded machine that can take seconds). Wait for it in
# the form discovery asks (a time window, not a job id: sacct's window
# selects on the eligible time as well, which slurmdbd may learn later).
acct_window() {
  TZ=UTC SLURM_TIME_FORMAT=standard sacct -P -n -D -a -S "$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%S)" \
    -E "$(date -u -d '+1 second' +%Y-%m-%dT%H:%M:%S)" -o "$1" 2>&1
}
for _ in $(seq 1 150); do
  # (grep finds nothing until the record is there: not an error under set -e)
  acct=$(acct_window JobIDRaw,State,End | grep "^$J_HW|" | head -1) || acct=""
  case "$acct" in "$J_HW|FAILED|"[0-9]*) break ;; esac
  sleep 0.2
done
case "$acct" in "$J_HW|FAILED|"[0-9]*) ;; *) fail "sacct does not list job $J_HW as ended after 30 s: '$acct'; by job id: '$(sacct -j "$J_HW" -X -n -P -o State,Eligible,Start,End 2>&1)'" ;; esac
# The same blueprint with one more file source: the node's kernel log.
python3 - "$D/blueprint.yaml" "$D/hw.yaml" "$D" <<'PY' || fail "cannot write hw.yaml"
import sys
src, dst, d = sys.argv[1:]
t = open(src).read()
kernel = f'  files:\n    - source: kernel              # the node\'s kernel log\n      path: "{d}/jobs/{{job_id}}.kern"\n      host: "{{batch_node}}"\n'
assert t.count("  files:\n") == 1
open(dst, "w").write(t.replace("  files:\n", kernel))
PY
# Only hardware causes drain; the NODE_FAIL attempts' drains are held.
cat > "$D/policy.yaml" <<'POLICY'
rules:
  - action: drain
    domain: hardware
    then: act
  - action: drain
    then: hold
default: act
POLICY
# Without --apply: the command is printed, the node stays as it is.
"$CULPRIT" run --config "$D/hw.yaml" --once --store "sqlite:$D/hw-dry.db" --format none --policy "$D/policy.yaml" \
  2> "$D/hw-dry.log" || fail "dry run exited $?: $(tail -5 "$D/hw-dry.log")"
grep -q "to drain node1 (--apply runs it): scontrol update nodename=node1 state=drain reason='culprit: gpu.fallen_off_bus slurm/testcluster/$J_HW@" "$D/hw-dry.log" \
  || fail "no printed drain command for job $J_HW; the dry run's log: $(tail -20 "$D/hw-dry.log")
--- what sacct lists for the last hour (the discovery's query):
$(acct_window JobIDRaw,State,Eligible,Start,End,NodeList)"
[ -z "$(sinfo -R -h -o '%N %E')" ] || fail "a run without --apply drained: $(sinfo -R -h)"
# With --apply: scontrol runs and Slurm shows the reason.
"$CULPRIT" run --config "$D/hw.yaml" --once --store "sqlite:$D/hw.db" --format jsonl --policy "$D/policy.yaml" --apply \
  --emit-recommendations "$D/recommendations.jsonl" > "$D/hw.jsonl" 2> "$D/hw.log" || fail "--apply run exited $?: $(tail -5 "$D/hw.log")"
grep -q "drained node1: scontrol update nodename=node1 state=drain" "$D/hw.log" || fail "no drain reported: $(grep -i drain "$D/hw.log")"
reason=$(sinfo -R -h -o '%N|%E')
case "$reason" in
  "node1|culprit: gpu.fallen_off_bus slurm/testcluster/$J_HW@"*) ;;
  *) fail "sinfo -R does not show the culprit reason: '$reason'" ;;
esac
python3 - "$D" "$J_HW" <<'PY' || fail "the hand-off records"
import json, sqlite3, sys
d, job = sys.argv[1], sys.argv[2]
db = sqlite3.connect(f"{d}/hw.db")
rows = db.execute("select v.workload_id, r.scope, r.node, r.action, r.decision, r.decided_by, r.handoff from recommendations r "
                  "join verdicts v on v.id = r.verdict_ref order by v.workload_id, r.ordinal").fetchall()
drains = [r for r in rows if r[3] == "drain"]
hw = [r for r in drains if r[0] == job]
assert len(hw) == 1 and hw[0][4] == "act" and hw[0][5] == "policy.yaml:2" and hw[0][6].startswith("applied: scontrol update nodename=node1 state=drain"), hw
held = [r for r in drains if r[0] != job]
assert held and all(r[4] == "hold" and r[5] == "policy.yaml:5" and r[6] == "held" for r in held), held
lines = [json.loads(l) for l in open(f"{d}/recommendations.jsonl")]
assert len(lines) == len(rows), (len(lines), len(rows))
mine = [l for l in lines if l["attempt"]["workload_id"] == job]
assert [l["action"] for l in mine] == ["restart_excluding", "drain", "reboot"], [l["action"] for l in mine]
assert mine[0]["nodes"] == ["node1"] and mine[1]["command"].startswith("scontrol update nodename=node1 state=drain reason='culprit: gpu.fallen_off_bus")
v = [json.loads(l) for l in open(f"{d}/hw.jsonl") if json.loads(l)["attempt"]["workload_id"] == job][0]
assert v["verdict"]["sub_domain"] == "gpu.fallen_off_bus" and v["verdict"]["culprit_nodes"] == ["node1"], v["verdict"]["status"]
assert [r["decision"] for r in v["recovery"]] == ["act", "act", "act"], v["recovery"]
print(f"check_slurm: hand-off: node1 drained for job {job}, {len(held)} NODE_FAIL drain(s) held by the policy, {len(rows)} recommendations stored")
PY
# Give the node back, so the cluster is as the rest of the suite expects.
scontrol update nodename=node1 state=resume
for _ in $(seq 1 50); do [ -z "$(sinfo -R -h -o '%N')" ] && break; sleep 0.2; done
[ -z "$(sinfo -R -h -o '%N')" ] || fail "node1 did not resume: $(sinfo -R -h)"
sinfo -h -o %T | grep -qE '^idle' || fail "node1 is $(sinfo -h -o %T) after resume"
echo "check_slurm: node1 resumed ($(sinfo -h -o %T))"
echo "check_slurm: ok in $(( $(date +%s) - t0 )) s"
