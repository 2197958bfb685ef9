#!/usr/bin/env python3
"""docs/architecture.md and stdlib-rules/README.md match the tree.

Every rule file of the bundled catalog has its row in the stdlib README, and
every module (a header under base/, compiler/, runtime/, service/,
blueprint/ or dashboard/) is named in docs/architecture.md, either by its
path or by its name in a row that names its folder; every path the
architecture names exists. A new file without its line in the docs, or a
renamed one whose docs went stale, fails here.

Usage: check_docs_match_tree.py SOURCE_DIR
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
failures = []

readme = open(os.path.join(root, "stdlib-rules/README.md"), encoding="utf-8").read()
for name in sorted(os.listdir(os.path.join(root, "stdlib-rules"))):
    if (name.endswith(".attr") or name.endswith(".table")) and f"`{name}`" not in readme:
        failures.append(f"stdlib-rules/README.md has no row for {name}")

arch = open(os.path.join(root, "docs/architecture.md"), encoding="utf-8").read()
words = set(re.findall(r"[A-Za-z0-9_]+", arch))
# Module folders: a header is a module's contract, so every header is named.
for folder in ["base", "compiler", "runtime", "service", "blueprint", "dashboard"]:
    for dirpath, _, files in os.walk(os.path.join(root, folder)):
        for f in sorted(files):
            if not f.endswith(".h"):
                continue
            stem = f[:-2]
            rel = os.path.relpath(os.path.join(dirpath, stem), root)
            # Private headers of a module (sema_internal.h, ...) belong to the module they serve.
            if stem.endswith("_internal"):
                continue
            if rel not in arch and stem not in words:
                failures.append(f"docs/architecture.md does not name {rel} (add it to the module table)")

for path in sorted(set(re.findall(r"`((?:base|compiler|runtime|service|blueprint|dashboard|cli)/[A-Za-z0-9_/\.]+)`", arch))):
    p = os.path.join(root, path.rstrip("/"))
    if not any(os.path.exists(p + ext) for ext in ["", ".h", ".cpp"]):
        failures.append(f"docs/architecture.md names {path}, which does not exist")

for f in failures:
    print("check_docs_match_tree: FAIL:", f)
if failures:
    sys.exit(1)
print("check_docs_match_tree: stdlib README and architecture.md match the tree")
