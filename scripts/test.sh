#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds Culprit and runs every test:
# unit tests, golden diagnostics and verdicts, the catalog's inline tests and
# the CLI checks (ctest).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
cd "${BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "${JOBS:-$(nproc)}"
