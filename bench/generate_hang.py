#!/usr/bin/env python3
"""Generate a hung job's bundle at scale: Flight Recorder dumps of every rank, and the
c10d watchdog lines of the ranks that timed out.

    bench/generate_hang.py OUT_DIR [--nodes 1024] [--gpus 8] [--kind straggler|desync]
                           [--laggard RANK] [--entries 4] [--no-traces] [--seed 1]

The job has three levels of process groups, created by every rank in the same order
(so every rank agrees on their ids, as torch.distributed's new_group gives them):
  pg 0            the world (default_pg)
  pg 1 .. N/8     tensor parallel: the 8 ranks of one node ("tp")
  then            data parallel: the ranks with the same local rank (tp index) across
                  groups of 32 nodes ("dp")
Each rank's dump (traces/<node>/nccl_trace_rank_<r>, as PyTorch's pickler writes it,
examples/_gen/flight_recorder.py) holds its last `--entries` collectives of each of
its three groups.

straggler: rank `--laggard` never starts its dp group's all_reduce #S; the other
members of that dp group started it and wait, the world's all_reduce after it never
comes, and every rank's watchdog times out (in the dp group or the world).
desync: in the laggard's tp group, the laggard calls all_gather where its 7 peers
call reduce_scatter at the same sequence id.

The label (`culprit eval`'s expected.json, with the hang detail the verdict must
give) is written to OUT_DIR/expected.json.
"""
import argparse
import json
import os
import random
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "_gen"))
import flight_recorder as FR  # noqa: E402

T_FAIL = 1764497400  # 2025-11-30T10:10:00Z, when the last collective was enqueued
TORCH = "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--nodes", type=int, default=1024)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--kind", choices=["straggler", "desync"], default="straggler")
    ap.add_argument("--laggard", type=int, default=4711)
    ap.add_argument("--entries", type=int, default=4)
    ap.add_argument("--dp-span", type=int, default=32, help="nodes per data-parallel group")
    ap.add_argument("--no-traces", action="store_true", help="the c10d lines only")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.nodes % a.dp_span:
        sys.exit("--nodes must be a multiple of --dp-span")
    world = a.nodes * a.gpus
    if not 0 <= a.laggard < world:
        sys.exit(f"--laggard must be a rank of the {world}")
    rng = random.Random(a.seed)
    nodes = [f"gpu{n:05d}" for n in range(a.nodes)]
    node_of = lambda r: nodes[r // a.gpus]
    if os.path.isdir(a.out):
        shutil.rmtree(a.out)
    os.makedirs(a.out)

    # Groups, in creation order: world, then every tp group, then every dp group.
    groups = [("0", "default_pg", list(range(world)))]
    tp_of, dp_of = {}, {}
    for n in range(a.nodes):
        members = list(range(n * a.gpus, (n + 1) * a.gpus))
        groups.append((str(len(groups)), "tp", members))
        for r in members:
            tp_of[r] = len(groups) - 1
    for block in range(a.nodes // a.dp_span):
        for local in range(a.gpus):
            members = [(block * a.dp_span + k) * a.gpus + local for k in range(a.dp_span)]
            groups.append((str(len(groups)), "dp", members))
            for r in members:
                dp_of[r] = len(groups) - 1

    lag = a.laggard
    S = {"world": 9000, "tp": 27000, "dp": 4700}  # the sequence id each group is at
    logs = {}
    traces = 0
    for r in range(world):
        mine = [(0, "world"), (tp_of[r], "tp"), (dp_of[r], "dp")]
        ents, status = [], {}
        for pg, level in mine:
            name, desc, _ = groups[pg]
            top = S[level]
            op = {"world": "nccl:all_reduce", "tp": "nccl:reduce_scatter", "dp": "nccl:all_reduce"}[level]
            last = top
            if a.kind == "straggler":
                # The laggard never started its dp all_reduce #top, so neither the world's;
                # its dp peers started it; everyone else's world all_reduce waits.
                if r == lag and level in ("dp", "world"):
                    last = top - 1
            for s in range(last - a.entries + 1, last + 1):
                if s < top:
                    state = "completed"
                elif level == "dp" and dp_of[r] == dp_of[lag]:
                    state = "started"  # the laggard's dp peers wait in it
                elif level == "world":
                    state = "scheduled" if a.kind == "straggler" else "completed"
                else:
                    state = "completed"
                if a.kind == "desync" and level == "tp" and s == top and tp_of[r] == tp_of[lag]:
                    state = "started"
                this_op = op
                if a.kind == "desync" and level == "tp" and s == top and r == lag:
                    this_op = "nccl:all_gather"
                caller = ("train_step", "/workspace/megatron/training.py", 812)
                if r == lag and s == last and a.kind == "straggler":
                    caller = ("save_checkpoint", "/workspace/megatron/checkpointing.py", 311)
                frames = [FR.frame("all_reduce", TORCH, 2501), FR.frame(*caller)]
                t_ns = (T_FAIL - (top - s) * 2) * 10**9 + r * 1000
                ents.append(FR.entry(len(ents), pg, (name, desc), s, this_op, state, [4194304], t_ns, frames))
            done = max(e["collective_seq_id"] for e in ents if e["pg_id"] == pg and e["state"] == "completed")
            status[pg] = (last, last if any(e["pg_id"] == pg and e["collective_seq_id"] == last and e["state"] != "scheduled"
                                           for e in ents) else last - 1, done)
        if not a.no_traces:
            d = FR.dump([groups[pg] for pg, _ in mine], status, ents)
            path = os.path.join(a.out, "traces", node_of(r), f"nccl_trace_rank_{r}")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(FR.torch_pickle(d))
            traces += 1
        # The watchdog line of every rank but the laggard (which is stuck elsewhere).
        if r != lag:
            level = "dp" if (a.kind == "straggler" and dp_of[r] == dp_of[lag]) else \
                    ("tp" if a.kind == "desync" and tp_of[r] == tp_of[lag] else "world")
            pg = {"world": 0, "tp": tp_of[r], "dp": dp_of[r]}[level]
            op = {"world": "ALLREDUCE", "tp": "_REDUCE_SCATTER_BASE", "dp": "ALLREDUCE"}[level]
            seq = S[level] + (1 if level == "world" and a.kind == "straggler" else 0)
            sec = 10 + rng.random() * 5
            logs.setdefault(node_of(r), []).append(
                f"[rank{r}]:[E1130 10:{20 + int(sec) // 60:02d}:{int(sec) % 60:02d}.{rng.randrange(10**9):09d} ProcessGroupNCCL.cpp:632] "
                f"[PG ID {pg} PG GUID {pg}({groups[pg][1]}) Rank {r}] Watchdog caught collective operation timeout: "
                f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=4194304, NumelOut=4194304, Timeout(ms)=600000) ran for "
                f"600{rng.randrange(100):03d} milliseconds before timing out.")
    for node, lines in logs.items():
        p = os.path.join(a.out, "logs", node, "app.log")
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write("\n".join(lines) + "\n")
    ctx = {"workload_id": f"hang-{a.kind}-{world}", "scheduler": "slurm",
           "start": "2025-11-30T08:00:00Z", "end": "2025-11-30T10:40:00Z",
           "nodes": [{"name": n, "ranks": f"{i * a.gpus}-{(i + 1) * a.gpus - 1}"} for i, n in enumerate(nodes)],
           "terminal": {"state": "FAILED", "exit_code": 1}}
    with open(os.path.join(a.out, "context.json"), "w") as f:
        json.dump(ctx, f)
    expect = {"kind": a.kind}
    if a.kind == "straggler":
        expect.update(laggard_ranks=[lag], laggard_nodes=[node_of(lag)])
    label = {"status": "unattributed", "domain": None, "sub_domain": None, "culprit_nodes": [], "hang": expect}
    with open(os.path.join(a.out, "expected.json"), "w") as f:
        json.dump(label, f, indent=2)
    print(f"{a.out}: {world} ranks on {a.nodes} nodes, {len(groups)} process groups, {traces} dumps, "
          f"{sum(len(v) for v in logs.values())} watchdog lines; expected hang {json.dumps(expect)}")


if __name__ == "__main__":
    main()
