#!/usr/bin/env bash
# The text report of an example bundle, as a person sees it in a 120-column
# terminal, compared with tests/golden/reports/NAME[.VARIANT].txt. Extra
# arguments (e.g. --cascade) are passed to diagnose; VARIANT names them in
# the golden file. The catalog digest is masked (it changes with every rule
# edit; the verdict goldens pin the rest). UPDATE_GOLDEN=1 rewrites it.
#
# Usage: check_report.sh BIN EXAMPLE_DIR [VARIANT ARGS...]   (from the repository root)
set -euo pipefail
bin=$1 dir=$2
variant=${3:-}
shift 2; [ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")" && pwd)
name=$(basename "$dir")${variant:+.$variant}
golden="$here/reports/$name.txt"
actual=$(COLUMNS=120 LINES= NO_COLOR= "$bin" diagnose "$dir" --format text --color never --threads 1 "$@" |
         sed -E 's/\(sha256:[0-9a-f]{12}\)/(sha256:…)/')
if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
  printf '%s\n' "$actual" > "$golden"
  exit 0
fi
if ! diff -u "$golden" <(printf '%s\n' "$actual"); then
  echo "the report for $dir differs from $golden (UPDATE_GOLDEN=1 to accept after review)"
  exit 1
fi
# Whatever the verdict, nothing may be wider than the terminal.
printf '%s\n' "$actual" | /usr/bin/python3 -c '
import sys
bad = [(n, len(l.rstrip("\n"))) for n, l in enumerate(sys.stdin.buffer.read().decode().splitlines(True), 1) if len(l.rstrip("\n")) > 120]
if bad: sys.exit("lines wider than 120 columns: %s" % bad)'
