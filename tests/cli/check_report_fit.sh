#!/usr/bin/env bash
# The text report on a small terminal (issue 37, item 4): for every bundle of
# examples/ and examples/real/, at 80×24 and 120×40, the report fits the
# height, keeps its status block (ROOT CAUSE / AMBIGUOUS / UNATTRIBUTED / NO
# FAILURE) and its `next:` line on the first screen, never exceeds the width,
# and ends with the recap. Then the same in a real pseudo-terminal (script(1)),
# where the size comes from the terminal itself, not from flags.
# Usage: check_report_fit.sh CULPRIT_BIN REPO_ROOT
set -u
bin=$1 root=$2
fail=0 checked=0
check() {  # name out height width
  local name=$1 out=$2 h=$3 w=$4
  local n head_ok next_ok wide
  n=$(printf '%s\n' "$out" | wc -l)
  head_ok=$(printf '%s\n' "$out" | head -n "$h" | grep -cE '^(ROOT CAUSE|AMBIGUOUS|UNATTRIBUTED|NO FAILURE)')
  next_ok=$(printf '%s\n' "$out" | head -n "$h" | grep -c '^  next: ')
  wide=$(printf '%s\n' "$out" | wc -L)  # display columns of the longest line
  if [ "$n" -gt "$h" ] || [ "$head_ok" -lt 1 ] || [ "$next_ok" -lt 1 ] || [ "$wide" -gt "$w" ] ||
     ! printf '%s\n' "$out" | grep -q '^verdict: '; then
    echo "FAIL $name at ${w}x${h}: $n lines, status block $head_ok, next $next_ok, longest line $wide columns"
    printf '%s\n' "$out" | sed 's/^/    | /'
    fail=1
  fi
  checked=$((checked + 1))
}
export LC_ALL=C.UTF-8
for d in "$root"/examples/*/ "$root"/examples/real/*/; do
  [ -f "$d/context.json" ] || continue
  for size in 80x24 120x40; do
    w=${size%x*} h=${size#*x}
    out=$("$bin" diagnose "$d" --format text --color never --skip-self-test --width "$w" --height "$h" 2>/dev/null)
    check "$(basename "$d")" "$out" "$h" "$w"
  done
done
# A real terminal: no --width/--height, the size is the pty's.
for d in "$root/examples/nvlink-xid149" "$root/examples/real/xid45-caused-by-previous-xid149" "$root/examples/watchdog-only-unattributed"; do
  out=$(COLUMNS= LINES= script -qec "stty rows 24 cols 80; '$bin' diagnose '$d' --color never --skip-self-test" /dev/null | tr -d '\r')
  check "$(basename "$d") (pty)" "$out" 24 80
done
# The flagship at both sizes in a pty, as golden files (the catalog digest
# masked, as in golden/check_report.sh). UPDATE_GOLDEN=1 rewrites them.
for size in 80x24 120x40; do
  w=${size%x*} h=${size#*x}
  golden="$root/tests/golden/reports/nvlink-xid149.pty-$size.txt"
  out=$(COLUMNS= LINES= script -qec "stty rows $h cols $w; '$bin' diagnose '$root/examples/nvlink-xid149' --color never --skip-self-test --threads 1" /dev/null |
        tr -d '\r' | sed -E 's/\(sha256:[0-9a-f]{12}\)/(sha256:…)/')
  if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
    printf '%s\n' "$out" > "$golden"
  elif ! diff -u "$golden" <(printf '%s\n' "$out"); then
    echo "FAIL the flagship's report in a ${size} pty differs from $golden (UPDATE_GOLDEN=1 to accept after review)"
    fail=1
  fi
done
echo "$checked reports checked"
exit $fail
