#!/usr/bin/env bash
# Rule evaluation at scale: the bundled catalog on event-heavy bundles.
#
#   bench/events_bench.sh [--quick | --smoke] [--culprit PATH]
#
# Bundles come from bench/generate_bundle.py's event-heavy mode (the failure
# output of every rank after an injected NVLink fault: NCCL WARNs, watchdog
# timeouts, DistBackendError and exit lines, XID bursts), so the rules see
# the joins, windows, counts and groups of the real catalog at 10^3..10^6
# events. Every diagnosis is `culprit diagnose B --format json --threads 1
# --skip-self-test --timings` (one core), timed with /usr/bin/time (wall,
# peak RSS); `--timings` gives the rule engine's own time.
#
# (1) error share: 8 nodes x 16 MiB, the same bytes with a growing share of
#     failure lines (the shape of the issue's table): events, symptoms, wall,
#     engine, peak RSS, and what 16x the events costs in time;
# (2) the peer: the same diagnosis with --no-indexes (every query walks all
#     candidates of its kinds), engine time ratio, on the smaller bundles;
# (3) scaling: 8 nodes, 10^4 .. 10^6 events (--quick: 10^3 .. 10^4.5),
#     engine and whole-diagnosis events/s, and the exponent of engine time
#     (and wall time) vs events fitted by least squares on log-log;
# (4) a million events two ways (full run only): 4,096 nodes x ~250 events,
#     and 8 nodes x ~125,000 events; peak RSS per event beyond the same
#     run on a bundle of the same bytes without failure lines.
# --smoke: every step on tiny bundles, one run each (a check that the script
# works, for CI through bench/run.sh --smoke; the figures mean nothing).
# Every verdict must be the injected cause (attributed, nvlink), or the
# script fails. It asserts nothing about speed. Data lives in one temp
# directory, deleted at exit; BENCH_EVENTS_KEEP=DIR keeps the bundles there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
quick=0
smoke=0
culprit=${CULPRIT:-$root/build/cli/culprit}
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --smoke) quick=1; smoke=1 ;;
    --culprit) culprit=$2; shift ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "events_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$culprit" ] || { echo "events_bench.sh: no culprit binary at $culprit" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "events_bench.sh: needs GNU time at /usr/bin/time" >&2; exit 2; }
if [ -n "${BENCH_EVENTS_KEEP:-}" ]; then work=$BENCH_EVENTS_KEEP; mkdir -p "$work"; else
  work=$(mktemp -d "${TMPDIR:-/tmp}/culprit-events.XXXXXX"); trap 'rm -rf "$work"' EXIT; fi
tmo=$([ $quick -eq 1 ] && echo 300 || echo 3600)
# warm NAME: one untimed run first (page cache, compile cache); not with --smoke
warm() { [ $smoke -eq 1 ] || run "$1" >/dev/null; }
cache=${BENCH_EVENTS_CACHE:-$work/cache}  # run.sh passes its own: one cold compile per run
"$culprit" diagnose --help >/dev/null  # the binary runs

# gen NAME ARGS...: a bundle in $work/NAME (kept if it exists, for BENCH_EVENTS_KEEP)
gen() {
  local name=$1; shift
  [ -f "$work/$name/context.json" ] && return 0
  rm -rf "$work/$name"
  timeout "$tmo" python3 "$here/generate_bundle.py" "$work/$name" --seed 1 --quiet --inject nvlink-xid149 "$@" >/dev/null
}
# run NAME [extra options]: prints "events symptoms wall_s rss_kb engine_ms verdict"
run() {
  local name=$1; shift
  local rc=0
  timeout "$tmo" /usr/bin/time -f "%e %M" -o "$work/time" "$culprit" diagnose "$work/$name" --format json --threads 1 \
    --skip-self-test --timings --cache-dir "$cache" "$@" >"$work/verdict.json" 2>"$work/stderr" || rc=$?
  if [ $rc -gt 1 ]; then echo "events_bench.sh: diagnose failed on $name (exit $rc)" >&2; tail -5 "$work/stderr" >&2; exit 1; fi
  python3 - "$work/verdict.json" "$work/time" "$work/stderr" <<'PY'
import json, re, sys
v = json.load(open(sys.argv[1]))
wall, kb = open(sys.argv[2]).read().split()[-2:]
t = open(sys.argv[3]).read()
engine = float(re.search(r"engine ([0-9.]+) ms", t).group(1))
events = int(re.search(r"timings: (\d+) events", t).group(1))
verdict = "%s/%s/%s" % (v["status"], v.get("domain"), v.get("sub_domain"))
print(events, len(v["symptoms"]), wall, kb, engine, verdict)
PY
}
check_verdict() {
  case "$1" in attributed/hardware/nvlink.signal_integrity) ;; *)
    echo "events_bench.sh: unexpected verdict $1 on $2 (the injected cause is an NVLink fault)" >&2; exit 1 ;; esac
}
echo "culprit: $culprit ($("$culprit" --version 2>/dev/null | sed -n 1p)); $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"

# ------------------------------------------------------------ (1) and (2)
if [ $smoke -eq 1 ]; then per=256K; shares="0.0025 0.02"; elif [ $quick -eq 1 ]; then per=2M; shares="0.0025 0.01 0.04"; else per=16M; shares="0.0025 0.01 0.04"; fi
echo
echo "== (1) error share: 8 nodes x $per, --threads 1 (the bundled catalog) =="
printf "%-8s %9s %9s %9s %11s %11s %9s\n" share events symptoms "wall s" "engine ms" "events/s*" "peak RSS"
: >"$work/shares.tsv"
for s in $shares; do
  bursts=$(python3 -c "print(int(2000 * $s))")
  gen "share-$s" --nodes 8 --bytes-per-node "$per" --error-share "$s" --ranks-per-node 64 --xid-bursts "$bursts"
  warm "share-$s"
  read -r ev sy wall kb eng verdict < <(run "share-$s")
  check_verdict "$verdict" "share-$s"
  printf "%-8s %9d %9d %9.2f %11.1f %11.0f %6.0f MB\n" "$s" "$ev" "$sy" "$wall" "$eng" "$(python3 -c "print($ev / max($eng, 0.01) * 1000)")" "$(python3 -c "print($kb / 1024)")"
  echo -e "$s\t$ev\t$wall\t$eng" >>"$work/shares.tsv"
done
python3 - "$work/shares.tsv" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
a, b = rows[0], rows[-1]
print(f"* engine events/s. {int(b[1]) / int(a[1]):.1f}x the events cost {float(b[2]) / float(a[2]):.2f}x the wall time, "
      f"{float(b[3]) / max(float(a[3]), 0.01):.2f}x the engine time")
PY
echo
echo "== (2) the peer: the same diagnoses with --no-indexes (every query walks all candidates of its kinds) =="
printf "%-8s %9s %14s %16s %8s\n" share events "engine ms" "--no-indexes ms" ratio
for s in $(echo "$shares" | cut -d' ' -f1-2); do
  read -r ev _ _ _ eng verdict < <(run "share-$s")
  read -r _ _ _ _ plain pverdict < <(run "share-$s" --no-indexes)
  [ "$verdict" = "$pverdict" ] || { echo "events_bench.sh: --no-indexes changed the verdict on share-$s" >&2; exit 1; }
  printf "%-8s %9d %14.1f %16.1f %7.1fx\n" "$s" "$ev" "$eng" "$plain" "$(python3 -c "print($plain / max($eng, 0.01))")"
done

# ---------------------------------------------------------------- (3)
echo
if [ $smoke -eq 1 ]; then
  points="256K:0.002:2 256K:0.01:5 256K:0.03:15"
  echo "== (3) scaling: 8 nodes, tiny bundles (--smoke) =="
elif [ $quick -eq 1 ]; then
  points="1.5M:0.002:5 1.5M:0.01:20 1.5M:0.04:80 1.5M:0.12:250"
  echo "== (3) scaling: 8 nodes, 10^3 .. 10^4.5 events (--quick) =="
else
  points="16M:0.01:20 16M:0.03:130 16M:0.1:450 24M:0.25:1500 32M:0.5:5000"
  echo "== (3) scaling: 8 nodes, 10^4 .. 10^6 events =="
fi
printf "%-22s %9s %9s %9s %11s %13s %13s %9s\n" bundle events symptoms "wall s" "engine ms" "engine ev/s" "whole ev/s" "peak RSS"
: >"$work/scale.tsv"
for p in $points; do
  IFS=: read -r bytes share bursts <<<"$p"
  ranks=$([ "$(python3 -c "print(int($share >= 0.2))")" = 1 ] && echo 512 || echo 64)
  name="scale-$bytes-$share"
  gen "$name" --nodes 8 --bytes-per-node "$bytes" --error-share "$share" --ranks-per-node "$ranks" --xid-bursts "$bursts"
  warm "$name"
  read -r ev sy wall kb eng verdict < <(run "$name")
  check_verdict "$verdict" "$name"
  printf "%-22s %9d %9d %9.2f %11.1f %13.0f %13.0f %6.0f MB\n" "8x$bytes share $share" "$ev" "$sy" "$wall" "$eng" \
    "$(python3 -c "print($ev / max($eng, 0.01) * 1000)")" "$(python3 -c "print($ev / max($wall, 0.01))")" "$(python3 -c "print($kb / 1024)")"
  echo -e "$ev\t$eng\t$wall\t$kb" >>"$work/scale.tsv"
  [ -n "${BENCH_EVENTS_KEEP:-}" ] || rm -rf "${work:?}/$name"
done
python3 - "$work/scale.tsv" <<'PY'
import math, sys
pts = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
def fit(i):
    xs = [math.log(p[0]) for p in pts]; ys = [math.log(max(p[i], 1e-3)) for p in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
lo, hi = min(p[0] for p in pts), max(p[0] for p in pts)
nlogn = math.log(hi * math.log(hi) / (lo * math.log(lo))) / math.log(hi / lo)
print(f"fitted exponent vs events ({lo:.0f} .. {hi:.0f}, least squares on log-log): engine {fit(1):.2f}, "
      f"whole diagnosis (wall) {fit(2):.2f}; n log n over this range is {nlogn:.2f}")
PY

# ---------------------------------------------------------------- (4)
echo
if [ $quick -eq 1 ]; then
  echo "== (4) a million events: skipped with --quick and --smoke =="
  echo
  echo "events_bench.sh: all steps ran"
  exit 0
fi
echo "== (4) a million events, --threads 1; RSS per event beyond the same bytes without failure lines =="
printf "%-26s %9s %9s %9s %11s %10s %10s %12s\n" bundle events symptoms "wall s" "engine ms" "peak RSS" "baseline" "RSS/event"
for shape in "4096:96K:0.4:2:8" "8:32M:0.5:5000:512"; do
  IFS=: read -r nodes bytes share bursts ranks <<<"$shape"
  name="m-$nodes"
  gen "$name" --nodes "$nodes" --bytes-per-node "$bytes" --error-share "$share" --ranks-per-node "$ranks" --xid-bursts "$bursts"
  gen "$name-quiet" --nodes "$nodes" --bytes-per-node "$bytes"
  warm "$name"
  read -r ev sy wall kb eng verdict < <(run "$name")
  check_verdict "$verdict" "$name"
  read -r _ _ _ base _ _ < <(run "$name-quiet")
  printf "%-26s %9d %9d %9.2f %11.1f %7.0f MB %7.0f MB %9.0f B\n" "$nodes nodes x $bytes" "$ev" "$sy" "$wall" "$eng" \
    "$(python3 -c "print($kb / 1024)")" "$(python3 -c "print($base / 1024)")" "$(python3 -c "print(($kb - $base) * 1024 / $ev)")"
  [ -n "${BENCH_EVENTS_KEEP:-}" ] || rm -rf "${work:?}/$name" "${work:?}/$name-quiet"
done
echo
echo "events_bench.sh: all steps ran"
