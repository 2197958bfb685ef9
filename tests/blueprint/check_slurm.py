#!/usr/bin/env python3
"""Checks what `culprit run` stored for the jobs of check_slurm.sh against sacct.

usage: check_slurm.py DIR J_FAIL J_NODEFAIL J_REQUEUE J_CANCELLED J_TIMEOUT
"""
import datetime
import json
import re
import sqlite3
import sys

d, j_fail, j_nf, j_rq, j_can, j_to = sys.argv[1:7]
problems = []


def ns(text):
    t = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 10**9


# sacct's job records (not steps), one per run
runs = {}
for line in open(f"{d}/sacct.txt"):
    raw, state, code, start, end, nodes = line.rstrip("\n").split("|")
    if "." in raw:
        continue
    runs.setdefault(raw, []).append((state.split(" ")[0], code, ns(start), ns(end), nodes))
for r in runs.values():
    r.sort(key=lambda x: x[2])

db = sqlite3.connect(f"{d}/bp.db")
rows = db.execute(
    "select a.attempt_key, w.workload_id, a.attempt_no, a.state, a.exit_code, a.start_ns, a.end_ns, a.nodes, "
    "v.status, v.domain, v.sub_domain, v.culprit_nodes, v.verdict_json "
    "from attempts a join workloads w on w.id = a.workload_ref left join verdicts v on v.attempt_ref = a.id "
    "order by w.workload_id, a.attempt_no").fetchall()
stored = {}
for r in rows:
    stored.setdefault(r[1], []).append(r)

expect = {j_fail: ["FAILED"], j_nf: ["NODE_FAIL"], j_rq: ["NODE_FAIL", "FAILED"], j_can: ["CANCELLED"], j_to: ["TIMEOUT"]}
for job, states in expect.items():
    got = stored.get(job, [])
    if [g[3] for g in got] != states:
        problems.append(f"job {job}: attempts {[g[3] for g in got]}, expected {states}")
        continue
    for k, g in enumerate(got):
        key, _, no, state, exit_code, start, end, nodes, status, domain, sub, culprits, vj = g
        s_state, s_code, s_start, s_end, s_nodes = runs[job][k]
        if no != k + 1:
            problems.append(f"{key}: attempt number {no}, expected {k + 1}")
        if (state, start, end, nodes) != (s_state, s_start, s_end, s_nodes):
            problems.append(f"{key}: stored {(state, start, end, nodes)} but sacct says {(s_state, s_start, s_end, s_nodes)}")
        e, sig = (int(x) for x in s_code.split(":"))
        if exit_code != (e if e else (128 + sig if sig else 0)):
            problems.append(f"{key}: exit code {exit_code}, sacct {s_code}")
        if status is None:
            problems.append(f"{key}: no verdict")
            continue
        v = json.loads(vj)
        app = [c for c in v["coverage"].get("collectors", []) if c["collector"] == "files" and c["source"] == "app"]
        if not app or app[0]["nodes_covered"] != ["node1"]:
            problems.append(f"{key}: the job's output was not collected: {app}")
        print(f"  {key:34} {state:10} exit {exit_code:<4} nodes {nodes:6} "
              f"{v['workload']['start']} .. {v['workload']['end']}  -> {status} {domain or ''}/{sub or ''} {culprits}")


def verdict(job, k=0):
    return stored[job][k] if job in stored and len(stored[job]) > k else None


def sub_of(job, k=0):
    v = verdict(job, k)
    return v and v[10]


if sub_of(j_fail) != "cuda_oom" or verdict(j_fail)[11] != "node1":
    problems.append(f"job {j_fail}: expected software/cuda_oom on node1 from its output, got {verdict(j_fail) and verdict(j_fail)[8:12]}")
if sub_of(j_nf) != "scheduler.node_fail":
    problems.append(f"job {j_nf}: expected scheduler.node_fail, got {sub_of(j_nf)}")
if sub_of(j_rq, 0) != "scheduler.node_fail":
    problems.append(f"job {j_rq} run 1: expected scheduler.node_fail, got {sub_of(j_rq, 0)}")
# The requeued run failed on its own: the first run's node failure must not be blamed on it.
if sub_of(j_rq, 1) == "scheduler.node_fail":
    problems.append(f"job {j_rq} run 2: blamed on the first run's node failure")
if sub_of(j_to) != "scheduler.timeout":
    problems.append(f"job {j_to}: expected scheduler.timeout, got {sub_of(j_to)}")

# Time from job end to stored verdict, from the run's log lines.
lat = [float(m.group(2)) for m in re.finditer(r"culprit run: (\S+) \S+: .*?, ([0-9.]+) s after the job ended", open(f"{d}/run.log").read())]
if len(lat) < 6:
    problems.append(f"only {len(lat)} latency lines in the run log")
else:
    print(f"  job end -> stored verdict: min {min(lat):.1f} s, median {sorted(lat)[len(lat) // 2]:.1f} s, max {max(lat):.1f} s over {len(lat)} attempts")
lines = [json.loads(l) for l in open(f"{d}/verdicts.jsonl")]
if len(lines) != 6 or any(l["verdict"]["schema"] != "culprit.verdict/v1" for l in lines):
    problems.append(f"stdout had {len(lines)} verdict lines, expected 6")

for p in problems:
    print("  PROBLEM:", p)
sys.exit(1 if problems else 0)
