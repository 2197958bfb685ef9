#!/usr/bin/env bash
# The report on the README's first screen is the flagship's golden report
# (tests/golden/reports/nvlink-xid149.txt), so the README shows what a user
# gets. The catalog digest is masked in both, as in check_report.sh.
#
# Usage: check_readme_report.sh   (from the repository root)
set -euo pipefail
mask() { sed -E 's/\(sha256:[0-9a-f]{12}\)/(sha256:…)/'; }
readme=$(awk '/^\$ culprit diagnose examples\/nvlink-xid149 /{f=1; next} f && /^```/{exit} f' README.md | mask)
[ -n "$readme" ] || { echo "README.md has no '\$ culprit diagnose examples/nvlink-xid149' block"; exit 1; }
if ! diff -u tests/golden/reports/nvlink-xid149.txt <(printf '%s\n' "$readme"); then
  echo "the report in README.md differs from tests/golden/reports/nvlink-xid149.txt: copy the golden report into the README"
  exit 1
fi
