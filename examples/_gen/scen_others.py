"""Examples 2-6: completed-clean, time-limit, cuda-oom-one-rank, nccl-only-unattributed, missing-kernel-logs."""

from .common import T, sec, rfc3339, KernelLog, rng_for, ts_pylog, ts_c10d, ts_glog
from .hw import B200, H100, node_ip
from .app import NodeApp, step_schedule
from .slurm import Slurmctld, Slurmd
from .fm import FabricManager
from . import kernel as K


# ============================================================================ shared scaffolding
def launch(name, nodes, hw, t_start, agent_pids, comm_id, cfg, run, resume=None, barrier_warn=True):
    """Batch preamble, torchrun start, script start, optional resume, NCCL init. Returns (apps, t_ready)."""
    apps = {}
    t_ready = t_start
    for i, h in enumerate(nodes):
        rng = rng_for(name, "app", h)
        a = NodeApp(h, i, len(nodes), hw, rng, agent_pids[i], run=run)
        apps[h] = a
        t0 = t_start + sec(3.1 + i * 0.043)
        if i == 0:
            a.log.add(t_start + sec(0.35), f"Job starting on {len(nodes)} nodes at "
                                           f"{t_start.strftime('%a %b %d %H:%M:%S UTC %Y')}")
            a.log.add(t_start + sec(0.36), f"+ srun --ntasks-per-node=1 torchrun --nnodes={len(nodes)} --nproc-per-node=8 "
                                           f"--rdzv-backend=c10d --rdzv-endpoint={nodes[0]}:29500 /workspace/llm/train.py "
                                           f"--config /workspace/llm/configs/{run}.yaml")
        a.torchrun_start(t0)
        ts = a.script_start(t0 + sec(3.5), cfg)
        tl = ts + sec(1.0)
        if resume:
            a.py(tl, 0, "INFO", "checkpoint", f"resuming from {resume} (rank{a.g(0)})")
            tl = tl + sec(24.0 + rng.uniform(0, 1.5))
            a.py(tl, 0, "INFO", "checkpoint", "loaded model+optimizer state in %.1fs" % (24.0 + rng.uniform(0, 1.5)))
        t_nccl = t_start + sec(36.0 if resume else 11.0) + sec(rng.uniform(0, 0.3))
        if barrier_warn:
            a.barrier_warning(t_nccl - sec(0.4))
        a.nccl_info(t_nccl, 0, "NCCL_IB_TIMEOUT set by environment to 20.", tid=a.pids[0])
        end = a.nccl_init(t_nccl, comm_id=comm_id)
        t_ready = max(t_ready, end)
    return apps, t_ready


def kernels(name, nodes, hw, boots, styles, end, extra=None):
    files = {}
    for i, h in enumerate(nodes):
        rng = rng_for(name, "kernel", h)
        kl = KernelLog(h, boots[h], styles[h])
        K.boot(kl, hw, int(h.split('-')[1]), rng)
        dur = (end - boots[h]).total_seconds()
        K.background(kl, hw, rng, boots[h] + sec(120), end, mean_gap_s=max(1100, dur / 220), kernel_gap_s=max(1300, dur / 160))
        if extra:
            extra(h, kl, rng)
        kl.items = [x for x in kl.items if x[0] <= end]
        files[f"logs/{h}/kernel.log"] = kl.render()
    return files


def slurmds(name, nodes, boots, job, t_batch, t_step, exits, exit_codes, t_batch_end, batch_status):
    files = {}
    for i, h in enumerate(nodes):
        sd = Slurmd(h, rng_for(name, "slurmd", h))
        sd.daemon_start(boots[h] + sec(43))
        if i == 0:
            sd.batch_start(t_batch, job)
        sd.step_start(t_step + sec(i * 0.005), job, 0)
        if h in exits:
            sd.task_exit(exits[h], job, 0, i, 0, exit_codes[h])
            sd.step_done(exits[h] + sec(0.2), job, 0)
        if i == 0 and t_batch_end is not None:
            sd.batch_done(t_batch_end, job, batch_status)
        files[f"logs/{h}/scheduler.log"] = sd
    return files


def finish_slurmd(files):
    return {k: (v.log.render() if hasattr(v, "log") else v) for k, v in files.items()}


def fix_task_pids(sd_files, apps):
    for k, sd in sd_files.items():
        h = k.split("/")[1]
        for idx, (t, seq, line) in enumerate(sd.log.items):
            if "exited with exit code" in line:
                sd.log.items[idx] = (t, seq, line.replace(" (0) ", f" ({apps[h].agent_pid}) "))


def ctx(job, start, end, nodes, state, code):
    return {"workload_id": str(job), "scheduler": "slurm", "start": rfc3339(start), "end": rfc3339(end),
            "nodes": nodes, "terminal": {"state": state, "exit_code": code}}


def peer_failure(a, t_first, events, ip_for, traceback_slot=1, dist_line=1970, socket_slot=None):
    """IB completion errors -> ncclRemoteError in the watchdog (or a Python DistBackendError). Returns (first_l, tw, errs)."""
    rng = a.rng
    last = {}
    for (dt, l, peer_host) in events:
        t = t_first + sec(dt)
        port = rng.randrange(40000, 60000)
        if socket_slot is not None and l == socket_slot:
            last[l] = a.socket_error(t, l, ip_for(peer_host), port)
        else:
            last[l] = a.ib_completion_error(t, l, ip_for(peer_host), port, status=12, vendor=129,
                                            opcode=rng.choice([0, 1]), direction=rng.choice(["Recv", "Send"]))
            a.ib_completion_error(t + sec(rng.uniform(0.002, 0.02)), l, ip_for(peer_host), port, status=5, vendor=249,
                                  opcode=0, direction="Recv")
    ls = sorted(last)
    tw = t_first + sec(max(dt for dt, _, _ in events) + rng.uniform(0.3, 0.55))
    fails = []
    for j, l in enumerate(ls):
        tj = tw + sec(0.11 * j)
        if j == traceback_slot:
            a.py_distbackend_traceback(tj, l, last[l], dist_line)
            fails.append((l, 1, tj))
        else:
            a.watchdog_remote_error(tj, l, last[l])
            fails.append((l, -6, tj))
    return ls[0], tw, fails


# ============================================================================ 2. completed-clean
def build_completed():
    name, job, hw = "completed-clean", 50102, H100
    nodes = ["node-01", "node-02"]
    start = T("2026-04-07T13:20:05")
    boots = {"node-01": T("2026-04-02T07:41:10"), "node-02": T("2026-04-02T07:40:52")}
    styles = {"node-01": "syslog", "node-02": "dmesg_t"}
    cfg = ["model=llama-3b-style d_model=3072 n_layers=28 seq_len=4096 (SFT)",
           "parallel: ddp world_size=16 micro_batch=4 grad_accum=2",
           "optimizer=adamw lr=2e-5 warmup=100 schedule=linear max_steps=1200",
           "data=/lustre/data/sft/instruct-v9 (1.9M samples)"]
    apps, t_ready = launch(name, nodes, hw, start, [61204, 60877], "0x19d2c7a3e0b54f61", cfg, "sft3b-v9")
    rows = step_schedule(rng_for(name, "steps"), t_ready + sec(2.0), 1, T("2026-04-07T14:30:00"), 1.91, 1.42,
                         ckpt_every=400, ckpt_secs=9.0, eval_every=200, eval_secs=6.0, max_steps=1200,
                         lr0=2.0e-5, horizon=1200)
    t_last = rows[-1]["tend"]

    for i, h in enumerate(nodes):
        a = apps[h]
        rng = a.rng
        if h == "node-02":
            a.nccl_warn(t_ready - sec(0.9), 4, "transport/net_ib.cc:104", "NET/IB : Got async event : GID table change",
                        tid=a.tid_proxy[4] + 1)
        for l in (0, 4):
            a.log.add(t_ready + sec(1.5), f"{a.site}/torch/amp/autocast_mode.py:266: FutureWarning: "
                                          f"`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                                          f"`torch.amp.autocast('cuda', args...)` instead.")

        def hook(app, r, rng=rng):
            if rng.random() < 0.004:
                tt = r["t"] + sec(0.3)
                app.log.add(tt, f"{ts_pylog(tt)} WARNING [rank{app.g(0)}] data: sample {rng.randrange(10**6)} truncated "
                                f"from {rng.randrange(4100, 9000)} to 4096 tokens")
        a.training(rows, log_every=2, mem=(52.3, hw["gpu_mem_gib"]), tokens_per_s=0.54e6, warn_hook=hook)
        # Normal shutdown.
        te = t_last + sec(0.5)
        if i == 0:
            a.py(te, 0, "INFO", "train", f"reached max_steps=1200; training complete in "
                                         f"{int((t_last - start).total_seconds() // 60)}m{int((t_last - start).total_seconds() % 60)}s")
            a.py(te + sec(0.1), 0, "INFO", "checkpoint", "saving final model to /lustre/ckpt/sft3b-v9/final (safetensors)")
            a.py(te + sec(11.2), 0, "INFO", "checkpoint", "final model written (6.1 GiB) in 11.1s")
        td = te + sec(11.6)
        for l in range(a.n):
            tl = td + sec(rng.uniform(0, 0.08))
            a.nccl_info(tl, l, f"comm {a.comm_ptr[l]} rank {a.g(l)} nranks {a.world} cudaDev {l} busId "
                               f"{hw['gpu_pci'][l].split(':')[1]}000 - Destroy COMPLETE", tid=a.pids[l])
            if l:
                a.log.add(tl + sec(0.01), f"{a.pfx(0, a.tid_proxy[0] - 3)} NCCL INFO [Service thread] Connection closed by localRank {l}")
        for l in range(a.n):
            a.c10d(td + sec(0.3 + rng.uniform(0, 0.05)), l, "W", "ProcessGroupNCCL.cpp:1250",
                   "Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal "
                   "program exit, the application should call destroy_process_group to ensure that any pending NCCL "
                   "operations have finished in this process. (function operator())")
        tf = td + sec(1.4)
        a.agent(tf, "I", "torch/distributed/elastic/agent/server/api.py:879",
                "[default] worker group successfully finished. Waiting 300 seconds for other agents to finish.")
        a.agent(tf + sec(0.001), "I", "torch/distributed/elastic/agent/server/api.py:932",
                "Local worker group finished (WorkerState.SUCCEEDED). Waiting 300 seconds for other agents to finish")
        a.agent(tf + sec(0.21), "I", "torch/distributed/elastic/agent/server/api.py:946",
                f"Done waiting for other agents. Elapsed: {0.19 + i * 0.02:.4f} seconds")
    t_batch_end = t_last + sec(15.9)
    apps["node-01"].log.add(t_batch_end - sec(0.2), f"Job finished at {t_batch_end.strftime('%a %b %d %H:%M:%S UTC %Y')}")
    end = t_batch_end + sec(1)

    files = {f"logs/{h}/app.log": apps[h].log.render() for h in nodes}

    def extra(h, kl, rng):
        if h == "node-01":
            K.syn_flood(kl, start + sec(3.6))
        if h == "node-02":
            K.corrected_aer(kl, start + sec(1460.2), port="0000:15:01.0", dev="0000:16:00.0")
            K.nfs_blip(kl, T("2026-04-05T22:14:31"), secs=23)
    files.update(kernels(name, nodes, hw, boots, styles, end, extra))
    exits = {h: t_batch_end - sec(0.9 - 0.1 * i) for i, h in enumerate(nodes)}
    sds = slurmds(name, nodes, boots, job, start + sec(0.05), start + sec(1.9), exits, {h: 0 for h in nodes},
                  t_batch_end, 0)
    fix_task_pids(sds, apps)
    files.update(finish_slurmd(sds))
    sc = Slurmctld(rng_for(name, "slurmctld"))
    sc.background(start - sec(900), end, nodes, 50011, avoid=(job,))
    sc.submit(start - sec(42.2), job, "node-[01-02]", 448)
    sc.allocate(start - sec(0.1), job, "node-[01-02]", 448)
    sc.complete(t_batch_end, job, wexit=0)
    files["logs/slurmctl/scheduler.log"] = sc.log.render()
    return ctx(job, start, end, nodes, "COMPLETED", 0), files


README_COMPLETED = """# completed-clean — a normal run, nothing to attribute

**Job** 50102 (`sft3b-v9`), Slurm, 2 × DGX H100 (`node-01`, `node-02`, 16 ranks, DDP), torch 2.5.1 / NCCL 2.21.5.
Terminal state: COMPLETED, exit 0.

## Story
A supervised fine-tuning run starts, initialises NCCL over 8 IB rails per node, trains 1200 steps
(evaluations every 200 steps, checkpoints every 400), hits `max_steps`, writes its final model and exits.
NCCL communicators are destroyed, torchrun reports `WorkerState.SUCCEEDED` on both nodes and
slurmctld logs `_job_complete: JobId=50102 WEXITSTATUS 0`.

## Verdict a careful engineer reaches
- status: **no_failure** (no domain, no culprit nodes).

## Benign lines that look like errors (must not create a failure)
- `ACPI BIOS Error (bug)` / `ACPI Error: AE_NOT_FOUND` at boot (5 days before the window).
- `NCCL WARN NET/IB : Got async event : GID table change` on node-02 at init.
- `FutureWarning` / `UserWarning` from torch, `WARNING ... data: sample ... truncated` lines.
- c10d `Warning: WARNING: process group has NOT been destroyed ...` and NCCL `[Service thread] Connection closed by localRank N` at shutdown.
- node-02 kernel: corrected PCIe AER (`severity=Correctable`) during the run; `nfs: server home01 not responding` two days earlier, followed by `OK`.
- node-01 kernel: `Possible SYN flooding on port 29500` at rendezvous; slurmctld `Zero Bytes were transmitted or received`.

## Timestamp formats
kernel: syslog on node-01, `dmesg -T` on node-02; app: Python logging `2026-04-07 13:21:03,114`, c10d `[W407 …]`,
torchrun `I0407 13:59:36.700000`, NCCL lines untimestamped (NCCL 2.21); slurm `[2026-04-07T13:59:54.441]`.
"""


# ============================================================================ 3. time-limit
def build_timelimit():
    name, job, hw = "time-limit", 51877, H100
    nodes = ["node-01", "node-02"]
    start = T("2026-05-02T02:00:07")
    limit = start + sec(4 * 3600)
    t_kill = limit + sec(31.512)                 # slurmctld's periodic time-limit check
    boots = {"node-01": T("2026-04-28T16:03:44"), "node-02": T("2026-04-29T09:27:15")}
    styles = {"node-01": "dmesg_t", "node-02": "syslog"}
    cfg = ["model=llama-8b-style d_model=4096 n_layers=32 seq_len=8192",
           "parallel: fsdp(hybrid_shard) world_size=16 micro_batch=1 grad_accum=4",
           "optimizer=adamw lr=1.5e-4 schedule=cosine(200000)",
           "checkpoint: every 1000 steps -> /lustre/ckpt/cpt8b-a2 (resume=latest)"]
    apps, t_ready = launch(name, nodes, hw, start, [40711, 39150], "0x5ae0c4de91f27b38", cfg, "cpt8b-a2",
                           resume="/lustre/ckpt/cpt8b-a2/step_0021000")
    rows = step_schedule(rng_for(name, "steps"), t_ready + sec(2.0), 21001, t_kill, 3.62, 1.98,
                         ckpt_every=1000, ckpt_secs=31.0, eval_every=500, eval_secs=14.0, lr0=1.5e-4, horizon=200000)
    for h in nodes:
        apps[h].training(rows, log_every=5, mem=(71.9, hw["gpu_mem_gib"]), tokens_per_s=0.29e6)

    # Time limit: slurmstepd cancels the step; torchrun gets SIGTERM and tears the workers down.
    a1, a2 = apps["node-01"], apps["node-02"]
    stamp = t_kill.strftime("%Y-%m-%dT%H:%M:%S")
    a1.log.add(t_kill + sec(0.004), f"slurmstepd: error: *** JOB {job} ON node-01 CANCELLED AT {stamp} DUE TO TIME LIMIT ***")
    a1.log.add(t_kill + sec(0.011), "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    a1.log.add(t_kill + sec(0.013), f"slurmstepd: error: *** STEP {job}.0 ON node-01 CANCELLED AT {stamp} DUE TO TIME LIMIT ***")
    a2.log.add(t_kill + sec(0.019), f"slurmstepd: error: *** STEP {job}.0 ON node-02 CANCELLED AT {stamp} DUE TO TIME LIMIT ***")
    exits = {}
    for i, h in enumerate(nodes):
        a = apps[h]
        tt = t_kill + sec(0.05 + 0.03 * i)
        a.agent(tt, "W", "torch/distributed/elastic/agent/server/api.py:704",
                "Received Signals.SIGTERM death signal, shutting down workers")
        for l in range(a.n):
            a.agent(tt + sec(0.001 * (l + 1)), "W", "torch/distributed/elastic/multiprocessing/api.py:897",
                    f"Sending process {a.pids[l]} closing signal SIGTERM")
        if h == "node-02":
            # Teardown noise: a rank still in a collective notices its peers vanish.
            a.socket_error(tt + sec(0.62), 6, node_ip("ib", 1), 51302, what="Connection reset by peer")
            a.ib_completion_error(tt + sec(0.64), 6, node_ip("ib", 1), 51302, status=5, vendor=249, opcode=0,
                                  direction="Recv")
        te = tt + sec(1.9)
        tb = "\n".join([
            "Traceback (most recent call last):",
            '  File "/usr/local/bin/torchrun", line 8, in <module>',
            "    sys.exit(main())",
            f'  File "{a.site}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
            "    return f(*args, **kwargs)",
            f'  File "{a.site}/torch/distributed/run.py", line 919, in main',
            "    run(args)",
            f'  File "{a.site}/torch/distributed/run.py", line 910, in run',
            "    elastic_launch(",
            f'  File "{a.site}/torch/distributed/launcher/api.py", line 138, in __call__',
            "    return launch_agent(self._config, self._entrypoint, list(args))",
            f'  File "{a.site}/torch/distributed/launcher/api.py", line 260, in launch_agent',
            "    result = agent.run()",
            f'  File "{a.site}/torch/distributed/elastic/agent/server/api.py", line 696, in run',
            "    result = self._invoke_run(role)",
            f'  File "{a.site}/torch/distributed/elastic/agent/server/api.py", line 855, in _invoke_run',
            "    time.sleep(monitor_interval)",
            f'  File "{a.site}/torch/distributed/elastic/multiprocessing/api.py", line 84, in _terminate_process_handler',
            "    raise SignalException(f\"Process {os.getpid()} got signal: {sigval}\", sigval=sigval)",
            f"torch.distributed.elastic.multiprocessing.api.SignalException: Process {a.agent_pid} got signal: 15"])
        a.log.add(te, tb)
        exits[h] = te + sec(0.05)
    a1.log.add(t_kill + sec(2.4), "srun: got SIGCONT")
    a1.log.add(t_kill + sec(2.4), "srun: forcing job termination")
    t_end_job = t_kill + sec(3.1)
    end = t_end_job + sec(1)
    files = {f"logs/{h}/app.log": apps[h].log.render() for h in nodes}

    def extra(h, kl, rng):
        if h == "node-02":
            K.bond_flap(kl, hw, T("2026-05-01T18:02:51.330"), secs=6.1)
            K.corrected_mce(kl, T("2026-05-02T04:12:09.600"), rng)
    files.update(kernels(name, nodes, hw, boots, styles, end, extra))
    sds = slurmds(name, nodes, boots, job, start + sec(0.05), start + sec(1.7), {}, {}, None, 0)
    sd1 = sds["logs/node-01/scheduler.log"]
    sd1.line(t_kill + sec(0.003), f"[{job}.batch] error: *** JOB {job} ON node-01 CANCELLED AT {stamp} DUE TO TIME LIMIT ***")
    for i, h in enumerate(nodes):
        sd = sds[f"logs/{h}/scheduler.log"]
        sd.line(t_kill + sec(0.012 + 0.006 * i), f"[{job}.0] error: *** STEP {job}.0 ON {h} CANCELLED AT {stamp} DUE TO TIME LIMIT ***")
        sd.step_done(exits[h] + sec(0.3), job, 0)
    sd1.line(t_end_job - sec(0.05), f"[{job}.batch] done with job")
    files.update(finish_slurmd(sds))
    sc = Slurmctld(rng_for(name, "slurmctld"))
    sc.background(start - sec(600), end, nodes, 51790, avoid=(job,))
    sc.submit(start - sec(3601.7), job, "node-[01-02]", 448)
    sc.allocate(start - sec(0.1), job, "node-[01-02]", 448)
    sc.line(t_kill - sec(0.002), f"Time limit exhausted for JobId={job}")
    sc.complete(t_end_job, job, wtermsig=15)
    files["logs/slurmctl/scheduler.log"] = sc.log.render()
    return ctx(job, start, end, nodes, "TIMEOUT", 0), files


README_TIMELIMIT = """# time-limit — the job ran out of wall-clock time

**Job** 51877 (`cpt8b-a2`), Slurm `--time=04:00:00`, 2 × DGX H100 (`node-01`, `node-02`, 16 ranks, FSDP),
torch 2.5.1 / NCCL 2.21.5. Terminal state: TIMEOUT (sacct would show ExitCode 0:15; `exit_code` 0 in context.json).

## Story
The job resumes from step 21000 and trains steadily (~3.6 s/step, checkpoints every 1000 steps) for four hours.
At 2026-05-02T06:00:38 slurmctld logs `Time limit exhausted for JobId=51877`; slurmstepd prints
`*** JOB 51877 ON node-01 CANCELLED AT 2026-05-02T06:00:38 DUE TO TIME LIMIT ***` into the batch output (node-01 app log)
and the step is cancelled on both nodes. torchrun receives SIGTERM, terminates its workers and exits with
`SignalException: Process … got signal: 15`; one rank on node-02 logs NCCL socket/IB errors while its peers disappear.

## Verdict a careful engineer reaches
- status: **attributed**; domain **user**, sub_domain **scheduler.timeout**; culprit nodes: **[]** (none).
- cascade: SIGTERM teardown, `SignalException`, `srun: Job step aborted`, and the NCCL `Connection reset by peer` /
  `status=5 … vendor err 249` lines on node-02 after the cancellation.
- No hardware errors in the window. Distractors: a front-end bond0 link flap the evening before (recovered),
  a corrected memory error (EDAC CE) on node-02 during the run, ACPI boot noise.

## Timestamp formats
kernel: `dmesg -T` on node-01, syslog on node-02; app: Python logging, torchrun `W0502 06:00:38.562000`,
slurmstepd lines carry `CANCELLED AT 2026-05-02T06:00:38`; slurm logs `[2026-05-02T06:00:38.510]`.
"""


# ============================================================================ 4. cuda-oom-one-rank
def build_oom():
    name, job, hw = "cuda-oom-one-rank", 53310, H100
    nodes = ["node-01", "node-02", "node-03"]
    start = T("2026-06-19T08:30:11")
    t_oom = T("2026-06-19T09:41:52.318")
    boots = {"node-01": T("2026-06-12T11:20:31"), "node-02": T("2026-06-12T11:19:58"), "node-03": T("2026-06-17T14:05:02")}
    styles = {"node-01": "syslog", "node-02": "syslog", "node-03": "dmesg_t"}
    cfg = ["model=llama-8b-style d_model=4096 n_layers=32 seq_len=8192 packing=varlen(max=8192)",
           "parallel: fsdp(full_shard) world_size=24 micro_batch=2",
           "optimizer=adamw lr=2e-4 schedule=cosine(80000)",
           "env: NCCL_DEBUG=INFO TORCH_NCCL_ASYNC_ERROR_HANDLING=3 (watchdog timeout 600 s)"]
    apps, t_ready = launch(name, nodes, hw, start, [73120, 70551, 69904], "0x83f1d05a7c2e6b94", cfg, "pt8b-c4",
                           resume="/lustre/ckpt/pt8b-c4/step_0061000")
    rows = step_schedule(rng_for(name, "steps"), t_ready + sec(2.0), 61001, t_oom, 2.41, 2.12,
                         ckpt_every=1000, ckpt_secs=26.0, eval_every=500, eval_secs=10.0, lr0=2.0e-4, horizon=80000)
    for h in nodes:
        apps[h].training(rows, log_every=2, mem=(72.6, hw["gpu_mem_gib"]), tokens_per_s=0.61e6)
    last_step = rows[-1]["step"] + 1

    # node-03, local rank 5 (global 21): OOM in the MLP of a long packed batch.
    a3 = apps["node-03"]
    site = a3.site
    tb = "\n".join([
        "Traceback (most recent call last):",
        '  File "/workspace/llm/train.py", line 611, in <module>',
        "    main()",
        '  File "/workspace/llm/train.py", line 597, in main',
        "    trainer.fit()",
        '  File "/workspace/llm/trainer.py", line 284, in fit',
        "    metrics = self.train_step(batch)",
        '  File "/workspace/llm/trainer.py", line 322, in train_step',
        '    logits = self.model(batch["input_ids"], position_ids=batch["position_ids"])',
        f'  File "{site}/torch/nn/modules/module.py", line 1736, in _wrapped_call_impl',
        "    return self._call_impl(*args, **kwargs)",
        f'  File "{site}/torch/nn/modules/module.py", line 1747, in _call_impl',
        "    return forward_call(*args, **kwargs)",
        f'  File "{site}/torch/distributed/fsdp/fully_sharded_data_parallel.py", line 864, in forward',
        "    output = self._fsdp_wrapped_module(*args, **kwargs)",
        '  File "/workspace/llm/model.py", line 241, in forward',
        "    x = block(x, position_ids)",
        f'  File "{site}/torch/nn/modules/module.py", line 1747, in _call_impl',
        "    return forward_call(*args, **kwargs)",
        '  File "/workspace/llm/model.py", line 188, in forward',
        "    h = h + self.mlp(self.norm2(h))",
        '  File "/workspace/llm/model.py", line 121, in forward',
        "    return self.w2(F.silu(self.w1(x)) * self.w3(x))",
        "                   ^^^^^^^^^^^^^^^^^^",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a total capacity of 79.15 GiB "
        "of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in use. Of the "
        "allocated memory 74.51 GiB is allocated by PyTorch, and 2.13 GiB is reserved by PyTorch but unallocated. If "
        "reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
        "fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"])
    a3.rank_lines(t_oom, 5, tb)
    exits = {}
    exits["node-03"] = a3.torchrun_failure(t_oom + sec(1.41), 5, 1, first_ts=t_oom + sec(0.6))

    # node-02 sends to node-03 in the ring: its proxies see retry-exceeded completions, then ncclRemoteError.
    a2 = apps["node-02"]
    ipf = lambda h: node_ip("ib", int(h[-1]))
    first_l, tw, fails = peer_failure(a2, t_oom + sec(11.284), [(0.0, 5, "node-03"), (0.171, 2, "node-03"), (0.402, 7, "node-03")],
                                      ipf, traceback_slot=1, dist_line=2027)
    exits["node-02"] = a2.torchrun_failure(tw + sec(1.35), first_l, -6, first_ts=tw,
                                           other_failures=[f for f in fails if f[0] != first_l])

    # node-01 waits for data from node-03 that never comes: watchdog timeouts 600 s later.
    a1 = apps["node-01"]
    rng = a1.rng
    seq = 618304 + 0
    tto = t_oom + sec(600.0)
    for l in range(a1.n):
        ran = 600000 + rng.randrange(20, 95)
        t = t_oom - sec(0.0052) + sec(ran / 1000.0)
        msg = (f"[Rank {a1.g(l)}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=_ALLGATHER_BASE, "
               f"NumelIn=6553600, NumelOut=157286400, Timeout(ms)=600000) ran for {ran} milliseconds before timing out.")
        a1.c10d(t, l, "E", "ProcessGroupNCCL.cpp:616", msg)
        a1.c10d(t + sec(0.0003), l, "E", "ProcessGroupNCCL.cpp:1785",
                f"[PG ID 0 PG GUID 0(default_pg) Rank {a1.g(l)}] Exception (either an error or timeout) detected by watchdog at "
                f"work: {seq}, last enqueued NCCL work: {seq + 1}, last completed NCCL work: {seq - 1}.")
        a1.c10d(t + sec(0.0004), l, "E", "ProcessGroupNCCL.cpp:1834",
                f"[PG ID 0 PG GUID 0(default_pg) Rank {a1.g(l)}] Timeout at NCCL work: {seq}, last enqueued NCCL work: "
                f"{seq + 1}, last completed NCCL work: {seq - 1}.")
        a1.c10d(t + sec(0.0005), l, "E", "ProcessGroupNCCL.cpp:630",
                f"[Rank {a1.g(l)}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA "
                f"kernels, subsequent GPU operations might run on corrupted/incomplete data.")
        a1.c10d(t + sec(0.0006), l, "E", "ProcessGroupNCCL.cpp:636", f"[Rank {a1.g(l)}] To avoid data inconsistency, we are taking the entire process down.")
        if l in (0, 3):
            a1.log.add(t + sec(0.001), "terminate called after throwing an instance of 'c10::DistBackendError'")
            a1.log.add(t + sec(0.001), f"  what():  [PG ID 0 PG GUID 0(default_pg) Rank {a1.g(l)}] Process group watchdog thread "
                                       f"terminated with exception: {msg}\n" + a1._frames("", "", kind="nccl").replace(
                                           "checkForNCCLErrorsInternal", "checkTimeout"))
    exits["node-01"] = a1.torchrun_failure(tto + sec(1.7), 0, -6, first_ts=tto + sec(0.04),
                                           other_failures=[(3, -6, tto + sec(0.06))])
    for h in sorted(exits, key=lambda x: exits[x]):
        a1.log.add(exits[h] + sec(0.012), f"srun: error: {h}: task {nodes.index(h)}: Exited with exit code 1")
    t_batch_end = max(exits.values()) + sec(1.9)
    end = t_batch_end + sec(1)
    files = {f"logs/{h}/app.log": apps[h].log.render() for h in nodes}

    def extra(h, kl, rng):
        if h == "node-02":
            K.corrected_aer(kl, T("2026-06-19T09:03:44.208"), port="0000:15:01.0", dev="0000:16:00.0")
        if h == "node-01":
            K.syn_flood(kl, start + sec(3.3))
    files.update(kernels(name, nodes, hw, boots, styles, end, extra))
    sds = slurmds(name, nodes, boots, job, start + sec(0.05), start + sec(1.8), exits, {h: 1 for h in nodes},
                  t_batch_end - sec(0.06), 256)
    fix_task_pids(sds, apps)
    files.update(finish_slurmd(sds))
    sc = Slurmctld(rng_for(name, "slurmctld"))
    sc.background(start - sec(600), end, nodes, 53221, avoid=(job,))
    sc.submit(start - sec(13.9), job, "node-[01-03]", 672)
    sc.allocate(start - sec(0.1), job, "node-[01-03]", 672)
    sc.complete(t_batch_end, job, wexit=1)
    files["logs/slurmctl/scheduler.log"] = sc.log.render()
    return ctx(job, start, end, nodes, "FAILED", 1), files


README_OOM = """# cuda-oom-one-rank — one rank runs out of GPU memory, the others time out

**Job** 53310 (`pt8b-c4`), Slurm, 3 × DGX H100 (`node-01`..`node-03`, 24 ranks, FSDP, variable-length packing),
torch 2.5.1 / NCCL 2.21.5, c10d watchdog timeout 600 s. Terminal state: FAILED, exit 1.

## Story
Training resumes at step 61000 and runs for ~70 minutes. At **09:41:52.318** rank 21 (`node-03`, local rank 5, GPU 5)
raises `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a total capacity of 79.15 GiB …`
in the MLP of a long packed batch; torchrun on node-03 reports it as root cause (exitcode 1) and SIGTERMs the rest.
~11 s later `node-02` (which sends to node-03 in the ring) logs `NET/IB : Got completion from peer 10.10.2.13<…> with status=12 …`,
`ncclRemoteError` and a `DistBackendError`, and exits. `node-01`'s ranks were waiting on data from node-03 and hang
silently; exactly 600 s after the OOM their watchdogs fire:
`Watchdog caught collective operation timeout: WorkNCCL(SeqNum=618304, OpType=_ALLGATHER_BASE, … Timeout(ms)=600000) ran for 6000xx milliseconds`.
slurmctld: `_job_complete: JobId=53310 WEXITSTATUS 1`.

## Verdict a careful engineer reaches
- status: **attributed**; domain **software**, sub_domain **cuda_oom**; culprit nodes: **[node-03]** (rank 21, GPU 5).
- cascade: node-02 IB completion errors / ncclRemoteError / DistBackendError; node-01 watchdog timeouts
  (their 600 s timeout dates the cause back to 09:41:52, the OOM); all torchrun `ChildFailedError` blocks and `srun: error` lines.
- No XIDs anywhere; kernel logs only have benign noise (ACPI boot errors, a corrected PCIe AER on node-02, SYN-flood notice on node-01).

## Timestamp formats
kernel: syslog on node-01/02, `dmesg -T` on node-03; app: Python logging, c10d `[rank3]:[E619 09:51:52.3…]`,
torchrun `E0619 09:41:54.949000`, tracebacks and NCCL lines untimestamped (NCCL 2.21); slurm `[2026-06-19T09:51:56.748]`.
"""


# ============================================================================ 5. nccl-only-unattributed
def build_unattributed():
    name, job, hw = "nccl-only-unattributed", 55021, B200
    nodes = ["node-01", "node-02", "node-03", "node-04"]
    start = T("2026-08-23T19:05:40")
    t0 = T("2026-08-23T20:48:03.118")
    boots = {"node-01": T("2026-08-20T06:31:14"), "node-02": T("2026-08-20T06:30:49"),
             "node-03": T("2026-08-21T22:17:05"), "node-04": T("2026-08-20T06:31:40")}
    styles = {"node-01": "syslog", "node-02": "dmesg_t", "node-03": "syslog", "node-04": "syslog"}
    cfg = ["model=moe-16x1b d_model=2048 n_layers=24 experts=16 top_k=2 seq_len=4096",
           "parallel: ep=8 dp=4 world_size=32 micro_batch=4",
           "optimizer=adamw lr=4e-4 schedule=cosine(150000)",
           "env: NCCL_DEBUG=INFO NCCL_IB_TIMEOUT=18 TORCH_NCCL_ASYNC_ERROR_HANDLING=3"]
    apps, t_ready = launch(name, nodes, hw, start, [88213, 87760, 90022, 86431], "0x2b7d91ce04a3f856", cfg, "moe16-b1",
                           resume="/lustre/ckpt/moe16-b1/step_0104000")
    rows = step_schedule(rng_for(name, "steps"), t_ready + sec(2.0), 104001, t0, 1.48, 2.05,
                         ckpt_every=1000, ckpt_secs=18.0, eval_every=500, eval_secs=7.0, lr0=4.0e-4, horizon=150000)
    for h in nodes:
        apps[h].training(rows, log_every=3, mem=(118.0, hw["gpu_mem_gib"]), tokens_per_s=2.1e6)

    # Every node sees peers on another node go silent at nearly the same moment (no local cause logged).
    ipf = lambda h: node_ip("ib", int(h[-1]))
    plan = {"node-01": (0.412, [(0.0, 1, "node-02"), (0.097, 4, "node-04"), (0.31, 6, "node-02")], None),
            "node-02": (0.0, [(0.0, 2, "node-03"), (0.188, 5, "node-01"), (0.29, 0, "node-03")], 5),
            "node-03": (0.235, [(0.0, 3, "node-04"), (0.061, 7, "node-02"), (0.52, 1, "node-04")], None),
            "node-04": (0.688, [(0.0, 0, "node-01"), (0.144, 6, "node-03")], 6)}
    exits = {}
    for h, (dt, evs, sock) in plan.items():
        a = apps[h]
        first_l, tw, fails = peer_failure(a, t0 + sec(dt), evs, ipf, traceback_slot=1, dist_line=3356, socket_slot=sock)
        exits[h] = a.torchrun_failure(tw + sec(a.rng.uniform(1.2, 1.8)), first_l, -6, first_ts=tw,
                                      other_failures=[f for f in fails if f[0] != first_l])
    a1 = apps["node-01"]
    for h in sorted(exits, key=lambda x: exits[x]):
        a1.log.add(exits[h] + sec(0.012), f"srun: error: {h}: task {nodes.index(h)}: Exited with exit code 1")
    t_batch_end = max(exits.values()) + sec(2.2)
    end = t_batch_end + sec(1)
    files = {f"logs/{h}/app.log": apps[h].log.render() for h in nodes}

    def extra(h, kl, rng):
        if h == "node-03":
            K.corrected_mce(kl, T("2026-08-22T13:40:27.002"), rng)
        if h == "node-01":
            K.syn_flood(kl, start + sec(3.4))
    files.update(kernels(name, nodes, hw, boots, styles, end, extra))
    for i, h in enumerate(nodes):
        rng = rng_for(name, "fm", h)
        fm = FabricManager(rng)
        fm.start(boots[h] + sec(22.5), hw["driver"])
        fm.inband(t_ready - sec(1.0) + sec(rng.uniform(0, 0.3)))
        files[f"logs/{h}/fabricmanager.log"] = fm.log.render()
    sds = slurmds(name, nodes, boots, job, start + sec(0.05), start + sec(1.8), exits, {h: 1 for h in nodes},
                  t_batch_end - sec(0.06), 256)
    fix_task_pids(sds, apps)
    files.update(finish_slurmd(sds))
    sc = Slurmctld(rng_for(name, "slurmctld"))
    sc.background(start - sec(600), end, nodes, 54930, avoid=(job,))
    sc.submit(start - sec(75.2), job, "node-[01-04]", 896)
    sc.allocate(start - sec(0.1), job, "node-[01-04]", 896)
    sc.complete(t_batch_end, job, wexit=1)
    files["logs/slurmctl/scheduler.log"] = sc.log.render()
    return ctx(job, start, end, nodes, "FAILED", 1), files


README_UNATTR = """# nccl-only-unattributed — communication errors everywhere, no primary cause in the logs

**Job** 55021 (`moe16-b1`), Slurm, 4 × DGX B200 (`node-01`..`node-04`, 32 ranks), torch 2.7.0 / NCCL 2.26.2.
Terminal state: FAILED, exit 1.

## Story
The job trains normally for ~1 h 40 min. Between **20:48:03.118 and 20:48:03.95** every node logs NCCL
`NET/IB : Got completion from peer 10.10.2.1x<…> with status=12 … vendor err 129` (retry exceeded) against peers on
*other* nodes (node-01→node-02/04, node-02→node-03/01, node-03→node-04/02, node-04→node-01/03), plus
`socketProgressOpt: Call to recv from … failed : Connection reset by peer` on node-02 and node-04, followed by
`ncclRemoteError`, `DistBackendError`, watchdog aborts and a torchrun `ChildFailedError` on every node.
No node shows an XID, an mlx5 `Link DOWN`, an NCCL `port error` async event, an OOM, or a Slurm node failure;
fabricmanager logs are quiet. The pattern (simultaneous, symmetric, all nodes blaming each other) points at something
outside the collected sources (e.g. the IB fabric / a switch), but nothing in the bundle proves it.

## Verdict a careful engineer reaches
- status: **unattributed** (symptoms only: NCCL/IB remote errors fanned out over all 4 nodes, no deterministic primary).
- culprit nodes: none. All NCCL/torch/srun errors are symptoms; do not pick the earliest or loudest node
  (node-02's first WARN is only ~0.2 s ahead of node-03's, and it blames node-03's address).
- Useful follow-up: IB switch/UFM logs for 20:48:03, `ibqueryerrors` on the involved ports.

## Timestamp formats
kernel: syslog on node-01/03/04, `dmesg -T` on node-02; app: Python logging, NCCL WARN `[2026-08-23 20:48:03]` prefix
(second resolution; order within the second comes from the c10d/torchrun lines), c10d `[rank13]:[E0823 20:48:04.025…]`;
fabricmanager `[Aug 23 2026 …]`; slurm `[2026-08-23T20:48:…]`.
"""


# ============================================================================ 6. missing-kernel-logs
def build_missing():
    name, job, hw = "missing-kernel-logs", 56740, H100
    nodes = ["node-01", "node-02", "node-03"]
    collected = ["node-01", "node-03"]
    start = T("2026-09-30T11:02:19")
    t0 = T("2026-09-30T12:15:44.806")          # first NCCL error on a collected node
    t_n2_exit = T("2026-09-30T12:15:36.950")   # srun sees node-02's task end (its own logs were not collected)
    boots = {"node-01": T("2026-09-24T08:12:09"), "node-02": T("2026-09-24T08:11:47"), "node-03": T("2026-09-27T19:55:30")}
    styles = {"node-01": "dmesg_t", "node-03": "syslog"}
    cfg = ["model=llama-8b-style d_model=4096 n_layers=32 seq_len=8192",
           "parallel: fsdp(full_shard) world_size=24 micro_batch=2",
           "optimizer=adamw lr=3e-4 schedule=cosine(100000)"]
    apps, t_ready = launch(name, nodes, hw, start, [55410, 57233, 51986], "0xd40e7b6a19f3c258", cfg, "llm8b-s3",
                           resume="/lustre/ckpt/llm8b-s3/step_0007000")
    rows = step_schedule(rng_for(name, "steps"), t_ready + sec(2.0), 7001, t_n2_exit - sec(8.0), 2.38, 2.44,
                         ckpt_every=1000, ckpt_secs=24.0, eval_every=500, eval_secs=10.0, lr0=3.0e-4, horizon=100000)
    for h in collected:
        apps[h].training(rows, log_every=2, mem=(70.8, hw["gpu_mem_gib"]), tokens_per_s=0.63e6)

    ipf = lambda h: node_ip("ib", int(h[-1]))
    exits = {"node-02": t_n2_exit}
    for h, dt, evs in (("node-03", 0.0, [(0.0, 0, "node-02"), (0.214, 4, "node-02"), (0.37, 6, "node-02")]),
                       ("node-01", 0.377, [(0.0, 7, "node-02"), (0.122, 2, "node-02")])):
        a = apps[h]
        first_l, tw, fails = peer_failure(a, t0 + sec(dt), evs, ipf, traceback_slot=1, dist_line=2027)
        exits[h] = a.torchrun_failure(tw + sec(a.rng.uniform(1.2, 1.7)), first_l, -6, first_ts=tw,
                                      other_failures=[f for f in fails if f[0] != first_l])
    a1 = apps["node-01"]
    for h in sorted(exits, key=lambda x: exits[x]):
        a1.log.add(exits[h] + sec(0.012), f"srun: error: {h}: task {nodes.index(h)}: Exited with exit code 1")
    t_batch_end = max(exits.values()) + sec(2.0)
    end = t_batch_end + sec(1)
    files = {f"logs/{h}/app.log": apps[h].log.render() for h in collected}

    def extra(h, kl, rng):
        if h == "node-01":
            K.syn_flood(kl, start + sec(3.2))
        if h == "node-03":
            K.corrected_aer(kl, T("2026-09-30T11:48:10.117"), port="0000:15:01.0", dev="0000:16:00.0")
    files.update(kernels(name, collected, hw, boots, styles, end, extra))
    sds = slurmds(name, nodes, boots, job, start + sec(0.05), start + sec(1.8), exits, {h: 1 for h in nodes},
                  t_batch_end - sec(0.06), 256)
    fix_task_pids(sds, apps)
    sds = {k: v for k, v in sds.items() if k.split("/")[1] in collected}
    files.update(finish_slurmd(sds))
    sc = Slurmctld(rng_for(name, "slurmctld"))
    sc.background(start - sec(600), end, nodes, 56655, avoid=(job,))
    sc.submit(start - sec(31.4), job, "node-[01-03]", 672)
    sc.allocate(start - sec(0.1), job, "node-[01-03]", 672)
    sc.complete(t_batch_end, job, wexit=1)
    files["logs/slurmctl/scheduler.log"] = sc.log.render()
    return ctx(job, start, end, nodes, "FAILED", 1), files


README_MISSING = """# missing-kernel-logs — the suspicious node was not collected

**Job** 56740 (`llm8b-s3`), Slurm, 3 × DGX H100 (`node-01`..`node-03`, 24 ranks), torch 2.5.1 / NCCL 2.21.5.
Terminal state: FAILED, exit 1. **`node-02` has no `logs/node-02/` directory at all** (its collector returned nothing):
no app, kernel or slurmd log for it.

## Story
Training runs for ~73 minutes. At 12:15:36.95 the srun client on node-01 reports `srun: error: node-02: task 1: Exited with exit code 1`
— the only trace of node-02 in the bundle. About 8 s later `node-03` and then `node-01` log
`NET/IB : Got completion from peer 10.10.2.12<…> with status=12 … vendor err 129` (10.10.2.12 is node-02),
`ncclRemoteError`, a `DistBackendError`, watchdog aborts and `ChildFailedError`s; slurmctld records
`_job_complete: JobId=56740 WEXITSTATUS 1` (a normal FAILED, not NODE_FAIL).

## Verdict a careful engineer reaches
- status: **unattributed**. Every error on node-01/node-03 is a symptom pointing at node-02, but why node-02's
  processes ended (hardware, OOM, application error...) is unknowable without its logs; absence of evidence is not health.
- coverage: node-02 missing for every source (app, kernel, scheduler); node-01 and node-03 complete; slurmctl present.
- culprit nodes: none attributed (node-02 is the obvious suspect to collect logs from next).
- cascade: all NCCL IB completion errors, ncclRemoteError/DistBackendError, watchdog exceptions and srun/torchrun exit lines.

## Timestamp formats
kernel: `dmesg -T` on node-01, syslog on node-03; app: Python logging, c10d `[rank…]:[E0930 12:15:45.…]`, torchrun glog,
NCCL lines untimestamped (NCCL 2.21); slurm `[2026-09-30T12:15:…]`.
"""


SCENARIOS = {
    "completed-clean": (build_completed, README_COMPLETED),
    "time-limit": (build_timelimit, README_TIMELIMIT),
    "cuda-oom-one-rank": (build_oom, README_OOM),
    "nccl-only-unattributed": (build_unattributed, README_UNATTR),
    "missing-kernel-logs": (build_missing, README_MISSING),
}
