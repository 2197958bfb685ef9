#!/usr/bin/env bash
# Compiles NAME.attr alone and compares what culprit prints (and its exit
# status) with NAME.expected. Run from tests/golden/diagnostics so the paths
# in the output are relative. UPDATE_GOLDEN=1 rewrites the expectation.
set -u
bin=$1 name=$2
actual=$("$bin" check --no-stdlib "$name.attr" 2>&1; echo "exit status: $?")
if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
  printf '%s\n' "$actual" > "$name.expected"
  exit 0
fi
if ! diff -u "$name.expected" <(printf '%s\n' "$actual"); then
  echo "diagnostics for $name.attr differ from $name.expected (UPDATE_GOLDEN=1 to accept)"
  exit 1
fi
