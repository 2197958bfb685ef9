"""Sanity checks for generated bundles: every timestamped line parses, is monotonic within its
file and is not after the window end; app/scheduler lines of workload nodes are inside the window."""

import json
import os
import re
from datetime import datetime, timezone

UTC = timezone.utc
MONS = {m: i + 1 for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split())}

PATTERNS = [
    ("pylog", re.compile(r"^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d),(\d{3}) ")),
    ("nccl", re.compile(r"^\[(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\] ")),
    ("c10d", re.compile(r"^\[rank\d+\]:\[[EWI](\d{1,2})(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})\d{3} ")),
    ("glog", re.compile(r"^[EWI](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6}) \d+ ")),
    ("slurm", re.compile(r"^\[(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{3})\] ")),
    ("syslog", re.compile(r"^(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) \S+ ")),
    ("dmesg_t", re.compile(r"^\[\w{3} (\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{4})\] ")),
    ("fm", re.compile(r"^\[(\w{3}) (\d\d) (\d{4}) (\d\d):(\d\d):(\d\d)\] ")),
]


def parse(line, year):
    for kind, rx in PATTERNS:
        m = rx.match(line)
        if not m:
            continue
        g = m.groups()
        if kind in ("pylog", "slurm"):
            return datetime(*map(int, g[:6]), int(g[6]) * 1000, tzinfo=UTC)
        if kind == "nccl":
            return datetime(*map(int, g[:6]), tzinfo=UTC)
        if kind in ("c10d", "glog"):
            return datetime(year, int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]), int(g[5]), tzinfo=UTC)
        if kind == "syslog":
            return datetime(year, MONS[g[0]], int(g[1]), int(g[2]), int(g[3]), int(g[4]), tzinfo=UTC)
        if kind == "dmesg_t":
            return datetime(int(g[5]), MONS[g[0]], int(g[1]), int(g[2]), int(g[3]), int(g[4]), tzinfo=UTC)
        if kind == "fm":
            return datetime(int(g[2]), MONS[g[0]], int(g[1]), int(g[3]), int(g[4]), int(g[5]), tzinfo=UTC)
    return None


def check_bundle(root):
    ctx = json.load(open(os.path.join(root, "context.json")))
    start = datetime.strptime(ctx["start"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    end = datetime.strptime(ctx["end"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    problems, stats = [], {}
    for host in sorted(os.listdir(os.path.join(root, "logs"))):
        for fn in sorted(os.listdir(os.path.join(root, "logs", host))):
            path = os.path.join(root, "logs", host, fn)
            last, n, nts = None, 0, 0
            for ln, line in enumerate(open(path), 1):
                n += 1
                t = parse(line, start.year)
                if t is None:
                    continue
                nts += 1
                # second-resolution formats may legitimately trail a sub-second stamp of the same second
                if last is not None and t < last.replace(microsecond=0):
                    problems.append(f"{path}:{ln}: time goes backwards ({t} < {last})")
                last = max(last or t, t)
                if t > end:
                    problems.append(f"{path}:{ln}: after window end ({t} > {end})")
                if fn in ("app.log",) and t < start.replace(microsecond=0):
                    problems.append(f"{path}:{ln}: app line before window start ({t})")
            stats[f"{host}/{fn}"] = (n, nts)
    for h in ctx["nodes"]:
        h = h["name"] if isinstance(h, dict) else h
        if not os.path.isdir(os.path.join(root, "logs", h)):
            stats[f"{h}/*"] = "MISSING"
    return problems, stats
