#!/usr/bin/env python3
"""An attempt that kills `culprit run` cannot wedge the queue (issue 38).

A process that died collecting or attributing an attempt (the gzip bomb's
bad_alloc, the OOM killer, SIGKILL) used to leave no trace: every later run
died on the same attempt, the attempts after it were never attributed and
the `runs` rows stayed 'running'. Here the run is SIGKILLed while it works
on one attempt (a ~48 MB generated bundle), three times: each start is
marked in the store before collection ("collection did not finish"); the
fourth run gives the attempt up ("collection died 3 times", exit 1),
attributes the others and closes the runs that died; a fifth skips it and
exits 0. Then, with three attempts in flight at once, one death: its marks
say others were in flight, no attempt is charged with it, and the next run
tries each alone and attributes them all.

usage: check_collection_died.py CULPRIT SOURCE_DIR
"""
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time


def fail(msg):
    print(f"check_collection_died: FAIL: {msg}")
    sys.exit(1)


def query(db, sql):
    for _ in range(200):
        try:
            c = sqlite3.connect(db, timeout=0.2)
            try:
                return c.execute(sql).fetchall()
            finally:
                c.close()
        except sqlite3.OperationalError:
            time.sleep(0.01)
    fail(f"cannot read {db}")


def main():
    culprit, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory(prefix="culprit-died.") as t:
        subprocess.run([sys.executable, f"{root}/bench/generate_bundle.py", f"{t}/slow", "--nodes", "8",
                        "--bytes-per-node", "6M", "--seed", "7", "--quiet"], check=True)
        with open(f"{t}/c.yaml", "w") as f:
            f.write(f"""cluster: died
discovery:
  static:
    bundles: ["{t}/slow", "{root}/examples/nvlink-xid149", "{root}/examples/cuda-oom-one-rank"]
""")
        db = f"{t}/s.db"
        cmd = [culprit, "run", "--config", f"{t}/c.yaml", "--once", "--store", f"sqlite:{db}", "--format", "none",
               "--concurrency", "1"]
        slow = "SELECT last_error FROM attempts WHERE attempt_key LIKE '%slow%'"
        for start in (1, 2, 3):
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            mark = f"collection did not finish (start {start}, run "
            deadline = time.time() + 120
            while p.poll() is None and time.time() < deadline:
                if os.path.exists(db) and any(r[0].startswith(mark) for r in query(db, slow)):
                    p.send_signal(signal.SIGKILL)
                    break
                time.sleep(0.005)
            p.wait()
            if p.returncode != -signal.SIGKILL:
                fail(f"start {start}: the run ended ({p.returncode}) without the attempt marked "
                     f"'{mark}...': {query(db, slow) if os.path.exists(db) else 'no store'}")
            print(f"check_collection_died: killed during start {start}: {query(db, slow)[0][0]}")
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if p.returncode != 1:
            fail(f"the run after three deaths exited {p.returncode} (want 1: one attempt given up): {p.stderr[-1500:]}")
        rows = dict(query(db, "SELECT a.attempt_key, a.status || '|' || a.last_error FROM attempts a"))
        given_up = [k for k, v in rows.items() if "slow" in k]
        if len(given_up) != 1 or not rows[given_up[0]].startswith("error|collection died 3 times"):
            fail(f"the slow attempt: {rows}")
        others = [k for k in rows if "slow" not in k]
        verdicts = {r[0] for r in query(db, "SELECT a.attempt_key FROM verdicts v JOIN attempts a ON a.id = v.attempt_ref")}
        if len(others) != 2 or set(others) != verdicts:
            fail(f"the other attempts are not all attributed: attempts {rows}, verdicts {verdicts}")
        runs = query(db, "SELECT id, status FROM runs ORDER BY id")
        if [s for _, s in runs] != ["died", "died", "died", "partial"]:
            fail(f"runs rows: {runs}")
        print(f"check_collection_died: given up: {rows[given_up[0]]}; runs {runs}")
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if p.returncode != 0 or "given up earlier" not in p.stderr:
            fail(f"the next run exited {p.returncode}: {p.stderr[-1500:]}")
        print("check_collection_died: the next run skips it and exits 0")

        # With attempts in flight at once, a death cannot say which one caused
        # it: it is charged to none, and each is tried again alone.
        db = f"{t}/shared.db"
        cmd = [culprit, "run", "--config", f"{t}/c.yaml", "--once", "--store", f"sqlite:{db}", "--format", "none",
               "--concurrency", "3"]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while p.poll() is None and time.time() < deadline:
            if os.path.exists(db) and any(r[0].startswith("collection did not finish (start 1, run ") for r in query(db, slow)):
                p.send_signal(signal.SIGKILL)
                break
            time.sleep(0.005)
        p.wait()
        if p.returncode != -signal.SIGKILL:
            fail(f"--concurrency 3: the run ended ({p.returncode}) before the slow attempt was marked")
        mark = query(db, slow)[0][0]
        if not mark.endswith(", with others in flight)"):
            fail(f"--concurrency 3: the mark does not say others were in flight: {mark}")
        print(f"check_collection_died: killed with attempts in flight: {mark}")
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if p.returncode != 0 or "trying it again alone, start 1 of at most 3" not in p.stderr:
            fail(f"--concurrency 3: the run after the death exited {p.returncode}: {p.stderr[-1500:]}")
        verdicts = query(db, "SELECT count(*) FROM verdicts")[0][0]
        runs = [s for _, s in query(db, "SELECT id, status FROM runs ORDER BY id")]
        if verdicts != 3 or runs != ["died", "ok"]:
            fail(f"--concurrency 3: {verdicts} verdicts, runs {runs}")
        print("check_collection_died: ok: a death beside others is charged to none; each is tried again alone and attributed")


main()
