"""Application output of a torchrun-launched PyTorch job, one file per node.

Line families and their timestamps:
  * the training script's Python logging:  "2026-03-14 01:12:03,114 INFO [rank8] train: ..."
  * torchrun's agent (glog style, no year): "W0314 01:00:05.184000 52290 torch/distributed/run.py:766] ..."
  * c10d C++ logging (ns, no year, month not zero-padded: c10/util/Logging.cpp): "[rank11]:[E314 02:03:17.914225121 ProcessGroupNCCL.cpp:1896] ..."
  * uncaught Python exceptions:            "[rank5]: Traceback (most recent call last):" (no timestamp)
  * NCCL INFO lines:                        "node-01:52309:52420 [0] NCCL INFO ..." (no timestamp)
  * NCCL WARN lines (NCCL >= 2.26 only):    "[2026-03-14 02:03:25] node-01:52311:52399 [2] ... NCCL WARN ..."
"""

import math

from .common import (Log, sec, ts_pylog, ts_glog, ts_c10d, ts_nccl, ts_elastic, hexid)
from .hw import node_ip, busid


# ----------------------------------------------------------------------------- schedule
def step_schedule(rng, t0, first_step, t_stop, step_time, loss0, ckpt_every=500, ckpt_secs=21.0,
                  eval_every=250, eval_secs=8.5, max_steps=None, lr0=3.0e-4, horizon=120000):
    """Global (job-wide) step timeline: list of dicts with step, t (end of step), loss, ..."""
    rows = []
    t = t0
    s = first_step
    while True:
        dt = step_time * (1.0 + rng.gauss(0, 0.012))
        if rng.random() < 0.004:
            dt += rng.uniform(0.3, 1.4)          # occasional slow step (data stall)
        t = t + sec(dt)
        if t >= t_stop or (max_steps is not None and s > max_steps):
            break
        prog = (s - first_step) / 4000.0
        loss = loss0 - 0.11 * math.log1p(prog) + rng.gauss(0, 0.035)
        lr = lr0 * (0.5 * (1 + math.cos(math.pi * min(1.0, s / float(horizon)))))
        row = dict(step=s, t=t, dt=dt, loss=loss, lr=lr, gn=abs(0.85 + rng.gauss(0, 0.09)))
        if eval_every and s % eval_every == 0:
            row["eval"] = (t, loss + 0.04 + rng.gauss(0, 0.01))
            t = t + sec(eval_secs)
        if ckpt_every and s % ckpt_every == 0:
            row["ckpt"] = (t, ckpt_secs * (1 + rng.gauss(0, 0.05)))
            t = t + sec(row["ckpt"][1])
        row["tend"] = t
        rows.append(row)
        s += 1
    return rows


# ----------------------------------------------------------------------------- node output
class NodeApp:
    def __init__(self, host, idx, nnodes, hw, rng, torchrun_pid, gpus_per_node=8, run="llm8b-r7",
                 job_id="0"):
        self.log = Log()
        self.host, self.idx, self.nnodes, self.hw, self.rng = host, idx, nnodes, hw, rng
        self.n = gpus_per_node
        self.world = nnodes * gpus_per_node
        self.agent_pid = torchrun_pid
        self.pids = [torchrun_pid + 19 + l for l in range(self.n)]
        self.tid_init = [p + rng.randrange(90, 140) for p in self.pids]
        self.tid_proxy = [t + rng.randrange(7, 12) for t in self.tid_init]
        self.run = run
        self.job_id = job_id
        self.nccl = hw["nccl"]
        self.new_nccl = tuple(int(x) for x in self.nccl.split(".")) >= (2, 26, 0)
        self.comm_ptr = ["0x%012x" % (0x55d000000000 + rng.randrange(1 << 36)) for _ in range(self.n)]
        self.pyver = hw["python"]
        self.site = f"/usr/local/lib/python{self.pyver}/dist-packages"

    # -- helpers
    def g(self, l):
        return self.idx * self.n + l

    def pfx(self, l, tid=None):
        return f"{self.host}:{self.pids[l]}:{tid if tid is not None else self.pids[l]} [{l}]"

    def py(self, t, l, level, logger, msg):
        self.log.add(t, f"{ts_pylog(t)} {level} [rank{self.g(l)}] {logger}: {msg}")

    def nccl_info(self, t, l, msg, tid=None):
        self.log.add(t, f"{self.pfx(l, tid if tid is not None else self.tid_init[l])} NCCL INFO {msg}")

    def nccl_warn(self, t, l, where, msg, tid=None):
        tid = tid if tid is not None else self.tid_proxy[l]
        line = f"{self.pfx(l, tid)} {where} NCCL WARN {msg}"
        if self.new_nccl:
            line = f"{ts_nccl(t)} {line}"
        self.log.add(t, line)

    def agent(self, t, level, where, msg):
        self.log.add(t, f"{ts_glog(t, level)} {self.agent_pid} {where}] {msg}")

    def c10d(self, t, l, level, where, msg):
        self.log.add(t, f"[rank{self.g(l)}]:[{ts_c10d(t, level, self.rng)} {where}] {msg}")

    def tb(self, text):
        """Python < 3.11 prints no '^^^^' error-location markers."""
        if self.pyver >= "3.11":
            return text
        return "\n".join(x for x in text.split("\n") if x.strip().strip("^") != "" or not x.strip())

    def rank_lines(self, t, l, text):
        self.log.add(t, "\n".join(f"[rank{self.g(l)}]: {x}" for x in self.tb(text).split("\n")))

    # -- phases
    def torchrun_start(self, t):
        w = "torch/distributed/run.py:766"
        self.agent(t, "W", w, "")
        self.agent(t, "W", w, "*****************************************")
        self.agent(t, "W", w, "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your "
                              "system being overloaded, please further tune the variable for optimal performance in your "
                              "application as needed. ")
        self.agent(t, "W", w, "*****************************************")

    def script_start(self, t, cfg_lines=()):
        rng = self.rng
        for l in range(self.n):
            tl = t + sec(rng.uniform(0.0, 0.6))
            if l == 0:
                self.py(tl, l, "INFO", "train", f"host {self.host} local_rank {l} world_size {self.world} "
                                               f"torch {self.hw['torch']} cuda {self.hw['nccl_cuda'][4:]}")
            if self.idx == 0 and l == 0:
                for i, c in enumerate(cfg_lines):
                    self.py(tl + sec(0.001 * (i + 1)), l, "INFO", "config", c)
            # Benign deprecation warnings printed by every rank at import time.
            if l % 4 == 1:
                self.log.add(tl + sec(0.3), f"{self.site}/torch/utils/checkpoint.py:87: UserWarning: None of the inputs have "
                                            f"requires_grad=True. Gradients will be None")
                self.log.add(tl + sec(0.3), "  warnings.warn(")
        return t + sec(0.8)

    def nccl_init(self, t, nchannels=16, comm_id=None, tail_lines=True):
        """NCCL communicator init for all local ranks; returns completion time."""
        rng, hw = self.rng, self.hw
        comm_id = comm_id or "0x" + hexid(rng, 16)
        ib_ip = node_ip("ib", self.idx + 1)
        nics = " ".join(f"[{i}]{n}:1/IB" for i, n in enumerate(hw["hca_names"]))
        boot_sep = ":" if self.new_nccl else " :"
        end = t
        for l in range(self.n):
            g = self.g(l)
            tl = t + sec(rng.uniform(0.0, 0.4))
            tid = self.tid_init[l]
            inf = lambda dt, m, tid=tid: self.nccl_info(tl + sec(dt), l, m, tid)
            self.log.add(tl, f"{self.pfx(l)} NCCL INFO Bootstrap{boot_sep} Using {hw['ib_if'][0]}:{ib_ip}<0>")
            self.log.add(tl, f"{self.pfx(l)} NCCL INFO cudaDriverVersion {hw['cuda_drv']}")
            if g == 0:
                self.log.add(tl + sec(0.001), f"NCCL version {self.nccl}+{hw['nccl_cuda']}")
            self.log.add(tl + sec(0.002), f"{self.pfx(l)} NCCL INFO Comm config Blocking set to 1")
            inf(0.01, "NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.")
            inf(0.012, f"NCCL_IB_HCA set by environment to ={','.join(hw['hca_names'])}")
            inf(0.05, f"NET/IB : Using {nics} [RO]; OOB {hw['ib_if'][0]}:{ib_ip}<0>")
            inf(0.051, "Using network IB")
            if self.new_nccl:
                inf(0.052, f"DMA-BUF is available on GPU device {l}")
            inf(0.06, f"ncclCommInitRankConfig comm {self.comm_ptr[l]} rank {g} nranks {self.world} cudaDev {l} "
                      f"nvmlDev {l} busId {busid(hw['gpu_pci'][l])} commId {comm_id} - Init START")
            if self.new_nccl:
                inf(0.061, "RAS client listening socket at ::1<28028>")
            bt = rng.uniform(0.3, 0.9)
            inf(0.06 + bt, f"Bootstrap timings total {bt:.6f} (create 0.000031, send 0.000{rng.randrange(100, 400)}, "
                           f"recv {bt - 0.012:.6f}, ring 0.0{rng.randrange(10, 99)}211, delay 0.000000)")
            o = 0.08 + bt
            mask = "ffffffff,ffffffff,00000000,00000000" if l < 4 else "00000000,00000000,ffffffff,ffffffff"
            inf(o, f"Setting affinity for GPU {l} to {mask}")
            if self.new_nccl:
                inf(o + 0.001, f"NVLS multicast support is available on dev {l} (NVLS_NCHANNELS 16)")
            inf(o + 0.02, f"comm {self.comm_ptr[l]} rank {g} nRanks {self.world} nNodes {self.nnodes} localRanks {self.n} "
                          f"localRank {l} MNNVL 0")
            prv, nxt = (g - 1) % self.world, (g + 1) % self.world
            trees = " ".join(f"[{c}] {nxt}/-1/-1->{g}->{prv}" for c in range(4))
            inf(o + 0.021, f"Trees {trees}")
            inf(o + 0.022, "P2P Chunksize set to 131072")
            if g == 0:
                ring = " ".join(str(x) for x in range(self.world))
                for c in range(nchannels):
                    self.nccl_info(tl + sec(o + 0.023), l, f"Channel {c:02d}/{nchannels} : {ring}", tid)
            inf(o + 0.03, f"[Proxy Service] Device {l} CPU core {l * 14 + rng.randrange(0, 13)}")
            inf(o + 0.031, f"[Proxy Service UDS] Device {l} CPU core {l * 14 + rng.randrange(0, 13)}")
            co = o + 0.05
            for c in range(nchannels):
                r0 = c % self.n
                co += 0.0009
                if l == (r0 - 1) % self.n:
                    peer = ((self.idx + 1) % self.nnodes) * self.n + r0
                    inf(co, f"Channel {c:02d}/0 : {g}[{l}] -> {peer}[{r0}] [send] via NET/IB/{l}/GDRDMA")
                elif l == r0:
                    peer = ((self.idx - 1) % self.nnodes) * self.n + (r0 - 1) % self.n
                    inf(co, f"Channel {c:02d}/0 : {peer}[{(r0 - 1) % self.n}] -> {g}[{l}] [receive] via NET/IB/{l}/GDRDMA")
                    inf(co, f"Channel {c:02d}/0 : {g}[{l}] -> {g + 1 if l < self.n - 1 else g - l}[{(l + 1) % self.n}] via P2P/CUMEM/read")
                else:
                    nl = (l + 1) % self.n
                    inf(co, f"Channel {c:02d}/0 : {g}[{l}] -> {self.idx * self.n + nl}[{nl}] via P2P/CUMEM/read")
            inf(co + 0.1, "Connected all rings, use ring PXN 0 GDR 1")
            for c in (l, l + 8):
                other = ((self.idx + 1) % self.nnodes) * self.n + l
                inf(co + 0.11, f"Channel {c:02d}/0 : {g}[{l}] -> {other}[{l}] [send] via NET/IB/{l}/GDRDMA")
                inf(co + 0.111, f"Channel {c:02d}/0 : {other}[{l}] -> {g}[{l}] [receive] via NET/IB/{l}/GDRDMA")
            inf(co + 0.2, "Connected all trees")
            if self.new_nccl:
                inf(co + 0.21, f"NVLS comm {self.comm_ptr[l]} headRank {l} nHeads {self.n} nvlsRanks {self.n} buffSize 1048576 "
                               f"nvlsPerRankSize 201326592 nvlsTotalSize 1610612736")
                inf(co + 0.35, "Connected NVLS tree")
            inf(co + 0.36, "threadThresholds 8/8/64 | 256/8/64 | 512 | 512")
            inf(co + 0.361, f"{nchannels} coll channels, {nchannels} collnet channels, {nchannels if self.new_nccl else 0} nvls channels, "
                            f"32 p2p channels, 32 p2p channels per peer")
            if self.new_nccl:
                inf(co + 0.362, "CC Off, workFifoBytes 1048576")
            inf(co + 0.37, "TUNER/Plugin: Could not find: libnccl-tuner.so. Using internal tuner plugin.")
            inf(co + 0.38, f"ncclCommInitRankConfig comm {self.comm_ptr[l]} rank {g} nranks {self.world} cudaDev {l} "
                           f"nvmlDev {l} busId {busid(hw['gpu_pci'][l])} commId {comm_id} - Init COMPLETE")
            tot = co + 0.38
            inf(co + 0.381, f"Init timings - ncclCommInitRankConfig: rank {g} nranks {self.world} total {tot:.2f} (kernels 0.21, "
                            f"alloc 0.{rng.randrange(10, 30)}, bootstrap {bt:.2f}, allgathers 0.0{rng.randrange(2, 9)}, topo 0.{rng.randrange(40, 80)}, "
                            f"graphs 0.03, connections {co - o:.2f}, rest 0.1{rng.randrange(0, 9)})")
            end = max(end, tl + sec(co + 0.4))
        return end

    def barrier_warning(self, t):
        for l in range(self.n):
            self.c10d(t + sec(self.rng.uniform(0, 0.05)), l, "W", "ProcessGroupNCCL.cpp:4718",
                      f"[PG ID 0 PG GUID 0 Rank {self.g(l)}]  using GPU {l} as device used by this process is currently unknown. "
                      f"This can potentially cause a hang if this rank to GPU mapping is incorrect. Specify device_id in "
                      f"init_process_group() to bind this rank to a particular device.")

    def training(self, rows, log_every=1, first_step_log=None, mem=(61.0, 79.15), tokens_per_s=1.32e6,
                 t_limit=None, warn_hook=None):
        """Progress lines by local rank 0 (every node); eval/ckpt by global rank 0."""
        rng = self.rng
        off = self.idx * 0.0041
        mean_dt = sum(r["dt"] for r in rows) / max(1, len(rows))
        for r in rows:
            if t_limit is not None and r["t"] >= t_limit:
                break
            t = r["t"] + sec(off + rng.uniform(0.001, 0.02))
            if r["step"] % log_every == 0:
                loss = r["loss"] + rng.gauss(0, 0.02) * (self.idx > 0)
                tps = tokens_per_s / self.nnodes * (mean_dt / r["dt"]) * (1 + rng.gauss(0, 0.004))
                self.py(t, 0, "INFO", "train",
                        f"step {r['step']} | loss {loss:.4f} | lr {r['lr']:.3e} | grad_norm {r['gn']:.3f} | "
                        f"{tps / 1e6:.2f}M tok/s | {r['dt']:.2f} s/step | mem {mem[0] + rng.uniform(0, 0.8):.1f}/{mem[1]:.1f} GiB")
            if "eval" in r:
                te, vloss = r["eval"]
                if self.idx == 0:
                    self.py(te + sec(0.002), 0, "INFO", "eval", f"running validation at step {r['step']} (64 batches)")
                    self.py(te + sec(8.3), 0, "INFO", "eval", f"step {r['step']} | val_loss {vloss:.4f} | val_ppl {math.exp(vloss):.2f}")
            if "ckpt" in r:
                tc, dur = r["ckpt"]
                if self.idx == 0:
                    self.py(tc + sec(0.01), 0, "INFO", "checkpoint",
                            f"saving step {r['step']} to /lustre/ckpt/{self.run}/step_{r['step']:07d} (async=False)")
                self.py(tc + sec(dur * 0.9), 0, "INFO", "checkpoint",
                        f"rank{self.g(0)} wrote {self.n} shards ({rng.uniform(28.5, 31.5):.1f} GiB) in {dur * 0.9:.1f}s")
                if self.idx == 0:
                    self.py(tc + sec(dur), 0, "INFO", "checkpoint", f"step {r['step']} committed in {dur:.1f}s")
            if warn_hook:
                warn_hook(self, r)

    # -- failure building blocks
    def ib_completion_error(self, t, l, peer_ip, peer_port, status=12, vendor=129, opcode=0, direction="Recv",
                            local_gid=None, remote_gid=None):
        where = "transport/net_ib.cc:2092" if self.new_nccl else "transport/net_ib.cc:1696"
        lg = local_gid or f"fe80::a088:c203:{self.idx + 1:02x}:{0x4b10 + l:x}"
        rgid = remote_gid or f"fe80::a088:c203:{peer_ip.split('.')[-1]}:{0x4b10 + l:x}"
        msg = (f"NET/IB : Got completion from peer {peer_ip}<{peer_port}> with status={status} opcode={opcode} "
               f"len=0 vendor err {vendor} ({direction}) localGid {lg} remoteGids{rgid}")
        self.nccl_warn(t, l, where, msg)
        p = self.tid_proxy[l]
        self.log.add(t, f"{self.pfx(l, p)} NCCL INFO transport/net.cc:1293 -> 6")
        self.log.add(t, f"{self.pfx(l, p)} NCCL INFO proxy.cc:698 -> 6")
        self.log.add(t, f"{self.pfx(l, p)} NCCL INFO proxy.cc:878 -> 6 [Progress Thread]")
        return msg

    def socket_error(self, t, l, peer_ip, peer_port, what="Connection reset by peer"):
        where = "misc/socket.cc:64" if self.new_nccl else "misc/socket.cc:52"
        msg = f"socketProgressOpt: Call to recv from {peer_ip}<{peer_port}> failed : {what}"
        self.nccl_warn(t, l, where, msg, tid=self.tid_proxy[l] + 2)
        self.log.add(t, f"{self.pfx(l, self.tid_proxy[l] + 2)} NCCL INFO misc/socket.cc:{846 if self.new_nccl else 788} -> 6")
        return msg

    def watchdog_remote_error(self, t, l, last_error, exit_after=True):
        v = self.nccl
        g = self.g(l)
        src = "/pytorch/torch/csrc/distributed/c10d" if self.new_nccl else "../torch/csrc/distributed/c10d"
        head = (f"[PG ID 0 PG GUID 0(default_pg) Rank {g}] Process group watchdog thread terminated with exception: "
                f"NCCL error: remote process exited or there was a network error, NCCL version {v}")
        body = ("ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
                f"Last error:\n{last_error}")
        frames = self._frames("checkForNCCLErrorsInternal", src)
        self.c10d(t, l, "E", "ProcessGroupNCCL.cpp:1896", head + "\n" + body + "\n" + frames)
        if exit_after:
            self.log.add(t + sec(0.001), "terminate called after throwing an instance of 'c10::DistBackendError'")
            self.log.add(t + sec(0.001), "  what():  " + head + "\n" + body + "\n" + frames)

    def _frames(self, fn, src, kind="nccl"):
        lib = f"{self.site}/torch/lib"
        r = self.rng
        base = {k: 0x7f0000000000 + (r.randrange(1 << 28) << 12) for k in ("c10", "cuda", "cxx", "libc")}
        a = lambda k, off: "0x%x" % (base[k] + off)
        if kind == "cuda":
            head = [f"Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:43 (most recent call first):",
                    f"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 ({a('c10', 0x98788)} in {lib}/libc10.so)",
                    f"frame #1: c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool) + 0x2d2 ({a('c10', 0x3e4f2)} in {lib}/libc10_cuda.so)",
                    f"frame #2: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x50 ({a('cuda', 0x1021a50)} in {lib}/libtorch_cuda.so)",
                    f"frame #3: c10d::ProcessGroupNCCL::WorkNCCL::isCompleted() + 0x90 ({a('cuda', 0x1022c90)} in {lib}/libtorch_cuda.so)"]
        else:
            head = [f"Exception raised from {fn} at {src}/ProcessGroupNCCL.cpp:{2345 if self.new_nccl else 2027} (most recent call first):",
                    f"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 ({a('c10', 0x98788)} in {lib}/libc10.so)",
                    f"frame #1: c10d::ProcessGroupNCCL::{fn}(std::shared_ptr<c10d::NCCLComm>&) + 0x220 ({a('cuda', 0x101f3a0)} in {lib}/libtorch_cuda.so)",
                    f"frame #2: c10d::ProcessGroupNCCL::WorkNCCL::checkAndSetException() + 0x7c ({a('cuda', 0x101f67c)} in {lib}/libtorch_cuda.so)",
                    f"frame #3: c10d::ProcessGroupNCCL::WorkNCCL::isCompleted() + 0x58 ({a('cuda', 0x1022c58)} in {lib}/libtorch_cuda.so)"]
        return "\n".join(head + [
            f"frame #4: c10d::ProcessGroupNCCL::watchdogHandler() + 0x213 ({a('cuda', 0x1027883)} in {lib}/libtorch_cuda.so)",
            f"frame #5: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d ({a('cuda', 0x102905d)} in {lib}/libtorch_cuda.so)",
            f"frame #6: <unknown function> + 0xecdb4 ({a('cxx', 0xecdb4)} in /lib/x86_64-linux-gnu/libstdc++.so.6)",
            f"frame #7: <unknown function> + 0x9caa4 ({a('libc', 0x9caa4)} in /lib/x86_64-linux-gnu/libc.so.6)",
            f"frame #8: <unknown function> + 0x129c3c ({a('libc', 0x129c3c)} in /lib/x86_64-linux-gnu/libc.so.6)",
            ""])

    def py_distbackend_traceback(self, t, l, last_error, line_no):
        src = "/pytorch/torch/csrc/distributed/c10d" if self.new_nccl else "../torch/csrc/distributed/c10d"
        tb = "\n".join([
            "Traceback (most recent call last):",
            '  File "/workspace/llm/train.py", line 611, in <module>',
            "    main()",
            '  File "/workspace/llm/train.py", line 597, in main',
            "    trainer.fit()",
            '  File "/workspace/llm/trainer.py", line 284, in fit',
            "    metrics = self.train_step(batch)",
            "              ^^^^^^^^^^^^^^^^^^^^^^",
            '  File "/workspace/llm/trainer.py", line 341, in train_step',
            "    dist.all_reduce(loss_t, op=dist.ReduceOp.AVG)",
            f'  File "{self.site}/torch/distributed/c10d_logger.py", line 81, in wrapper',
            "    return func(*args, **kwargs)",
            "           ^^^^^^^^^^^^^^^^^^^^^",
            f'  File "{self.site}/torch/distributed/distributed_c10d.py", line 2810, in all_reduce',
            "    work.wait()",
            f"torch.distributed.DistBackendError: NCCL error in: {src}/ProcessGroupNCCL.cpp:{line_no}, remote process "
            f"exited or there was a network error, NCCL version {self.nccl}",
            "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
            "Last error:",
            last_error])
        self.rank_lines(t, l, tb)

    def torchrun_failure(self, t, failed_l, exitcode, others_sigterm=True, other_failures=(), first_ts=None):
        """Agent tears down the local group and prints the ChildFailedError summary."""
        api = "torch/distributed/elastic/multiprocessing/api.py"
        tt = t
        if others_sigterm:
            for l in range(self.n):
                if l == failed_l or l in [o[0] for o in other_failures]:
                    continue
                self.agent(tt, "W", f"{api}:897", f"Sending process {self.pids[l]} closing signal SIGTERM")
                tt = tt + sec(0.0011)
        tf = tt + sec(self.rng.uniform(0.6, 1.3))
        self.agent(tf, "E", f"{api}:869", f"failed (exitcode: {exitcode}) local_rank: {failed_l} (pid: {self.pids[failed_l]}) "
                                          f"of binary: /usr/bin/python3")
        site = self.site
        tb = "\n".join([
            "Traceback (most recent call last):",
            '  File "/usr/local/bin/torchrun", line 8, in <module>',
            "    sys.exit(main())",
            "             ^^^^^^",
            f'  File "{site}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
            "    return f(*args, **kwargs)",
            "           ^^^^^^^^^^^^^^^^^^",
            f'  File "{site}/torch/distributed/run.py", line 892, in main',
            "    run(args)",
            f'  File "{site}/torch/distributed/run.py", line 883, in run',
            "    elastic_launch(",
            f'  File "{site}/torch/distributed/launcher/api.py", line 139, in __call__',
            "    return launch_agent(self._config, self._entrypoint, list(args))",
            "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
            f'  File "{site}/torch/distributed/launcher/api.py", line 270, in launch_agent',
            "    raise ChildFailedError(",
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
            "============================================================",
            "/workspace/llm/train.py FAILED",
            "------------------------------------------------------------",
            "Failures:"])
        ts_first = first_ts or tf
        if other_failures:
            for i, (ol, oex, ot) in enumerate(other_failures, 1):
                tb += "\n" + "\n".join([
                    f"[{i}]:",
                    f"  time      : {ts_elastic(ot)}",
                    f"  host      : {self.host}",
                    f"  rank      : {self.g(ol)} (local_rank: {ol})",
                    f"  exitcode  : {oex} (pid: {self.pids[ol]})",
                    "  error_file: <N/A>",
                    "  traceback : " + (f"Signal {-oex} ({'SIGABRT' if oex == -6 else 'SIGTERM'}) received by PID {self.pids[ol]}"
                                        if oex < 0 else "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")])
        else:
            tb += "\n  <NO_OTHER_FAILURES>"
        sig = {-6: "SIGABRT", -15: "SIGTERM", -9: "SIGKILL"}.get(exitcode)
        tb += "\n" + "\n".join([
            "------------------------------------------------------------",
            "Root Cause (first observed failure):",
            "[0]:",
            f"  time      : {ts_elastic(ts_first)}",
            f"  host      : {self.host}",
            f"  rank      : {self.g(failed_l)} (local_rank: {failed_l})",
            f"  exitcode  : {exitcode} (pid: {self.pids[failed_l]})",
            "  error_file: <N/A>",
            "  traceback : " + (f"Signal {-exitcode} ({sig}) received by PID {self.pids[failed_l]}" if sig
                                else "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"),
            "============================================================"])
        self.log.add(tf + sec(0.05), self.tb(tb))
        return tf + sec(0.06)
