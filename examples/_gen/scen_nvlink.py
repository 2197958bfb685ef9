"""Example 1: nvlink-xid149 (flagship)."""

from .common import T, sec, rfc3339, KernelLog, rng_for, gpu_uuid, ts_pylog
from .hw import B200, node_ip
from .app import NodeApp, step_schedule
from .slurm import Slurmctld, Slurmd
from .fm import FabricManager
from . import kernel as K

NAME = "nvlink-xid149"
JOB = 48213
NODES = ["node-01", "node-02", "node-03", "node-04"]
HW = B200
START = T("2026-03-14T01:00:02")
XID_T = T("2026-03-14T02:03:17.402118")
END = T("2026-03-14T02:03:34")
COMM_ID = "0x7c6f2a1e9b3d4c10"
CULPRIT_GPU = 3                     # node-02 GPU 3, PCI 0000:61:00, global rank 11

CONFIG = [
    "model=llama-8b-style d_model=4096 n_layers=32 n_heads=32 seq_len=8192 vocab=128256",
    "parallel: fsdp(full_shard) world_size=32 grad_accum=1 micro_batch=2 global_batch=64 seqs",
    "optimizer=adamw lr=3e-4 betas=(0.9,0.95) wd=0.1 warmup=2000 schedule=cosine(120000)",
    "data=/lustre/data/tok/web-mix-v3 shards=4096 num_workers=6 prefetch_factor=4",
    "checkpoint: every 500 steps -> /lustre/ckpt/llm8b-r7 (resume=latest)",
    "env: NCCL_DEBUG=INFO NCCL_IB_TIMEOUT=18 NCCL_IB_RETRY_CNT=7 NCCL_SOCKET_NTHREADS=8 TORCH_NCCL_ASYNC_ERROR_HANDLING=3",
]


def build():
    files = {}
    boots = {"node-01": T("2026-03-11T09:12:40"), "node-02": T("2026-03-11T09:14:03"),
             "node-03": T("2026-03-11T09:13:21"), "node-04": T("2026-03-12T17:48:55")}
    styles = {"node-01": "dmesg_t", "node-02": "syslog", "node-03": "syslog", "node-04": "dmesg_t"}
    agent_pid = {"node-01": 52290, "node-02": 41851, "node-03": 40093, "node-04": 38412}

    # ------------------------------------------------------------------ app logs
    rows = step_schedule(rng_for(NAME, "steps"), T("2026-03-14T01:01:02.300"), 38001, XID_T, 1.95, 2.31)
    apps = {}
    for i, h in enumerate(NODES):
        rng = rng_for(NAME, "app", h)
        a = NodeApp(h, i, len(NODES), HW, rng, agent_pid[h], run="llm8b-r7", job_id=JOB)
        apps[h] = a
        t0 = T("2026-03-14T01:00:05.120") + sec(i * 0.047)
        if i == 0:
            a.log.add(T("2026-03-14T01:00:02.410"), "Job 48213 (llm8b-r7) on node-[01-04] starting at Sat Mar 14 01:00:02 UTC 2026")
            a.log.add(T("2026-03-14T01:00:02.411"), "+ srun --ntasks-per-node=1 --kill-on-bad-exit=0 torchrun --nnodes=4 "
                                                    "--nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=node-01:29500 "
                                                    "/workspace/llm/train.py --config /workspace/llm/configs/8b.yaml")
        a.torchrun_start(t0)
        ts = a.script_start(t0 + sec(3.7), CONFIG)
        a.py(ts + sec(1.2), 0, "INFO", "checkpoint", f"resuming from /lustre/ckpt/llm8b-r7/step_0038000 (rank{a.g(0)})")
        a.py(ts + sec(38.4 + rng.uniform(0, 1.5)), 0, "INFO", "checkpoint", "loaded model+optimizer state in 38.9s, step=38000, tokens_seen=159.38B")
        a.barrier_warning(T("2026-03-14T01:00:51.700") + sec(rng.uniform(0, 0.2)))
        tn = T("2026-03-14T01:00:52.300") + sec(rng.uniform(0, 0.3))
        # Benign: env var that only the socket transport reads.
        a.nccl_warn(tn, 0, "init.cc:1983", "Ignoring NCCL_SOCKET_NTHREADS=8: only used by the socket transport (NET/IB is in use)",
                    tid=a.pids[0])
        a.nccl_info(tn + sec(0.001), 0, "NCCL_IB_TIMEOUT set by environment to 18.", tid=a.pids[0])
        a.nccl_info(tn + sec(0.001), 0, "NCCL_IB_RETRY_CNT set by environment to 7.", tid=a.pids[0])
        a.nccl_init(tn, comm_id=COMM_ID)
        if h == "node-03":
            # Benign async event (unknown event type in NCCL >= 2.23.4), long before the failure.
            a.nccl_warn(tn + sec(2.3), 2, "transport/net_ib.cc:125", "NET/IB : mlx5_4:1 Got async event : GID table change",
                        tid=a.tid_proxy[2] + 1)

        def hook(app, r, rng=rng):
            if rng.random() < 0.0035:
                app.log.add(r["t"] + sec(0.4), f"{ts_pylog(r['t'] + sec(0.4))} WARNING [rank{app.g(0)}] data: slow read of "
                                                f"/lustre/data/tok/web-mix-v3/shard-{rng.randrange(4096):05d}.bin "
                                                f"({rng.uniform(3.1, 6.5):.1f}s); prefetch queue drained to 1/4")
        a.training(rows, log_every=1, mem=(141.2, HW["gpu_mem_gib"]), tokens_per_s=1.33e6, warn_hook=hook)

    # ------------------------------------------------------------------ the failure
    # node-02: rank 11 (GPU 3) hits the uncorrectable NVLink error, rank 10 follows; agent tears down.
    a2 = apps["node-02"]
    cuda_msg = ("CUDA error: uncorrectable NVLink error detected during the execution\n"
                "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
                "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
                "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")
    for l, dt in ((3, 0.519), (2, 0.742)):
        t = XID_T + sec(dt)
        head = f"[PG ID 0 PG GUID 0(default_pg) Rank {a2.g(l)}] Process group watchdog thread terminated with exception: "
        frames = a2._frames("", "", kind="cuda")
        a2.c10d(t, l, "E", "ProcessGroupNCCL.cpp:1896", head + cuda_msg + "\n" + frames)
        a2.log.add(t + sec(0.0008), "terminate called after throwing an instance of 'c10::DistBackendError'")
        a2.log.add(t + sec(0.0008), "  what():  " + head + cuda_msg + "\n" + frames)
    exits = {}
    exits["node-02"] = a2.torchrun_failure(XID_T + sec(1.02), 3, -6, other_failures=[(2, -6, XID_T + sec(0.95))],
                                  first_ts=XID_T + sec(0.93))

    # Peers: IB retry-exceeded completions from node-02's address, then remote errors.
    ip2 = node_ip("ib", 2)
    plan = {"node-01": [(T("2026-03-14T02:03:26.958"), 7, 12), (T("2026-03-14T02:03:27.103"), 3, 12),
                        (T("2026-03-14T02:03:27.442"), 0, 12)],
            "node-03": [(T("2026-03-14T02:03:26.614"), 0, 12), (T("2026-03-14T02:03:26.790"), 3, 12),
                        (T("2026-03-14T02:03:27.011"), 5, 12)],
            "node-04": [(T("2026-03-14T02:03:27.530"), 3, 12), (T("2026-03-14T02:03:27.861"), 6, 12)]}
    for h, evs in plan.items():
        a = apps[h]
        rng = a.rng
        last_err = {}
        for (t, l, st) in evs:
            port = rng.randrange(40000, 60000)
            last_err[l] = a.ib_completion_error(t, l, ip2, port, status=st, vendor=129,
                                                opcode=rng.choice([0, 1]), direction=rng.choice(["Recv", "Send"]))
            # A flush error usually follows on the same connection.
            a.ib_completion_error(t + sec(rng.uniform(0.002, 0.02)), l, ip2, port, status=5, vendor=249, opcode=0,
                                  direction="Recv")
        ls = sorted(last_err)
        tw = evs[0][0] + sec(rng.uniform(0.35, 0.6))
        for j, l in enumerate(ls):
            tw2 = tw + sec(0.13 * j)
            if j == 1:
                a.py_distbackend_traceback(tw2, l, last_err[l], 3356)
            else:
                a.watchdog_remote_error(tw2, l, last_err[l])
        t_end = evs[-1][0] + sec(rng.uniform(1.6, 2.2))
        first_l = ls[0]
        exits[h] = a.torchrun_failure(t_end, first_l, -6, first_ts=tw,
                                      other_failures=[(l, -6 if j != 1 else 1, tw + sec(0.13 * j))
                                                      for j, l in enumerate(ls) if l != first_l])

    # srun client output lands in the batch host's log (task i runs on node i).
    a1 = apps["node-01"]
    for h in sorted(exits, key=lambda x: exits[x]):
        a1.log.add(exits[h] + sec(0.012), f"srun: error: {h}: task {NODES.index(h)}: Exited with exit code 1")
    t_batch_end = max(exits.values()) + sec(2.35)
    assert t_batch_end < END

    for h in NODES:
        files[f"logs/{h}/app.log"] = apps[h].log.render()

    # ------------------------------------------------------------------ kernel logs
    for i, h in enumerate(NODES):
        rng = rng_for(NAME, "kernel", h)
        kl = KernelLog(h, boots[h], styles[h])
        K.boot(kl, HW, i + 1, rng)
        K.background(kl, HW, rng, boots[h] + sec(120), END, mean_gap_s=1100)
        K.job_epilogue_noise(kl, START + sec(0.3), rng)
        if h == "node-01":
            K.syn_flood(kl, T("2026-03-14T01:00:06.214"))
        if h == "node-02":
            K.nfs_blip(kl, T("2026-03-13T03:41:12.880"), secs=38)
            _xid_burst(kl, rng)
        if h == "node-03":
            K.corrected_mce(kl, T("2026-03-13T06:02:44.130"), rng)
            K.corrected_aer(kl, T("2026-03-14T01:41:07.551"))
        if h == "node-04":
            K.old_xid13(kl, T("2026-03-13T11:20:44.902"), HW["gpu_pci"][4], 188123)
            K.bond_flap(kl, HW, T("2026-03-14T01:22:31.207"))
        kl.items = [x for x in kl.items if x[0] <= END]
        files[f"logs/{h}/kernel.log"] = kl.render()

    # ------------------------------------------------------------------ fabric manager, slurmd
    for i, h in enumerate(NODES):
        rng = rng_for(NAME, "fm", h)
        fm = FabricManager(rng)
        fm.start(boots[h] + sec(22.5), HW["driver"])
        fm.inband(T("2026-03-14T01:00:53.100") + sec(rng.uniform(0, 0.3)))
        files[f"logs/{h}/fabricmanager.log"] = fm.log.render()

        sd = Slurmd(h, rng_for(NAME, "slurmd", h))
        sd.daemon_start(boots[h] + sec(43))
        if i == 0:
            sd.batch_start(T("2026-03-14T01:00:02.051"), JOB)
        sd.step_start(T("2026-03-14T01:00:03.914") + sec(i * 0.006), JOB, 0)
        texit = exits[h]
        sd.task_exit(texit, JOB, 0, i, agent_pid[h], 1)
        sd.step_done(texit + sec(0.21), JOB, 0)
        if i == 0:
            sd.batch_done(t_batch_end - sec(0.067), JOB, 256)
        files[f"logs/{h}/scheduler.log"] = sd.log.render()

    # ------------------------------------------------------------------ slurmctld
    sc = Slurmctld(rng_for(NAME, "slurmctld"))
    sc.background(T("2026-03-14T00:40:00"), END, NODES, 48107, not_responding=(T("2026-03-14T01:37:12.004"), "node-17"), avoid=(JOB,))
    sc.submit(T("2026-03-14T00:59:48.317"), JOB, "node-[01-04]", 896)
    sc.allocate(T("2026-03-14T01:00:01.902"), JOB, "node-[01-04]", 896)
    sc.complete(t_batch_end, JOB, wexit=1)
    files["logs/slurmctl/scheduler.log"] = sc.log.render()

    ctx = {"workload_id": str(JOB), "scheduler": "slurm", "start": rfc3339(START), "end": rfc3339(END),
           "nodes": NODES, "terminal": {"state": "FAILED", "exit_code": 1}}
    return ctx, files


def _xid_burst(kl, rng):
    pci = HW["gpu_pci"][CULPRIT_GPU]
    t = XID_T
    kl.k(t - sec(0.000022), f"NVRM: GPU at PCI:{pci}: {gpu_uuid(rng)}")
    kl.k(t - sec(0.000011), "NVRM: GPU Board Serial Number: 1655124038217")
    links = [(4, 0.0), (5, 0.000837), (12, 0.109285), (13, 0.109544), (16, 0.390983)]
    for link, dt in links:
        intr = (0x04 << 20) | 0x40000 | (link << 13) | 0x5c6   # subcode 4: link signal integrity
        kl.k(t + sec(dt), f"NVRM: Xid (PCI:{pci}): 149, NETIR_LINK_EVT  Fatal   XC0 i0 Link {link:02d} "
                          f"(0x{intr:08x} 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)")
    # Non-fatal receive-side errors on two NVLink peers of the failing GPU (same node).
    for g, link, dt in ((2, 3, 0.391207), (6, 11, 0.391655)):
        kl.k(t + sec(dt), f"NVRM: Xid (PCI:{HW['gpu_pci'][g]}): 145, RLW_RXPIPE Nonfatal XC0 i0 Link {link:02d} "
                          f"(0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)")
    # Preemptive channel cleanup of the training process on the failing GPU, tied to the NVLink fault.
    pid3 = 41851 + 19 + 3
    for k, ch in enumerate(range(0x8, 0xe)):
        kl.k(t + sec(0.283510 + k * 0.000913), f"NVRM: Xid (PCI:{pci}): 45, pid={pid3}, name=python3, Ch {ch:08x} caused by previous Xid 149")
    pid2 = 41851 + 19 + 2
    for k, ch in enumerate((0x8, 0x9)):
        kl.k(t + sec(0.512220 + k * 0.000877), f"NVRM: Xid (PCI:{HW['gpu_pci'][2]}): 45, pid={pid2}, name=python3, Ch {ch:08x} caused by previous Xid 145")
    kl.k(t + sec(0.404031), f"NVRM: Xid (PCI:{pci}): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)")
    kl.k(t + sec(1.527840), f"NVRM: Xid (PCI:{pci}): 154, GPU recovery action changed from 0x4 (Drain and Reset) to 0x1 (GPU Reset Required)")


README = """# nvlink-xid149 — NVLink5 fault on one node, NCCL fallout everywhere

**Job** 48213 (`llm8b-r7`), Slurm, 4 × DGX B200 (`node-01`..`node-04`, 8 GPUs each, 32 ranks, FSDP),
torch 2.7.0 / NCCL 2.26.2, driver 570.133.20. Window 2026-03-14T01:00:02Z – 02:03:34Z. Terminal state: FAILED, exit 1.

## Story
The job resumes from step 38000 and trains normally for about an hour (~1850 steps, checkpoints at 38500/39000/39500).
At **02:03:17.402 UTC** the kernel of `node-02` logs a burst of five fatal NVLink5 errors on GPU 3
(`PCI:0000:61:00`, links 04/05/12/13/16, XID 149 `NETIR_LINK_EVT Fatal`), followed within ~0.5 s by
non-fatal XID 145 on two peer GPUs of the same node, XID 45 channel teardowns of the training processes
(`caused by previous Xid 149` / `... 145`) and XID 154 (recovery action → GPU Reset Required).
Ranks 11 and 10 on node-02 die with `CUDA error: uncorrectable NVLink error`; torchrun on node-02 tears its group down.
~9–10 s later (IB retry timeout, NCCL_IB_TIMEOUT=18) ranks on `node-01`, `node-03`, `node-04` log
`NET/IB : Got completion from peer 10.10.2.12<…> with status=12 … vendor err 129`, then `ncclRemoteError` /
`DistBackendError`, and every torchrun prints a `ChildFailedError` whose "Root Cause" names one of its own
ranks (victims). slurmctld records `_job_complete: JobId=48213 WEXITSTATUS 1`.

## Verdict a careful engineer reaches
- status: **attributed**; domain **hardware**, sub_domain **nvlink** (NVLink5 link fault, XID 149 Fatal).
- culprit nodes: **[node-02]** (GPU 3, PCI 0000:61:00).
- cascade (demote): XID 145/45/154 on node-02 (sympathetic, point back to 149); CUDA error on node-02 ranks;
  all NCCL IB completion errors, ncclRemoteError, DistBackendError, watchdog exceptions, torchrun
  ChildFailedError blocks and `srun: error: … Exited with exit code 1` on node-01/03/04 (peer address 10.10.2.12 = node-02).

## Distractors that must not be blamed
- `ACPI BIOS Error (bug)` at boot on every node (days before the window).
- `NCCL WARN Ignoring NCCL_SOCKET_NTHREADS=8 …` (benign env var) on every node; `NCCL WARN NET/IB : mlx5_4:1 Got async event : GID table change` on node-03 at init.
- node-04: XID 13/43 from another user's job on 2026-03-13 (outside the window); front-end `bond0` slave link flap at 01:22:31 that recovered in 4 s (not the IB fabric NCCL uses).
- node-03: corrected memory error (EDAC CE) the day before; a corrected PCIe AER (RxErr) at 01:41:07.
- node-01: `TCP: request_sock_TCP: Possible SYN flooding on port 29500` at rendezvous.
- slurmctld: `error: Nodes node-17 not responding` (not in this job), `Zero Bytes were transmitted or received` RPC chatter.
- `mlx5_core … Port: 1 Link ACTIVE` lines at boot; c10d `using GPU N as device … currently unknown` warnings.

## Timestamp formats
kernel: syslog (`Mar 14 02:03:17 node-02 kernel: [233354.402118] …`) on node-02/03, `dmesg -T` (`[Sat Mar 14 02:03:17 2026] …`) on node-01/04;
app: Python logging `2026-03-14 02:03:17,921`, c10d `[rank11]:[E314 02:03:17.921…]`, torchrun `E0314 02:03:19.382000`,
NCCL WARN `[2026-03-14 02:03:26]` prefix, NCCL INFO untimestamped; scheduler/slurmctld `[2026-03-14T02:03:33.105]`;
fabricmanager `[Mar 14 2026 01:00:53]`.
"""
