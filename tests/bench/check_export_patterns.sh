#!/usr/bin/env bash
# `culprit export-patterns`: every exported pattern compiles in its peer tool
# (rg, grep -E, Python re) and matches its extractor's must-match test lines.
# Usage: check_export_patterns.sh CULPRIT
set -uo pipefail
culprit=${1:?usage: check_export_patterns.sh CULPRIT}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
for d in pcre ere python; do
  "$culprit" export-patterns --dialect "$d" >"$tmp/$d" 2>"$tmp/$d.err" || { echo "FAIL: export $d"; cat "$tmp/$d.err"; fail=1; }
  "$culprit" export-patterns --dialect "$d" --test-lines >"$tmp/$d.tests" 2>/dev/null || fail=1
  [ -s "$tmp/$d" ] || { echo "FAIL: no $d patterns"; fail=1; }
done
"$culprit" export-patterns --dialect nope >/dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL: bad dialect must exit 2"; fail=1; }
"$culprit" export-patterns --help | grep "Usage: culprit export-patterns" > /dev/null || { echo "FAIL: --help"; fail=1; }
# Per pattern: its test lines must match it alone (grep -E; python re; rg when present).
python3 - "$tmp" <<'PY' || fail=1
import re, subprocess, shutil, sys
tmp = sys.argv[1]
bad = 0
for d in ("ere", "python", "pcre"):
    pats = open(f"{tmp}/{d}", newline="").read().split("\n")[:-1]
    tests = {}
    for l in open(f"{tmp}/{d}.tests", newline="").read().split("\n")[:-1]:
        i, line = l.split("\t", 1)
        tests.setdefault(int(i), []).append(line)
    for i, p in enumerate(pats):
        lines = tests.get(i, [])
        if d == "python":
            rx = re.compile(p)
            miss = [l for l in lines if not rx.search(l)]
        elif d == "ere" or shutil.which("rg"):
            cmd = ["grep", "-E", "-c", "-e", p] if d == "ere" else ["rg", "-c", "-e", p]
            r = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True)
            if r.returncode > 1 or r.stderr:
                print(f"FAIL: {d} pattern {i} does not compile: {r.stderr.strip()}\n  {p}"); bad += 1; continue
            n = int(r.stdout.strip() or 0)
            miss = lines if n != len(lines) else []
        else:
            continue
        if miss:
            print(f"FAIL: {d} pattern {i} misses its test lines {miss[:2]}\n  {p}"); bad += 1
    print(f"{d}: {len(pats)} patterns, {sum(len(v) for v in tests.values())} test lines checked")
sys.exit(1 if bad else 0)
PY
[ $fail -eq 0 ] && echo "export-patterns: ok"
exit $fail
