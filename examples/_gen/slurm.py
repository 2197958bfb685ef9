"""slurmctld (control plane) and slurmd (per node) logs."""

from .common import Log, sec, ts_slurm


class Slurmctld:
    """Background cluster traffic (other users' jobs, other nodes) plus our job's lines."""

    def __init__(self, rng, cluster_nodes=32):
        self.log = Log()
        self.rng = rng
        self.cluster_nodes = cluster_nodes

    def line(self, t, msg):
        self.log.add(t, f"{ts_slurm(t)} {msg}")

    def background(self, start, end, our_nodes, first_jobid, mean_gap_s=40.0, not_responding=None, avoid=()):
        """Other jobs churn on nodes outside our allocation; periodic backfill chatter.

        Job ids in `avoid` (our job) are never used for other jobs."""
        rng = self.rng
        avoid = set(avoid)

        def anyid(lo, hi):
            while True:
                j = rng.randrange(lo, hi)
                if j not in avoid:
                    return j
        others = [f"node-{i:02d}" for i in range(1, self.cluster_nodes + 1) if f"node-{i:02d}" not in our_nodes]
        running = []
        jid = first_jobid
        t = start
        next_bf = start + sec(rng.uniform(5, 30))
        while True:
            t = t + sec(rng.expovariate(1.0 / mean_gap_s))
            if t >= end:
                break
            while next_bf < t:
                while jid in avoid:
                    jid += 1
                self.line(next_bf, "sched/backfill: _start_job: Started JobId=%d in batch on %s" % (jid, rng.choice(others))
                          if rng.random() < 0.15 else "backfill: beginning")
                if rng.random() < 0.15:
                    running.append(jid)
                    jid += rng.randrange(1, 4)
                    while jid in avoid:
                        jid += 1
                next_bf = next_bf + sec(rng.uniform(28, 32))
            r = rng.random()
            if r < 0.30:
                while jid in avoid:
                    jid += 1
                j = jid
                jid += rng.randrange(1, 4)
                self.line(t, f"_slurm_rpc_submit_batch_job: JobId={j} InitPrio={rng.randrange(4000, 90000)} usec={rng.randrange(300, 2500)}")
                if rng.random() < 0.6:
                    n = rng.choice([1, 1, 2, 4])
                    nodes = rng.sample(others, n)
                    nl = nodes[0] if n == 1 else "node-[" + ",".join(x[5:] for x in sorted(nodes)) + "]"
                    self.line(t + sec(rng.uniform(0.1, 2)), f"sched: Allocate JobId={j} NodeList={nl} #CPUs={n * 224} Partition=batch")
                    running.append(j)
            elif r < 0.58 and running:
                j = running.pop(rng.randrange(len(running)))
                code = rng.choice([0, 0, 0, 0, 1, 0, 2])
                self.line(t, f"_job_complete: JobId={j} WEXITSTATUS {code}")
                self.line(t, f"_job_complete: JobId={j} done")
            elif r < 0.70:
                self.line(t, f"_slurm_rpc_complete_batch_script: JobId={anyid(first_jobid - 900, jid)} "
                             f"usec={rng.randrange(100, 900)}") if rng.random() < 0.3 else \
                    self.line(t, f"_slurm_rpc_kill_job: REQUEST_KILL_JOB JobId={anyid(first_jobid - 900, jid)} uid {rng.randrange(1001, 1090)}")
            elif r < 0.80:
                ip = f"10.20.0.{rng.randrange(60, 200)}"
                # Benign RPC chatter that looks like an error.
                self.line(t, f"error: slurm_receive_msg [{ip}:{rng.randrange(30000, 60000)}]: Zero Bytes were transmitted or received")
            elif r < 0.90:
                self.line(t, f"cleanup_completing: JobId={anyid(first_jobid - 900, jid)} completion process took "
                             f"{rng.randrange(1, 4)} seconds")
            else:
                while jid in avoid:
                    jid += 1
                j = jid
                jid += 1
                self.line(t, f"_slurm_rpc_allocate_resources JobId={j} NodeList={rng.choice(others)} usec={rng.randrange(800, 4000)}")
                running.append(j)
        if not_responding:
            nt, node = not_responding
            self.line(nt, f"error: Nodes {node} not responding")
            self.line(nt + sec(97), f"Node {node} now responding")
        return jid

    def submit(self, t, jobid, nodes_expr, ncpus, partition="gpu"):
        self.line(t, f"_slurm_rpc_submit_batch_job: JobId={jobid} InitPrio=104862 usec=1184")
        return t

    def allocate(self, t, jobid, nodes_expr, ncpus, partition="gpu"):
        self.line(t, f"sched: Allocate JobId={jobid} NodeList={nodes_expr} #CPUs={ncpus} Partition={partition}")

    def complete(self, t, jobid, wexit=None, wtermsig=None):
        if wtermsig is not None:
            self.line(t, f"_job_complete: JobId={jobid} WTERMSIG {wtermsig}")
        else:
            self.line(t, f"_job_complete: JobId={jobid} WEXITSTATUS {wexit}")
        self.line(t, f"_job_complete: JobId={jobid} done")


class Slurmd:
    def __init__(self, host, rng):
        self.log = Log()
        self.host, self.rng = host, rng

    def line(self, t, msg):
        self.log.add(t, f"{ts_slurm(t)} {msg}")

    def daemon_start(self, t, version="24.05.5"):
        self.line(t, f"slurmd version {version} started")
        self.line(t + sec(0.004), "slurmd started on %s" % t.strftime("%a, %d %b %Y %H:%M:%S +0000"))
        self.line(t + sec(0.006), "CPUs=224 Boards=1 Sockets=2 Cores=56 Threads=2 Memory=2063857 TmpDisk=3662342 Uptime=44 "
                                  "CPUSpecList=(null) FeaturesAvail=(null) FeaturesActive=(null)")

    def batch_start(self, t, jobid, uid=1043):
        self.line(t, f"task/affinity: task_p_slurmd_batch_request: task_p_slurmd_batch_request: {jobid}")
        self.line(t, f"task/affinity: batch_bind: job {jobid} CPU input mask for node: 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF")
        self.line(t + sec(0.01), f"Launching batch job {jobid} for UID {uid}")
        self.line(t + sec(0.05), f"[{jobid}.batch] task/cgroup: _memcg_initialize: job: alloc=1900000MB mem.limit=1900000MB memsw.limit=unlimited")

    def step_start(self, t, jobid, step, uid=1043, src="10.20.0.31"):
        self.line(t, f"launch task StepId={jobid}.{step} request from UID:{uid} GID:{uid} HOST:{src} PORT:{self.rng.randrange(33000, 61000)}")
        self.line(t + sec(0.002), f"task/affinity: lllp_distribution: JobId={jobid} manual binding: none,one_thread")
        self.line(t + sec(0.03), f"[{jobid}.{step}] task/cgroup: _memcg_initialize: step: alloc=1900000MB mem.limit=1900000MB memsw.limit=unlimited")

    def task_exit(self, t, jobid, step, task, pid, code):
        self.line(t, f"[{jobid}.{step}] task {task} ({pid}) exited with exit code {code}.")

    def step_done(self, t, jobid, step):
        self.line(t, f"[{jobid}.{step}] done with job")

    def batch_done(self, t, jobid, code):
        self.line(t, f"[{jobid}.batch] sending REQUEST_COMPLETE_BATCH_SCRIPT, error:0 status:{code}")
        self.line(t + sec(0.004), f"[{jobid}.batch] done with job")
