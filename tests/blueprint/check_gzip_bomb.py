#!/usr/bin/env python3
"""A gzip bomb in a collected file (issue 38, critical).

A 3.2 MB kern.log.1.gz decompressing to 960 MB of kernel lines inside the
workload's window, and a job output that is gzip under `format: auto`, used
to grow `culprit run` past 2 GB and abort it (bad_alloc) on every run, so
the attempts after it were never attributed. Under `ulimit -v` 5 GB the run
now exits 0, attributes the bomb's attempt and the one after it, and the
verdict's coverage names the cut (limit file_observation_bytes).

usage: check_gzip_bomb.py CULPRIT
"""
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import zlib


def fail(msg):
    print(f"check_gzip_bomb: FAIL: {msg}")
    sys.exit(1)


def bomb(path, line, repeat=12000, rounds=1000):
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as f:
        block = line * repeat
        for _ in range(rounds):
            f.write(c.compress(block))
        f.write(c.flush())


def main():
    culprit = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="culprit-gzbomb.") as t:
        os.makedirs(f"{t}/logs/node-01")
        os.makedirs(f"{t}/logs/node-02")
        os.makedirs(f"{t}/work")
        bomb(f"{t}/logs/node-01/kern.log.1.gz",
             b"2026-05-11T08:30:00+00:00 node-01 kernel: usb 1-1: a repeated harmless message\n")
        # A job's output with gzip bytes, read as `format: auto`.
        bomb(f"{t}/work/slurm-a.out", b"step 1 loss 0.25 a line of job output without a timestamp\n")
        with open(f"{t}/logs/node-02/kern.log", "w") as f:
            f.write("2026-05-11T08:30:00+00:00 node-02 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, "
                    "GPU has fallen off the bus.\n")
        with open(f"{t}/c.yaml", "w") as f:
            f.write(f"""cluster: x
discovery:
  static:
    workloads:
      - {{id: "a", nodes: [node-01], start: "2026-05-11T08:00:05Z", end: "2026-05-11T09:02:05Z", state: FAILED}}
      - {{id: "b", nodes: [node-02], start: "2026-05-11T08:00:05Z", end: "2026-05-11T09:02:05Z", state: FAILED}}
collectors:
  files:
    - {{source: kernel, path: "{t}/logs/{{node}}/kern.log*"}}
    - {{source: app, path: "{t}/work/slurm-{{job_id}}.out", host: "{{batch_node}}", format: auto}}
""")
        limit = 5000000 * 1024

        def cap():
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        p = subprocess.run([culprit, "run", "--config", f"{t}/c.yaml", "--once", "--store", f"sqlite:{t}/s.db",
                            "--format", "none"], preexec_fn=cap, capture_output=True, text=True, timeout=600)
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
        print(f"check_gzip_bomb: exit {p.returncode}, peak RSS {rss_mb} MB")
        if p.returncode != 0:
            fail(f"culprit run exited {p.returncode}: {p.stderr[-2000:]}")
        db = sqlite3.connect(f"{t}/s.db")
        rows = dict(db.execute("select a.attempt_key, v.verdict_json from verdicts v "
                               "join attempts a on a.id = v.attempt_ref").fetchall())
        if sorted(rows) != ["static/x/a", "static/x/b"]:
            fail(f"attributed: {sorted(rows)}")
        v = json.loads(rows["static/x/a"])
        reports = {r["source"]: r for r in v["coverage"]["collectors"]}
        for source in ("kernel", "app"):
            r = reports.get(source)
            if not r or r["status"] != "partial" or not any(
                    "limit file_observation_bytes exceeded" in e for e in r["errors"]):
                fail(f"the {source} report does not name the cut: {r}")
        if not any("cut at a limit" in w for w in v["coverage"]["warnings"]):
            fail(f"no coverage warning names the cut: {v['coverage']['warnings']}")
        b = json.loads(rows["static/x/b"])
        if b["status"] != "attributed":
            fail(f"the attempt after the bomb: {b['status']}")
        running = db.execute("select count(*) from runs where status = 'running'").fetchone()[0]
        if running:
            fail(f"{running} runs rows left 'running'")
        print(f"check_gzip_bomb: ok: both attempts attributed, the cut named: {reports['kernel']['errors'][0]}")


main()
