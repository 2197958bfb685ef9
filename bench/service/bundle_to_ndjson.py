#!/usr/bin/env python3
"""Writes the NDJSON request body `culprit diagnose --server` would send for a
bundle: the context, then every log line as a text observation with its file,
line number, byte offset and '\\n' terminator.

  bundle_to_ndjson.py BUNDLE OUT.ndjson
"""
import json
import os
import sys

bundle, out_path = sys.argv[1], sys.argv[2]
with open(out_path, "w", encoding="utf-8") as out:
    out.write(json.dumps(json.load(open(os.path.join(bundle, "context.json")))) + "\n")
    logs = os.path.join(bundle, "logs")
    for host in sorted(os.listdir(logs)):
        for name in sorted(os.listdir(os.path.join(logs, host))):
            if not name.endswith(".log"):
                continue
            rel = f"logs/{host}/{name}"
            data = open(os.path.join(bundle, rel), "rb").read()
            pos, n = 0, 0
            while pos < len(data):
                nl = data.find(b"\n", pos)
                end = len(data) if nl < 0 else nl + 1
                n += 1
                out.write(json.dumps({"host": host, "source": name[:-4], "file": rel, "line": n, "offset": pos,
                                      "text": data[pos:end].decode("utf-8", "replace")}) + "\n")
                pos = end
