#!/usr/bin/env bash
# The two evaluators and the compile cache, end to end:
#  1. --version names LLVM and the active evaluator;
#  2. every verdict says which evaluator ran, and both give the same verdict;
#     --engine beats $CULPRIT_ENGINE; a bad engine name is a usage error;
#  3. a warm start hits the cache (object code, Hyperscan databases, regex
#     verdicts);
#  4. truncated, altered or foreign cache entries are misses, never crashes,
#     and are rebuilt;
#  5. --no-cache writes nothing, and an unusable cache directory is harmless.
set -euo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CULPRIT_CACHE_DIR="$tmp/cache"
unset CULPRIT_ENGINE
ex=examples/nvlink-xid149
fail() { echo "FAIL: $*"; exit 1; }
field() { grep "^$1	" | cut -f2; }

# 1. --version
v=$("$bin" --version)
grep -q '^LLVM: 19\.' <<<"$v" || fail "--version does not name the LLVM version: $v"
grep -q '^evaluator: jit$' <<<"$v" || fail "--version does not say the JIT is active: $v"
CULPRIT_ENGINE=interp "$bin" --version | grep '^evaluator: interpreter$' > /dev/null || fail "CULPRIT_ENGINE=interp not shown by --version"

# 2. the verdict's engine field, and the same verdict from both engines
"$bin" diagnose "$ex" --format json > "$tmp/jit.json"
"$bin" diagnose "$ex" --format json --engine interp > "$tmp/interp.json"
grep -q '"evaluator": "jit"' "$tmp/jit.json" || fail "the JIT verdict does not say evaluator jit"
grep -q '"evaluator": "interpreter"' "$tmp/interp.json" || fail "the interpreter verdict does not say evaluator interpreter"
python3 "$here/../golden/verdict_tool.py" strip-engine "$tmp/jit.json" > "$tmp/jit.stripped"
python3 "$here/../golden/verdict_tool.py" strip-engine "$tmp/interp.json" > "$tmp/interp.stripped"
cmp -s "$tmp/jit.stripped" "$tmp/interp.stripped" || { diff "$tmp/jit.stripped" "$tmp/interp.stripped" | head -20; fail "the engines disagree"; }
CULPRIT_ENGINE=interp "$bin" diagnose "$ex" --format json | grep '"evaluator": "interpreter"' > /dev/null || fail "CULPRIT_ENGINE=interp ignored"
CULPRIT_ENGINE=interp "$bin" diagnose "$ex" --format json --engine jit | grep '"evaluator": "jit"' > /dev/null || fail "--engine does not beat CULPRIT_ENGINE"
if "$bin" test --engine bogus > /dev/null 2> "$tmp/err"; then fail "--engine bogus accepted"; fi
grep -q "engine must be jit or interp" "$tmp/err" || fail "no usage message for a bad engine: $(cat "$tmp/err")"

# Where the JIT cannot run (simulated), the interpreter runs, after exactly one warning line.
CULPRIT_JIT_DISABLE=1 "$bin" diagnose "$ex" --format json > "$tmp/off.json" 2> "$tmp/off.err" || fail "no fallback without the JIT"
grep -q '"evaluator": "interpreter"' "$tmp/off.json" || fail "the fallback verdict does not say interpreter"
[ "$(wc -l < "$tmp/off.err")" = 1 ] && grep -q '^culprit diagnose: warning: the JIT is unavailable (disabled by CULPRIT_JIT_DISABLE); using the interpreter$' "$tmp/off.err" \
  || fail "expected one warning line, got: $(cat "$tmp/off.err")"
CULPRIT_JIT_DISABLE=1 "$bin" --version | grep '^evaluator: interpreter$' > /dev/null || fail "--version claims the JIT where it cannot run"

# 3. warm start: everything comes from the cache
ls "$CULPRIT_CACHE_DIR"/jit-*.bin "$CULPRIT_CACHE_DIR"/hyperscan-*.bin "$CULPRIT_CACHE_DIR"/regex-verdicts-*.bin \
   "$CULPRIT_CACHE_DIR"/catalog-*.bin "$CULPRIT_CACHE_DIR"/selftest-*.bin > /dev/null \
  || fail "the first runs did not fill the cache: $(ls "$CULPRIT_CACHE_DIR")"
out=$("$bin" check --timings-run)
[ "$(field jit_cached <<<"$out")" = 1 ] || fail "warm start missed the object cache"
[ "$(field hyperscan_cached <<<"$out")" = 1 ] || fail "warm start missed the Hyperscan cache"
[ "$(field catalog_cached <<<"$out")" = 1 ] || fail "warm start missed the catalog image"
[ "$(field tests_recorded <<<"$out")" = 1 ] || fail "warm start ran the self-tests of an unchanged catalog again"
[ "$(field native_exprs <<<"$out" | cut -d/ -f1)" = "$(field native_exprs <<<"$out" | cut -d/ -f2)" ] \
  || fail "not every expression of the bundled catalog is native: $(field native_exprs <<<"$out")"

# 4. damaged entries: truncated object code, one altered byte in the
#    Hyperscan entry, garbage for the regex verdicts and the self-test
#    record, a truncated catalog image
for f in "$CULPRIT_CACHE_DIR"/jit-*.bin; do truncate -s $(( $(stat -c %s "$f") / 2 )) "$f"; done
for f in "$CULPRIT_CACHE_DIR"/hyperscan-*.bin; do
  # Invert one byte (writing a fixed value changes nothing when the byte already has it).
  at=$(( $(stat -c %s "$f") / 2 ))
  old=$(od -An -tu1 -j "$at" -N1 "$f" | tr -d ' ')
  printf "\\$(printf '%03o' $(( old ^ 255 )))" | dd of="$f" bs=1 seek="$at" conv=notrunc status=none
done
for f in "$CULPRIT_CACHE_DIR"/regex-verdicts-*.bin "$CULPRIT_CACHE_DIR"/selftest-*.bin; do echo garbage > "$f"; done
for f in "$CULPRIT_CACHE_DIR"/catalog-*.bin; do truncate -s 100 "$f"; done
out=$("$bin" check --timings-run) || fail "a damaged cache broke the compile"
[ "$(field jit_cached <<<"$out")" = 0 ] || fail "a truncated object entry was used"
[ "$(field hyperscan_cached <<<"$out")" = 0 ] || fail "an altered Hyperscan entry was used"
[ "$(field catalog_cached <<<"$out")" = 0 ] || fail "a truncated catalog image was used"
[ "$(field tests_recorded <<<"$out")" = 0 ] || fail "a garbled self-test record was used"
[[ "$(field tests <<<"$out")" == *" passed, 0 failed" ]] || fail "self-tests after a damaged cache: $(field tests <<<"$out")"
out=$("$bin" check --timings-run)
[ "$(field jit_cached <<<"$out")" = 1 ] || fail "the damaged object entry was not rebuilt"
[ "$(field hyperscan_cached <<<"$out")" = 1 ] || fail "the damaged Hyperscan entry was not rebuilt"
[ "$(field catalog_cached <<<"$out")" = 1 ] || fail "the damaged catalog image was not rebuilt"
[ "$(field tests_recorded <<<"$out")" = 1 ] || fail "the self-test record was not rebuilt"
[[ "$(field tests <<<"$out")" == *" passed, 0 failed (recorded by an earlier run of this build on these rules)" ]] \
  || fail "a warm start does not say its self-tests were recorded: $(field tests <<<"$out")"
# a valid entry under another key (copied over this one) is foreign
for f in "$CULPRIT_CACHE_DIR"/hyperscan-*.bin; do cp "$f" "$tmp/hs.bin"; done
for f in "$CULPRIT_CACHE_DIR"/jit-*.bin; do cp "$tmp/hs.bin" "$f"; done
out=$("$bin" check --timings-run) || fail "a foreign cache entry broke the compile"
[ "$(field jit_cached <<<"$out")" = 0 ] || fail "a foreign entry was used as object code"

# 5. --no-cache and an unusable cache directory
CULPRIT_CACHE_DIR="$tmp/none" "$bin" test --no-cache | grep " passed, 0 failed" > /dev/null || fail "--no-cache test run failed"
[ ! -e "$tmp/none" ] || fail "--no-cache wrote to the cache directory"
touch "$tmp/file"
CULPRIT_CACHE_DIR="$tmp/file/sub" "$bin" test 2> "$tmp/err" | grep " passed, 0 failed" > /dev/null || fail "an unusable cache directory broke the run"
[ ! -s "$tmp/err" ] || fail "an unusable cache directory printed: $(cat "$tmp/err")"
echo "ok"
