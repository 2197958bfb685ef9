#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds Culprit and diagnoses the bundled
# NVLink example. Extra arguments go to `culprit diagnose` (e.g. --format json).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
exec "$root/build/cli/culprit" diagnose "$root/examples/nvlink-xid149" --format text "$@"
