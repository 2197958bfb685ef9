#!/usr/bin/env bash
# The files an operator names to `culprit run`, and its durations, under
# careless or hostile input (issue 38): a FIFO as the configuration, the
# policy or the store's password file is refused at once with exit 2 (the
# policy and the password once blocked the start until something wrote to
# the FIFO); a directory or an oversized file is refused; a duration too
# large for the instants it moves is refused with the key or option named.
#
#   check_config_files.sh CULPRIT SOURCE_DIR
set -euo pipefail
CULPRIT=$(readlink -f "$1")
ROOT=$(readlink -f "$2")
D=$(mktemp -d /tmp/culprit-config-files.XXXXXX)
trap 'rm -rf "$D"' EXIT
fail() { echo "check_config_files: FAIL: $*"; exit 1; }

mkfifo "$D/fifo"
cp -r "$ROOT/examples/xid48-dbe" "$D/bundle"
printf 'cluster: c1\ndiscovery:\n  static:\n    bundles: "%s/bundle/"\n' "$D" > "$D/ok.yaml"
printf 'rules:\n  - action: drain\n    then: hold\n' > "$D/policy.yaml"

# expect NAME SECONDS WANT_RC PATTERN -- COMMAND...: the command exits WANT_RC
# within SECONDS (timeout(1) says 124 otherwise) and stderr matches PATTERN.
expect() {
  local name=$1 secs=$2 want=$3 pattern=$4
  shift 5
  local rc=0 t0 t1
  t0=$(date +%s.%N)
  timeout "$secs" "$@" > "$D/out" 2> "$D/err" < /dev/null || rc=$?
  t1=$(date +%s.%N)
  [ "$rc" = "$want" ] || { cat "$D/err"; fail "$name: exit $rc, want $want (124: it hung)"; }
  grep -q -- "$pattern" "$D/err" || { cat "$D/err"; fail "$name: stderr does not say '$pattern'"; }
  echo "check_config_files: $name: exit $rc in $(python3 -c "print(f'{$t1 - $t0:.2f}')") s"
}

expect "--config FIFO" 10 2 "cannot read the configuration $D/fifo: it is a FIFO, not a regular file" -- \
  "$CULPRIT" run --config "$D/fifo" --check
expect "--config directory" 10 2 "it is a directory, not a regular file" -- "$CULPRIT" run --config "$D" --check
expect "--policy FIFO" 10 2 "cannot read the policy file $D/fifo: it is a FIFO, not a regular file" -- \
  "$CULPRIT" run --config "$D/ok.yaml" --check --policy "$D/fifo"
{ cat "$D/policy.yaml"; head -c $((5 << 20)) /dev/zero | tr '\0' '#'; echo; } > "$D/big-policy.yaml"
expect "--policy over 4 MiB" 10 2 "limit config_file_bytes exceeded" -- \
  "$CULPRIT" run --config "$D/ok.yaml" --check --policy "$D/big-policy.yaml"
# The store's password file is read after the catalog is built: a longer deadline.
{ cat "$D/ok.yaml"; printf 'store:\n  url: postgresql://culprit@127.0.0.1:1/culprit\n  password_file: %s/fifo\n' "$D"; } > "$D/pw.yaml"
expect "store.password_file FIFO" 60 2 "store password: cannot read the secret file $D/fifo: it is a FIFO, not a regular file" -- \
  "$CULPRIT" run --config "$D/pw.yaml" --once --format none

# Durations: in the configuration (key named, file:line:col) and on the command line.
{ cat "$D/ok.yaml"; printf 'attribution:\n  slack_after: 106751d\n'; } > "$D/slack.yaml"
expect "slack_after: 106751d" 10 2 "slack.yaml:6:16: error\[B0104\]: 'slack_after' is out of range: at most 3650d" -- \
  "$CULPRIT" run --config "$D/slack.yaml" --check
expect "--slack-after 106751d" 30 2 "'--slack-after' is out of range: at most 3650d" -- \
  "$CULPRIT" diagnose "$D/bundle" --slack-after 106751d
expect "--webhook-timeout 99999999999999999999d" 10 2 "'--webhook-timeout' is out of range" -- \
  "$CULPRIT" run --config "$D/ok.yaml" --once --webhook http://127.0.0.1:9/ --webhook-timeout 99999999999999999999d
echo "check_config_files: ok"
