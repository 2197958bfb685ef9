#!/usr/bin/env python3
"""Generate a LARGE synthetic Culprit bundle for memory / throughput tests.

The bundle has the same layout as examples/*: context.json and logs/<host>/<source>.log
(app, kernel, fabricmanager per node; slurmctl/scheduler.log for the control plane).
Traffic is realistic benign output of a torchrun + NCCL training job (progress lines from
every rank, NCCL INFO init and per-collective COLL lines, data-loader and checkpoint lines,
kernel and Fabric Manager noise), all timestamps inside the context window, plus a
configurable rate of benign error-looking lines and (optionally) one injected root cause
with its cascade on the other nodes.

Output is streamed file by file in large chunks, so memory stays constant whatever the
size. The same arguments and seed always produce byte-identical output.

Event-heavy mode (--error-share F > 0): a failing job at scale logs far more than one
root cause. A share F of each node's application lines becomes the failure output of its
ranks after the fault (NCCL WARN completion, socket, async-event and CUDA-failure lines,
c10d watchdog timeouts and stuck-watchdog lines, DistBackendError and ncclRemoteError
lines, torchrun exit codes), spread over the twelve minutes the watchdogs need to fire;
--ranks-per-node sets how many ranks each node's log speaks for (each rank gets its own
watchdog symptoms), and --xid-bursts N adds N bursts of XID 13/31/43/45 lines per node to
the kernel log after the fault, and --fallen-gpus N makes N GPUs (round-robin over the nodes)
log XID 79, fallen off the bus, 5 s before the fault: N equal top-priority causes, for the
symptom-heavy shape of bench/symptoms_bench.sh. Every line is spelled as the tool prints it (sources named
at each template below); the catalog extracts each as an event, so the rule engine sees
tens of thousands to millions of events while the root cause stays the injected one.

Examples:
  python3 bench/generate_bundle.py /tmp/big --nodes 8 --bytes-per-node 250M --inject nvlink-xid149
  python3 bench/generate_bundle.py /tmp/big --nodes 64 --total-bytes 1G --error-rate 0.002 --seed 7 --inject cuda-oom
  python3 bench/generate_bundle.py /tmp/ok  --nodes 4 --bytes-per-node 50M --inject none
  python3 bench/generate_bundle.py /tmp/hot --nodes 8 --bytes-per-node 16M --error-share 0.05 --ranks-per-node 64 --xid-bursts 40

Expected verdicts:
  nvlink-xid149  attributed, hardware / nvlink, culprit = the node printed on stderr (and in README.md)
  cuda-oom       attributed, software / cuda_oom, culprit = the node printed on stderr
  none           no_failure (COMPLETED, exit 0)
"""

import argparse
import json
import os
import random
import sys
import time
from datetime import datetime, timedelta, timezone

UTC = timezone.utc
MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
DAY = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MS3 = ["%03d" % i for i in range(1000)]
CHUNK_LINES = 16384

GPU_PCI = ["0000:1b:00", "0000:43:00", "0000:52:00", "0000:61:00", "0000:9d:00", "0000:c3:00", "0000:d1:00", "0000:df:00"]
HCAS = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
HCA_PCI = ["0000:1a:00.0", "0000:3c:00.0", "0000:4d:00.0", "0000:5e:00.0", "0000:9c:00.0", "0000:bc:00.0", "0000:cc:00.0", "0000:dc:00.0"]
NCCL_VER = "2.26.2"
SITE = "/usr/local/lib/python3.12/dist-packages"


# ----------------------------------------------------------------------------- small helpers
def parse_size(s):
    s = s.strip().upper().rstrip("B")
    mult = 1
    for suf, m in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("T", 1 << 40)):
        if s.endswith(suf):
            s, mult = s[:-1], m
            break
    try:
        v = int(float(s) * mult)
    except ValueError:
        raise argparse.ArgumentTypeError("size must look like 512K, 250M, 1G or a byte count")
    if v <= 0:
        raise argparse.ArgumentTypeError("size must be positive")
    return v


def parse_time(s):
    s = s.rstrip("Z")
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)


def rfc3339(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def hostname(i, n):
    return "node-%0*d" % (max(2, len(str(n))), i + 1)


def ib_ip(i):
    return "10.10.%d.%d" % (2 + i // 240, 10 + i % 240)


def ts_py(t):
    return "%04d-%02d-%02d %02d:%02d:%02d" % (t.year, t.month, t.day, t.hour, t.minute, t.second)


class TimePrefix:
    """Caches the per-second part of a timestamp; callers append milliseconds."""

    def __init__(self, fmt):
        self.fmt = fmt
        self.cache_s = None
        self.cache_v = None

    def get(self, epoch_s):
        if epoch_s != self.cache_s:
            self.cache_s = epoch_s
            self.cache_v = self.fmt(datetime.fromtimestamp(epoch_s, UTC))
        return self.cache_v


class Writer:
    def __init__(self, path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.f = open(path, "w", buffering=1 << 20)
        self.n = 0

    def write(self, s):
        self.f.write(s)
        self.n += len(s)

    def close(self):
        self.f.close()


# ----------------------------------------------------------------------------- app log
class AppGen:
    """Per-node application output of a 8-GPU torchrun worker group."""

    def __init__(self, node, n_nodes, rng, plan, error_rate):
        self.node, self.n_nodes, self.rng, self.plan = node, n_nodes, rng, plan
        self.host = hostname(node, n_nodes)
        self.world = n_nodes * 8
        self.agent_pid = 30000 + rng.randrange(40000)
        self.pids = [self.agent_pid + 19 + l for l in range(8)]
        self.tids = [p + 100 + rng.randrange(40) for p in self.pids]
        self.error_rate = error_rate
        self.comm = ["0x55d%09x" % rng.randrange(1 << 36) for _ in range(8)]
        self._build_pools()

    def _pfx(self, l, tid=None):
        return "%s:%d:%d [%d]" % (self.host, self.pids[l], tid or self.tids[l], l)

    def _build_pools(self):
        rng, h = self.rng, self.host
        g0 = self.node * 8
        # Timestamped bodies (follow "YYYY-mm-dd HH:MM:SS,mmm").
        ts_bodies = []
        for _ in range(1500):
            r = g0 + rng.randrange(8)
            ts_bodies.append(" DEBUG [rank%d] data: fetched shard /lustre/data/tok/web-mix-v3/shard-%05d.bin (%d seqs) in %.2fs\n"
                             % (r, rng.randrange(4096), rng.randrange(200, 900), rng.uniform(0.05, 1.9)))
        for _ in range(600):
            r = g0 + rng.randrange(8)
            ts_bodies.append(" DEBUG [rank%d] fsdp: all-gather bucket %d (%.1f MiB) issued, prefetch depth %d\n"
                             % (r, rng.randrange(64), rng.uniform(32, 512), rng.randrange(1, 4)))
        for _ in range(300):
            r = g0 + rng.randrange(8)
            ts_bodies.append(" INFO [rank%d] timer: fwd %.1fms bwd %.1fms optim %.1fms comm-exposed %.1fms\n"
                             % (r, rng.uniform(500, 620), rng.uniform(1000, 1200), rng.uniform(60, 90), rng.uniform(5, 40)))
        self.ts_bodies = ts_bodies
        # Untimestamped NCCL per-collective debug (NCCL_DEBUG_SUBSYS=COLL).
        coll = []
        for _ in range(2000):
            l = rng.randrange(8)
            op = rng.choice(["AllGather", "ReduceScatter", "AllReduce"])
            coll.append("%s NCCL INFO %s: opCount %x sendbuff 0x7f%09x recvbuff 0x7f%09x count %d datatype %d op %d root 0 "
                        "comm %s [nranks=%d] stream 0x55d%09x\n"
                        % (self._pfx(l, self.pids[l]), op, rng.randrange(1 << 24), rng.randrange(1 << 36),
                           rng.randrange(1 << 36), rng.choice([6553600, 26214400, 1048576, 1]), rng.choice([7, 9]),
                           0 if op == "AllGather" else rng.choice([0, 2]), self.comm[l], self.world, rng.randrange(1 << 36)))
        self.coll = coll
        self.tails = []
        for _ in range(4096):
            self.tails.append(" | loss %.4f | lr %.3e | grad_norm %.3f | %.2fM tok/s | %.2f s/step | mem %.1f/178.3 GiB\n"
                              % (2.3 + rng.gauss(0, 0.05), 2.25e-4, abs(0.85 + rng.gauss(0, 0.09)), 0.33 + rng.gauss(0, 0.004),
                                 1.95 + rng.gauss(0, 0.02), 141 + rng.uniform(0, 1)))
        # Benign error-looking lines (timestamped bodies, or complete untimestamped lines starting with '\x00').
        b = []
        for l in range(8):
            r = g0 + l
            b.append(" WARNING [rank%d] data: slow read of /lustre/data/tok/web-mix-v3/shard-%05d.bin (%.1fs); prefetch queue drained to 1/4\n"
                     % (r, rng.randrange(4096), rng.uniform(3, 7)))
            b.append(" WARNING [rank%d] train: loss spike detected (%.2f > 3.0 x ema); continuing\n" % (r, rng.uniform(7, 9)))
            b.append(" ERROR [rank%d] metrics: failed to push to http://metrics.cluster.local:9091 (timeout after 5s); will retry\n" % r)
        b.append("\x00%s/torch/utils/checkpoint.py:87: UserWarning: None of the inputs have requires_grad=True. Gradients will be None\n" % SITE)
        b.append("\x00[%%s] %s transport/net_ib.cc:125 NCCL WARN NET/IB : %s:1 Got async event : GID table change\n"
                 % (self._pfx(2, self.tids[2] + 9), HCAS[2]))
        b.append("\x00[%%s] %s init.cc:1983 NCCL WARN Ignoring NCCL_SOCKET_NTHREADS=8: only used by the socket transport (NET/IB is in use)\n"
                 % self._pfx(0, self.pids[0]))
        b.append("\x00%s NCCL INFO [Service thread] Connection closed by localRank %d\n" % (self._pfx(0, self.tids[0] - 3), rng.randrange(1, 8)))
        self.benign = b

    # -- fixed blocks
    def header(self, t):
        p = self.plan
        out = []
        if self.node == 0:
            out.append("Job %s on %d nodes starting at %s\n" % (p["job"], self.n_nodes, t.strftime("%a %b %d %H:%M:%S UTC %Y")))
        g = "W%s %d torch/distributed/run.py:766] " % (t.strftime("%m%d %H:%M:%S.000000"), self.agent_pid)
        out += [g + "\n", g + "*****************************************\n",
                g + "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system "
                    "being overloaded, please further tune the variable for optimal performance in your application as needed. \n",
                g + "*****************************************\n"]
        tn = t + timedelta(seconds=30)
        for l in range(8):
            pre = self._pfx(l, self.pids[l])
            ip = ib_ip(self.node)
            out.append("%s NCCL INFO Bootstrap: Using ibp26s0:%s<0>\n" % (pre, ip))
            out.append("%s NCCL INFO cudaDriverVersion 12080\n" % pre)
            if self.node == 0 and l == 0:
                out.append("NCCL version %s+cuda12.8\n" % NCCL_VER)
            pi = self._pfx(l)
            out.append("%s NCCL INFO NET/IB : Using %s [RO]; OOB ibp26s0:%s<0>\n"
                       % (pi, " ".join("[%d]%s:1/IB" % (i, n) for i, n in enumerate(HCAS)), ip))
            out.append("%s NCCL INFO Using network IB\n" % pi)
            out.append("%s NCCL INFO ncclCommInitRankConfig comm %s rank %d nranks %d cudaDev %d nvmlDev %d busId %s000 "
                       "commId 0x%s - Init START\n" % (pi, self.comm[l], self.node * 8 + l, self.world, l, l,
                                                       GPU_PCI[l].split(":")[1], p["comm_id"]))
            for c in range(16):
                nxt = ((self.node + 1) % self.n_nodes) * 8 + l
                if c % 8 == l:
                    out.append("%s NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] [send] via NET/IB/%d/GDRDMA\n"
                               % (pi, c, self.node * 8 + l, l, nxt, l, l))
                else:
                    out.append("%s NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] via P2P/CUMEM/read\n"
                               % (pi, c, self.node * 8 + l, l, self.node * 8 + (l + 1) % 8, (l + 1) % 8))
            out.append("%s NCCL INFO Connected all rings, use ring PXN 0 GDR 1\n" % pi)
            out.append("%s NCCL INFO Connected all trees\n" % pi)
            out.append("%s NCCL INFO ncclCommInitRankConfig comm %s rank %d nranks %d cudaDev %d nvmlDev %d busId %s000 "
                       "commId 0x%s - Init COMPLETE\n" % (pi, self.comm[l], self.node * 8 + l, self.world, l, l,
                                                          GPU_PCI[l].split(":")[1], p["comm_id"]))
        ts = ts_py(tn) + ",512"
        out.append("%s INFO [rank%d] checkpoint: resuming from /lustre/ckpt/bench/step_%07d\n" % (ts, self.node * 8, p["step0"]))
        return "".join(out)

    def traffic(self, w, t_from, t_to, nbytes):
        """Stream ~nbytes of interleaved lines with times spread evenly in [t_from, t_to)."""
        rng = self.rng
        avg = 150.0
        nlines = max(1, int(nbytes / avg))
        a_ms = int(t_from.timestamp() * 1000)
        span = max(1, int((t_to - t_from).total_seconds() * 1000) - 1)
        dt = span / nlines
        tp = TimePrefix(lambda d: "%04d-%02d-%02d %02d:%02d:%02d," % (d.year, d.month, d.day, d.hour, d.minute, d.second))
        tpn = TimePrefix(lambda d: "%04d-%02d-%02d %02d:%02d:%02d" % (d.year, d.month, d.day, d.hour, d.minute, d.second))
        step_ms = int(self.plan["step_time"] * 1000)
        train0 = self.plan["train0_ms"]
        step0 = self.plan["step0"]
        g0 = self.node * 8
        tails, ts_bodies, coll, benign = self.tails, self.ts_bodies, self.coll, self.benign
        # kinds: 0 progress (every rank), 1 timestamped body, 2 NCCL COLL (untimestamped), 3 benign error-looking
        er = self.error_rate
        cum = [0.30 * (1 - er), 0.72 * (1 - er), 1.0 - er, 1.0]
        written = 0
        i = 0
        while i < nlines and written < nbytes:
            k = min(CHUNK_LINES, nlines - i)
            kinds = rng.choices((0, 1, 2, 3), cum_weights=cum, k=k)
            picks = [rng.getrandbits(16) for _ in range(k)]
            buf = []
            app = buf.append
            for j in range(k):
                tms = a_ms + int((i + j) * dt)
                s, ms = divmod(tms, 1000)
                kd = kinds[j]
                r = picks[j]
                if kd == 0:
                    step, into = divmod(tms - train0, step_ms)
                    app("%s%s INFO [rank%d] train: step %d mb %d/16%s" % (tp.get(s), MS3[ms], g0 + (r & 7), step0 + step,
                                                                        1 + into * 16 // step_ms, tails[r & 4095]))
                elif kd == 1:
                    app(tp.get(s) + MS3[ms] + ts_bodies[r % len(ts_bodies)])
                elif kd == 2:
                    app(coll[r % len(coll)])
                else:
                    b = benign[r % len(benign)]
                    if b[0] == "\x00":
                        b = b[1:]
                        app(b % tpn.get(s) if "%s" in b else b)
                    else:
                        app(tp.get(s) + MS3[ms] + b)
            chunk = "".join(buf)
            w.write(chunk)
            written += len(chunk)
            i += k
        return written


# ----------------------------------------------------------------------------- kernel log
class KernelGen:
    def __init__(self, node, n_nodes, rng, boot, style, error_rate):
        self.host = hostname(node, n_nodes)
        self.node, self.rng, self.boot, self.style, self.error_rate = node, rng, boot, style, error_rate
        self.boot_s = int(boot.timestamp())
        h = self.host
        if style == "syslog":
            self.tp = TimePrefix(lambda d: "%s %2d %02d:%02d:%02d %s kernel: [" % (MON[d.month - 1], d.day, d.hour, d.minute, d.second, h))
            self.tps = TimePrefix(lambda d: "%s %2d %02d:%02d:%02d %s " % (MON[d.month - 1], d.day, d.hour, d.minute, d.second, h))
        else:
            self.tp = TimePrefix(lambda d: "[%s %s %2d %02d:%02d:%02d %d] " % (DAY[d.weekday()], MON[d.month - 1], d.day, d.hour, d.minute, d.second, d.year))
        rngl = rng
        self.noise = []
        for _ in range(400):
            self.noise.append(rngl.choice([
                "kauditd_printk_skb: %d callbacks suppressed" % rngl.randrange(3, 40),
                "overlayfs: fs on '/tmp/enroot-data/user-1043/pyxis_%d.0' does not support file handles, falling back to xino=off." % rngl.randrange(30000, 60000),
                "Lustre: lustre-OST%04x-osc-ff1d4c7b29e18000: Connection restored to 10.10.3.%d@o2ib" % (rngl.randrange(48), rngl.randrange(2, 30)),
                "audit: type=1400 audit(%d.%03d:%d): apparmor=\"STATUS\" operation=\"profile_replace\" info=\"same as current profile, skipping\" "
                "profile=\"unconfined\" name=\"rsyslogd\" pid=%d comm=\"apparmor_parser\"" % (self.boot_s + rngl.randrange(10 ** 6), rngl.randrange(1000), rngl.randrange(100, 999), rngl.randrange(10 ** 5, 4 * 10 ** 5)),
                "process 'python3' launched '/dev/fd/3' with NULL argv: empty string added",
                "ipmi_si IPI0001:00: IPMI message handler: BMC returned 0xd5, flag 0x00",
                "nvidia-nvswitch: fabric state polled, 0 pending events",
                "IPv4: martian source 10.20.0.255 from 10.20.0.%d, on dev bond0" % rngl.randrange(60, 200),
            ]))
        self.benign = [
            "ACPI Error: AE_NOT_FOUND, During name lookup/catalog (20230628/psobject-220)",
            "pcieport 0000:80:01.1: AER: Correctable error message received from 0000:82:00.0",
            "pcieport 0000:80:01.1: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)",
            "EDAC MC2: 1 CE memory read error on CPU_SrcID#1_MC#2_Chan#0_DIMM#0 (channel:0 slot:0 page:0x5c2e31 offset:0x0 grain:32 syndrome:0x0)",
            "perf: interrupt took too long (3136 > 3132), lowering kernel.perf_event_max_sample_rate to 63750",
            "TCP: request_sock_TCP: Possible SYN flooding on port 29500. Sending cookies.  Check SNMP counters.",
            "mlx5_core %s %s: Port: 1 Link ACTIVE" % (HCA_PCI[3], HCAS[3]),
            "nfs: server home01 OK",
        ]

    def line(self, tms, msg):
        s, ms = divmod(tms, 1000)
        if self.style == "syslog":
            up = s - self.boot_s
            return "%s%5d.%s%03d] %s\n" % (self.tp.get(s), up, MS3[ms], (tms * 7) % 1000, msg)
        return self.tp.get(s) + msg + "\n"

    def boot_block(self):
        b = int(self.boot.timestamp() * 1000)
        msgs = ["Linux version 6.8.0-60-generic (buildd@lcy02-amd64-071) #63-Ubuntu SMP PREEMPT_DYNAMIC Tue Apr 15 19:04:15 UTC 2025",
                "Command line: BOOT_IMAGE=/boot/vmlinuz-6.8.0-60-generic ro intel_iommu=on iommu=pt",
                "DMI: NVIDIA DGXB200-8/DGXB200-8, BIOS 1.3.4 10/22/2025",
                "ACPI BIOS Error (bug): Could not resolve symbol [\\_SB.PC06.BR6A.SL2B], AE_NOT_FOUND (20230628/dswload2-162)",
                "ACPI Error: AE_NOT_FOUND, During name lookup/catalog (20230628/psobject-220)"]
        for i, pci in enumerate(HCA_PCI):
            msgs.append("mlx5_core %s: firmware version: 28.43.2026" % pci)
        msgs.append("nvidia: loading out-of-tree module taints kernel.")
        msgs.append("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.133.20  Fri Feb 28 01:04:53 UTC 2026")
        for i, (pci, n) in enumerate(zip(HCA_PCI, HCAS)):
            msgs.append("mlx5_core %s %s: Port: 1 Link ACTIVE" % (pci, n))
        return "".join(self.line(b + 1000 * i, m) for i, m in enumerate(msgs))

    def traffic(self, w, t_from, t_to, nbytes):
        rng = self.rng
        nlines = max(1, int(nbytes / 115))
        a = int(t_from.timestamp() * 1000)
        dt = max(1, int((t_to - t_from).total_seconds() * 1000) - 1) / nlines
        noise, benign = self.noise, self.benign
        er = self.error_rate
        written, i = 0, 0
        line = self.line
        while i < nlines and written < nbytes:
            k = min(CHUNK_LINES, nlines - i)
            buf = []
            for j in range(k):
                r = rng.random()
                msg = benign[int(r * 1e6) % len(benign)] if r < er else noise[int(r * 1e6) % len(noise)]
                buf.append(line(a + int((i + j) * dt), msg))
            chunk = "".join(buf)
            w.write(chunk)
            written += len(chunk)
            i += k
        return written


# ----------------------------------------------------------------------------- fabric manager
def fm_traffic(w, rng, t_from, t_to, nbytes):
    nlines = max(1, int(nbytes / 150))
    a = int(t_from.timestamp() * 1000)
    dt = max(1, int((t_to - t_from).total_seconds() * 1000) - 1) / nlines
    tp = TimePrefix(lambda d: "[%s %02d %d %02d:%02d:%02d] [INFO] [tid 2855] " % (MON[d.month - 1], d.day, d.year, d.hour, d.minute, d.second))
    written, i = 0, 0
    while i < nlines and written < nbytes:
        k = min(CHUNK_LINES, nlines - i)
        buf = []
        for j in range(k):
            s = (a + int((i + j) * dt)) // 1000
            rid = rng.getrandbits(64)
            if (i + j) & 1:
                buf.append("%sSending inband response message:  Message header details: magic Id:adbc request Id:%016x status:0 type:3 length:24\n" % (tp.get(s), rid))
            else:
                buf.append("%sReceived an inband message:  Message header details: magic Id:adbc request Id:%016x status:0 type:2 length:40\n" % (tp.get(s), rid))
        chunk = "".join(buf)
        w.write(chunk)
        written += len(chunk)
        i += k
    return written


# ----------------------------------------------------------------------------- injections
def c10d_ts(t, lvl, rng):
    return "%s%s.%06d%03d" % (lvl, t.strftime("%m%d %H:%M:%S"), t.microsecond, rng.randrange(1000))


def glog(t, lvl, pid):
    return "%s%s.%03d000 %d" % (lvl, t.strftime("%m%d %H:%M:%S"), t.microsecond // 1000, pid)


def child_failed(app, t, l, exitcode):
    sig = {-6: "Signal 6 (SIGABRT) received by PID %d", -15: "Signal 15 (SIGTERM) received by PID %d"}.get(exitcode)
    tb = sig % app.pids[l] if sig else "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
    api = "torch/distributed/elastic/multiprocessing/api.py"
    out = ["%s %s:897] Sending process %d closing signal SIGTERM\n" % (glog(t, "W", app.agent_pid), api, app.pids[x]) for x in range(8) if x != l]
    tf = t + timedelta(seconds=1.1)
    out.append("%s %s:869] failed (exitcode: %d) local_rank: %d (pid: %d) of binary: /usr/bin/python3\n"
               % (glog(tf, "E", app.agent_pid), api, exitcode, l, app.pids[l]))
    out += ["Traceback (most recent call last):\n", '  File "/usr/local/bin/torchrun", line 8, in <module>\n', "    sys.exit(main())\n",
            '  File "%s/torch/distributed/launcher/api.py", line 270, in launch_agent\n' % SITE, "    raise ChildFailedError(\n",
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n",
            "============================================================\n", "/workspace/llm/train.py FAILED\n",
            "------------------------------------------------------------\n", "Failures:\n", "  <NO_OTHER_FAILURES>\n",
            "------------------------------------------------------------\n", "Root Cause (first observed failure):\n", "[0]:\n",
            "  time      : %s\n" % tf.strftime("%Y-%m-%d_%H:%M:%S"), "  host      : %s\n" % app.host,
            "  rank      : %d (local_rank: %d)\n" % (app.node * 8 + l, l), "  exitcode  : %d (pid: %d)\n" % (exitcode, app.pids[l]),
            "  error_file: <N/A>\n", "  traceback : %s\n" % tb, "============================================================\n"]
    return "".join(out), tf


def remote_error_block(app, t, l, peer_node, rng):
    ip = ib_ip(peer_node)
    port = rng.randrange(40000, 60000)
    pre = "%s:%d:%d [%d]" % (app.host, app.pids[l], app.tids[l] + 9, l)
    err = ("NET/IB : Got completion from peer %s<%d> with status=12 opcode=0 len=0 vendor err 129 (Recv) "
           "localGid fe80::a088:c203:%x:4b1%d remoteGidsfe80::a088:c203:%x:4b1%d" % (ip, port, app.node + 1, l, peer_node + 1, l))
    out = ["[%s] %s transport/net_ib.cc:2092 NCCL WARN %s\n" % (ts_py(t), pre, err),
           "%s NCCL INFO transport/net.cc:1293 -> 6\n" % pre, "%s NCCL INFO proxy.cc:698 -> 6\n" % pre,
           "%s NCCL INFO proxy.cc:878 -> 6 [Progress Thread]\n" % pre]
    tw = t + timedelta(seconds=0.4)
    head = ("[PG ID 0 PG GUID 0(default_pg) Rank %d] Process group watchdog thread terminated with exception: NCCL error: "
            "remote process exited or there was a network error, NCCL version %s" % (app.node * 8 + l, NCCL_VER))
    body = ("ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
            "Last error:\n%s\n" % err)
    out.append("[rank%d]:[%s ProcessGroupNCCL.cpp:1896] %s\n%s" % (app.node * 8 + l, c10d_ts(tw, "E", rng), head, body))
    out.append("terminate called after throwing an instance of 'c10::DistBackendError'\n  what():  %s\n%s" % (head, body))
    return "".join(out), tw


def nvlink_kernel_block(kg, t):
    tms = int(t.timestamp() * 1000)
    pci = GPU_PCI[3]
    out = [kg.line(tms, "NVRM: GPU at PCI:%s: GPU-3f6c2a9e-8b1d-4e57-a0c4-91d2e7b6f318" % pci)]
    for k, link in enumerate((4, 5, 12, 13, 16)):
        intr = (0x21 << 20) | 0x40000 | (link << 13) | 0x5c6
        out.append(kg.line(tms + k * 90, "NVRM: Xid (PCI:%s): 149, NETIR_LINK_EVT  Fatal   XC0 i0 Link %02d "
                                        "(0x%08x 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)" % (pci, link, intr)))
    for k in range(6):
        out.append(kg.line(tms + 480 + k, "NVRM: Xid (PCI:%s): 45, pid=%d, name=python3, Ch %08x caused by previous Xid 149"
                                          % (pci, kg.app_pid3, 8 + k)))
    out.append(kg.line(tms + 510, "NVRM: Xid (PCI:%s): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)" % pci))
    out.append(kg.line(tms + 1620, "NVRM: Xid (PCI:%s): 154, GPU recovery action changed from 0x4 (Drain and Reset) to 0x1 (GPU Reset Required)" % pci))
    return "".join(out)


def oom_block(app, t, l):
    r = app.node * 8 + l
    lines = ["Traceback (most recent call last):", '  File "/workspace/llm/train.py", line 611, in <module>', "    main()",
             '  File "/workspace/llm/trainer.py", line 322, in train_step',
             '    logits = self.model(batch["input_ids"], position_ids=batch["position_ids"])',
             '  File "/workspace/llm/model.py", line 121, in forward', "    return self.w2(F.silu(self.w1(x)) * self.w3(x))",
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU %d has a total capacity of 178.35 GiB of "
             "which 1.02 GiB is free. Including non-PyTorch memory, this process has 177.31 GiB memory in use. Of the allocated "
             "memory 172.90 GiB is allocated by PyTorch, and 2.13 GiB is reserved by PyTorch but unallocated. If reserved but "
             "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  "
             "See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)" % l]
    return "".join("[rank%d]: %s\n" % (r, x) for x in lines)


def watchdog_timeout_block(app, t, rng):
    out = []
    for l in range(8):
        tl = t + timedelta(seconds=0.007 * l)
        out.append("[rank%d]:[%s ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: "
                   "WorkNCCL(SeqNum=%d, OpType=_ALLGATHER_BASE, NumelIn=6553600, NumelOut=209715200, Timeout(ms)=600000) "
                   "ran for %d milliseconds before timing out.\n"
                   % (app.node * 8 + l, c10d_ts(tl, "E", rng), app.node * 8 + l, 918304, 600000 + rng.randrange(20, 95)))
        out.append("[rank%d]:[%s ProcessGroupNCCL.cpp:636] [Rank %d] To avoid data inconsistency, we are taking the entire process down.\n"
                   % (app.node * 8 + l, c10d_ts(tl, "E", rng), app.node * 8 + l))
    return "".join(out)



# ----------------------------------------------------------------------------- event-heavy mode
# The failure output of every rank of a node after the fault, as (epoch ms, line) pairs.
# Sources of the formats: NCCL src/transport/net_ib.cc ("NET/IB : Got completion from peer
# ... with status=12 ... vendor err 129", "NET/IB : %s:%d Got non-fatal async event: %s(%d)"),
# src/misc/socket.cc ("Net : Connection closed by remote peer %s<%d>"), src/enqueue.cc
# ("Cuda failure '%s'"), NVIDIA/nccl issues #795, #1405; PyTorch ProcessGroupNCCL.cpp
# (watchdog timeout at :616, stuck watchdog at :1743, DistBackendError "NCCL error in: ...
# remote process exited or there was a network error"), pytorch/pytorch #118369 and
# #121209 (torchrun's "exitcode  : -6 (pid: N)" failure table).
def failure_tail(app, n_lines, t_fail, ranks, rng):
    n_nodes = app.n_nodes
    g0 = app.node * ranks
    out = []
    seq0 = 918304
    fail_ms = int(t_fail.timestamp() * 1000)
    # Each rank's hung collective was enqueued shortly before the fault (jitter per rank),
    # and its watchdog fires 600 s after that: ran_for is exact, so at = ts - ran_for.
    enq = [fail_ms - 1000 + rng.randrange(500) for _ in range(ranks)]
    weights = [("completion", 22), ("watchdog", 12), ("backend", 10), ("socket", 10), ("async", 10),
               ("stuck", 6), ("remote", 10), ("exit", 8), ("cuda", 6), ("inconsistency", 6)]
    names = [w[0] for w in weights]
    cum = []
    acc = 0
    for _, w in weights:
        acc += w
        cum.append(acc)
    kinds = rng.choices(names, cum_weights=cum, k=n_lines)
    span = 685 * 1000  # after the first errors and torchrun's summary, up to 700 s after the fault
    for kd in kinds:
        j = rng.randrange(ranks)
        r = g0 + j
        l = j % 8
        pre = "%s:%d:%d [%d]" % (app.host, app.pids[l], app.tids[l] + 9, l)
        if kd == "watchdog":
            # fires once the 600 s timeout has run out (plus the watchdog's polling delay)
            tms = enq[j] + 600000 + rng.randrange(20, 90000)
        elif kd == "stuck":
            tms = fail_ms + 480000 + rng.randrange(1, 200000)
        else:
            tms = fail_ms + 15000 + rng.randrange(span)
        t = datetime.fromtimestamp(tms / 1000.0, UTC)
        if kd == "completion":
            peer = rng.randrange(n_nodes)
            line = ("[%s] %s transport/net_ib.cc:2092 NCCL WARN NET/IB : Got completion from peer %s<%d> with status=12 "
                    "opcode=0 len=0 vendor err 129 (Recv) localGid fe80::a088:c203:%x:4b1%d remoteGidsfe80::a088:c203:%x:4b1%d"
                    % (ts_py(t), pre, ib_ip(peer), rng.randrange(40000, 60000), app.node + 1, l, peer + 1, l))
        elif kd == "watchdog":
            line = ("[rank%d]:[%s ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: "
                    "WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=6553600, NumelOut=6553600, Timeout(ms)=600000) "
                    "ran for %d milliseconds before timing out." % (r, c10d_ts(t, "E", rng), r, seq0 + rng.randrange(4), tms - enq[j]))
        elif kd == "backend":
            line = ("[rank%d]: torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/"
                    "c10d/ProcessGroupNCCL.cpp:3763, remote process exited or there was a network error, NCCL version %s" % (r, NCCL_VER))
        elif kd == "socket":
            peer = rng.randrange(n_nodes)
            line = ("[%s] %s misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer %s<%d>"
                    % (ts_py(t), pre, hostname(peer, n_nodes), rng.randrange(40000, 60000)))
        elif kd == "async":
            # a port flap: the error, and the port coming back a few seconds later
            d = rng.randrange(8)
            line = "[%s] %s transport/net_ib.cc:85 NCCL WARN NET/IB : %s:1 Got non-fatal async event: port error(10)" % (ts_py(t), pre, HCAS[d])
            tb = datetime.fromtimestamp((tms + rng.randrange(1000, 8000)) / 1000.0, UTC)
            out.append((tms + 8000, "[%s] %s transport/net_ib.cc:85 NCCL WARN NET/IB : %s:1 Got non-fatal async event: port active(9)\n"
                        % (ts_py(tb), pre, HCAS[d])))
        elif kd == "stuck":
            line = ("[rank%d]:[%s ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank %d] ProcessGroupNCCL's watchdog "
                    "got stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically indicates "
                    "a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog" % (r, c10d_ts(t, "E", rng), r))
        elif kd == "remote":
            line = ("[rank%d]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
                    "prematurely." % r)
        elif kd == "exit":
            line = "[rank%d]:   exitcode  : -6 (pid: %d)" % (r, app.pids[l])
        elif kd == "cuda":
            line = "[%s] %s enqueue.cc:1556 NCCL WARN Cuda failure 'an illegal memory access was encountered'" % (ts_py(t), pre)
        else:
            line = ("[rank%d]:[%s ProcessGroupNCCL.cpp:636] [Rank %d] To avoid data inconsistency, we are taking the entire "
                    "process down." % (r, c10d_ts(t, "E", rng), r))
        out.append((tms, line + "\n"))
    out.sort(key=lambda x: x[0])
    return out


# Bursts of XID lines on random GPUs of a node after the fault: engine exceptions
# (13, 31) and the channel resets and cleanup that follow (43, 45). Formats: NVIDIA's
# XID catalog and the driver's "NVRM: Xid (PCI:%s): %d, pid=%d, name=%s, ..." lines
# (pytorch/pytorch #76262, NVIDIA/open-gpu-kernel-modules #532).
def fallen_off_bus(kg, gpus, t_fail, pid):
    """XID 79 on each of this node's GPUs in `gpus` (indexes into GPU_PCI), 5 s before the fault, 1 ms apart."""
    tms = int(t_fail.timestamp() * 1000) - 5000
    return "".join(kg.line(tms + k, "NVRM: Xid (PCI:%s): 79, pid=%d, name=python3, GPU has fallen off the bus." % (GPU_PCI[g], pid))
                   for k, g in enumerate(gpus))


def xid_bursts(kg, n_bursts, t_fail, pid, rng):
    out = []
    fail_ms = int(t_fail.timestamp() * 1000)
    for _ in range(n_bursts):
        pci = GPU_PCI[rng.randrange(8)]
        tms = fail_ms + 2000 + rng.randrange(690000)
        for k in range(rng.randrange(3, 9)):
            x = rng.choice((13, 13, 31, 43, 43, 45))
            if x == 13:
                msg = ("NVRM: Xid (PCI:%s): 13, pid=%d, name=python3, Graphics SM Warp Exception on (GPC %d, TPC %d, SM %d): "
                       "Out Of Range Address" % (pci, pid, rng.randrange(8), rng.randrange(9), rng.randrange(2)))
            elif x == 31:
                msg = ("NVRM: Xid (PCI:%s): 31, pid=%d, name=python3, Ch %08x, intr 00000000. MMU Fault: ENGINE GRAPHICS "
                       "GPCCLIENT_T1_%d faulted @ 0x7f92_%08x. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE"
                       % (pci, pid, rng.randrange(64), rng.randrange(16), rng.randrange(1 << 32)))
            elif x == 43:
                msg = "NVRM: Xid (PCI:%s): 43, pid=%d, name=python3, Ch %08x" % (pci, pid, rng.randrange(64))
            else:
                msg = "NVRM: Xid (PCI:%s): 45, pid=%d, name=python3, Ch %08x" % (pci, pid, rng.randrange(64))
            out.append((tms + 40 * k, msg))
    out.sort(key=lambda x: x[0])
    return "".join(kg.line(t, m) for t, m in out)


# ----------------------------------------------------------------------------- main
def main(argv=None):
    ap = argparse.ArgumentParser(prog="generate_bundle.py", description=__doc__.split("\n\n")[0],
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", metavar="OUT_DIR", help="bundle directory to create (must not exist or be empty)")
    ap.add_argument("--nodes", type=int, default=8, help="workload nodes (default 8)")
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--bytes-per-node", type=parse_size, metavar="SIZE",
                      help="log bytes per node, e.g. 250M, 1G (default 64M)")
    size.add_argument("--total-bytes", type=parse_size, metavar="SIZE",
                      help="total log bytes, split evenly over the nodes (alternative to --bytes-per-node)")
    ap.add_argument("--error-rate", type=float, default=0.002, help="fraction of benign error-looking lines (default 0.002)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--inject", choices=["nvlink-xid149", "cuda-oom", "none"], default="nvlink-xid149",
                    help="root cause to inject (default nvlink-xid149)")
    ap.add_argument("--start", type=parse_time, default=parse_time("2026-03-14T01:00:02Z"),
                    help="window start, RFC 3339 UTC (default 2026-03-14T01:00:02Z)")
    ap.add_argument("--duration", type=float, default=6 * 3600, help="seconds of training before the failure/end (default 21600)")
    ap.add_argument("--error-share", type=float, default=0.0,
                    help="event-heavy mode: share of each node's app lines that are failure output of its ranks "
                         "after the fault, all extracted as events (default 0)")
    ap.add_argument("--ranks-per-node", type=int, default=8,
                    help="ranks each node's log speaks for in the failure output (default 8)")
    ap.add_argument("--xid-bursts", type=int, default=0, help="bursts of XID 13/31/43/45 lines per node after the fault (default 0)")
    ap.add_argument("--fallen-gpus", type=int, default=0,
                    help="GPUs that log XID 79 (fallen off the bus) 5 s before the fault, dealt round-robin over the "
                         "nodes (up to 8 per node): as many equal top-priority causes, the shape of a rack losing power "
                         "(default 0)")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    a = ap.parse_args(argv)
    if a.nodes < 1:
        ap.error("--nodes must be >= 1")
    if not 0 <= a.error_rate < 0.5:
        ap.error("--error-rate must be in [0, 0.5)")
    if not 0 <= a.error_share < 1:
        ap.error("--error-share must be in [0, 1)")
    if a.ranks_per_node < 1:
        ap.error("--ranks-per-node must be >= 1")
    if a.xid_bursts < 0:
        ap.error("--xid-bursts must be >= 0")
    if not 0 <= a.fallen_gpus <= 8 * a.nodes:
        ap.error("--fallen-gpus must be in [0, 8 x nodes]")
    if (a.error_share > 0 or a.xid_bursts > 0) and a.inject == "none":
        ap.error("--error-share and --xid-bursts describe the output of a failure: use them with --inject nvlink-xid149 or cuda-oom")
    per_node = a.total_bytes // a.nodes if a.total_bytes else (a.bytes_per_node or 64 << 20)
    if os.path.exists(a.out_dir) and os.listdir(a.out_dir):
        ap.error("OUT_DIR exists and is not empty: %s" % a.out_dir)

    rng = random.Random(a.seed)
    start = a.start
    t_fail = start + timedelta(seconds=a.duration)
    culprit = rng.randrange(a.nodes)
    culprit_l = rng.randrange(8)
    if a.inject == "nvlink-xid149":
        end = t_fail + timedelta(seconds=40)
        terminal = {"state": "FAILED", "exit_code": 1}
    elif a.inject == "cuda-oom":
        end = t_fail + timedelta(seconds=615)
        terminal = {"state": "FAILED", "exit_code": 1}
    else:
        end = t_fail + timedelta(seconds=20)
        terminal = {"state": "COMPLETED", "exit_code": 0}
    if a.error_share > 0 or a.xid_bursts > 0:
        # the failure output runs until every watchdog has fired
        end = max(end, t_fail + timedelta(seconds=720))
    job = 40000 + rng.randrange(50000)
    plan = dict(job=job, comm_id="%016x" % rng.getrandbits(64), step0=30000, step_time=1.95,
                train0_ms=int((start + timedelta(seconds=60)).timestamp() * 1000))
    nodes = [hostname(i, a.nodes) for i in range(a.nodes)]
    os.makedirs(a.out_dir, exist_ok=True)
    ctx = {"workload_id": str(job), "scheduler": "slurm", "start": rfc3339(start), "end": rfc3339(end),
           "nodes": nodes, "terminal": terminal}
    with open(os.path.join(a.out_dir, "context.json"), "w") as f:
        json.dump(ctx, f, indent=2)
        f.write("\n")

    t_begin = time.time()
    total = 0
    # Which neighbour sees the OOM victim go away first (gets fast NCCL errors instead of a watchdog timeout).
    oom_neighbor = (culprit - 1) % a.nodes
    for i in range(a.nodes):
        nrng = random.Random("%d|%d" % (a.seed, i))
        host = nodes[i]
        app_b, k_b = int(per_node * 0.86), int(per_node * 0.11)
        fm_b = per_node - app_b - k_b
        # ---------------- app
        w = Writer(os.path.join(a.out_dir, "logs", host, "app.log"))
        app = AppGen(i, a.nodes, nrng, plan, a.error_rate)
        w.write(app.header(start + timedelta(seconds=3)))
        t_train = start + timedelta(seconds=60)
        tail = ""
        if a.error_share > 0:
            n_tail = int(a.error_share * app_b / 150)
            tail = "".join(x for _, x in failure_tail(app, n_tail, t_fail, a.ranks_per_node, nrng))
        app.traffic(w, t_train, t_fail, app_b - w.n - 4096 - len(tail))
        if a.inject == "nvlink-xid149":
            if i == culprit:
                tl = t_fail + timedelta(seconds=0.52)
                msg = ("[PG ID 0 PG GUID 0(default_pg) Rank %d] Process group watchdog thread terminated with exception: CUDA error: "
                       "uncorrectable NVLink error detected during the execution\nCUDA kernel errors might be asynchronously "
                       "reported at some other API call, so the stacktrace below might be incorrect.\n" % (i * 8 + 3))
                w.write("[rank%d]:[%s ProcessGroupNCCL.cpp:1896] %s" % (i * 8 + 3, c10d_ts(tl, "E", nrng), msg))
                w.write("terminate called after throwing an instance of 'c10::DistBackendError'\n")
                blk, _ = child_failed(app, tl + timedelta(seconds=0.5), 3, -6)
                w.write(blk)
            else:
                t_err = t_fail + timedelta(seconds=9.2 + nrng.uniform(0, 1.0))
                l = nrng.randrange(8)
                blk, tw = remote_error_block(app, t_err, l, culprit, nrng)
                w.write(blk)
                blk, _ = child_failed(app, tw + timedelta(seconds=1.2), l, -6)
                w.write(blk)
        elif a.inject == "cuda-oom":
            if i == culprit:
                w.write(oom_block(app, t_fail, culprit_l))
                blk, _ = child_failed(app, t_fail + timedelta(seconds=1.4), culprit_l, 1)
                w.write(blk)
            elif i == oom_neighbor:
                t_err = t_fail + timedelta(seconds=11.3 + nrng.uniform(0, 0.5))
                l = nrng.randrange(8)
                blk, tw = remote_error_block(app, t_err, l, culprit, nrng)
                w.write(blk)
                blk, _ = child_failed(app, tw + timedelta(seconds=1.2), l, -6)
                w.write(blk)
            else:
                tto = t_fail + timedelta(seconds=600.03)
                w.write(watchdog_timeout_block(app, tto, nrng))
                blk, _ = child_failed(app, tto + timedelta(seconds=1.6), 0, -6)
                w.write(blk)
        else:
            tdone = t_fail + timedelta(seconds=2)
            w.write("%s,114 INFO [rank%d] train: reached max_steps; training complete\n" % (ts_py(tdone), i * 8))
            w.write("I%s %d torch/distributed/elastic/agent/server/api.py:932] Local worker group finished "
                    "(WorkerState.SUCCEEDED). Waiting 300 seconds for other agents to finish\n"
                    % ((tdone + timedelta(seconds=3)).strftime("%m%d %H:%M:%S.000000"), app.agent_pid))
        w.write(tail)
        total += w.n
        w.close()
        # ---------------- kernel
        boot = start - timedelta(days=2, seconds=nrng.randrange(86400))
        style = "syslog" if i % 2 == 0 else "dmesg_t"
        kg = KernelGen(i, a.nodes, nrng, boot, style, a.error_rate)
        kg.app_pid3 = app.pids[3]
        w = Writer(os.path.join(a.out_dir, "logs", host, "kernel.log"))
        w.write(kg.boot_block())
        bursts = xid_bursts(kg, a.xid_bursts, t_fail, app.pids[nrng.randrange(8)], nrng) if a.xid_bursts else ""
        fallen = [g // a.nodes for g in range(i, a.fallen_gpus, a.nodes)]  # GPU g on node g % nodes
        # 5 s before the fault: written before it and before the bursts after it
        fallen = fallen_off_bus(kg, fallen, t_fail, app.pids[0]) if fallen else ""
        if a.inject == "nvlink-xid149" and i == culprit:
            kg.traffic(w, start, t_fail - timedelta(seconds=6 if fallen else 0), int(k_b * 0.95) - w.n - len(bursts) - len(fallen))
            w.write(fallen)
            w.write(nvlink_kernel_block(kg, t_fail))
            w.write(bursts)
            kg.traffic(w, t_fail + timedelta(seconds=700 if bursts else 2), end, k_b - w.n)
        elif bursts or fallen:
            kg.traffic(w, start, t_fail - timedelta(seconds=6 if fallen else 0), int(k_b * 0.95) - w.n - len(bursts) - len(fallen))
            w.write(fallen)
            w.write(bursts)
            kg.traffic(w, t_fail + timedelta(seconds=700), end, k_b - w.n)
        else:
            kg.traffic(w, start, end, k_b - w.n)
        total += w.n
        w.close()
        # ---------------- fabric manager
        w = Writer(os.path.join(a.out_dir, "logs", host, "fabricmanager.log"))
        fm_traffic(w, nrng, start, end, fm_b)
        total += w.n
        w.close()
        if not a.quiet:
            el = time.time() - t_begin
            sys.stderr.write("\r%d/%d nodes, %.1f MB, %.1f MB/s   " % (i + 1, a.nodes, total / 1e6, total / 1e6 / max(el, 1e-9)))
    # ---------------- slurmctld
    w = Writer(os.path.join(a.out_dir, "logs", "slurmctl", "scheduler.log"))
    srng = random.Random("%d|ctl" % a.seed)

    def sl(t, msg):
        w.write("[%s.%03d] %s\n" % (t.strftime("%Y-%m-%dT%H:%M:%S"), t.microsecond // 1000, msg))
    sl(start - timedelta(seconds=30.4), "_slurm_rpc_submit_batch_job: JobId=%d InitPrio=104862 usec=1184" % job)
    sl(start - timedelta(seconds=0.1), "sched: Allocate JobId=%d NodeList=%s #CPUs=%d Partition=gpu"
       % (job, nodes[0] if a.nodes == 1 else "%s..%s" % (nodes[0], nodes[-1]), 224 * a.nodes))
    t = start
    while t < end - timedelta(seconds=5):
        t = t + timedelta(seconds=srng.expovariate(1 / 30.0))
        if t >= end - timedelta(seconds=5):
            break
        r = srng.random()
        if r < 0.5:
            sl(t, "backfill: beginning")
        elif r < 0.8:
            sl(t, "_slurm_rpc_submit_batch_job: JobId=%d InitPrio=%d usec=%d" % (job + 1 + srng.randrange(5000), srng.randrange(4000, 90000), srng.randrange(300, 2500)))
        else:
            sl(t, "error: slurm_receive_msg [10.20.0.%d:%d]: Zero Bytes were transmitted or received" % (srng.randrange(60, 200), srng.randrange(30000, 60000)))
    tend = end - timedelta(seconds=1.2)
    sl(tend, "_job_complete: JobId=%d WEXITSTATUS %d" % (job, terminal["exit_code"]))
    sl(tend, "_job_complete: JobId=%d done" % job)
    total += w.n
    w.close()
    exp = {"nvlink-xid149": "attributed / hardware / nvlink; culprit nodes [%s] (GPU 3, PCI %s); NCCL errors on the "
                            "other nodes are cascade" % (nodes[culprit], GPU_PCI[3]),
           "cuda-oom": "attributed / software / cuda_oom; culprit nodes [%s] (rank %d); NCCL errors and watchdog "
                       "timeouts on the other nodes are cascade" % (nodes[culprit], culprit * 8 + culprit_l),
           "none": "no_failure"}[a.inject]
    readme = ("# Synthetic benchmark bundle\n\nGenerated by `bench/generate_bundle.py` (seed %d, inject %s, %d nodes, "
              "%d bytes of logs).\nTraffic is benign training / NCCL / kernel noise with %.4f benign error-looking lines.\n\n"
              "Expected verdict: %s.\n" % (a.seed, a.inject, a.nodes, total, a.error_rate, exp))
    with open(os.path.join(a.out_dir, "README.md"), "w") as f:
        f.write(readme)
    el = time.time() - t_begin
    if not a.quiet:
        sys.stderr.write("\rwrote %s: %d nodes, %.1f MB in %.1fs (%.1f MB/s); inject=%s culprit=%s\n"
                         % (a.out_dir, a.nodes, total / 1e6, el, total / 1e6 / max(el, 1e-9), a.inject,
                            nodes[culprit] if a.inject != "none" else "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
