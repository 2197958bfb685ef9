#!/usr/bin/env bash
# The flagship's report as a person sees it: `culprit diagnose BUNDLE` with no
# options, in a real 120x40 terminal (a pty from script(1); no COLUMNS, so the
# width is the terminal's own). It must fit the screen with a row to spare for
# the next prompt: at most 39 rows, none wider than 120 columns once the colour
# codes are removed, and colour present (it is a terminal).
#
# Usage: check_screen.sh BIN BUNDLE   (from the repository root)
set -euo pipefail
bin=$1 bundle=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
env -u COLUMNS -u LINES -u NO_COLOR TERM=xterm-256color \
  script -qec "stty cols 120 rows 40; '$bin' diagnose '$bundle'" /dev/null >"$tmp/screen" </dev/null
/usr/bin/python3 - "$tmp/screen" <<'PY'
import re, sys
raw = open(sys.argv[1], encoding="utf-8").read()
if "\x1b[" not in raw:
    sys.exit("no colour: the report does not see the terminal")
rows = re.sub(r"\x1b\[[0-9;]*m", "", raw).replace("\r", "").splitlines()
wide = [(n, len(r)) for n, r in enumerate(rows, 1) if len(r) > 120]
print(f"{len(rows)} rows, widest {max(map(len, rows))} columns")
if len(rows) > 39: sys.exit(f"{len(rows)} rows do not leave the root cause and a prompt on a 40-row screen")
if wide: sys.exit(f"rows wider than 120 columns: {wide}")
if not rows[2].startswith("ROOT CAUSE"): sys.exit("the root cause is not at the top: " + rows[2])
PY
