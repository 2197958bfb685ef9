#!/usr/bin/env bash
# Diagnoses an example bundle and checks that
#  1. the verdict equals the bundle's expected-verdict.json, except for the
#     `engine` block (versions and the catalog digest change with every
#     release and rule edit; the verdict itself must not change silently);
#  2. it is byte-identical across repeated runs, --threads 1 vs 2, and with
#     --no-indexes (every query walks all candidates of its kinds: an index
#     or query plan that dropped, added or reordered a candidate shows here,
#     on the bundled catalog, on each engine the test runs with);
#  3. it validates against docs/verdict.schema.json.
# UPDATE_GOLDEN=1 rewrites expected-verdict.json.
set -euo pipefail
bin=$1 dir=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" diagnose "$dir" --format json --threads 1 > "$tmp/t1.json"
"$bin" diagnose "$dir" --format json --threads 2 > "$tmp/t2.json"
"$bin" diagnose "$dir" --format json --threads 2 > "$tmp/t2b.json"
cmp "$tmp/t1.json" "$tmp/t2.json" || { echo "verdict differs between --threads 1 and 2"; diff "$tmp/t1.json" "$tmp/t2.json" | head -20; exit 1; }
cmp "$tmp/t2.json" "$tmp/t2b.json" || { echo "verdict differs between two identical runs"; exit 1; }
"$bin" diagnose "$dir" --format json --threads 1 --no-indexes > "$tmp/plain.json"
cmp "$tmp/t1.json" "$tmp/plain.json" || { echo "verdict differs with --no-indexes"; diff "$tmp/t1.json" "$tmp/plain.json" | head -20; exit 1; }
/usr/bin/python3 "$here/verdict_tool.py" validate "$here/../../docs/verdict.schema.json" "$tmp/t1.json"
/usr/bin/python3 "$here/verdict_tool.py" strip-engine "$tmp/t1.json" > "$tmp/actual.json"
if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
  cp "$tmp/actual.json" "$dir/expected-verdict.json"
  exit 0
fi
if ! diff -u "$dir/expected-verdict.json" "$tmp/actual.json" > "$tmp/diff"; then
  head -60 "$tmp/diff"
  echo "verdict for $dir differs from expected-verdict.json (UPDATE_GOLDEN=1 to accept after review)"
  exit 1
fi
