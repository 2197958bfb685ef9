#!/usr/bin/env bash
# Rule evaluation over many symptoms: the same bytes with 16x the error lines.
#
#   bench/symptoms_bench.sh [--quick | --smoke] [--culprit PATH] [--before PATH]
#
# A failing job at scale leaves thousands of symptoms (a watchdog timeout per
# rank, an application fault per GPU, a fallen GPU per slot of a rack that
# lost power), and the cascade and priority rules of `final` reason over all
# of them. Each shape below is generated twice by bench/generate_bundle.py's
# event-heavy mode with the same bytes: a light bundle (error share 0.0025,
# 5 XID bursts per node) and a heavy one with 16x the failure lines (share
# 0.04, 80 bursts, 16x the fallen GPUs). Shapes:
#   ranks   8 nodes x 16 MiB, 512 ranks per node, an NVLink fault: a symptom
#           per rank (~500 -> ~4,000 symptoms);
#   fallen  256 nodes x 512 KiB, 8 ranks per node, a CUDA OOM, and 128 -> 2,048
#           GPUs that fell off the bus 5 s before it (--fallen-gpus): that many
#           equal top-priority causes, each of which HighestPriorityCauseWins
#           runs for (~6,000 -> ~15,000 symptoms). The verdict is unattributed,
#           overruled by SystemicHardwareFault (one fault on more than 16 nodes).
# (--quick: 8 x 2 MiB and 64 x 512 KiB, 32 -> 512 GPUs; --smoke: 8 x 256 KiB and
# 64 x 32 KiB, whose verdicts are not checked; the figures mean nothing.)
# Every diagnosis is `culprit diagnose B --format json --threads 1
# --skip-self-test --timings` after one untimed warm-up run, timed with
# /usr/bin/time; `--timings` gives the engine's time and the rules' time by
# stage (`final`: the cascades and the priority rule).
# Printed per shape: events, symptoms, wall, engine, `final`, `final` per
# symptom, and the peer in the same run: heavy / light for each (the target is
# heavy <= 3x light in wall time). Then the --no-indexes peer (every query
# walks all candidates of its kinds) on the light `ranks` bundle, and, with
# --before PATH, another binary (e.g. the branch point's) on the same bundles.
# Every verdict must be the expected one, or the script fails; --before's are
# compared with ours (engine block aside) and a difference is printed (a
# binary that runs out of evaluation steps attributes nothing). It asserts
# nothing about speed. Data lives in one temp directory,
# deleted at exit; BENCH_SYMPTOMS_KEEP=DIR keeps the bundles there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
quick=0
smoke=0
culprit=${CULPRIT:-$root/build/cli/culprit}
before=
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --smoke) quick=1; smoke=1 ;;
    --culprit) culprit=$2; shift ;;
    --before) before=$2; shift ;;
    -h|--help) sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "symptoms_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$culprit" ] || { echo "symptoms_bench.sh: no culprit binary at $culprit" >&2; exit 2; }
[ -z "$before" ] || [ -x "$before" ] || { echo "symptoms_bench.sh: no binary at $before" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "symptoms_bench.sh: needs GNU time at /usr/bin/time" >&2; exit 2; }
if [ -n "${BENCH_SYMPTOMS_KEEP:-}" ]; then work=$BENCH_SYMPTOMS_KEEP; mkdir -p "$work"; else
  work=$(mktemp -d "${TMPDIR:-/tmp}/culprit-symptoms.XXXXXX"); trap 'rm -rf "$work"' EXIT; fi
tmo=$([ $quick -eq 1 ] && echo 300 || echo 1800)
cache=${BENCH_SYMPTOMS_CACHE:-$work/cache}
"$culprit" diagnose --help >/dev/null

# gen NAME ARGS...: a bundle in $work/NAME (kept if it exists, for BENCH_SYMPTOMS_KEEP)
gen() {
  local name=$1; shift
  [ -f "$work/$name/context.json" ] && return 0
  rm -rf "$work/$name"
  timeout "$tmo" python3 "$here/generate_bundle.py" "$work/$name" --seed 1 --quiet "$@" >/dev/null
}
# run BINARY NAME [extra options]: prints "events symptoms wall_s engine_ms final_ms verdict"
# and leaves the verdict in $work/verdict.json
run() {
  local bin=$1 name=$2; shift 2
  local rc=0
  timeout "$tmo" /usr/bin/time -f "%e %M" -o "$work/time" "$bin" diagnose "$work/$name" --format json --threads 1 \
    --skip-self-test --timings --cache-dir "$cache" "$@" >"$work/verdict.json" 2>"$work/stderr" || rc=$?
  if [ $rc -gt 1 ]; then echo "symptoms_bench.sh: diagnose failed on $name (exit $rc)" >&2; tail -5 "$work/stderr" >&2; exit 1; fi
  python3 - "$work/verdict.json" "$work/time" "$work/stderr" <<'PY'
import json, re, sys
v = json.load(open(sys.argv[1]))
wall = open(sys.argv[2]).read().split()[-2]
t = open(sys.argv[3]).read()
engine = float(re.search(r"engine ([0-9.]+) ms", t).group(1))
events = int(re.search(r"timings: (\d+) events", t).group(1))
m = re.search(r"rules by stage:.*?final ([0-9.]+) ms", t)  # absent from binaries before stage timings
final = float(m.group(1)) if m else -1
over = (v.get("outcome_override") or {}).get("rule")
print(events, len(v["symptoms"]), wall, engine, final, "%s/%s/%s/%s" % (v["status"], v.get("domain"), v.get("sub_domain"), over))
PY
}
# Both verdicts without the engine block (versions, digests): the same findings.
same_findings() {
  python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for v in (a, b):
    v.pop("engine", None)
sys.exit(0 if a == b else 1)
PY
}
# check_verdict VERDICT NAME EXPECTED (`*`: any, for --smoke's bundles, too small to be what they stand for)
check_verdict() {
  [ "$3" = "*" ] || [ "$1" = "$3" ] || { echo "symptoms_bench.sh: unexpected verdict $1 on $2 (expected $3)" >&2; exit 1; }
}
echo "culprit: $culprit ($("$culprit" --version 2>/dev/null | sed -n 1p)); $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"

# label:nodes:bytes per node:ranks per node:inject:fallen GPUs (light):expected verdict
nv=attributed/hardware/nvlink.signal_integrity/None
sys=unattributed/None/None/SystemicHardwareFault
if [ $smoke -eq 1 ]; then shapes="ranks:8:256K:64:nvlink-xid149:0:$nv fallen:64:32K:8:cuda-oom:32:*"
elif [ $quick -eq 1 ]; then shapes="ranks:8:2M:512:nvlink-xid149:0:$nv fallen:64:512K:8:cuda-oom:32:$sys"
else shapes="ranks:8:16M:512:nvlink-xid149:0:$nv fallen:256:512K:8:cuda-oom:128:$sys"; fi
# light and heavy: the same bytes, 16x the failure lines (weight:share:bursts:fallen factor)
weights="light:0.0025:5:1 heavy:0.04:80:16"

echo
echo "== the same bytes, 16x the error lines: light vs heavy, --threads 1 (the bundled catalog) =="
printf "%-22s %9s %9s %8s %11s %10s %14s\n" bundle events symptoms "wall s" "engine ms" "final ms" "final us/sym"
: >"$work/rows.tsv"
for shape in $shapes; do
  IFS=: read -r label nodes bytes ranks inject fallen expect <<<"$shape"
  for w in $weights; do
    IFS=: read -r weight share bursts factor <<<"$w"
    name="$label-$weight"
    gen "$name" --inject "$inject" --nodes "$nodes" --bytes-per-node "$bytes" --ranks-per-node "$ranks" --error-share "$share" \
      --xid-bursts "$bursts" --fallen-gpus $((fallen * factor))
    [ $smoke -eq 1 ] || run "$culprit" "$name" >/dev/null
    read -r ev sy wall eng fin verdict < <(run "$culprit" "$name")
    check_verdict "$verdict" "$name" "$expect"
    cp "$work/verdict.json" "$work/$name.verdict.json"
    printf "%-22s %9d %9d %8.2f %11.1f %10.1f %14.1f\n" "$nodes x $bytes $weight" "$ev" "$sy" "$wall" "$eng" "$fin" \
      "$(python3 -c "print($fin * 1000 / max($sy, 1))")"
    echo -e "$label\t$weight\t$ev\t$sy\t$wall\t$eng\t$fin" >>"$work/rows.tsv"
  done
done
python3 - "$work/rows.tsv" <<'PY'
import sys
rows = {}
for l in open(sys.argv[1]):
    label, weight, *nums = l.split()
    rows.setdefault(label, {})[weight] = [float(x) for x in nums]
for label, r in rows.items():
    a, b = r["light"], r["heavy"]
    q = lambda i: b[i] / max(a[i], 0.01)
    print(f"{label}: heavy / light: {q(0):.1f}x the events, {q(1):.1f}x the symptoms cost {q(2):.2f}x the wall time "
          f"(target <= 3x), {q(3):.2f}x the engine time, {q(4):.2f}x the `final` stage")
PY

echo
echo "== the peer: --no-indexes (every query walks all candidates of its kinds) on the light bundle =="
name="$(echo "$shapes" | cut -d' ' -f1 | cut -d: -f1)-light"
read -r _ _ wall eng fin verdict < <(run "$culprit" "$name")
read -r _ _ pwall peng pfin pverdict < <(run "$culprit" "$name" --no-indexes)
[ "$verdict" = "$pverdict" ] || { echo "symptoms_bench.sh: --no-indexes changed the verdict on $name" >&2; exit 1; }
printf "%-14s engine %9.1f ms, final %8.1f ms; --no-indexes: engine %9.1f ms (%.0fx), final %8.1f ms (%.1fx)\n" "$name" \
  "$eng" "$fin" "$peng" "$(python3 -c "print($peng / max($eng, 0.01))")" "$pfin" "$(python3 -c "print($pfin / max($fin, 0.01))")"

if [ -n "$before" ]; then
  echo
  echo "== --before: $before on the same bundles (verdicts must match, engine block aside) =="
  printf "%-22s %8s %8s %11s %11s  %s\n" bundle "wall s" "before" "engine ms" "before" "before's verdict"
  : >"$work/before.tsv"
  for shape in $shapes; do
    IFS=: read -r label nodes bytes _ <<<"$shape"
    for w in $weights; do
      weight=${w%%:*}
      name="$label-$weight"
      read -r _ _ wall eng _ _ < <(run "$culprit" "$name")
      run "$before" "$name" >/dev/null
      read -r _ _ bwall beng _ bverdict < <(run "$before" "$name")
      if same_findings "$work/verdict.json" "$work/$name.verdict.json"; then same="the same"; else
        same="DIFFERS: $bverdict ($(grep -o 'ran out of evaluation steps' "$work/verdict.json" | head -1 || true))"; fi
      printf "%-22s %8.2f %8.2f %11.1f %11.1f  %s\n" "$nodes x $bytes $weight" "$wall" "$bwall" "$eng" "$beng" "$same"
      echo -e "$label\t$weight\t$wall\t$bwall" >>"$work/before.tsv"
    done
  done
  python3 - "$work/before.tsv" <<'PY'
import sys
rows = {}
for l in open(sys.argv[1]):
    label, weight, wall, bwall = l.split()
    rows.setdefault(label, {})[weight] = (float(wall), float(bwall))
for label, r in rows.items():
    print(f"{label}: heavy / light wall time: {r['heavy'][0] / r['light'][0]:.2f}x; before: {r['heavy'][1] / r['light'][1]:.2f}x")
PY
fi
echo
echo "symptoms_bench.sh: all steps ran"
