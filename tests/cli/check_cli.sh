#!/usr/bin/env bash
# Command-line behaviour of culprit: help, usage errors, bad bundles, and the
# happy paths of diagnose, test, check and --version. Exit codes are part of
# the interface (cli/main.cpp: 0 ok, 1 tests failed, 2 bad input), so every
# check states the status it expects and what the user must be told.
#
# Usage: tests/cli/check_cli.sh BIN [mimalloc|glibc]    (run from the repository root)
# The second argument is the malloc the build links (cli/allocator.h); without
# it, the one BIN reports is taken as expected.
# Stops at the first failed check, saying which one and why.
set -u

bin=${1:?usage: tests/cli/check_cli.sh path/to/culprit [mimalloc|glibc]}
expected_malloc=${2:-}
[ -x "$bin" ] || { echo "FAIL: '$bin' is not an executable" >&2; exit 1; }
[ -d examples/nvlink-xid149 ] || { echo "FAIL: run from the repository root (examples/ not found)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

checks=0
fail() {
  echo "FAIL: $*" >&2
  if [ -s "$tmp/out" ]; then echo "--- stdout (first 20 lines):" >&2; head -20 "$tmp/out" >&2; fi
  if [ -s "$tmp/err" ]; then echo "--- stderr (first 20 lines):" >&2; head -20 "$tmp/err" >&2; fi
  exit 1
}

# run ARGS...: runs culprit, keeping stdout, stderr and the exit status.
run() {
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  status=$?
  what="culprit $*"
}

expect_status() {
  checks=$((checks + 1))
  [ "$status" -eq "$1" ] || fail "$what: exit status $status, expected $1"
}

# expect_in out|err REGEX DESCRIPTION: the stream must have a line matching REGEX.
expect_in() {
  checks=$((checks + 1))
  grep -Eq -- "$2" "$tmp/$1" || fail "$what: std$1 should show $3 (no line matches /$2/)"
}

expect_empty() {
  checks=$((checks + 1))
  [ ! -s "$tmp/$1" ] || fail "$what: std$1 should be empty"
}

# ----------------------------------------------------------------- help
for args in "--help" "-h" "help"; do
  run $args
  expect_status 0
  expect_in out '^Usage:' "the usage"
  expect_in out 'culprit diagnose BUNDLE' "the diagnose command"
  expect_in out 'culprit test' "the test command"
  expect_in out 'culprit check' "the check command"
  expect_in out 'culprit lsp' "the lsp command"
  expect_empty err
done
for cmd in diagnose test check lsp; do
  for flag in --help -h; do
    run "$cmd" "$flag"
    expect_status 0
    expect_in out "^Usage: culprit $cmd" "the usage of '$cmd'"
    expect_in out '^Exit status' "what the exit status means"
    expect_empty err
  done
done
# --help wins over other arguments, even ones that would be errors.
run diagnose /nonexistent --help
expect_status 0
expect_in out '^Usage: culprit diagnose' "the usage of 'diagnose'"

# No command at all: the usage, on stderr, as an error.
run
expect_status 2
expect_in err '^Usage:' "the usage"

# ---------------------------------------------------------- usage errors
run frobnicate
expect_status 2
expect_in err "unknown command 'frobnicate'" "the unknown command"

run --frobnicate
expect_status 2
expect_in err "unknown command '--frobnicate'" "the unknown option"

# A misspelt command or option gets the nearest real one.
run diagnoze examples/nvlink-xid149
expect_status 2
expect_in err "unknown command 'diagnoze' \(did you mean 'diagnose'\?\)" "the command it meant"

run rnu --config x.yaml --once
expect_status 2
expect_in err "unknown command 'rnu' \(did you mean 'run'\?\)" "the blueprint's command"

run run --config x.yaml --onec
expect_status 2
expect_in err "^culprit run: unknown option '--onec' \(did you mean '--once'\?\)" "the run option it meant"

run diagnose examples/nvlink-xid149 --explian
expect_status 2
expect_in err "unknown option '--explian' \(did you mean '--explain'\?\)" "the option it meant"

run test --no-stdilb
expect_status 2
expect_in err "did you mean '--no-stdlib'\?" "the option it meant"

for cmd in diagnose test check lsp; do
  run "$cmd" --frobnicate
  expect_status 2
  expect_in err "unknown option '--frobnicate'" "the unknown option"
  expect_in err "Try 'culprit $cmd --help'" "where to find help"
done

run diagnose examples/nvlink-xid149 -x
expect_status 2
expect_in err "unknown option '-x'" "the unknown short option"

run diagnose
expect_status 2
expect_in err 'expected exactly one BUNDLE' "that a bundle is needed"

run diagnose examples/nvlink-xid149 examples/time-limit
expect_status 2
expect_in err 'expected exactly one BUNDLE' "that only one bundle is taken"

run diagnose examples/nvlink-xid149 --format yaml
expect_status 2
expect_in err '--format must be text or json' "the allowed formats"

run diagnose examples/nvlink-xid149 --format
expect_status 2
expect_in err "option '--format' needs a value" "the missing value"

run diagnose examples/nvlink-xid149 --threads 0
expect_status 2
expect_in err '--threads must be an integer' "the allowed thread counts"

run diagnose examples/nvlink-xid149 --slack-before soon
expect_status 2
expect_in err '--slack-before must be a duration' "the expected duration"

run diagnose examples/nvlink-xid149 --explain=yes
expect_status 2
expect_in err "option '--explain' takes no value" "that the flag takes no value"

# ------------------------------------------------------------ bad bundles
run diagnose "$tmp/no-such-bundle"
expect_status 2
expect_in err "no-such-bundle.*is not a directory" "that the bundle directory does not exist"
expect_empty out

mkdir -p "$tmp/no-context/logs/node-01"
echo "x" > "$tmp/no-context/logs/node-01/app.log"
run diagnose "$tmp/no-context"
expect_status 2
expect_in err 'cannot read .*no-context/context.json' "that context.json is missing"
expect_empty out

# A bundle without a single log: the wrong directory or logs never collected.
mkdir -p "$tmp/no-logs"
printf '{"workload_id": "1", "nodes": ["node-01"], "terminal": {"state": "FAILED", "exit_code": 1}}\n' > "$tmp/no-logs/context.json"
echo "notes" > "$tmp/no-logs/README.txt"
run diagnose "$tmp/no-logs"
expect_status 2
expect_in err 'no-logs holds no log to read \(only 1 other file: README.txt\); put each node.s logs in logs/<host>/<source>.log' "that the bundle holds no log"
expect_empty out

# A job's output under a name no extractor reads (Slurm's slurm-%j file) is
# read as the application's output, and coverage says so.
mkdir -p "$tmp/slurm-out/logs/node-01"
printf '{"workload_id": "4242", "scheduler": "slurm", "nodes": ["node-01"], "terminal": {"state": "OUT_OF_MEMORY", "exit_code": 0}}\n' > "$tmp/slurm-out/context.json"
echo 'slurmstepd: error: Detected 8 oom-kill event(s) in step 4242.batch cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.' > "$tmp/slurm-out/logs/node-01/slurm-4242.log"
run diagnose "$tmp/slurm-out" --format json --skip-self-test
expect_status 0
expect_in out '"sub_domain": "host_oom"' "the cgroup OOM read from the job's own output file"
expect_in out "read as the application's output \\(app\\): no extractor reads its source: logs/node-01/slurm-4242.log \\(source 'slurm-4242'\\)" "which file was read as app"

mkdir -p "$tmp/bad-json"
printf '{"workload_id": "1", "nodes": ["node-01"],' > "$tmp/bad-json/context.json"
run diagnose "$tmp/bad-json"
expect_status 2
expect_in err 'bad-json/context.json: context is not valid JSON' "that context.json is not valid JSON"
expect_empty out

mkdir -p "$tmp/no-nodes"
printf '{"workload_id": "1", "terminal": {"state": "FAILED", "exit_code": 1}}\n' > "$tmp/no-nodes/context.json"
run diagnose "$tmp/no-nodes"
expect_status 2
expect_in err "no-nodes/context.json: context: 'nodes' must be an array" "that 'nodes' is missing"
expect_empty out

mkdir -p "$tmp/typo"
printf '{"workload_id": "1", "nodes": ["node-01"], "terminl": {}}\n' > "$tmp/typo/context.json"
run diagnose "$tmp/typo"
expect_status 2
expect_in err "unknown key 'terminl'" "the misspelled key"

mkdir -p "$tmp/bad-obs"
printf '{"workload_id": "1", "nodes": ["node-01"]}\n' > "$tmp/bad-obs/context.json"
printf '{"host": "node-01", "source": "app", "text": "x"}\nnot json\n' > "$tmp/bad-obs/observations.jsonl"
run diagnose "$tmp/bad-obs" --format json
expect_status 2
expect_in err 'observations.jsonl:2: invalid observation: not valid JSON' "the bad observation line"
expect_empty out

# Host names: a node's logs under its FQDN or an alias are that node's (the
# GPU fault stays node-02's, not a "control-plane host's"), with a note.
cp -r examples/nvlink-xid149 "$tmp/fqdn"
mv "$tmp/fqdn/logs/node-02" "$tmp/fqdn/logs/node-02.cluster.local"
run diagnose "$tmp/fqdn" --format json
expect_status 0
checks=$((checks + 1))
/usr/bin/python3 - "$tmp/out" <<'EOF2' || fail "$what: the FQDN directory was not read as node-02"
import json, sys
v = json.load(open(sys.argv[1]))
assert v["status"] == "attributed" and v["culprit_nodes"] == ["node-02"], (v["status"], v["culprit_nodes"])
assert v["coverage"]["host_aliases"] == [{"host": "node-02.cluster.local", "node": "node-02", "how": "short name"}]
assert "node-02.cluster.local" not in v["coverage"]["control_plane_hosts"]
assert any("evidence from host 'node-02.cluster.local' is read as node-02's" in w for w in v["coverage"]["warnings"])
EOF2
cp -r examples/nvlink-xid149 "$tmp/alias"
mv "$tmp/alias/logs/node-02" "$tmp/alias/logs/10.10.2.12"
/usr/bin/python3 - "$tmp/alias/context.json" <<'EOF2'
import json, sys
c = json.load(open(sys.argv[1]))
c["nodes"] = [n if n != "node-02" else {"name": "node-02", "aliases": ["10.10.2.12"]} for n in c["nodes"]]
json.dump(c, open(sys.argv[1], "w"))
EOF2
run diagnose "$tmp/alias" --format json
expect_status 0
expect_in out '"culprit_nodes": \[' "a verdict"
checks=$((checks + 1))
/usr/bin/python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
assert v["culprit_nodes"] == ["node-02"] and v["workload"]["aliases"] == {"node-02": ["10.10.2.12"]}
assert v["coverage"]["host_aliases"][0]["how"] == "alias"' "$tmp/out" || fail "$what: the alias directory was not read as node-02"

# Counted nouns agree with their count: one XID line on one link is not
# "1 XID line(s) on 1 link(s)".
mkdir -p "$tmp/one-xid/logs/node-02"
printf '{"workload_id": "9", "start": "2026-03-14T01:00:02Z", "end": "2026-03-14T02:03:34Z", "nodes": ["node-02"], "terminal": {"state": "FAILED", "exit_code": 1}}\n' > "$tmp/one-xid/context.json"
sed -n 673p examples/nvlink-xid149/logs/node-02/kernel.log > "$tmp/one-xid/logs/node-02/kernel.log"
run diagnose "$tmp/one-xid" --format text --width 0 --color never
expect_status 0
expect_in out 'fatal NVLink5 fault on node-02, GPU 0000:61:00: 1 XID line \(149\) on 1 link \[4\]' "the singular forms"
run diagnose examples/nvlink-xid149 --format text --width 0 --color never
expect_in out ': 5 XID lines \(149\) on 5 links \[4,5,12,13,16\]' "the plural forms"
checks=$((checks + 1))
! grep -q '(s)' "$tmp/out" || fail "$what: the report should not hedge a plural with (s)"

# A misspelt terminal state is refused (it would turn a clean run into
# "unattributed"); an unknown one is accepted with a warning.
cp -r examples/completed-clean "$tmp/typo-state"
sed -i 's/"COMPLETED"/"COMPLETD"/' "$tmp/typo-state/context.json"
run diagnose "$tmp/typo-state" --format json
expect_status 2
expect_in err "unknown terminal.state 'COMPLETD' \(did you mean 'COMPLETED'\? known: BOOT_FAIL, CANCELLED, COMPLETED" "the state it meant and the known ones"
expect_empty out
sed -i 's/"COMPLETD"/"SUCCEEDED"/' "$tmp/typo-state/context.json"
run diagnose "$tmp/typo-state" --format json
expect_status 0
expect_in out "terminal state 'SUCCEEDED' is not one Culprit knows; only COMPLETED \(exit 0\) counts as a clean end" "the warning"

# A service that is not there: the URL and the system's reason, exit 3.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
run diagnose --server "http://127.0.0.1:$port" examples/nvlink-xid149
expect_status 3
expect_in err "cannot reach the service at http://127.0.0.1:$port: cannot connect: Connection refused" "the URL and why"

# --------------------------------------------------------------- diagnose
run diagnose examples/nvlink-xid149 --format json
expect_status 0
expect_in out '"schema": "culprit.verdict/v2"' "a verdict document"
checks=$((checks + 1))
/usr/bin/python3 - "$tmp/out" <<'EOF' || fail "$what: stdout is not a JSON verdict with a status, a workload and a recommendation"
import json, sys
v = json.load(open(sys.argv[1]))
assert v["schema"] == "culprit.verdict/v2"
assert v["status"] in ("attributed", "ambiguous", "unattributed", "no_failure")
assert v["workload"]["id"] == "48213"
assert v["recommendation"]["job"]["action"] == "restart_excluding"
EOF
cp "$tmp/out" "$tmp/v2.json"

# The previous schema on request: the same document without the recommendation
# and the hang detail (both added in v2).
run diagnose examples/nvlink-xid149 --format json --schema v1
expect_status 0
expect_in out '"schema": "culprit.verdict/v1"' "a v1 verdict document"
checks=$((checks + 1))
/usr/bin/python3 - "$tmp/out" "$tmp/v2.json" <<'EOF' || fail "$what: the v1 document is not v2 minus the recommendation and the hang detail"
import json, sys
v1, v2 = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert "recommendation" not in v1 and "hang" not in v1 and "recovery_table" not in v1["engine"]
v2.pop("recommendation"); v2.pop("hang"); v2["engine"].pop("recovery_table"); v2["schema"] = v1["schema"]
assert v1 == v2
EOF
run diagnose examples/nvlink-xid149 --format json --schema v3
expect_status 2
expect_in err "--schema must be v2 or v1" "the choices"
run diagnose examples/nvlink-xid149 --format text --schema v1
expect_status 2
expect_in err "--schema applies only with --format json" "why"

run diagnose examples/nvlink-xid149 --format text --color never
expect_status 0
checks=$((checks + 1))
[ -s "$tmp/out" ] || fail "$what: the text verdict is empty"
checks=$((checks + 1))
if grep -q $'\033' "$tmp/out"; then fail "$what: --color never still printed ANSI escapes"; fi

# The text report in a real terminal (a pty from script(1)): colour unless
# NO_COLOR or TERM=dumb, lines cut to the terminal's width.
in_pty() {
  script -qec "stty cols 100 rows 40; $*" /dev/null >"$tmp/out" 2>"$tmp/err" </dev/null
  status=$?
  what="(in a 100-column terminal) $*"
}
in_pty "$bin" diagnose examples/nvlink-xid149
expect_status 0
checks=$((checks + 1))
grep -q $'\033\[' "$tmp/out" || fail "$what: no colour on a terminal"
checks=$((checks + 1))
/usr/bin/python3 - "$tmp/out" <<'EOF2' || fail "$what: a line is wider than the terminal"
import re, sys
text = re.sub(r"\x1b\[[0-9;]*m", "", open(sys.argv[1], encoding="utf-8").read().replace("\r", ""))
assert max(len(l) for l in text.splitlines()) <= 100
EOF2
for env in "NO_COLOR=1" "TERM=dumb"; do
  in_pty env "$env" "$bin" diagnose examples/nvlink-xid149
  expect_status 0
  checks=$((checks + 1))
  if grep -q $'\033\[' "$tmp/out"; then fail "$what: $env still printed colour"; fi
done
in_pty env NO_COLOR=1 "$bin" diagnose examples/nvlink-xid149 --color always
checks=$((checks + 1))
grep -q $'\033\[' "$tmp/out" || fail "$what: --color always must win over NO_COLOR"

# Diagnostics on stderr follow the same rule: colour in a terminal, none
# with NO_COLOR or TERM=dumb.
printf 'rule R stage symptoms {\n  for e: event gpu.xid where e.xid = 79\n  symptom s { summary: "x" }\n}\n' > "$tmp/colour.attr"
in_pty env TERM=xterm "$bin" check --no-stdlib "$tmp/colour.attr"
expect_status 2
checks=$((checks + 1))
grep -q $'\033\[' "$tmp/out" || fail "$what: no colour in the diagnostics on a terminal"
for env in "NO_COLOR=1" "TERM=dumb"; do
  in_pty env "$env" "$bin" check --no-stdlib "$tmp/colour.attr"
  expect_status 2
  expect_in out 'error\[E' "the diagnostic"
  checks=$((checks + 1))
  if grep -q $'\033\[' "$tmp/out"; then fail "$what: $env still coloured the diagnostics"; fi
done

run diagnose examples/nvlink-xid149 --format text --width 60
expect_status 0
checks=$((checks + 1))
/usr/bin/python3 -c 'import sys; ls = open(sys.argv[1], encoding="utf-8").read().splitlines(); assert max(map(len, ls)) <= 60, max(map(len, ls))' "$tmp/out" ||
  fail "$what: lines wider than 60 columns"
expect_in out '^Downstream, demoted: 25 symptoms on 4 nodes' "the collapsed cascade"
# The recap closes the report, with the action; at 60 columns it wraps rather than lose the culprit.
checks=$((checks + 1))
[ "$(tail -5 "$tmp/out" | tr -s ' \n' ' ')" = "verdict: attributed hardware / nvlink.signal_integrity on node-02 (1 cause, 25 downstream, 2 scrubbed, 2 warnings) next: restart the job without node-02; drain node-02; inspect the links of node-02 (links 4,5,12,13,16; pci 0000:61:00) " ] ||
  fail "$what: the last lines are not the recap"

run diagnose examples/nvlink-xid149 --format text --width 0 --cascade
expect_status 0
expect_in out '^  - nccl.ib_completion_error on node-01 ×11 \(Xid149AndNvlinkFiltering: ' "every symptom with its rule"

# "Why didn't my rule fire?": --explain names the extractors that read a
# source with lines and matched none (the kernel log has no OOM kill), and not
# those that fired (the XID lines).
run diagnose examples/nvlink-xid149 --format text --width 0 --explain
expect_status 0
expect_in out '^Extractors that matched no line of the sources they read \([0-9]+\): .*KernelOomKill' "the silent extractors"
checks=$((checks + 1))
grep '^Extractors that matched no line' "$tmp/out" | grep -qw 'GpuXid' && fail "$what: an extractor that fired is listed as silent"
run diagnose examples/nvlink-xid149 --format json --explain
expect_status 0
expect_in out '"silent_extractors": \[' "the silent extractors in the JSON"

run diagnose examples/nvlink-xid149 --format text --width 12
expect_status 2
expect_in err '--width must be 0 \(no limit\) or a number of columns from 40' "the allowed widths"

run diagnose --help
expect_in out '--server URL' "the --server option"
expect_in out 'CULPRIT_STDLIB' "the environment it reads"

# `culprit help COMMAND` is the command's own help, not the general one.
run help diagnose
expect_status 0
expect_in out '^Usage: culprit diagnose BUNDLE' "diagnose's usage line"
run help serve
expect_status 0
expect_in out '^Usage: culprit serve' "serve's usage line"
run help diagnos
expect_status 2
expect_in err "unknown command 'diagnos' \(did you mean 'diagnose'\?\)" "the did-you-mean for a misspelt command"

# The readers of a store, away from it: told where they looked and what to do.
run offenders --store "sqlite:$tmp/none.db"
expect_status 3
expect_in err "there is no store at $tmp/none.db: \`culprit run\` creates it" "that there is no store there, and how to get one"
[ ! -e "$tmp/none.db" ] || fail "$what: created $tmp/none.db"

# ------------------------------------------------------------------- test
run test
expect_status 0
expect_in out '^[0-9]+ passed, 0 failed$' "the closing 'N passed, 0 failed' line"
checks=$((checks + 1))
if grep -q '^FAIL' "$tmp/out"; then fail "$what: the bundled catalog fails its own tests"; fi

cat > "$tmp/failing.attr" <<'EOF'
extractor Hello from app {
  match /hello (?<who>\w+)/
  emit app.hello { who: who }
  test "wrong expectation" { line "hello bob" expect app.hello { who: "alice" } }
  test { line "bye" expect none }
}
EOF
run test --no-stdlib "$tmp/failing.attr"
expect_status 1
expect_in out '^FAIL line Hello: wrong expectation' "the failing test"
expect_in out "expected \"alice\", got \"bob\"" "what was expected and what came out"
expect_in out '^1 passed, 1 failed$' "the counts"

# Site rules tested on their own (--no-stdlib), with the bundled catalog's
# kinds and extractors still resolving in their scenarios.
site=tests/cli/fixtures/site-rules
run test --no-stdlib "$site"
expect_status 0
expect_in out '^5 passed, 0 failed$' "only the site's tests (the bundled catalog has hundreds)"

run test --no-stdlib "$site" --run 'bundled kind'
expect_status 0
expect_in out '^1 passed, 0 failed$' "only the test the regex names"

run test --no-stdlib "$site" --run 'no such test'
expect_status 2
expect_in err "no test ran \(--run 'no such test' matches none\)" "that nothing ran is not a pass"

run test --no-stdlib "$site" --run '('
expect_status 2
expect_in err '--run: not a valid regex' "the bad regex"

run test --no-stdlib
expect_status 2
expect_in err 'give at least one rule PATH' "that --no-stdlib needs a PATH"

run test --no-stdlib "$site" --coverage
expect_status 0
expect_in out '^coverage: 4 of 5 rules and extractors exercised by a scenario \(80\.0%\)$' "the coverage figure"
expect_in out '^  not exercised: rule SiteUnusedXid \[symptoms\] \(tests/cli/fixtures/site-rules/site.attr:41\)$' "the rule no scenario exercises"

run test --no-stdlib "$site" --min-coverage 90
expect_status 1
expect_in err 'coverage 80\.0% is under --min-coverage 90' "why it failed"
run test --no-stdlib "$site" --min-coverage 80
expect_status 0
run test --no-stdlib "$site" --min-coverage 101
expect_status 2

run test --no-stdlib "$site" --format json --coverage --junit "$tmp/junit.xml"
expect_status 0
checks=$((checks + 1))
/usr/bin/python3 - "$tmp/out" "$tmp/junit.xml" <<'EOF2' || fail "$what: the JSON or JUnit report is wrong"
import json, sys, xml.etree.ElementTree as ET
r = json.load(open(sys.argv[1]))
assert r["schema"] == "culprit.test-report/v1" and r["passed"] == 5 and r["failed"] == 0, r
assert [p["name"] for p in r["catalog"]["parts"]] == ["culprit-stdlib", "site"], r["catalog"]
assert r["coverage"]["total"] == 5 and r["coverage"]["exercised"] == 4
suites = ET.parse(sys.argv[2]).getroot()
assert suites.tag == "testsuites" and suites.get("tests") == "5" and suites.get("failures") == "0"
cases = suites.findall("./testsuite/testcase")
assert len(cases) == 5 and all(c.get("file", "").endswith("site.attr") for c in cases)
EOF2

# A verdict made with site rules names every catalog part that contributed.
run diagnose examples/nvlink-xid149 --rules "$site" --format json
expect_status 0
checks=$((checks + 1))
/usr/bin/python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["engine"]["catalog"]
assert [(p["name"], p["version"]) for p in c["parts"]] == [("culprit-stdlib", "0.1.0"), ("site", "0.0.1")], c
assert c["name"] == "culprit-stdlib" and all(p["digest"].startswith("sha256:") for p in c["parts"])' "$tmp/out" ||
  fail "$what: engine.catalog.parts does not list both catalogs"
run diagnose examples/nvlink-xid149 --rules "$site" --format text --width 0
expect_in out 'catalog culprit-stdlib 0.1.0 \+ site 0.0.1 \(sha256:' "both catalogs in the report"
run check "$site"
expect_in out '^ok: catalog culprit-stdlib 0.1.0 \+ site 0.0.1 ' "both catalogs in check"

# A failing scenario: each unmet expect at its own line, and what came out.
mkdir -p "$tmp/failing-site"
cat > "$tmp/failing-site/wrong.attr" <<'EOF2'
scenario "expects the wrong node" {
  nodes "node-01", "node-02"
  log "node-02" kernel "Mar 14 02:03:17 node-02 kernel: [ 1843.308145] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus."
  expect status attributed
  expect culprits ["node-01"]
  expect symptom gpu.fallen_off_bus on "node-01" active
}
EOF2
run test --no-stdlib "$tmp/failing-site" --junit "$tmp/junit.xml"
expect_status 1
expect_in out '^FAIL scenario expects the wrong node \(.*wrong.attr:1\): 2 expectations not met$' "the failing scenario"
expect_in out '^  .*wrong.attr:5: culprits: expected \[node-01\], got \[node-02\]$' "the culprits expect, at its line"
expect_in out '^  .*wrong.attr:6: symptom gpu.fallen_off_bus on node-01 active: expected, got none$' "the symptom expect, at its line"
expect_in out '^  actual verdict: attributed hardware / gpu.fallen_off_bus on node-02$' "the verdict it got"
expect_in out '^  symptoms: gpu.fallen_off_bus@node-02#0000:3b:00 active$' "the symptoms it got"
checks=$((checks + 1))
/usr/bin/python3 -c '
import sys, xml.etree.ElementTree as ET
f = ET.parse(sys.argv[1]).getroot().find("./testsuite/testcase/failure")
assert f is not None and "wrong.attr:5: culprits" in f.text and "actual verdict: attributed" in f.text, f' "$tmp/junit.xml" ||
  fail "$what: the JUnit failure lacks the locations or the verdict"

# A rule directory whose files have a typo'd extension holds no rules: never a green run.
mkdir -p "$tmp/typo-rules"
cp "$site/site.attr" "$tmp/typo-rules/site.atr"
run test "$tmp/typo-rules"
expect_status 2
expect_in err "rule directory '.*typo-rules' holds no .attr files" "that there are no rules"
expect_in err "did you mean to rename site.atr\?" "the file it probably meant"
checks=$((checks + 1))
if grep -q 'passed' "$tmp/out"; then fail "$what: printed a pass count for a directory without rules"; fi

# ------------------------------------------------------------------ check
run check
expect_status 0
expect_in out '^ok: catalog culprit-stdlib ' "that the bundled catalog compiles"

cat > "$tmp/broken.attr" <<'EOF'
extractor GpuXid from kernel {
  match /NVRM: Xid \(PCI:(?<pci>[0-9a-fA-F:.]+)\): (?<xid>\d+)/
  emit gpu.xid { pci: pci, xid: int(xid) }
  test { line "NVRM: Xid (PCI:0000:3b:00): 79, x" expect gpu.xid { xid: 79 } }
  test { line "NVRM: loading" expect none }
}
rule FallenOffBus stage symptoms {
  for e: event gpu.xidd
  symptom gpu.fallen_off_bus key e.pci { summary: "GPU {e.pci} fell off the bus" }
}
EOF
run check --no-stdlib "$tmp/broken.attr"
expect_status 2
expect_in err "^$tmp/broken.attr:8:16: error\[E0201\]: unknown event kind 'gpu.xidd'" "file:line:col: error[E....]"
expect_in err '^ 8 \|   for e: event gpu.xidd$' "the source line"
expect_in err '^   \|                \^~~~~~~~$' "a caret under the unknown kind"
expect_in err 'the rules do not compile \(1 error\)' "the error count"
expect_empty out

# The same as one JSON document for editors: every field of the diagnostic,
# nothing on stderr, the same exit status.
run check --no-stdlib "$tmp/broken.attr" --format json
expect_status 2
expect_empty err
checks=$((checks + 1))
/usr/bin/python3 - "$tmp/out" "$tmp/broken.attr" <<'PY' || fail "$what: the JSON report"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "culprit.check/v1" and j["ok"] is False and j["catalog"] is None, j
assert "do not compile" in j["error"], j["error"]
d = [x for x in j["diagnostics"] if x["code"] == "E0201"]
assert len(d) == 1, j["diagnostics"]
d = d[0]
assert (d["severity"], d["file"], d["line"], d["col"], d["end_line"], d["end_col"]) == ("error", sys.argv[2], 8, 16, 8, 24), d
assert "unknown event kind 'gpu.xidd'" in d["message"] and d["help"] and d["notes"] == [], d
PY
printf 'extractor Hello from apps {\n  match /hello (?<x>\\w+)/\n  emit app.hello { x: x }\n  test { line "hello a" expect app.hello }\n  test { line "bye" expect none }\n}\n' > "$tmp/warn.attr"
run check "$tmp/warn.attr" --format json
expect_status 0
checks=$((checks + 1))
/usr/bin/python3 - "$tmp/out" <<'PY' || fail "$what: a warning in the JSON report of a catalog that compiles"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ok"] is True and j["catalog"]["rules"] > 0 and j["error"] == "", j
w = [x for x in j["diagnostics"] if x["code"] == "E0208"]
assert len(w) == 1 and w[0]["severity"] == "warning" and w[0]["help"] == "did you mean 'app'?", j["diagnostics"]
PY
run check --format yaml
expect_status 2
expect_in err '\-\-format must be text or json' "the allowed formats"

# A broken file next to the bundled catalog is reported the same way.
run check "$tmp/broken.attr"
expect_status 2
expect_in err 'error\[E0201\]' "the error"

run check --no-stdlib
expect_status 2
expect_in err 'no rules to load' "that there is nothing to compile"

run check --no-stdlib "$tmp/missing.attr"
expect_status 2
expect_in err "error\[E0002\]: rule path '.*missing.attr' does not exist" "the missing rule file"

# ------------------------------------------------------------------ match
xid79='[ 1843.308145] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.'
run match --source kernel "$xid79"
expect_status 0
expect_in out '^GpuXid \(.*gpu_xid.attr:[0-9]+\) emits gpu.xid$' "the extractor and the event"
expect_in out '^  xid: 79$' "the typed field"
expect_in out '^  pci: "0000:3b:00"$' "the string field"
expect_in out '^    GpuFallenOffBus \[symptoms\]' "a rule that sees the event"

# A syslog stamp has no year: shown without one, never as a 1970 instant.
run match --source kernel "Mar 14 02:03:17 node-02 kernel: $xid79"
expect_status 0
expect_in out '^  ts: --03-14T02:03:17Z \(the line has no year' "the year-less time"
checks=$((checks + 1))
! grep -q 1970 "$tmp/out" || fail "$what: stdout should not show a made-up year 1970"
run match --source kernel "2026-03-14T02:03:17Z node-02 kernel: $xid79"
expect_in out '^  ts: 2026-03-14T02:03:17Z \(line\)$' "a time with its year"

run match --source kernel 'nothing to see here'
expect_status 1
expect_in out "^no match: none of the [0-9]+ extractors reading 'kernel' matches this line$" "that nothing matched"

# A near miss: the literal text of an extractor is there, its regex fails
# (a misspelt 'status'): named, with where it is, as the answer to "why did
# my rule not fire".
run match --source app 'node-02:2231:2260 [3] NCCL WARN NET/IB : Got completion from peer 10.0.0.7<4711> with statuz=12 opcode=0'
expect_status 1
expect_in out "^near miss: the line holds the literal text of this extractor, but its regex does not match it:$" "that it was a near miss"
expect_in out "^  NcclIbCompletionError \(.*stdlib-rules/nccl.attr:[0-9]+\)$" "the extractor and where it is"
run match --source app --format json 'node-02:2231:2260 [3] NCCL WARN NET/IB : Got completion from peer 10.0.0.7<4711> with statuz=12 opcode=0'
expect_in out '"extractor": "NcclIbCompletionError"' "the near miss in JSON"

run match --source kernal "$xid79"
expect_status 2
expect_in err "no extractor reads the source 'kernal'; did you mean 'kernel'\?" "the source it meant"

run match "$xid79"
expect_status 2
expect_in err '--source NAME is required' "that the source is needed"

printf '%s\nno match here\n' "$xid79" > "$tmp/lines"
"$bin" match --source kernel --format json - < "$tmp/lines" > "$tmp/out" 2> "$tmp/err"; status=$?; what="culprit match --format json -"
expect_status 1
checks=$((checks + 1))
/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["source"] == "kernel" and len(r["lines"]) == 2
m = r["lines"][0]["matches"][0]
assert m["extractor"] == "GpuXid" and m["event"] == "gpu.xid" and m["fields"]["xid"] == 79
assert any(x["name"] == "GpuFallenOffBus" for x in m["rules"]) and r["lines"][1]["matches"] == []' "$tmp/out" ||
  fail "$what: the JSON report is wrong"

# -------------------------------------------------------------------- fmt
mkdir -p "$tmp/fmt"
cp tests/golden/fmt/messy.attr "$tmp/fmt/a.attr"
cp tests/golden/fmt/messy.expected "$tmp/fmt/b.attr"
run fmt --check "$tmp/fmt"
expect_status 1
expect_in out "a.attr: not formatted" "the file to reformat"
checks=$((checks + 1))
if grep -q 'b.attr' "$tmp/out"; then fail "$what: listed a file that is already formatted"; fi
# --diff: what would change, as a patch the real patch(1)/git apply takes
# back to the formatted text; nothing is written.
run fmt --diff "$tmp/fmt"
expect_status 1
expect_in out "^--- .*a.attr$" "the file's diff header"
expect_in out "^@@ -[0-9]+(,[0-9]+)? \+[0-9]+(,[0-9]+)? @@$" "a hunk"
checks=$((checks + 1))
cmp -s "$tmp/fmt/a.attr" tests/golden/fmt/messy.attr || fail "$what: --diff changed a.attr"
checks=$((checks + 1))
cp "$tmp/out" "$tmp/fmt.diff"
(cd "$tmp" && mkdir -p patched && cp fmt/a.attr patched/a.attr &&
  sed "s#$tmp/fmt/a.attr#a.attr#" fmt.diff > patched/fmt.diff && cd patched && git apply --unsafe-paths -p0 fmt.diff) ||
  fail "$what: git apply does not take the diff"
cmp -s "$tmp/patched/a.attr" tests/golden/fmt/messy.expected || fail "$what: the diff applied does not give the formatted file"
run fmt --check --diff "$tmp/fmt"
expect_status 2
run fmt "$tmp/fmt"
expect_status 0
expect_in out "^formatted .*a.attr$" "what it rewrote"
checks=$((checks + 1))
cmp -s "$tmp/fmt/a.attr" tests/golden/fmt/messy.expected || fail "$what: a.attr is not in the canonical layout"
run fmt --check "$tmp/fmt"
expect_status 0
printf 'rule R stage symptoms {\n  for e: event gpu.xid\n' > "$tmp/fmt/broken.attr"
cp "$tmp/fmt/broken.attr" "$tmp/broken-copy.attr"
run fmt "$tmp/fmt/broken.attr"
expect_status 2
expect_in err 'error\[E0001\]' "the syntax error"
checks=$((checks + 1))
cmp -s "$tmp/fmt/broken.attr" "$tmp/broken-copy.attr" || fail "$what: rewrote a file that does not parse"

# The bundled catalog, formatted, is the same catalog: all its tests pass.
cp -r stdlib-rules "$tmp/stdlib-fmt"
run fmt "$tmp/stdlib-fmt"
expect_status 0
CULPRIT_STDLIB="$tmp/stdlib-fmt" run test --engine interp
expect_status 0
expect_in out '^[0-9]+ passed, 0 failed$' "the formatted catalog passing its tests"
run fmt --check "$tmp/stdlib-fmt"
expect_status 0

# ------------------------------------------------- malloc (cli/allocator.h)
# --timings names the malloc the process runs on. With mimalloc (the normal
# build) the huge-page rerun is never made: CULPRIT_HUGE_PAGES=1 changes
# nothing. With glibc's (the sanitized build) a large bundle makes diagnose
# run itself again with glibc's huge-page tunable; CULPRIT_HUGE_PAGES=1 does so
# for any size, 0 never. Either way the verdict must not change.
CULPRIT_HUGE_PAGES=0 run diagnose examples/nvlink-xid149 --format json --timings --skip-self-test
expect_status 0
expect_in err 'malloc (mimalloc|glibc, huge pages off)$' "--timings naming the malloc"
cp "$tmp/out" "$tmp/verdict-small-pages.json"
if [ -z "$expected_malloc" ]; then
  grep -q 'malloc mimalloc$' "$tmp/err" && expected_malloc=mimalloc || expected_malloc=glibc
fi
if [ "$expected_malloc" = mimalloc ]; then
  expect_in err 'malloc mimalloc$' "--timings saying the build's mimalloc is malloc"
  CULPRIT_HUGE_PAGES=1 run diagnose examples/nvlink-xid149 --format json --timings --skip-self-test
  expect_status 0
  expect_in err 'malloc mimalloc$' "no huge-page rerun under mimalloc"
else
  expect_in err 'malloc glibc, huge pages off$' "--timings saying malloc is glibc's, without huge pages"
  CULPRIT_HUGE_PAGES=1 run diagnose examples/nvlink-xid149 --format json --timings --skip-self-test
  expect_status 0
  expect_in err 'malloc glibc, huge pages on$' "--timings saying the process was run again with huge pages"
fi
checks=$((checks + 1))
cmp -s "$tmp/out" "$tmp/verdict-small-pages.json" || fail "$what: the verdict differs from the one without huge pages"
if [ "$expected_malloc" = glibc ]; then
  GLIBC_TUNABLES=glibc.malloc.hugetlb=0 CULPRIT_HUGE_PAGES=1 run diagnose examples/nvlink-xid149 --format json --timings --skip-self-test
  expect_status 0
  expect_in err 'malloc glibc, huge pages off$' "the user's own GLIBC_TUNABLES setting standing"
fi

# --------------------------------------------------------------- version
run --version
expect_status 0
expect_in out '^Culprit [0-9]+\.[0-9]+\.[0-9]+' "the Culprit version"
expect_in out '^ANTLR runtime: [0-9]' "the ANTLR runtime version"
expect_in out '^Hyperscan: [0-9]' "the Hyperscan version"
expect_in out '^RE2: [0-9]' "the RE2 version"
expect_in out '^catalog: culprit-stdlib [0-9.]+ \(sha256:[0-9a-f]{64}\)' "the bundled catalog and its digest"

echo "cli: all $checks checks passed"
