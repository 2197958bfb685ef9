#!/usr/bin/env python3
"""A fleet for bench/blueprint_fleet.sh: ended attempts of a 12,500-node
(100k-GPU) cluster whose evidence is in Loki, as `culprit run`'s static
discovery and the Loki test server (tests/blueprint/loki_server.py) read it.

Attempts, on disjoint nodes so that every one has its own evidence:
* TYPICAL attempts of 1, 2, 4 or 8 nodes (40/30/20/10 %), each failing as one
  of the bundled examples does (a GPU fallen off the bus, a double-bit ECC
  error, an InfiniBand link down, an uncontained ECC error, an NCCL port
  error), the example's first node the faulty one;
* one attempt of BIG nodes (1,250 = 10k GPUs);
* a fabric-fault burst: BURST attempts of 4 nodes that all ended within one
  minute (an NVLink-class fault that kills hundreds of jobs).
Every attempt's evidence is its template example's logs (kernel, app,
scheduler), host names replaced, stamped with the times their own text
carries (tests/blueprint/make_loki_fixture.py), so all attempts share the
templates' one-hour window: the fleet's attempts as seen by a log store,
not their spread over a day (which changes nothing the blueprint does).

Writes OUT/fixture.json (Loki streams: job="node-logs", host, source),
OUT/typical.yaml, OUT/big.yaml and OUT/burst.yaml (static workload lists for
the configuration), and prints a summary.

  generate_fleet.py OUT [--nodes 12500] [--typical 600] [--big 1250] [--burst 300] [--seed 7]
"""
import argparse
import json
import os
import random
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
sys.path.insert(0, os.path.join(root, "tests", "blueprint"))
from make_loki_fixture import stream_values  # noqa: E402

TEMPLATES = ["xid79-unnumbered", "xid48-dbe", "ib-link-down", "xid95-uncontained", "nccl-port-error-unrecovered"]
SIZES = [(1, 40), (2, 30), (4, 20), (8, 10)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--nodes", type=int, default=12500)
    ap.add_argument("--typical", type=int, default=600)
    ap.add_argument("--big", type=int, default=1250)
    ap.add_argument("--burst", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    templates = {}
    for t in TEMPLATES:
        d = os.path.join(root, "examples", t)
        ctx = json.load(open(os.path.join(d, "context.json")))
        nodes = [n if isinstance(n, str) else n["name"] for n in ctx["nodes"]]
        logs = {}  # template node -> source -> values (host "@HOST@")
        for n in nodes:
            for src in ("kernel", "app", "scheduler"):
                p = os.path.join(d, "logs", n, f"{src}.log")
                if os.path.exists(p):
                    logs.setdefault(n, {})[src] = stream_values(p, n, "@HOST@", ctx)
        templates[t] = (ctx, nodes, logs)

    next_node = [1]
    streams = []

    def take(count):
        first = next_node[0]
        next_node[0] += count
        if next_node[0] - 1 > a.nodes:
            sys.exit(f"generate_fleet: the attempts need {next_node[0] - 1} nodes, more than the fleet's {a.nodes}")
        return [f"gpu-{i:05d}" for i in range(first, first + count)]

    def attempt(wid, size, template):
        ctx, tnodes, logs = templates[template]
        nodes = take(size)
        for k, node in enumerate(nodes):
            src_node = tnodes[k] if k < len(tnodes) else tnodes[-1]  # beyond the template: its last (healthy) node
            for src, values in logs.get(src_node, {}).items():
                streams.append({"stream": {"job": "node-logs", "host": node, "source": src},
                                "values": [[ts, line.replace("@HOST@", node)] for ts, line in values]})
        first, last = nodes[0], nodes[-1]
        hostlist = first if size == 1 else f"gpu-[{first[4:]}-{last[4:]}]"
        return (f'  - id: "{wid}"\n    start: "{ctx["start"]}"\n    end: "{ctx["end"]}"\n'
                f'    nodes: "{hostlist}"\n    state: FAILED\n    exit_code: 1\n')

    weights = [w for _s, w in SIZES]
    typical = []
    for i in range(a.typical):
        size = rng.choices([s for s, _w in SIZES], weights)[0]
        typical.append(attempt(f"t{i:05d}", size, rng.choice(TEMPLATES)))
    big = [attempt("big-00001", a.big, "xid79-unnumbered")] if a.big else []
    burst = [attempt(f"b{i:05d}", 4, "xid79-unnumbered") for i in range(a.burst)]
    for name, items in (("typical", typical), ("big", big), ("burst", burst)):
        with open(os.path.join(a.out, f"{name}.yaml"), "w") as f:
            f.write("".join(items))
    with open(os.path.join(a.out, "fixture.json"), "w") as f:
        json.dump({"streams": streams}, f)
    print(f"generate_fleet: {len(typical)} typical, {len(big)} big ({a.big} nodes), {len(burst)} burst attempts on "
          f"{next_node[0] - 1} of {a.nodes} nodes; {len(streams)} streams, {sum(len(s['values']) for s in streams)} entries")


if __name__ == "__main__":
    main()
