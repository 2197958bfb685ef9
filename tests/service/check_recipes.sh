#!/usr/bin/env bash
# Runs the curl recipes of docs/service.md (the block between the
# "recipes: begin/end" markers) against a real `culprit serve` on a free
# loopback port, so the documented commands keep working: each must succeed,
# and the one-shot verdict of the bundle-to-NDJSON one-liner must equal
# `culprit diagnose` of the same bundle.
#
# Usage: tests/service/check_recipes.sh BIN   (from the repository root; needs curl and jq)
set -euo pipefail
bin=${1:?usage: check_recipes.sh path/to/culprit}
for tool in curl jq; do command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed (scripts/install-deps.sh)"; exit 1; }; done
tmp=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

"$bin" serve --listen 127.0.0.1:0 --port-file "$tmp/port" --no-access-log 2>"$tmp/serve.log" &
pid=$!
for _ in $(seq 600); do
  [ -s "$tmp/port" ] && break
  kill -0 "$pid" 2>/dev/null || { echo "FAIL: culprit serve exited"; cat "$tmp/serve.log"; exit 1; }
  sleep 0.2
done
[ -s "$tmp/port" ] || { echo "FAIL: culprit serve did not become ready"; exit 1; }
export URL="http://127.0.0.1:$(cat "$tmp/port")" TMPDIR="$tmp"

sed -n '/<!-- recipes: begin -->/,/<!-- recipes: end -->/p' docs/service.md | sed '1,2d;$d' | sed '$d' > "$tmp/recipes.sh"
[ "$(grep -c curl "$tmp/recipes.sh")" -ge 12 ] || { echo "FAIL: the recipes block of docs/service.md was not found"; exit 1; }
# Every route of the API has a recipe.
for route in /healthz /readyz /v1/catalog /v1/openapi.json /metrics /v1/attributions /v1/workloads \
             '/v1/workloads/$ID/observations' '/v1/workloads/$ID/attribute' '-X DELETE'; do
  grep -qF -- "$route" "$tmp/recipes.sh" || { echo "FAIL: no recipe for $route"; exit 1; }
done
if ! bash -euo pipefail "$tmp/recipes.sh" > "$tmp/out" 2>&1; then
  echo "FAIL: the recipes of docs/service.md do not run:"; cat "$tmp/out"; exit 1
fi
cat "$tmp/out"
local_verdict=$("$bin" diagnose examples/nvlink-xid149 --format json | jq -c '{status, domain, sub_domain, culprit_nodes}')
remote_verdict=$(curl -sS --fail-with-body -H 'Content-Type: application/x-ndjson' --data-binary @"$tmp/bundle.ndjson" \
                 "$URL/v1/attributions" | jq -c '{status, domain, sub_domain, culprit_nodes}')
[ "$local_verdict" = "$remote_verdict" ] || { echo "FAIL: one-liner verdict $remote_verdict differs from the CLI's $local_verdict"; exit 1; }
grep -q '^204$' "$tmp/out" || { echo "FAIL: the session was not deleted (204)"; exit 1; }
grep -q '^verdict: attributed hardware / nvlink.signal_integrity on node-02' "$tmp/out" || { echo "FAIL: no text recap"; exit 1; }
echo "recipes: all ran; the one-liner's verdict equals the CLI's ($local_verdict)"
