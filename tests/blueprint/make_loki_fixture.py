#!/usr/bin/env python3
"""Builds the Loki test server's fixture from a bundled example's logs: a
64-node workload where node-17 carries the example's faulty node (a GPU that
fell off the bus, then NCCL timeouts everywhere), and the other 63 nodes the
example's healthy node with its host name replaced. Each log line becomes a
Loki entry stamped with the time its own text carries (syslog, dmesg -T,
Python logging, glog/PyTorch, Slurm); a line without a stamp gets the time of
the line before it. Stream labels: job="node-logs", host=<node>,
source=<the bundle's log source>.

A second group of nodes, node-[65-68], holds only the healthy node's logs
(NCCL timeouts without a cause), and node-68 has no kernel stream: the
collector must report it missing and the verdict must not blame the others.

  make_loki_fixture.py EXAMPLE_DIR OUT.json
"""
import datetime
import json
import re
import sys

MONTHS = {m: i + 1 for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split())}


def stamp(line, year):
    """The time a log line's own text carries (ns since the epoch), or None."""
    def at(y, mo, d, h, mi, s, frac="0"):
        t = datetime.datetime(y, mo, d, h, mi, s, tzinfo=datetime.timezone.utc)
        return int(t.timestamp()) * 10**9 + int((frac + "000000000")[:9])
    m = re.match(r"(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) ", line)  # syslog
    if m and m.group(1) in MONTHS:
        return at(year, MONTHS[m.group(1)], int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)))
    m = re.match(r"\[\w{3} (\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{4})\]", line)  # dmesg -T
    if m:
        return at(int(m.group(6)), MONTHS[m.group(1)], int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)))
    m = re.search(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?", line[:40])  # logging, Slurm
    if m:
        return at(*(int(g) for g in m.groups()[:6]), m.group(7) or "0")
    m = re.search(r"[EWIF](\d{1,2})(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+)", line[:60])  # glog / c10d
    if m:
        return at(year, int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)), m.group(6))
    return None


def stream_values(path, src_node, node, ctx):
    """A bundle log's lines as Loki values, `src_node` renamed `node`; a line
    without a stamp gets the time of the line before (the window's start
    before the first)."""
    year = int(ctx["start"][:4])
    vals, last = [], int(datetime.datetime.fromisoformat(ctx["start"].replace("Z", "+00:00")).timestamp()) * 10**9
    for raw in open(path, encoding="utf-8", errors="replace"):
        line = raw.rstrip("\n").replace(src_node, node)
        t = stamp(line, year)
        if t is not None:
            last = t
        vals.append([str(last), line])
    return vals


def main():
    ex, out = sys.argv[1], sys.argv[2]
    ctx = json.load(open(f"{ex}/context.json"))
    faulty, healthy = ctx["nodes"][0], ctx["nodes"][1]
    streams = []
    for i in range(1, 69):
        node = f"node-{i:02d}"
        src = faulty if i == 17 else healthy
        for source in ("kernel", "app", "scheduler"):
            if node == "node-68" and source == "kernel":
                continue
            streams.append({"stream": {"job": "node-logs", "host": node, "source": source},
                            "values": stream_values(f"{ex}/logs/{src}/{source}.log", src, node, ctx)})
    json.dump({"streams": streams}, open(out, "w"))
    print(f"make_loki_fixture: {len(streams)} streams, {sum(len(s['values']) for s in streams)} entries")


if __name__ == "__main__":
    main()
