#!/usr/bin/env bash
# `culprit eval`: exit codes, the mismatch report, --output and --baseline.
# Usage: tests/cli/check_eval.sh BIN    (run from the repository root)
set -u
bin=${1:?usage: tests/cli/check_eval.sh path/to/culprit}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; [ -s "$tmp/out" ] && head -40 "$tmp/out" >&2; [ -s "$tmp/err" ] && head -20 "$tmp/err" >&2; exit 1; }
run() { "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; status=$?; }

run eval --help
[ $status = 0 ] && grep -q "Usage: culprit eval DIR" "$tmp/out" || fail "eval --help"
run eval
[ $status = 2 ] && grep -q "expected exactly one DIR" "$tmp/err" || fail "eval without DIR must exit 2"
run eval "$tmp/nonexistent"
[ $status = 2 ] && grep -q "is not a directory" "$tmp/err" || fail "eval of a missing DIR must exit 2"
mkdir "$tmp/empty"
run eval "$tmp/empty"
[ $status = 2 ] && grep -q "no bundles" "$tmp/err" || fail "eval of a DIR without bundles must exit 2"

# A two-case corpus: one right, one deliberately mislabeled.
mkdir "$tmp/corpus"
cp -r examples/time-limit "$tmp/corpus/a-time-limit"
cp -r examples/completed-clean "$tmp/corpus/b-clean"
run eval "$tmp/corpus" --skip-self-test --output "$tmp/base.json"
[ $status = 0 ] && grep -q "2 cases: 2 match" "$tmp/out" || fail "a correctly labeled corpus must pass"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['schema']=='culprit.eval/v1' and d['summary']['match']==2" "$tmp/base.json" \
  || fail "--output must write the results"

echo '{"status": "attributed", "domain": "user", "sub_domain": "scheduler", "culprit_nodes": []}' > "$tmp/corpus/a-time-limit/expected.json"
run eval "$tmp/corpus" --skip-self-test
[ $status = 0 ] || fail "sub_domain 'scheduler' must accept the deeper 'scheduler.timeout'"
echo '{"status": "attributed", "domain": "user", "sub_domain": "scheduler.time", "culprit_nodes": []}' > "$tmp/corpus/a-time-limit/expected.json"
run eval "$tmp/corpus" --skip-self-test
[ $status = 1 ] && grep -q "sub_domain scheduler.timeout != scheduler.time" "$tmp/out" || fail "a prefix that is not a level must not match"

echo '{"status": "attributed", "domain": "hardware", "sub_domain": "gpu.memory", "culprit_nodes": ["node-01"]}' > "$tmp/corpus/a-time-limit/expected.json"
run eval "$tmp/corpus" --skip-self-test --baseline "$tmp/base.json"
[ $status = 1 ] || fail "a mismatch must exit 1"
grep -q "a-time-limit  *FAIL" "$tmp/out" || fail "the failing case must be marked FAIL"
grep -q "confidently wrong: 1" "$tmp/out" || fail "an attributed verdict against another label is confidently wrong"
grep -q "REGRESS  *a-time-limit" "$tmp/out" || fail "a case that passed in the baseline and fails now is a regression"
grep -q "changes against the baseline" "$tmp/out" || fail "--baseline must print the changes"

# The gate: a match rate and a bound on confidently wrong verdicts.
run eval "$tmp/corpus" --skip-self-test --min-match 50 --max-confidently-wrong 1
[ $status = 0 ] && grep -q "gate: match rate 50.0% .*confidently wrong 1 (at most 1): pass" "$tmp/out" \
  || fail "--min-match 50 with one confidently wrong allowed must pass at 1 of 2"
run eval "$tmp/corpus" --skip-self-test --min-match 50
[ $status = 1 ] && grep -q "gate: .*: FAIL" "$tmp/out" || fail "a confidently wrong verdict must fail the gate by default"
cp "$tmp/corpus/b-clean/expected.json" "$tmp/b-clean.expected.json"
echo '{"status": "attributed", "domain": "user", "sub_domain": "scheduler", "culprit_nodes": []}' > "$tmp/corpus/a-time-limit/expected.json"
echo '{"status": "attributed", "domain": "hardware", "sub_domain": "gpu.memory", "culprit_nodes": ["node-01"]}' > "$tmp/corpus/b-clean/expected.json"
run eval "$tmp/corpus" --skip-self-test --min-match 50
[ $status = 0 ] || fail "a safe miss within --min-match must pass"
run eval "$tmp/corpus" --skip-self-test --min-match 51
[ $status = 1 ] || fail "a match rate below --min-match must fail"
run eval "$tmp/corpus" --skip-self-test --min-match 101
[ $status = 2 ] && grep -q "percentage from 0 to 100" "$tmp/err" || fail "--min-match out of range must exit 2"
run eval "$tmp/corpus" --skip-self-test --max-confidently-wrong 0
[ $status = 2 ] && grep -q "needs --min-match" "$tmp/err" || fail "--max-confidently-wrong alone must exit 2"
cp "$tmp/b-clean.expected.json" "$tmp/corpus/b-clean/expected.json"

echo '{"status": "maybe"}' > "$tmp/corpus/a-time-limit/expected.json"
run eval "$tmp/corpus" --skip-self-test
[ $status = 2 ] && grep -q "status must be" "$tmp/err" || fail "a bad expected.json must exit 2"
rm "$tmp/corpus/a-time-limit/expected.json"
run eval "$tmp/corpus" --skip-self-test
[ $status = 1 ] && grep -q "NOLABEL" "$tmp/out" || fail "a bundle without expected.json must fail the run"
echo '{}' > "$tmp/bad.json"
run eval "$tmp/corpus" --skip-self-test --baseline "$tmp/bad.json"
[ $status = 2 ] && grep -q "not a results file" "$tmp/err" || fail "a bad --baseline must exit 2"
echo "ok: culprit eval"
