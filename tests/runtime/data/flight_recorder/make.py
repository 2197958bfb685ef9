#!/usr/bin/env python3
"""Writes the Flight Recorder dumps tests/runtime/flight_recorder_test.cpp reads.

    python3 tests/runtime/data/flight_recorder/make.py

Three ranks of one job, 2 groups (the default group of ranks 0-3 and a "tp" group of
ranks 2-3), in the three forms PyTorch leaves: the C++ pickler's bytes (rank 0), the
same value pickled again by Python with protocol 4 (rank 1), and dump_json (rank 2).
Rank 3 left no dump. Layout and bytes: examples/_gen/flight_recorder.py.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "examples", "_gen"))
import flight_recorder as F  # noqa: E402

T0 = 1764497400_000000000
TORCH = "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py"
groups = [("0", "default_pg", [0, 1, 2, 3]), ("1", "tp", [2, 3])]


def dump_of(rank):
    ents = []
    for s in (41, 42, 43):
        state = "completed" if s < 43 else "started"
        frames = [F.frame("all_reduce", TORCH, 2501), F.frame("train_step", "/workspace/train.py", 118),
                  F.frame("main", "/workspace/train.py", 301)]
        ents.append(F.entry(len(ents), 0, ("0", "default_pg"), s, "nccl:all_reduce", state, [1024, 8],
                            T0 + s * 10**9, frames))
    if rank >= 2:
        ents.append(F.entry(len(ents), 1, ("1", "tp"), 7, "nccl:all_gather", "scheduled", [4096], T0 + 50 * 10**9,
                            [F.frame("all_gather", TORCH, 3001)]))
    status = {0: (43, 43, 42)}
    if rank >= 2:
        status[1] = (7, 6, 6)
    return F.dump(groups if rank >= 2 else groups[:1], status, ents)


open(os.path.join(HERE, "nccl_trace_rank_0"), "wb").write(F.torch_pickle(dump_of(0)))
open(os.path.join(HERE, "nccl_trace_rank_1"), "wb").write(F.python_pickle(dump_of(1), protocol=4))
open(os.path.join(HERE, "nccl_trace_rank_2"), "wb").write(F.dump_json(dump_of(2)))
