#!/usr/bin/env bash
# culprit fmt on NAME.attr must print NAME.expected, and NAME.expected must
# already be canonical (fmt --check passes: the layout is a fixed point).
# Run from tests/golden/fmt. UPDATE_GOLDEN=1 rewrites the expectation.
set -u
bin=$1 name=$2
actual=$("$bin" fmt - < "$name.attr"; echo "exit status: $?")
if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
  "$bin" fmt - < "$name.attr" > "$name.expected"
  exit 0
fi
if ! diff -u <(cat "$name.expected"; echo "exit status: 0") <(printf '%s\n' "$actual"); then
  echo "culprit fmt of $name.attr differs from $name.expected (UPDATE_GOLDEN=1 to accept)"
  exit 1
fi
"$bin" fmt --check - < "$name.expected" || { echo "$name.expected is not a fixed point of culprit fmt"; exit 1; }
