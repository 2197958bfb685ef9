#!/usr/bin/env bash
# Scan throughput, peers, memory, start-up, scale and the service: the benchmark harness.
#
#   bench/run.sh [--quick | --smoke] [--culprit PATH]
#
# (a) installs the peers if missing (ripgrep; GNU time at /usr/bin/time),
# (b) generates a bundle with 0.2% error lines (1 GB; --quick 64 MB),
# (c) runs culprit diagnose (--threads 1 and 2), rg -j1 -c -f, grep -E -c -f
#     and bench/python_baseline.py over the same log files, the patterns
#     exported by `culprit export-patterns`, and prints a table: tool, MB/s,
#     ratio vs culprit (1 thread), peak RSS,
# (d) a memory series (0.5, 2, 8 GB; --quick 64/128/256 MB),
# (e) start-up, cold (fresh cache dir) and warm, self-tests included,
# (f) a scaling series (1k, 2k, 4k, 8k nodes, small logs; --quick 100..800)
#     plus 10k nodes (full run only) with the fitted exponent of time vs n,
# (g) the service under wrk: throughput and p50/p99 latency of one-shot
#     attributions of a 64-node workload (100 MB of logs; --quick 1 MB),
# (h) rule evaluation at scale (bench/events_bench.sh): the bundled catalog
#     on event-heavy bundles; error-share table, the --no-indexes peer, a
#     10^4..10^6-event series with engine and whole-diagnosis events/s and
#     the fitted exponent, a million events two ways (--quick: small sizes,
#     no million). BENCH_EVENTS=0 skips it.
# (i) rule evaluation over many symptoms (bench/symptoms_bench.sh): the same
#     bytes with 16x the error lines, light vs heavy, and the --no-indexes
#     peer. BENCH_SYMPTOMS=0 skips it.
# --smoke runs every step once on tiny inputs (4 MB, a few dozen nodes, a
# 4 KB service workload for 1 s, events_bench.sh and symptoms_bench.sh
# --smoke): a check that the
# harness still works, for CI (well under a minute on 2 cores); its figures
# mean nothing.
# Timings of (c) are the best of 3 runs (BENCH_RUNS; 1 with --quick).
# Culprit's scan throughput subtracts its start-up, measured on an empty
# bundle (same context, no logs); it is given by wall time and by CPU time
# (user + system), the steadier figure on a shared machine. Page cache is
# warmed before every timing.
# Every step has a timeout; data lives in one temp directory deleted at exit.
# It asserts nothing about speed: it fails only when a step cannot run.
# Sizes can be overridden: BENCH_MAIN, BENCH_MEM ("512M 2G 8G"),
# BENCH_SCALE ("1000 2000 4000 8000"), BENCH_BIG (10000, 0 to skip),
# BENCH_SCALE_BYTES (per node, default 8K), BENCH_PY_SLICE (bytes),
# BENCH_SERVICE_BYTES (logs per node of the service's 64-node workload;
# default 1600K = 100 MB, --quick 16K; "0" skips it), BENCH_SERVICE_SECS, BENCH_RUNS,
# BENCH_EVENTS (0 skips step h).
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
    -h|--help) sed -n '2,43p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$culprit" ] || { echo "run.sh: no culprit binary at $culprit (build it, or --culprit PATH)" >&2; exit 2; }
if [ $smoke -eq 1 ]; then
  main_size=${BENCH_MAIN:-4M}; mem_sizes=${BENCH_MEM:-"2M 4M"}
  scale_nodes=${BENCH_SCALE:-"20 40"}; big_nodes=${BENCH_BIG:-0}; py_slice=${BENCH_PY_SLICE:-500000}
  tmo=60; runs=1; svc_bytes=${BENCH_SERVICE_BYTES:-4K}; svc_secs=${BENCH_SERVICE_SECS:-1}
elif [ $quick -eq 1 ]; then
  main_size=${BENCH_MAIN:-64M}; mem_sizes=${BENCH_MEM:-"64M 128M 256M"}
  scale_nodes=${BENCH_SCALE:-"100 200 400 800"}; big_nodes=${BENCH_BIG:-0}; py_slice=${BENCH_PY_SLICE:-4000000}
  tmo=120; runs=1; svc_bytes=${BENCH_SERVICE_BYTES:-16K}; svc_secs=${BENCH_SERVICE_SECS:-3}
else
  main_size=${BENCH_MAIN:-1G}; mem_sizes=${BENCH_MEM:-"512M 2G 8G"}
  scale_nodes=${BENCH_SCALE:-"1000 2000 4000 8000"}; big_nodes=${BENCH_BIG:-10000}; py_slice=${BENCH_PY_SLICE:-32000000}
  tmo=1800; runs=${BENCH_RUNS:-3}; svc_bytes=${BENCH_SERVICE_BYTES:-1600K}; svc_secs=${BENCH_SERVICE_SECS:-30}
fi
scale_bytes=${BENCH_SCALE_BYTES:-8K}

# (a) peers
need=()
command -v rg >/dev/null || need+=(ripgrep)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "run.sh: installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/culprit-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cache="$work/cache"
gen() { timeout $tmo python3 "$here/generate_bundle.py" "$@" --seed 1 --quiet >/dev/null; }
warm() { find "$1" -type f -exec cat {} + >/dev/null; }
# measure OUT CMD...: runs CMD (stdout to OUT), prints "wall_s rss_kb cpu_s" of it
# (cpu = user + system: on a machine shared with other work, wall time
# measures the neighbours too, CPU time much less).
measure() {
  local out=$1; shift
  local rc=0
  timeout $tmo /usr/bin/time -f "%e %M %U %S" -o "$work/time" "$@" >"$out" 2>"$work/stderr" || rc=$?
  if [ $rc -gt 1 ]; then echo "run.sh: step failed (exit $rc): $*" >&2; tail -5 "$work/stderr" >&2; exit 1; fi
  tail -1 "$work/time" | awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}'
}
# best OUT N CMD...: measure N times, print the run with the least wall time
# (the usual way to take the noise of a shared machine out of a timing).
best() {
  local out=$1 n=$2; shift 2
  for _ in $(seq "$n"); do measure "$out" "$@"; done | sort -n -k1,1 | head -1
}
bytes_of() { find "$1/logs" -name '*.log' -printf '%s\n' | awk '{s+=$1} END {print s}'; }
res="$work/results.tsv"; : >"$res"
echo "culprit: $culprit ($("$culprit" --version 2>/dev/null | sed -n 1p)); rg: $(rg --version 2>/dev/null | sed -n 1p); grep: $(grep --version | sed -n 1p); python: $(python3 --version)"
mode=$([ $smoke -eq 1 ] && echo smoke || { [ $quick -eq 1 ] && echo quick || echo full; })
echo "host: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1e6}' /proc/meminfo); mode: $mode"


# Start-up on an empty bundle (for the subtraction) and (e) cold/warm.
b="$work/main"
gen "$b" --nodes 8 --total-bytes "$main_size" --error-rate 0.002 --inject nvlink-xid149
# (one empty log: a bundle without any log is refused)
empty="$work/empty"; mkdir -p "$empty/logs/startup"; : > "$empty/logs/startup/app.log"; cp "$b/context.json" "$empty/"
read -r cold_s cold_kb _ < <(measure "$work/o" "$culprit" diagnose "$empty" --format json --threads 1 --cache-dir "$work/cold")
read -r warm_s warm_kb _ < <(measure "$work/o" "$culprit" diagnose "$empty" --format json --threads 1 --cache-dir "$work/cold")
measure "$work/o" "$culprit" diagnose "$empty" --format json --threads 1 --skip-self-test --cache-dir "$cache" >/dev/null
read -r start_s _ start_cpu < <(best "$work/o" "$([ $smoke -eq 1 ] && echo 1 || echo 5)" "$culprit" diagnose "$empty" --format json --threads 1 --skip-self-test --cache-dir "$cache")

# (c) throughput and peers on the same files
mapfile -t files < <(find "$b/logs" -name '*.log' | sort)
total=$(bytes_of "$b")
"$culprit" export-patterns --dialect pcre >"$work/p.pcre" 2>/dev/null
"$culprit" export-patterns --dialect ere >"$work/p.ere" 2>"$work/ere.err"
"$culprit" export-patterns --dialect python >"$work/p.py" 2>/dev/null
warm "$b"
for t in 1 2; do
  read -r s kb cpu < <(best "$work/verdict$t.json" "$runs" "$culprit" diagnose "$b" --format json --threads $t --skip-self-test --cache-dir "$cache")
  grep -q '"schema"' "$work/verdict$t.json" || { echo "run.sh: no verdict from culprit --threads $t" >&2; exit 1; }
  echo -e "culprit diagnose --threads $t\t$total\t$s\t$kb\t$start_s\t$cpu\t$start_cpu" >>"$res"
done
warm "$b"
read -r s kb cpu < <(best "$work/rg.out" "$runs" rg -j1 -c -f "$work/p.pcre" "${files[@]}")
echo -e "rg -j1 -c -f\t$total\t$s\t$kb\t0\t$cpu\t0" >>"$res"
read -r s kb cpu < <(best "$work/grep.out" "$runs" grep -E -c -f "$work/p.ere" "${files[@]}")
echo -e "grep -E -c -f\t$total\t$s\t$kb\t0\t$cpu\t0" >>"$res"
read -r s kb _ < <(measure "$work/py.out" python3 "$here/python_baseline.py" "$work/p.py" "${files[@]}" --max-bytes "$py_slice")
py_bytes=$(sed -n 's/.* bytes=\([0-9]*\) .*/\1/p' "$work/py.out"); py_secs=$(sed -n 's/.* seconds=\([0-9.]*\) .*/\1/p' "$work/py.out")
echo -e "python re (slice)\t$py_bytes\t$py_secs\t$kb\t0\t$py_secs\t0" >>"$res"

echo
echo "== scan throughput: $(awk -v b=$total 'BEGIN {printf "%.0f MB", b/1e6}') bundle, 8 nodes, 0.2% error lines, $(wc -l <"$work/p.pcre") patterns (grep: $(wc -l <"$work/p.ere")) =="
python3 - "$res" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
def mbps(r):
    b, s, start = int(r[1]), float(r[2]), float(r[4])
    return b / 1e6 / max(s - start, 1e-3)
def cpu_mbps(r):  # by user + system CPU seconds, start-up subtracted the same way
    b, c, start = int(r[1]), float(r[5]), float(r[6])
    return b / 1e6 / max(c - start, 1e-3)
ref, cpu_ref = mbps(rows[0]), cpu_mbps(rows[0])
print(f"{'tool':<30} {'MB/s':>9} {'culprit(1T) is':>15} {'CPU MB/s':>9} {'(CPU) is':>9} {'peak RSS':>10}  note")
for r in rows:
    m, c = mbps(r), cpu_mbps(r)
    note = f"wall {float(r[2]):.2f} s - start-up {float(r[4]):.2f} s" if float(r[4]) else f"wall {float(r[2]):.2f} s"
    note += f", CPU {float(r[5]):.2f} s"
    if r[0].startswith("python"): note = f"{int(r[1])/1e6:.0f} MB slice, timed inside the script"
    print(f"{r[0]:<30} {m:>9.1f} {ref/m:>14.1f}x {c:>9.1f} {cpu_ref/c:>8.1f}x {int(r[3])/1024:>7.0f} MB  {note}")
t1, t2 = mbps(rows[0]), mbps(rows[1])
scan1, scan2 = float(rows[0][2]) - float(rows[0][4]), float(rows[1][2]) - float(rows[1][4])
if min(scan1, scan2) < 0.2:
    print(f"parallel speed-up, 2 threads vs 1: not measurable here (scan time {scan2:.2f} s after start-up; "
          "use the full run)")
    print("note: on a bundle this small start-up dominates; the MB/s above are a smoke test, not figures")
else:
    print(f"parallel speed-up, 2 threads vs 1: {t2/t1:.2f}x")
PY
[ -s "$work/ere.err" ] && grep -q skipped "$work/ere.err" && echo "note: $(grep -c 'skipped ' "$work/ere.err") pattern(s) not translatable to ERE"
rm -rf "$b"

# (d) memory series
echo
echo "== peak RSS vs input size (culprit diagnose, all cores) =="
printf "%-10s %10s %10s %10s\n" size "wall s" "MB/s" "peak RSS"
for size in $mem_sizes; do
  m="$work/mem"; gen "$m" --nodes 8 --total-bytes "$size" --error-rate 0.002 --inject nvlink-xid149
  mb=$(bytes_of "$m"); warm "$m"
  read -r s kb _ < <(measure "$work/o" "$culprit" diagnose "$m" --format json --skip-self-test --cache-dir "$cache")
  awk -v z="$size" -v s="$s" -v kb="$kb" -v b="$mb" -v st="$start_s" 'BEGIN {d=s-st; if (d<0.001) d=0.001; printf "%-10s %10.2f %10.0f %7.0f MB\n", z, s, b/1e6/d, kb/1024}'
  rm -rf "$m"
done

# (e) start-up
echo
echo "== start-up: compile + self-tests, empty bundle (process wall time) =="
awk -v c="$cold_s" -v w="$warm_s" -v ck="$cold_kb" -v wk="$warm_kb" -v s="$start_s" 'BEGIN {
  printf "cold (fresh cache dir)   %6.0f ms  peak RSS %4.0f MB\n", c*1000, ck/1024
  printf "warm (cache hit)         %6.0f ms  peak RSS %4.0f MB\n", w*1000, wk/1024
  printf "warm, --skip-self-test   %6.0f ms  (subtracted from scan times)\n", s*1000 }'

# (f) scaling series
echo
echo "== scale: nodes (each $scale_bytes of logs per node), culprit diagnose, all cores =="
printf "%-8s %10s %10s %10s\n" nodes MB "wall s" "peak RSS"
: >"$work/scale.tsv"
for n in $scale_nodes $big_nodes; do
  [ "$n" -gt 0 ] || continue
  s_dir="$work/scale"; gen "$s_dir" --nodes "$n" --bytes-per-node "$scale_bytes" --error-rate 0.002 --inject nvlink-xid149
  mb=$(bytes_of "$s_dir"); warm "$s_dir"
  read -r s kb _ < <(measure "$work/o" "$culprit" diagnose "$s_dir" --format json --skip-self-test --cache-dir "$cache")
  grep -q '"schema"' "$work/o" || { echo "run.sh: no verdict at $n nodes" >&2; exit 1; }
  printf "%-8s %10.0f %10.2f %7.0f MB\n" "$n" "$(awk -v b=$mb 'BEGIN {print b/1e6}')" "$s" "$(awk -v k=$kb 'BEGIN {print k/1024}')"
  case " $scale_nodes " in *" $n "*) echo -e "$n\t$s" >>"$work/scale.tsv" ;; esac
  rm -rf "$s_dir"
done
[ "$big_nodes" -gt 0 ] || echo "(10,000 nodes: skipped: --quick or BENCH_BIG=0)"
python3 - "$work/scale.tsv" <<'PY'
import math, sys
pts = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
xs = [math.log(n) for n, _ in pts]; ys = [math.log(max(t, 1e-3)) for _, t in pts]
mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
lo, hi = min(n for n, _ in pts), max(n for n, _ in pts)
nlogn = math.log(hi * math.log(hi) / (lo * math.log(lo))) / math.log(hi / lo)
print(f"fitted exponent of wall time vs nodes (least squares, log-log): {k:.2f} "
      f"(n log n over this range is {nlogn:.2f})")
PY
# (g) the service under wrk: a 64-node workload as one NDJSON attribution
echo
if [ "$svc_bytes" = 0 ]; then
  echo "== service: skipped (BENCH_SERVICE_BYTES=0) =="
else
  echo "== service: culprit serve under wrk, 64 nodes x $svc_bytes of logs, 1 connection, ${svc_secs}s =="
  timeout "$tmo" "$here/service/run_wrk.sh" "$culprit" "$svc_secs" 1 2 "$svc_bytes" >"$work/wrk.out" 2>&1 \
    || { cat "$work/wrk.out" >&2; echo "run.sh: the service benchmark failed" >&2; exit 1; }
  grep -E '^(workload|verdict|SUMMARY)' "$work/wrk.out"
fi

# (h) rule evaluation at scale
echo
if [ "${BENCH_EVENTS:-1}" = 0 ]; then
  echo "== rule evaluation at scale: skipped (BENCH_EVENTS=0) =="
else
  ev_mode=$([ $smoke -eq 1 ] && echo --smoke || { [ $quick -eq 1 ] && echo --quick; } || true)
  echo "== rule evaluation at scale (bench/events_bench.sh${ev_mode:+ $ev_mode}) =="
  # Many runs, each with its own timeout inside: the whole step gets several steps' time.
  rc=0; BENCH_EVENTS_CACHE="$cache" TMPDIR="$work" timeout "$((tmo * 4))" "$here/events_bench.sh" $ev_mode --culprit "$culprit" || rc=$?
  [ $rc -eq 0 ] || { echo "run.sh: the event benchmark failed (exit $rc$([ $rc -eq 124 ] && echo ", timed out after $((tmo * 4)) s"))" >&2; exit 1; }
fi

# (i) rule evaluation over many symptoms
echo
if [ "${BENCH_SYMPTOMS:-1}" = 0 ]; then
  echo "== rule evaluation over many symptoms: skipped (BENCH_SYMPTOMS=0) =="
else
  sy_mode=$([ $smoke -eq 1 ] && echo --smoke || { [ $quick -eq 1 ] && echo --quick; } || true)
  echo "== rule evaluation over many symptoms (bench/symptoms_bench.sh${sy_mode:+ $sy_mode}) =="
  rc=0; BENCH_SYMPTOMS_CACHE="$cache" TMPDIR="$work" timeout "$((tmo * 4))" "$here/symptoms_bench.sh" $sy_mode --culprit "$culprit" || rc=$?
  [ $rc -eq 0 ] || { echo "run.sh: the symptom benchmark failed (exit $rc$([ $rc -eq 124 ] && echo ", timed out after $((tmo * 4)) s"))" >&2; exit 1; }
fi

echo
echo "run.sh: all steps ran"
