"""Labeled scenario corpus for `culprit eval` (one bundle per failure type).

Each bundle: 2-4 H100 nodes, a kernel log with a boot sequence and benign background
noise, a training app log, slurmd/slurmctld lines, and the incident lines injected at
fixed offsets. Everything is seeded by the bundle name (deterministic). The incident
line shapes follow the public formats named in stdlib-rules/*.attr.
"""

import json

from .common import T, sec, KernelLog, rng_for, ts_pylog, ts_slurm, ts_fm, rfc3339, c10_date
from .hw import H100, node_ip
from . import kernel as K
from . import flight_recorder as FR

START = T("2026-05-11T08:00:05")
FAIL = START + sec(3000)          # incidents happen around here
END = FAIL + sec(720)


def _app(host, idx, n, rng, t0, t1, completed):
    lines = []
    lines.append((t0, f"{ts_pylog(t0)} INFO [rank{idx * 8}] train: world_size={n * 8} model=llm8b seq_len=4096"))
    lines.append((t0 + sec(8), f"{host}:{40000 + idx}:{40000 + idx} [0] NCCL INFO NCCL version 2.21.5+cuda12.4"))
    lines.append((t0 + sec(8.2), f"{host}:{40000 + idx}:{40100 + idx} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB "
                                 f"[1]mlx5_3:1/IB ; OOB ibp26s0:{node_ip('ib', idx + 1)}<0>"))
    lines.append((t0 + sec(8.3), f"{host}:{40000 + idx}:{40000 + idx} [0] NCCL INFO NET/Plugin: Could not find: "
                                 f"libnccl-net.so. Using internal network plugin."))
    t = t0 + sec(12)
    step = 1
    while t < t1:
        loss = 2.9 * (0.999 ** step) + rng.uniform(-0.02, 0.02)
        lines.append((t, f"{ts_pylog(t)} INFO [rank{idx * 8}] train: step {step} loss {loss:.4f} "
                         f"grad_norm {rng.uniform(0.6, 1.1):.3f} lr 2.0e-05"))
        if rng.random() < 0.03:
            lines.append((t + sec(0.2), f"[deepspeed] OVERFLOW! Rank {idx * 8} Skipping step. Attempted loss scale: "
                                        f"65536, reducing to 32768"))
        step += 10
        t = t + sec(60 + rng.uniform(-1, 1))
    if completed:
        lines.append((t1, f"{ts_pylog(t1)} INFO [rank{idx * 8}] train: training complete"))
    return lines


def build_case(spec):
    name = spec["name"]
    # The scheduler's end time: 12 minutes after the incident unless the spec says when the
    # job was stopped (a deadline's kill is its end).
    end = FAIL + sec(spec.get("end_after", 720))
    n = spec.get("nodes", 2)
    nodes = [f"node-{i + 1:02d}" for i in range(n)]
    job = spec["job"]
    state, code = spec.get("terminal", ("FAILED", 1))
    missing = set(spec.get("missing", ()))
    files = {}
    end_app = FAIL if state != "COMPLETED" else FAIL + sec(30)
    for i, h in enumerate(nodes):
        rng = rng_for(name, h)
        if (h, "kernel") not in missing and h not in missing:
            boot = START - sec(86400 * 2 + 3600 * i)
            kl = KernelLog(h, boot, "dmesg_t" if i % 2 else "syslog")
            K.boot(kl, H100, i + 1, rng)
            K.background(kl, H100, rng, boot + sec(120), end, mean_gap_s=4000, kernel_gap_s=3000)
            for (node, src, off, text) in spec["incident"]:
                if node == h and src == "kernel":
                    kl.k(FAIL + sec(off), text)
            for (node, off, fn) in spec.get("kernel_fn", ()):
                if node == h:
                    fn(kl, FAIL + sec(off), rng)
            kl.items = [x for x in kl.items if x[0] <= end]
            files[f"logs/{h}/kernel.log"] = kl.render()
        if h not in missing:
            lines = _app(h, i, n, rng, START + sec(3), end_app, state == "COMPLETED") if spec.get("ran", True) else []
            for (node, src, off, text) in spec["incident"]:
                if node == h and src == "app":
                    lines.append((FAIL + sec(off), text))
            lines.sort(key=lambda x: x[0])
            if lines:  # a job that never started on this node left no application output
                files[f"logs/{h}/app.log"] = "".join(line + "\n" for _, line in lines)
            sd = [f"{ts_slurm(START)} [{job}.0] task/affinity: task_p_pre_launch: Using sched_affinity for tasks"]
            for (node, src, off, text) in spec["incident"]:
                if node == h and src == "scheduler":
                    sd.append(f"{ts_slurm(FAIL + sec(off))} {text}")
            files[f"logs/{h}/scheduler.log"] = "\n".join(sd) + "\n"
            fm = [(node, off, text) for (node, src, off, text) in spec["incident"] if node == h and src == "fabricmanager"]
            if fm:
                body = [f"{ts_fm(START - sec(7200))} [INFO] [tid 2841] Fabric Manager version 550.90.07 is running"]
                body += [f"{ts_fm(FAIL + sec(off))} {text}" for (_, off, text) in fm]
                files[f"logs/{h}/fabricmanager.log"] = "\n".join(body) + "\n"
    ctl = [f"{ts_slurm(START - sec(40))} _slurm_rpc_submit_batch_job: JobId={job} InitPrio=4294901700 usec=812",
           f"{ts_slurm(START)} sched: Allocate JobId={job} NodeList=node-[01-{n:02d}] #CPUs={n * 224} Partition=gpu"]
    for (node, src, off, text) in spec["incident"]:
        if node == "slurmctl":
            ctl.append(f"{ts_slurm(FAIL + sec(off))} {text}")
    ctl.append(f"{ts_slurm(end - sec(5))} _job_complete: JobId={job} "
               + ("done" if state == "COMPLETED" else f"WEXITSTATUS {code}"))
    files["logs/slurmctl/scheduler.log"] = "\n".join(ctl) + "\n"
    ctx = {"workload_id": str(job), "scheduler": "slurm", "start": rfc3339(START), "end": rfc3339(end),
           "nodes": nodes, "terminal": {"state": state, "exit_code": code}}
    if spec.get("ranks_per_node"):  # the layout, as a collector that knows the launch gives it
        k = spec["ranks_per_node"]
        ctx["nodes"] = [{"name": h, "ranks": f"{i * k}-{i * k + k - 1}"} for i, h in enumerate(nodes)]
    if spec.get("aliases"):  # each node's address as NCCL prints it (RAS names processes by address)
        ctx["nodes"] = [dict(x if isinstance(x, dict) else {"name": x}, aliases=[f"10.0.0.{i + 1}"])
                        for i, x in enumerate(ctx["nodes"])]
    if spec.get("traces"):
        files.update(spec["traces"](nodes))
    if spec.get("ras"):
        files.update(spec["ras"](nodes))
    return ctx, files


def readme(spec):
    e = spec["expected"]
    verdict = e["status"]
    if e["status"] == "attributed":
        verdict += f" · {e['domain']} · {e['sub_domain']} · culprits {e['culprit_nodes']}"
    out = [f"# {spec['name']}", "", spec["story"], "", f"**Expected verdict:** {verdict}", ""]
    if spec.get("missing"):
        out.append(f"**Not collected:** {', '.join(sorted(str(m) for m in spec['missing']))}.")
        out.append("")
    out.append("Generated by `examples/_gen/scen_catalog.py` (synthetic; line shapes follow the public formats "
               "named in `stdlib-rules/*.attr`).")
    out.append("")
    return "\n".join(out)


Q = "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."
IBERR = "NCCL WARN NET/IB : Got completion from peer 10.10.1.12<43341> with status=12 opcode=0 len=0 vendor err 129 (Recv)"


def nccl_noise(nodes, skip, off=4.0):
    out = []
    for i, h in enumerate(nodes):
        if h == skip:
            continue
        out.append((h, "app", off + i * 0.3, f"{h}:{40000 + i}:{40200 + i} [3] transport/net_ib.cc:1696 {IBERR}"))
        out.append((h, "app", off + i * 0.3 + 0.1, f"[rank{i * 8 + 3}]: {Q}"))
    return out


def wd(h, rank, off):
    t = FAIL + sec(off)
    return (h, "app", off, f"[rank{rank}]:[E{c10_date(t)} {t:%H:%M:%S}.{t.microsecond:06d}000 ProcessGroupNCCL.cpp:616] [Rank {rank}] Watchdog caught "
                           f"collective operation timeout: WorkNCCL(SeqNum=812, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                           f"Timeout(ms)=600000) ran for 600042 milliseconds before timing out.")


N2, N3, N4 = ["node-01", "node-02"], ["node-01", "node-02", "node-03"], ["node-01", "node-02", "node-03", "node-04"]


def att(domain, sub, nodes):
    return {"status": "attributed", "domain": domain, "sub_domain": sub, "culprit_nodes": nodes}


UNATT = {"status": "unattributed", "domain": None, "sub_domain": None, "culprit_nodes": []}

def fr_traces(laggard, ranks_per_node=8, seq=4711, missing=False):
    """Flight Recorder dumps of every rank (traces/<node>/nccl_trace_rank_<r>), as PyTorch's pickler
    writes them: the default group's all_reduces up to `seq`, started and never finished on every
    rank but `laggard`, whose last is `seq - 1`, called from its data loader; with `missing`, the
    laggard wrote no dump at all (hung in a CUDA call)."""
    def build(nodes):
        n = len(nodes) * ranks_per_node
        t0 = int((FAIL - sec(610)).timestamp()) * 10**9
        torch_c10d = "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py"
        out = {}
        for r in range(n):
            if missing and r == laggard:
                continue
            ents = []
            last = seq - 1 if r == laggard else seq
            for k, s in enumerate(range(seq - 5, last + 1)):
                state = "started" if s == seq else "completed"
                caller = ("next_batch", "/workspace/data/loader.py", 212) if (r == laggard and s == last) else ("train_step", "/workspace/train.py", 118)
                frames = [FR.frame("all_reduce", torch_c10d, 2501), FR.frame(*caller), FR.frame("main", "/workspace/train.py", 301)]
                ents.append(FR.entry(k, 0, ("0", "default_pg"), s, "nccl:all_reduce", state, [1048576],
                                     t0 + (s - seq) * 1_200_000_000 + r * 1000, frames))
            d = FR.dump([("0", "default_pg", list(range(n)))], {0: (last, last, seq - 1)}, ents)
            out[f"traces/{nodes[r // ranks_per_node]}/nccl_trace_rank_{r}"] = FR.torch_pickle(d)
        return out
    return build


def ras_json(unresponsive, ranks_per_node=8, ops=4711, at=640):
    """What an epilog's `ncclras -f json` (NCCL >= 2.28.7) printed on the first node while the job
    hung: the layout of NVIDIA/nccl src/ras/client_support.cc (jsonWriteHeader ... jsonWriteFooter).
    The world communicator and one communicator per node (tensor parallel); every rank answered
    with `ops` AllReduce operations launched but `unresponsive`, which RAS could not reach."""
    def build(nodes):
        n = len(nodes) * ranks_per_node
        t = FAIL + sec(at)
        funcs = ["Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"]

        def rank(r, comm_rank, counts):
            node = r // ranks_per_node
            return {"rank": comm_rank, "host": f"10.0.0.{node + 1}", "pid": 483000 + r, "cuda_dev": r % ranks_per_node,
                    "nvml_dev": r % ranks_per_node,
                    "status": {"init_state": 0, "async_error": 0, "finalize_called": False, "destroy_flag": False,
                               "abort_flag": False},
                    "collective_counts": dict(zip(funcs, counts))}

        def missing(r, comm_rank):
            node = r // ranks_per_node
            return {"rank": comm_rank, "host": f"10.0.0.{node + 1}", "pid": 483000 + r, "cuda_dev": r % ranks_per_node,
                    "nvml_dev": r % ranks_per_node, "status": {"unresponsive": True, "considered_dead": False}}

        def comm(h, members, counts):
            ranks = [rank(r, k, counts) for k, r in enumerate(members) if r != unresponsive]
            gone = [missing(r, k) for k, r in enumerate(members) if r == unresponsive]
            return {"hash": f"0x{h:016x}", "secondary_hash": f"0x{h ^ 0x5a5a:x}:0x{h ^ 0xa5a5:x}", "size": len(members),
                    "ranks_count": len(ranks), "missing_ranks_count": len(gone), "ranks": ranks, "missing_ranks": gone}

        comms = [comm(0x7f3a9c2e11d04b21, list(range(n)), [2, 0, 0, 0, ops])]
        for i in range(len(nodes)):
            comms.append(comm(0x1c0ffee000000000 + i, list(range(i * ranks_per_node, (i + 1) * ranks_per_node)),
                              [0, 0, 2 * ops, ops, 0]))
        doc = {"nccl_version": "2.28.9", "cuda_runtime_version": 12090, "cuda_driver_version": 12090,
               "timestamp": f"{t:%Y-%m-%d %H:%M:%S}", "communicators_count": len(comms), "communicators": comms,
               "ras": {"collection_time_sec": 5.004, "timeouts_count": 1}}
        return {f"logs/{nodes[0]}/ras.log": json.dumps(doc, indent=2) + "\n"}
    return build


def wd_pg(h, rank, off, seq=4711):
    t = FAIL + sec(off)
    return (h, "app", off, f"[rank{rank}]:[E{c10_date(t)} {t:%H:%M:%S}.{t.microsecond:06d}000 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID 0(default_pg) Rank {rank}] "
                           f"Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1048576, "
                           f"NumelOut=1048576, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.")


SPECS = [
    dict(name="xid48-dbe", job=60101, nodes=3, expected=att("hardware", "gpu.memory", ["node-02"]),
         story="A double-bit ECC error (XID 48) on one GPU of node-02; the other nodes report IB completion errors "
               "and ncclRemoteError (loud, but downstream).",
         incident=[("node-02", "kernel", 0, "NVRM: Xid (PCI:0000:3b:00): 48, pid=51234, name=python3, An uncorrectable "
                                             "double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0."),
                   ("node-02", "kernel", 0.4, "NVRM: Xid (PCI:0000:3b:00): 45, pid=51234, name=python3, Ch 00000010 caused by previous Xid 48")]
         + nccl_noise(N3, "node-02")),
    dict(name="xid79-unnumbered", job=60102, nodes=2, expected=att("hardware", "gpu.fallen_off_bus", ["node-01"]),
         story="Node-01 logs only the unnumbered fallen-off-the-bus message; node-02 times out in its watchdog.",
         incident=[("node-01", "kernel", 0, "NVRM: GPU 0000:b3:00.0: GPU has fallen off the bus."), wd("node-02", 11, 600)]),
    dict(name="xid119-gsp", job=60103, nodes=2, expected=att("hardware", "gpu.firmware", ["node-02"]),
         story="GSP RPC timeout (XID 119) on node-02; NCCL noise on node-01.",
         incident=[("node-02", "kernel", 0, "NVRM: Xid (PCI:0000:cb:00): 119, pid=452531, name=python3, Timeout after 6s "
                                             "of waiting for RPC response from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20802a02 0x8).")]
         + nccl_noise(N2, "node-02")),
    dict(name="xid109-ctxsw", job=60104, nodes=2, expected=att("hardware", "gpu.timeout", ["node-01"]),
         story="Context switch timeout (XID 109) on one GPU of node-01.",
         incident=[("node-01", "kernel", 0, "NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, Ch 00000008, "
                                             "errorString CTX SWITCH TIMEOUT, Info 0x58005")] + nccl_noise(N2, "node-01")),
    dict(name="xid13-user-kernel", job=60105, nodes=2, expected=att("software", "cuda_error", ["node-01", "node-02"]),
         story="XID 13 on GPUs of both nodes at the same moment: the job's own kernel is out of range (app bug), not hardware.",
         incident=[("node-01", "kernel", 0, "NVRM: Xid (PCI:0000:1b:00): 13, pid=2210, name=python3, Graphics SM Warp "
                                             "Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address"),
                   ("node-02", "kernel", 0.2, "NVRM: Xid (PCI:0000:3b:00): 13, pid=3310, name=python3, Graphics SM Warp "
                                               "Exception on (GPC 2, TPC 0, SM 1): Out Of Range Address"),
                   ("node-02", "kernel", 0.3, "NVRM: Xid (PCI:0000:3b:00): 43, pid=3310, name=python3, Ch 00000010")]),
    dict(name="xid-unknown", job=60106, nodes=2, expected=UNATT,
         story="An XID number newer than the catalog (201) and NCCL errors: reported, not blamed.",
         incident=[("node-02", "kernel", 0, "NVRM: Xid (PCI:0000:3b:00): 201, pid=3310, name=python3, unknown event")]
         + nccl_noise(N2, "node-02")),
    dict(name="sxid-nvswitch-fatal", job=60107, nodes=3, expected=att("hardware", "nvswitch", ["node-03"]),
         story="Fatal NVSwitch SXid on node-03 (kernel and Fabric Manager agree); every rank reports NCCL errors.",
         incident=[("node-03", "kernel", 0, "nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Fatal, Link 30 LTSSM Fault Up"),
                   ("node-03", "fabricmanager", 0.5, "[ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on NVSwitch "
                                                      "pci bus id 00000000:07:00.0 physical id 2 port 30")] + nccl_noise(N3, None)),
    dict(name="fabric-manager-start", job=60108, nodes=2, expected=att("infrastructure", "fabric_manager", ["node-01"]),
         story="Fabric Manager on node-01 stops on a driver version mismatch; CUDA init then fails.",
         incident=[("node-01", "fabricmanager", -5, "[ERROR] [tid 12] fabric manager NVIDIA GPU driver interface version "
                                                     "535.104.05 don't match with driver version 535.129.03. Please update "
                                                     "with matching NVIDIA driver package.")] + nccl_noise(N2, "node-01")),
    dict(name="ib-link-down", job=60109, nodes=3, expected=att("hardware", "infiniband", ["node-02"]),
         story="mlx5_3 on node-02 goes DOWN and never comes back; node-01's port flaps and recovers (noise).",
         incident=[("node-01", "kernel", -900, "mlx5_core 0000:3c:00.0 mlx5_3: Port: 1 Link DOWN"),
                   ("node-01", "kernel", -896, "mlx5_core 0000:3c:00.0 mlx5_3: Port: 1 Link ACTIVE"),
                   ("node-02", "kernel", 0, "mlx5_core 0000:3c:00.0 mlx5_3: Port: 1 Link DOWN")] + nccl_noise(N3, "node-02")),
    dict(name="kernel-oom-killer", job=60110, nodes=2, expected=att("software", "host_oom", ["node-02"]),
         story="The kernel OOM killer kills a rank on node-02 (dataloader workers grew); peers report NCCL errors.",
         incident=[("node-02", "kernel", 0, "Out of memory: Killed process 51234 (python3) total-vm:912345678kB, "
                                             "anon-rss:512345678kB, file-rss:0kB, shmem-rss:0kB, UID:1043 pgtables:1234567kB oom_score_adj:0")]
         + nccl_noise(N2, "node-02")),
    dict(name="mce-host-memory", job=60111, nodes=2, expected=att("hardware", "host.memory", ["node-01"]),
         story="An uncorrected DIMM error on node-01; corrected MCEs earlier on node-02 are noise.",
         incident=[("node-01", "kernel", 0, "EDAC MC1: 1 UE memory read error on CPU_SrcID#0_MC#1_Chan#0_DIMM#0 "
                                             "(channel:0 slot:0 page:0x12 offset:0x0)")] + nccl_noise(N2, "node-01"),
         kernel_fn=[("node-02", -1800, K.corrected_mce)]),
    dict(name="pcie-aer-fatal", job=60112, nodes=2, expected=att("hardware", "pcie", ["node-02"]),
         story="A fatal uncorrected PCIe error below a GPU's switch on node-02.",
         incident=[("node-02", "kernel", 0, "pcieport 0000:00:01.1: AER: Uncorrected (Fatal) error received: 0000:02:00.0")]
         + nccl_noise(N2, "node-02"), kernel_fn=[("node-01", -1200, lambda kl, t, r: K.corrected_aer(kl, t))]),
    dict(name="python-keyerror", job=60113, nodes=2, expected=att("software", "application_exception", []),
         story="A KeyError in the data pipeline of one rank; the others see DistBackendError and SIGTERM teardown.",
         incident=[("node-02", "app", 0, "[rank9]: Traceback (most recent call last):"),
                   ("node-02", "app", 0.01, "[rank9]:   File \"/workspace/llm/data.py\", line 88, in __getitem__"),
                   ("node-02", "app", 0.02, "[rank9]: KeyError: 'input_ids'"),
                   ("node-01", "app", 5, "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/"
                                         "c10d/ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.21.5"),
                   ("node-01", "app", 6, "torch.distributed.elastic.multiprocessing.api.SignalException: Process 40000 got signal: 15")]),
    dict(name="app-only-ecc", job=60140, nodes=2, expected=att("hardware", "gpu.memory", ["node-02"]),
         story="One rank's own output reports an uncorrectable ECC error, and nothing else does: no XID in the kernel "
               "log, no metric, no scheduler word about the node. The claim is attributed as the job states it, but a "
               "job can print anything: node-02 gets `inspect`, not `drain` or a GPU reset (docs/recovery.md).",
         incident=[("node-02", "app", 0, "[rank9]: Traceback (most recent call last):"),
                   ("node-02", "app", 0.01, "[rank9]:   File \"/workspace/llm/train.py\", line 212, in train_step"),
                   ("node-02", "app", 0.02, "[rank9]: RuntimeError: CUDA error: uncorrectable ECC error encountered"),
                   ("node-01", "app", 5, "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/"
                                         "c10d/ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.21.5"),
                   ("node-01", "app", 6, "torch.distributed.elastic.multiprocessing.api.SignalException: Process 40000 got signal: 15")]),
    dict(name="nan-loss", job=60114, nodes=2, expected=att("software", "numerics", ["node-01"]),
         story="The loss becomes NaN; rank 0 stops training. Loss-scaler overflow lines are normal fp16 noise.",
         incident=[("node-01", "app", 0, "2026-05-11 08:50:05,000 ERROR [rank0] train: Loss is nan, stopping training")]),
    dict(name="segfault-kernel", job=60115, nodes=2, expected=att("software", "framework_crash", ["node-02"]),
         story="pt_main_thread segfaults in libtorch_cuda on node-02; node-01 sees the socket close.",
         incident=[("node-02", "kernel", 0, "pt_main_thread[51234]: segfault at 0 ip 00007f3a1c2b3d4e sp 00007ffd5e6f7a80 "
                                             "error 4 in libtorch_cuda.so[7f3a10000000+2a000000]"),
                   ("node-01", "app", 3, "node-01:40000:40200 [1] misc/socket.cc:538 NCCL WARN Net : Connection closed by "
                                         "remote peer node-02<47861>")]),
    dict(name="nccl-shm", job=60116, nodes=2, expected=att("infrastructure", "container_runtime", ["node-01", "node-02"]),
         story="The container's /dev/shm is too small: NCCL cannot create its segments on either node. Whoever runs "
               "the containers fixes it (--shm-size, --ipc=host): infrastructure, container runtime.",
         incident=[(h, "app", i, f"{h}:{40000 + i}:{40300 + i} [3] include/shm.h:48 NCCL WARN Error while creating shared "
                                 f"memory segment /dev/shm/nccl-8ZsUv{i} (size 9637888)") for i, h in enumerate(N2)]),
    dict(name="nvml-mismatch", job=60117, nodes=2, expected=att("software", "driver", ["node-02"]),
         story="node-02's driver was upgraded without a reboot: NVML reports a driver/library mismatch.",
         incident=[("node-02", "app", 0, "Failed to initialize NVML: Driver/library version mismatch")]),
    dict(name="enroot-401", job=60118, nodes=2, expected=att("infrastructure", "container_runtime", []),
         story="The registry token expired: enroot's image import returns 401 on both nodes. The registry (or the "
               "job's credentials) failed, not the nodes: no culprit node.",
         incident=[(h, "app", i, "slurmstepd: error: pyxis:     [ERROR] URL https://nvcr.io/proxy_auth?scope=repository:"
                                 "nvidia/pytorch:pull returned error code: 401 Unauthorized") for i, h in enumerate(N2)]),
    dict(name="disk-full-checkpoint", job=60119, nodes=2, expected=att("infrastructure", "filesystem", []),
         story="Saving a checkpoint to the shared /scratch fails with ENOSPC on rank 0: the shared filesystem is "
               "full, not node-01 (no culprit node). An NFS blip that recovered earlier is noise.",
         incident=[("node-01", "app", 0, "[rank0]: OSError: [Errno 28] No space left on device: '/scratch/ckpt/step_4000/model.pt'")],
         kernel_fn=[("node-02", -2000, lambda kl, t, r: K.nfs_blip(kl, t))]),
    dict(name="nodefail-outranks-ib", job=60120, nodes=3, terminal=("NODE_FAIL", 1),
         expected=att("infrastructure", "scheduler.node_fail", ["node-03"]),
         story="slurmctld kills the job on failed node-03; IB completion errors on the others are downstream.",
         incident=[("slurmctl", "scheduler", 30, "Killing JobId=60120 on failed node node-03")] + nccl_noise(N3, "node-03")),
    dict(name="two-node-hw-ambiguous", job=60121, nodes=3,
         expected={"status": "ambiguous", "domain": None, "sub_domain": None, "culprit_nodes": [],
                   "candidates": [{"domain": "hardware", "sub_domain": "gpu.memory"},
                                  {"domain": "hardware", "sub_domain": "pcie"}]},
         story="Two independent hardware faults on two nodes within a minute: both are listed.",
         incident=[("node-01", "kernel", 0, "NVRM: Xid (PCI:0000:3b:00): 95, pid=7062, name=python3, Uncontained: LTC TAG "
                                             "(0x2,0x0). RST: Yes, D-RST: No"),
                   ("node-03", "kernel", 20, "pcieport 0000:00:01.1: AER: Uncorrected (Fatal) error received: 0000:02:00.0")]),
    dict(name="hang-flight-recorder-straggler", job=60190, nodes=2, ranks_per_node=8, terminal=("CANCELLED", 0),
         expected=dict(UNATT, hang={"kind": "straggler", "laggard_ranks": [13], "laggard_nodes": ["node-02"]}),
         story="Every rank but one times out in all_reduce #4711 and the job is cancelled. The Flight Recorder dumps "
               "(traces/) show rank 13 on node-02 never started it: its last collective was #4710, called from its data "
               "loader. No cause is found, but the hang is localised: inspect node-02.",
         traces=fr_traces(13), end_after=900,
         incident=[wd_pg("node-01", r, 600 + r) for r in (0, 3, 5)] + [wd_pg("node-02", r, 601 + r - 8) for r in (8, 14)]
                  + [("node-01", "scheduler", 880, "error: *** JOB 60190 ON node-01 CANCELLED AT 2026-05-11T09:05:05 ***")]),
    dict(name="hang-flight-recorder-laggard-xid", job=60191, nodes=2, ranks_per_node=8,
         expected=dict(att("hardware", "gpu.fallen_off_bus", ["node-02"]),
                       hang={"kind": "straggler", "laggard_ranks": [13], "laggard_nodes": ["node-02"]}),
         story="Rank 13's GPU on node-02 fell off the bus; rank 13 hung in the driver and wrote no Flight Recorder dump, "
               "while every other rank waited in all_reduce #4711. The XID is the cause; the hang, localised to rank 13 "
               "by the missing dump, is its cascade.",
         traces=fr_traces(13, missing=True),
         incident=[("node-02", "kernel", -20, "NVRM: Xid (PCI:0000:b3:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")]
                  + [wd_pg("node-01", r, 600 + r) for r in (0, 2)]),
    dict(name="hang-nccl-ras-json-unresponsive-rank", job=60192, nodes=4, ranks_per_node=8, aliases=True,
         terminal=("CANCELLED", 0), end_after=900,
         expected=dict(UNATT, hang={"kind": "straggler", "laggard_ranks": [21], "laggard_nodes": ["node-03"]}),
         story="Every rank heard from times out in all_reduce #4711 and the job is cancelled. The epilog had run NCCL's "
               "RAS client in its JSON form (logs/node-01/ras.log): of the job's 32 ranks, RAS could not reach rank 21, "
               "process 483021 on 10.0.0.3 (node-03's address in the context); the others had all launched 4711 "
               "AllReduce operations. No cause is found, but the hang is localised: inspect node-03.",
         ras=ras_json(21),
         incident=[wd_pg("node-01", r, 600 + r) for r in (0, 3)] + [wd_pg("node-02", r, 601 + r - 8) for r in (9, 14)]
                  + [wd_pg("node-04", 27, 603)]
                  + [("node-01", "scheduler", 880, "error: *** JOB 60192 ON node-01 CANCELLED AT 2026-05-11T09:05:05 ***")]),
    dict(name="watchdog-only-unattributed", job=60122, nodes=4, expected=UNATT,
         story="Every rank times out in the same collective; no node logged anything first. A fan-out is not a node verdict.",
         incident=[wd(h, i * 8, 600 + i) for i, h in enumerate(N4)]),
    dict(name="partial-coverage-ib", job=60123, nodes=3, missing=["node-02"], expected=UNATT,
         story="node-01 and node-03 report IB errors against node-02, whose logs were not collected.",
         incident=nccl_noise(N3, "node-02")),
    dict(name="completed-with-noise", job=60124, nodes=2, terminal=("COMPLETED", 0),
         expected={"status": "no_failure", "domain": None, "sub_domain": None, "culprit_nodes": []},
         story="A run that completes despite a port flap, a corrected MCE and a non-fatal SXid.",
         incident=[("node-01", "kernel", -900, "mlx5_core 0000:3c:00.0 mlx5_3: Port: 1 Link DOWN"),
                   ("node-01", "kernel", -897, "mlx5_core 0000:3c:00.0 mlx5_3: Port: 1 Link ACTIVE"),
                   ("node-02", "kernel", -600, "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 12028, Non-fatal, Link 08 "
                                                "egress non-posted PRIV error (First)")],
         kernel_fn=[("node-02", -1500, K.corrected_mce)]),
]



def _reboot(idx):
    """The node hangs at `t - 240 s` (its kernel log goes silent) and boots again at `t`."""
    def fn(kl, t, rng):
        kl.items = [x for x in kl.items if x[0] < t - sec(240)]
        kl.boot = t
        K.boot(kl, H100, idx, rng)
    return fn


def torchrun_table(h, rank, code, pid, sig=None, t=None):
    """torchrun's ChildFailedError summary for one failed worker (public format of
    torch.distributed.elastic.multiprocessing.errors), as consecutive app lines."""
    rows = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
            "============================================================",
            "train.py FAILED",
            "------------------------------------------------------------",
            "Failures:",
            "  <NO_OTHER_FAILURES>",
            "------------------------------------------------------------",
            "Root Cause (first observed failure):",
            "[0]:",
            f"  time      : {t or '2026-05-11_08:50:40'}",
            f"  host      : {h}",
            f"  rank      : {rank} (local_rank: {rank % 8})",
            f"  exitcode  : {code} (pid: {pid})",
            "  error_file: <N/A>",
            (f"  traceback : Signal {sig[0]} ({sig[1]}) received by PID {pid}" if sig else
             "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"),
            "============================================================"]
    return rows


def block(h, off, rows, step=0.001):
    return [(h, "app", off + i * step, r) for i, r in enumerate(rows)]


def stepd(h, job, off, reason=None):
    t = FAIL + sec(off)
    tail = f" DUE TO {reason} ***" if reason else " ***"
    return (h, "app", off, f"slurmstepd: error: *** JOB {job} ON {h} CANCELLED AT {t:%Y-%m-%dT%H:%M:%S}{tail}")


def port(h, i, dev, event, code, off):
    return (h, "app", off, f"{h}:{40000 + i}:{40300 + i} [1] NCCL WARN NET/IB : {dev}:1 Got non-fatal async event: {event}({code})")


SPECS += [
    dict(name="watchdog-late-gpu-fault", job=60125, nodes=3, expected=UNATT,
         story="Every rank's collective hung at 08:50:05 (the watchdog lines, dated by c10d and timed out after "
               "600 s, say so). Node-02's GPU fell off the bus six minutes later: it cannot have caused the hang. "
               "Node-03 logged a non-fatal NVLink error at the moment of the hang; it is named as the place to "
               "start, but nothing found explains the hang.",
         incident=[("node-03", "kernel", 2, "NVRM: Xid (PCI:0000:04:00): 145, RLW_SRC_TRACK Nonfatal XC0 i0 Link 00 "
                                             "(0x00000007 0x00000002 0x00000000 0x00000000)"),
                   ("node-02", "kernel", 360, "NVRM: Xid (PCI:0000:b3:00): 79, pid='<unknown>', name=<unknown>, GPU has "
                                               "fallen off the bus."),
                   wd("node-01", 3, 600), wd("node-02", 11, 600.5)]),
    dict(name="torchrun-sigsegv", job=60126, nodes=2, expected=att("software", "framework_crash", ["node-02"]),
         story="A worker on node-02 dies of SIGSEGV; the kernel did not log the segfault (rate-limited), torchrun's "
               "failure table does. Node-01 sees the socket close.",
         incident=block("node-02", 0, torchrun_table("node-02", 9, -11, 51234, (11, "SIGSEGV")))
         + [("node-01", "app", 3, "node-01:40000:40200 [1] misc/socket.cc:538 NCCL WARN Net : Connection closed by "
                                  "remote peer node-02<47861>")]),
    dict(name="torchrun-victim-host-oom", job=60127, nodes=2, expected=att("software", "host_oom", ["node-02"]),
         story="The kernel OOM killer kills a rank on node-02. torchrun on node-01 names its own rank 0, aborted "
               "by the NCCL watchdog (SIGABRT), as the 'first observed failure': a victim, not the cause.",
         incident=[("node-02", "kernel", 0, "Out of memory: Killed process 51234 (python3) total-vm:912345678kB, "
                                             "anon-rss:512345678kB, file-rss:0kB, shmem-rss:0kB, UID:1043 pgtables:1234567kB oom_score_adj:0")]
         + block("node-02", 5, torchrun_table("node-02", 8, -9, 51234, (9, "SIGKILL")))
         + block("node-01", 601, torchrun_table("node-01", 0, -6, 40000, (6, "SIGABRT")))
         + [wd("node-01", 0, 600)]),
    dict(name="node-reboot-midjob", job=60128, nodes=3, terminal=("NODE_FAIL", 1),
         expected=att("infrastructure", "scheduler.node_fail", ["node-03"]),
         story="Node-03 hangs and power-cycles under the job: its kernel log goes silent and it boots again four "
               "minutes later. The others report IB completion errors; slurmctld kills the job on the failed node.",
         incident=nccl_noise(N3, "node-03") + [("slurmctl", "scheduler", 310, "Killing JobId=60128 on failed node node-03")],
         kernel_fn=[("node-03", 240, _reboot(3))]),
    dict(name="boot-fail", job=60129, nodes=2, terminal=("BOOT_FAIL", 1),
         expected={"status": "attributed", "domain": "infrastructure", "sub_domain": "scheduler.node_fail", "culprit_nodes": []},
         story="Slurm could not boot one of the allocated nodes: the job never started (no application output) "
               "and is recorded as BOOT_FAIL.", ran=False, incident=[]),
    dict(name="deadline", job=60130, nodes=2, terminal=("DEADLINE", 0), end_after=5,
         expected={"status": "attributed", "domain": "user", "sub_domain": "scheduler.timeout", "culprit_nodes": []},
         story="The job reached its --deadline; the ranks' teardown produces NCCL errors.",
         incident=nccl_noise(N2, None, off=2)),
    dict(name="requeue-preempted", job=60131, nodes=2, terminal=("REQUEUED", 0),
         expected={"status": "attributed", "domain": "infrastructure", "sub_domain": "scheduler.preempted", "culprit_nodes": []},
         story="A higher-priority job preempts this one in requeue mode: slurmstepd stops it 'DUE TO JOB REQUEUE'; "
               "the teardown noise that follows is not a cause.",
         incident=[stepd(h, 60131, 0.2 * i, "JOB REQUEUE") for i, h in enumerate(N2)] + nccl_noise(N2, None, off=1)),
    dict(name="user-cancelled", job=60132, nodes=2, terminal=("CANCELLED", 0),
         expected={"status": "attributed", "domain": "user", "sub_domain": "scheduler.cancelled", "culprit_nodes": []},
         story="The owner cancels the job with scancel; ranks report closed sockets while they are torn down.",
         incident=[stepd(h, 60132, 0.1 * i) for i, h in enumerate(N2)] + nccl_noise(N2, None, off=1)),
    dict(name="nccl-port-error-unrecovered", job=60133, nodes=3, expected=att("hardware", "infiniband", ["node-02"]),
         story="NCCL reports a port error on node-02's mlx5_3 that never comes back; node-01's mlx5_1 flaps and "
               "recovers earlier (noise). The other ranks lose their peers.",
         incident=[port("node-01", 0, "mlx5_1", "port error", 10, -900), port("node-01", 0, "mlx5_1", "port active", 9, -897),
                   port("node-02", 1, "mlx5_3", "port error", 10, 0)] + nccl_noise(N3, "node-02")),
    dict(name="ib-port-errors-fanout", job=60134, nodes=4, expected=att("hardware", "infiniband", []),
         story="Three of four nodes report NIC port errors at the same moment: a switch or the fabric, not three "
               "broken NICs. InfiniBand, with no culprit node.",
         incident=[port(h, i, "mlx5_0", "port error", 10, 0.2 * i) for i, h in enumerate(N4[:3])]
         + [("node-04", "app", 3, f"[rank27]: {Q}")]),
    dict(name="xid13-repeat-same-gpu", job=60135, nodes=2, expected=att("hardware", "gpu.compute", ["node-02"]),
         story="XID 13 on the same GPC/TPC of one GPU across three restarts of the job: the GPU, not the code.",
         incident=[("node-02", "kernel", -2400, "NVRM: Xid (PCI:0000:3b:00): 13, pid=2210, name=python3, Graphics SM Warp "
                                                 "Exception on (GPC 4, TPC 1, SM 0): Out Of Range Address"),
                   ("node-02", "kernel", -1200, "NVRM: Xid (PCI:0000:3b:00): 13, pid=3310, name=python3, Graphics SM Warp "
                                                 "Exception on (GPC 4, TPC 1, SM 0): Out Of Range Address"),
                   ("node-02", "kernel", 0, "NVRM: Xid (PCI:0000:3b:00): 13, pid=4410, name=python3, Graphics SM Warp "
                                             "Exception on (GPC 4, TPC 1, SM 0): Out Of Range Address")]
         + nccl_noise(N2, "node-02")),
    dict(name="xid95-uncontained", job=60136, nodes=2, expected=att("hardware", "gpu.memory", ["node-01"]),
         story="An uncontained memory error (XID 95) on node-01 resets the GPU; node-02 reports remote errors.",
         incident=[("node-01", "kernel", 0, "NVRM: Xid (PCI:0000:3b:00): 95, pid=7062, name=python3, Uncontained: LTC TAG "
                                             "(0x2,0x0). RST: Yes, D-RST: No")] + nccl_noise(N2, "node-01")),
    dict(name="pyxis-invalid-args", job=60137, nodes=2, ran=False,
         expected={"status": "attributed", "domain": "user", "sub_domain": "invalid_arguments", "culprit_nodes": []},
         story="The job script passes a malformed --container-mounts; pyxis refuses to start the step.",
         incident=[("node-01", "app", 0, "srun: error: pyxis: --container-mounts: invalid format: /tmp:")]),
    dict(name="timelimit-after-gpu-fault", job=60139, nodes=2, terminal=("TIMEOUT", 0),
         expected={"status": "ambiguous", "domain": None, "sub_domain": None, "culprit_nodes": [],
                   "candidates": [{"domain": "hardware", "sub_domain": "gpu.memory"},
                                  {"domain": "user", "sub_domain": "scheduler.timeout"}]},
         story="A row-remap failure (XID 64) on node-02 twenty minutes before "
               "the job hits its time limit. Did the fault stall the run until the limit, or did the run simply "
               "need more time? Both remain; the verdict lists both rather than picking one.",
         incident=[("node-02", "kernel", -1200, "NVRM: Xid (PCI:0000:3b:00): 64, pid=7062, name=python3, Row remapper "
                                                 "error: failed to remap row (bank 4, row 0x2c1f)"),
                   stepd("node-01", 60139, 0, "TIME LIMIT"), stepd("node-02", 60139, 0.1, "TIME LIMIT")]
         + nccl_noise(N2, None, off=2)),
    dict(name="slurm-cgroup-oom", job=60138, nodes=2, expected=att("software", "host_oom", ["node-02"]),
         story="The step's cgroup memory limit kills a rank on node-02 (kernel logs show only the cgroup message "
               "from Slurm's side); srun reports the task as Out Of Memory.",
         incident=[("node-02", "app", 0, "slurmstepd: error: Detected 1 oom_kill event in StepId=60138.0. Some of the "
                                          "step tasks have been OOM Killed."),
                   ("node-01", "app", 2, "srun: error: node-02: task 8: Out Of Memory")] + nccl_noise(N2, "node-02")),
]

NAMES = [s["name"] for s in SPECS]


def make(spec):
    def build():
        ctx, files = build_case(spec)
        return ctx, files
    return build


def expected_json(spec):
    return json.dumps(spec["expected"], indent=2) + "\n"


SCENARIOS = {s["name"]: (make(s), readme(s)) for s in SPECS}
EXPECTED = {s["name"]: expected_json(s) for s in SPECS}
