#!/usr/bin/env bash
# Links the cases of first-sight batches that the catalog now gets right into
# examples/real, where they are held at 100 % from then on.
#
# A first-sight batch (examples/first-sight/README.md) keeps its bundles where
# they were frozen, so its first-sight record and its gate stay as they were;
# examples/real gets a relative symbolic link to each case that matches its
# label now (`culprit eval` follows it like a directory). A case that does not
# match is left out, and said; one already linked is left alone.
#
# Usage: scripts/promote-first-sight.sh [--bin PATH] [--dry-run] BATCH_DIR...
#   e.g. scripts/promote-first-sight.sh examples/first-sight/2026-12-0*/
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/build/cli/culprit"
dry=0
batches=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --dry-run) dry=1; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "promote-first-sight: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) batches+=("$1"); shift ;;
  esac
done
[ ${#batches[@]} -gt 0 ] || { echo "promote-first-sight: name at least one batch directory (see --help)" >&2; exit 2; }
[ -x "$bin" ] || { echo "promote-first-sight: no culprit binary at $bin (build first, or --bin PATH)" >&2; exit 2; }

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
linked=0 kept=0 missed=0
for batch in "${batches[@]}"; do
  batch=$(cd "$batch" && pwd)
  case "$batch" in
    "$root"/examples/first-sight/*) ;;
    *) echo "promote-first-sight: $batch is not a batch under examples/first-sight" >&2; exit 2 ;;
  esac
  name=$(basename "$batch")
  # Exit status 1 only says that some case did not match: that is expected.
  "$bin" eval "$batch" --threads 2 --output "$tmp" > /dev/null || [ $? -eq 1 ]
  while IFS=$'\t' read -r case match; do
    link="$root/examples/real/$case"
    if [ "$match" != 1 ]; then
      echo "not promoted (does not match its label): $name/$case"
      missed=$((missed + 1))
    elif [ -e "$link" ] || [ -L "$link" ]; then
      kept=$((kept + 1))
    else
      [ "$dry" = 1 ] || ln -s "../first-sight/$name/$case" "$link"
      echo "promoted: $name/$case"
      linked=$((linked + 1))
    fi
  done < <(/usr/bin/python3 -c '
import json, sys
for c in json.load(open(sys.argv[1]))["cases"]:
    print("%s\t%d" % (c["name"], 1 if c["match"] else 0))' "$tmp")
done
echo "$linked promoted, $kept already in examples/real, $missed not matching$([ "$dry" = 1 ] && echo ' (dry run: nothing linked)')"
