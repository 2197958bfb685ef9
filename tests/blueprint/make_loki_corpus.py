#!/usr/bin/env python3
"""Every bundle under examples/ (the labelled examples and the real-incident
corpus, examples/real/) as Loki streams and static workloads, to prove that
the Loki collector's push-down line filter loses no event: the same
workloads read with and without the filter must give the same symptoms.

Each bundle gets a prefix (b000, b001, ...) on its host names, so bundles
with the same node names do not mix: stream labels job="corpus",
host="bNNN-<host>", source=<log file stem>. A line's time is the one its own
text carries (syslog, dmesg -T, ISO 8601 and Python logging, glog/PyTorch,
Slurm), else the line before's, else the workload's start. Bundles without
a start and end are left out (a Loki query needs a window).

  make_loki_corpus.py EXAMPLES_DIR FIXTURE.json WORKLOADS.yaml
"""
import datetime
import glob
import json
import os
import re
import sys

root, fixture_out, workloads_out = sys.argv[1:4]
MONTHS = {m: i + 1 for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split())}


def ns_of(rfc):
    d = datetime.datetime.fromisoformat(rfc.replace("Z", "+00:00"))
    return int(d.timestamp()) * 10**9 + d.microsecond * 1000


def stamp(line, year):
    def at(y, mo, d, h, mi, s, frac="0"):
        try:
            t = datetime.datetime(y, mo, d, h, mi, s, tzinfo=datetime.timezone.utc)
        except ValueError:
            return None
        return int(t.timestamp()) * 10**9 + int((frac + "000000000")[:9])
    m = re.match(r"(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d)", line)
    if m and m.group(1) in MONTHS:
        return at(year, MONTHS[m.group(1)], int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)))
    m = re.match(r"\[\w{3} (\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{4})\]", line)
    if m and m.group(1) in MONTHS:
        return at(int(m.group(6)), MONTHS[m.group(1)], int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)))
    m = re.search(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?", line[:48])
    if m:
        return at(*(int(g) for g in m.groups()[:6]), m.group(7) or "0")
    m = re.search(r"[EWIF](\d{1,2})(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+)", line[:64])
    if m:
        return at(year, int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)), m.group(6))
    return None


streams, workloads = [], []
# The labelled examples and the real incidents, each once: examples/real links
# the first-sight cases it holds, and the first-sight batches themselves are
# the same bundles again (or ones that do not match yet).
bundles = sorted({os.path.realpath(os.path.dirname(p))
                  for p in glob.glob(f"{root}/*/context.json") + glob.glob(f"{root}/real/*/context.json")})
for i, b in enumerate(bundles):
    ctx = json.load(open(f"{b}/context.json"))
    if not ctx.get("start") or not ctx.get("end") or not ctx.get("nodes"):
        continue
    prefix = f"b{i:03d}"
    year = int(ctx["start"][:4])
    for path in sorted(glob.glob(f"{b}/logs/*/*.log")):
        host = os.path.basename(os.path.dirname(path))
        source = os.path.basename(path)[:-4]
        last, vals = ns_of(ctx["start"]), []
        for raw in open(path, encoding="utf-8", errors="replace"):
            line = raw.rstrip("\n")
            t = stamp(line, year)
            if t is not None:
                last = t
            vals.append([str(last), line])
        if vals:
            streams.append({"stream": {"job": "corpus", "host": f"{prefix}-{host}", "source": source}, "values": vals})
    state = (ctx.get("terminal") or {}).get("state", "FAILED")
    # A node may be {"name", "aliases"} (docs/bundle.md); a static workload
    # lists names only, so lines under an alias's folder reach the run as
    # another host's. The test compares the run with itself (push-down on
    # and off), which that does not change.
    names = [n if isinstance(n, str) else n["name"] for n in ctx["nodes"]]
    workloads.append(f'      - {{id: "{prefix}-{os.path.basename(b)}", start: "{ctx["start"]}", end: "{ctx["end"]}", '
                     f'nodes: [{", ".join(prefix + "-" + n for n in names)}], state: {state}}}')
json.dump({"streams": streams}, open(fixture_out, "w"))
open(workloads_out, "w").write("\n".join(workloads) + "\n")
print(f"make_loki_corpus: {len(workloads)} bundles, {len(streams)} streams, {sum(len(s['values']) for s in streams)} entries")
