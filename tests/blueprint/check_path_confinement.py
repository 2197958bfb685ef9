#!/usr/bin/env python3
"""The files collector of `culprit run` under a hostile job directory (issue 38).

A static workload's files entries point into a directory that holds what a
job's owner can put there: a symbolic link to another user's log, a FIFO,
and an entry that names a procfs file. `culprit run --once` must finish
promptly, store none of the other user's lines, and report each of those
files as refused in the verdict's coverage (not "no file matches", not ok).

    check_path_confinement.py CULPRIT
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

CULPRIT = os.path.abspath(sys.argv[1])


def fail(msg):
    print(f"check_path_confinement: FAIL: {msg}")
    sys.exit(1)


def main():
    d = tempfile.mkdtemp(prefix="culprit-confine.")
    try:
        run(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def run(d):
    secret = os.path.join(d, "bob", "secret.log")
    os.makedirs(os.path.dirname(secret))
    with open(secret, "w") as f:
        f.write("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB BOB-SECRET-LINE\n")
    node = os.path.join(d, "jobs", "node-01")
    os.makedirs(node)
    os.symlink(secret, os.path.join(node, "app.log"))          # a link out of the template's directory
    os.mkfifo(os.path.join(node, "kern.log"))                   # a FIFO where a log should be
    with open(os.path.join(node, "kern.log.1"), "w") as f:      # and beside it an honest file, read as usual
        f.write("2026-05-11T08:31:00+00:00 node-01 kernel: usb 1-1: new device\n")
    cfg = os.path.join(d, "c.yaml")
    with open(cfg, "w") as f:
        f.write(f"""cluster: c1
discovery:
  static:
    workloads:
      - id: "60101"
        nodes: [node-01]
        start: "2026-05-11T08:00:05Z"
        end: "2026-05-11T09:02:05Z"
collectors:
  files:
    - {{source: app, path: {json.dumps(d + '/jobs/{node}/app.log')}}}
    - {{source: kernel, path: {json.dumps(d + '/jobs/{node}/kern.log*')}}}
    - {{source: scheduler, path: /proc/self/status, host: slurmctld}}
""")
    try:
        r = subprocess.run([CULPRIT, "run", "--config", cfg, "--once", "--store", f"sqlite:{d}/s.db", "--format", "none"],
                           cwd=d, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        fail("culprit run did not finish within 60 s")
    if r.returncode not in (0, 1):
        fail(f"culprit run exited {r.returncode}: {r.stderr[-2000:]}")
    db = sqlite3.connect(f"{d}/s.db")
    rows = db.execute("select verdict_json from verdicts").fetchall()
    if len(rows) != 1:
        fail(f"{len(rows)} verdicts stored, expected 1: {r.stderr[-2000:]}")
    v = json.loads(rows[0][0])
    reports = {c["source"]: c for c in v["coverage"]["collectors"] if c["collector"] == "files"}
    problems = []

    def refused(source, what):
        rep = reports.get(source)
        if rep is None:
            problems.append(f"no report for source {source}")
            return
        if rep["status"] not in ("failed", "partial"):
            problems.append(f"{source}: status {rep['status']!r} ({rep.get('reason')!r}), expected failed")
        if "no file matches" in (rep.get("reason") or ""):
            problems.append(f"{source}: reported as 'no file matches': {rep['reason']!r}")
        if not any("refused" in e and what in e for e in rep.get("errors", [])):
            problems.append(f"{source}: no '{what}' refusal in {rep.get('errors')}")

    refused("app", "a symbolic link out of")
    refused("kernel", "a FIFO")
    refused("scheduler", "/proc/self/status")
    if reports.get("kernel", {}).get("nodes_covered") != ["node-01"]:
        problems.append(f"kernel: the honest file beside the FIFO was not read: {reports.get('kernel')}")
    db.close()
    for name in os.listdir(d):  # the store and its journal, byte for byte
        if name.startswith("s.db") and b"BOB-SECRET-LINE" in open(os.path.join(d, name), "rb").read():
            problems.append(f"the other user's line is in the store ({name})")
    if "BOB-SECRET-LINE" in r.stdout + r.stderr:
        problems.append("the other user's line is in the output")
    if problems:
        fail("; ".join(problems))
    print("check_path_confinement: a link out of the job directory, a FIFO and a procfs file are refused and reported; "
          "the honest file is read; nothing of the other user's file is stored")


if __name__ == "__main__":
    main()
