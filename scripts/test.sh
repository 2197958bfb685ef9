#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds Culprit and runs every test:
# unit tests, golden diagnostics and verdicts, the catalog's inline tests,
# the CLI and service checks, the fuzz corpora replayed (ctest); a short
# load run (slow clients, then overload against a small memory budget);
# then the sanitizer stage: the tests again under AddressSanitizer + UBSan
# in build-asan/ (scripts/sanitize.sh; CULPRIT_SKIP_SANITIZE=1 skips it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
cd "${BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "${JOBS:-$(nproc)}"
# Slow clients under load: 0 errors, /healthz within 100 ms; overload: 429s
# and RSS within the budget (docs/service.md, "Load").
cd "$root"
python3 tests/service/check_load.py "${BUILD_DIR:-$root/build}/cli/culprit" --duration "${LOAD_SECONDS:-15}" \
  --overload-seconds "${OVERLOAD_SECONDS:-15}"
if [ "${CULPRIT_SKIP_SANITIZE:-0}" != 1 ]; then
  "$root/scripts/sanitize.sh"
fi
