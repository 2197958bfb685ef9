#!/usr/bin/env python3
"""Regenerate the example bundles under examples/ (deterministic, stdlib only).

    python3 examples/make_examples.py            # all examples
    python3 examples/make_examples.py nvlink-xid149 time-limit
    python3 examples/make_examples.py --check     # also verify timestamps (monotonic, inside the window)

Each example is a directory with context.json, logs/<host>/<source>.log and README.md.
The logs are synthetic: line formats follow real driver / NCCL / PyTorch / Slurm output,
the contents (hosts, numbers, timings) are invented.
"""

import os
import shutil
import sys

sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _gen import scen_nvlink  # noqa: E402
from _gen import scen_others  # noqa: E402
from _gen import scen_catalog  # noqa: E402
from _gen.common import write_bundle  # noqa: E402

SCENARIOS = {
    scen_nvlink.NAME: (scen_nvlink.build, scen_nvlink.README),
}
SCENARIOS.update(scen_others.SCENARIOS)
SCENARIOS.update(scen_catalog.SCENARIOS)   # the labeled corpus for `culprit eval`

# Lines quoted verbatim (with file:line) at the end of each README: (file, substring, max hits).
KEY_LINES = {
    "nvlink-xid149": [("logs/node-02/kernel.log", "): 149, ", 5), ("logs/node-02/kernel.log", "): 154, ", 2),
                      ("logs/node-02/app.log", "uncorrectable NVLink error", 1),
                      ("logs/node-03/app.log", "NCCL WARN NET/IB : Got completion", 1),
                      ("logs/node-01/app.log", "srun: error:", 4),
                      ("logs/slurmctl/scheduler.log", "JobId=48213 WEXITSTATUS", 1)],
    "completed-clean": [("logs/node-01/app.log", "training complete", 1), ("logs/node-01/app.log", "WorkerState.SUCCEEDED", 1),
                        ("logs/slurmctl/scheduler.log", "JobId=50102 WEXITSTATUS", 1)],
    "time-limit": [("logs/node-01/app.log", "DUE TO TIME LIMIT", 2),
                   ("logs/slurmctl/scheduler.log", "Time limit exhausted", 1),
                   ("logs/slurmctl/scheduler.log", "JobId=51877 WTERMSIG", 1)],
    "cuda-oom-one-rank": [("logs/node-03/app.log", "torch.OutOfMemoryError", 1),
                          ("logs/node-03/app.log", "failed (exitcode: 1)", 1),
                          ("logs/node-02/app.log", "NCCL WARN NET/IB : Got completion", 1),
                          ("logs/node-01/app.log", "Watchdog caught collective operation timeout", 1),
                          ("logs/slurmctl/scheduler.log", "JobId=53310 WEXITSTATUS", 1)],
    "nccl-only-unattributed": [(f"logs/node-0{i}/app.log", "NCCL WARN", 1) for i in range(1, 5)] +
                              [("logs/slurmctl/scheduler.log", "JobId=55021 WEXITSTATUS", 1)],
    "missing-kernel-logs": [("logs/node-01/app.log", "srun: error: node-02", 1),
                            ("logs/node-03/app.log", "NCCL WARN NET/IB : Got completion", 1),
                            ("logs/node-01/app.log", "NCCL WARN NET/IB : Got completion", 1),
                            ("logs/slurmctl/scheduler.log", "JobId=56740 WEXITSTATUS", 1)],
}


def key_evidence(name, files):
    out = ["", "## Key lines (verbatim, file:line)", "```"]
    for rel, needle, maxn in KEY_LINES.get(name, []):
        n = 0
        for i, line in enumerate(files[rel].split("\n"), 1):
            if needle in line:
                out.append(f"{rel}:{i}: {line}")
                n += 1
                if n >= maxn:
                    break
    out.append("```")
    return "\n".join(out) + "\n"


def main(argv):
    check = "--check" in argv
    argv = [a for a in argv if a != "--check"]
    names = argv or list(SCENARIOS)
    for name in names:
        build, readme = SCENARIOS[name]
        root = os.path.join(HERE, name)
        for sub in ("logs", "traces"):
            if os.path.isdir(os.path.join(root, sub)):
                shutil.rmtree(os.path.join(root, sub))
        ctx, files = build()
        write_bundle(root, ctx, files, readme + key_evidence(name, files))
        if name in scen_catalog.EXPECTED:
            with open(os.path.join(root, "expected.json"), "w") as f:
                f.write(scen_catalog.EXPECTED[name])
        texts = {k: v for k, v in files.items() if isinstance(v, str)}
        dumps = {k: v for k, v in files.items() if isinstance(v, bytes)}
        total = sum(len(v) for v in files.values())
        print(f"{name}: {len(texts)} log files{f', {len(dumps)} Flight Recorder dumps' if dumps else ''}, {total / 1e6:.2f} MB")
        for k in sorted(texts):
            print(f"    {k}: {texts[k].count(chr(10))} lines")
        if check:
            from _gen.check import check_bundle
            problems, stats = check_bundle(root)
            for k, v in sorted(stats.items()):
                if v == "MISSING":
                    print(f"    {k}: not collected")
            for p in problems[:20]:
                print("    PROBLEM", p)
            if problems:
                sys.exit(f"{name}: {len(problems)} problems")


if __name__ == "__main__":
    main(sys.argv[1:])
