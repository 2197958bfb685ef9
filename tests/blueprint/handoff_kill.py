#!/usr/bin/env python3
"""SIGKILL `culprit run --once` at random instants; the restart must end with the
rows of an uninterrupted run (docs/recovery.md, "Hand-off"). Driven by
check_handoff_kill.sh, which starts the PostgreSQL server and the webhook
receiver.

usage: handoff_kill.py --culprit C --config YAML --policy YAML --store sqlite|postgresql
                       --work DIR --kills N --seed S --webhook http://127.0.0.1:PORT --webhook-log FILE
                       [--pg-base postgresql://postgres@127.0.0.1:PORT] [--reference DUMP]

For the store kind given: one uninterrupted reference run (its duration T is
measured, and when its work starts after the catalog is loaded), then N runs
each killed with SIGKILL at an instant drawn uniformly from its own slot (a
tenth of the slots cover start-up, the others the work; stratified, so the
instants cover the whole run), each followed by a restart that runs to
completion. A run that ends before its instant is not counted (the estimate
of T shrinks to it and another run is drawn). After every restart:
  * the store's rows (dump_store.py: verdicts, symptoms, evidence, coverage,
    recommendations with their decision, hand-off outcome and state; ids and
    wall-clock columns normalised) equal the reference's;
  * every recommendation the reference emitted (--emit-recommendations) and
    POSTed (--webhook) was emitted and POSTed at least once across the killed
    run and its restart (duplicates are allowed: delivery is at-least-once,
    and counted).
With --reference, the reference rows must also equal that dump (the other
store kind's), so SQLite and PostgreSQL end with identical rows.
Prints one line per kill and a summary; exits 1 when any kill lost or changed
a row.
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
import functools

print = functools.partial(print, flush=True)  # progress reaches the CI log as it happens

HERE = os.path.dirname(os.path.abspath(__file__))

ap = argparse.ArgumentParser()
ap.add_argument("--culprit", required=True)
ap.add_argument("--config", required=True)
ap.add_argument("--policy", required=True)
ap.add_argument("--store", choices=["sqlite", "postgresql"], required=True)
ap.add_argument("--work", required=True)
ap.add_argument("--kills", type=int, default=50)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--webhook", required=True)
ap.add_argument("--webhook-log", required=True)
ap.add_argument("--pg-base", default="")
ap.add_argument("--reference", default="")
args = ap.parse_args()


def psql(sql):
    subprocess.run(["psql", "-X", "-q", f"{args.pg_base}/postgres", "-c", sql], check=True, capture_output=True)


def new_store(name):
    if args.store == "sqlite":
        path = os.path.join(args.work, f"{name}.db")
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        return f"sqlite:{path}"
    psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    psql(f'CREATE DATABASE "{name}"')
    return f"{args.pg_base}/{name}"


def drop_store(name):
    if args.store == "postgresql":
        psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def command(store, name):
    return [args.culprit, "run", "--config", args.config, "--once", "--store", store, "--format", "none",
            "--policy", args.policy, "--emit-recommendations", os.path.join(args.work, f"{name}.jsonl"),
            "--webhook", f"{args.webhook}/{name}"]


def run_to_end(store, name, log):
    with open(log, "ab") as err:
        rc = subprocess.run(command(store, name), stderr=err, stdout=subprocess.DEVNULL).returncode
    if rc != 0:
        sys.stdout.write(open(log, errors="replace").read()[-3000:])
        raise SystemExit(f"handoff_kill: {' '.join(command(store, name))} exited {rc}")


def dump(store):
    return subprocess.run([sys.executable, os.path.join(HERE, "dump_store.py"), store], check=True,
                          capture_output=True, text=True).stdout


def action_key(doc):
    return (doc["attempt"]["key"], doc["scope"], doc["node"] or "", doc["action"],
            json.dumps(doc.get("target", doc.get("nodes")), sort_keys=True))


def emitted(name):
    path = os.path.join(args.work, f"{name}.jsonl")
    if not os.path.exists(path):
        return []
    out = []
    for line in open(path, errors="replace"):
        try:
            out.append(action_key(json.loads(line)))
        except ValueError:
            pass  # a line cut by the kill
    return out


def posted(name):
    out = []
    for line in open(args.webhook_log, errors="replace"):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r["path"] == f"/{name}" and isinstance(r["body"], dict):
            out.append(action_key(r["body"]))
    return out


def scalar(store, sql):
    """One number from the store, or None when the query fails (no such table or column yet)."""
    if store.startswith("sqlite:"):
        import sqlite3
        try:
            return sqlite3.connect(f"file:{store[7:]}?mode=ro", uri=True).execute(sql).fetchone()[0]
        except sqlite3.Error:
            return None
    r = subprocess.run(["psql", "-X", "-q", "-At", store, "-c", sql], capture_output=True, text=True)
    return int(r.stdout.strip()) if r.returncode == 0 and r.stdout.strip() else None


def killed_state(store):
    """(verdicts stored, recommendations pending, verdicts with a recommendation but no row) of a killed store."""
    stored = scalar(store, "select count(*) from verdicts") or 0
    pending = scalar(store, "select count(*) from recommendations where handoff_state = 'pending'") or 0
    lost = scalar(store, "select count(*) from verdicts v where v.verdict_json like '%\"recommendation\"%' and not exists "
                         "(select 1 from recommendations r where r.verdict_ref = v.id)") or 0
    return stored, pending, lost


kind = args.store
ref_name = f"ref-{kind}"
ref_store = new_store(ref_name)
# The reference run, timed: when it starts working (its first log line, after
# the catalog is loaded) and when it ends.
t0 = time.monotonic()
started = None
with open(os.path.join(args.work, f"{ref_name}.log"), "wb") as log:
    p = subprocess.Popen(command(ref_store, ref_name), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    for line in p.stderr:
        if started is None and b"culprit run: store " in line:
            started = time.monotonic() - t0
        log.write(line)
    rc = p.wait()
duration = time.monotonic() - t0
if rc != 0 or started is None:
    raise SystemExit(f"handoff_kill: the reference run exited {rc}: {open(os.path.join(args.work, f'{ref_name}.log')).read()[-2000:]}")
ref_dump = dump(ref_store)
ref_emitted, ref_posted = sorted(emitted(ref_name)), sorted(posted(ref_name))
counts = {l.split()[1]: l.split("(")[1].split()[0] for l in ref_dump.splitlines() if l.startswith("== ")}
if not ref_emitted or sorted(set(ref_emitted)) != ref_emitted or ref_posted != ref_emitted:
    raise SystemExit(f"handoff_kill: the reference run emitted {len(ref_emitted)} and POSTed {len(ref_posted)} "
                     "recommendations: they must be the same, once each")
drains = sum(1 for k in ref_emitted if k[3] == "drain")
print(f"handoff_kill: {kind}: reference run {duration:.2f} s (working from {started:.2f} s): {counts['verdicts']} verdicts, "
      f"{counts['recommendations']} recommendations ({drains} drains) emitted and POSTed once each")
if args.reference:
    other = open(args.reference).read()
    if other != ref_dump:
        open(os.path.join(args.work, f"{ref_name}.dump"), "w").write(ref_dump)
        raise SystemExit(f"handoff_kill: the {kind} reference rows differ from {args.reference}")
    print(f"handoff_kill: {kind}: the reference rows equal {os.path.basename(args.reference)}'s")
open(os.path.join(args.work, f"{ref_name}.dump"), "w").write(ref_dump)

rng = random.Random(args.seed)
bad = landed = finished_first = with_pending = with_lost = duplicates = 0
early = max(1, args.kills // 10)  # kills during start-up; the others are spread over the work
i = 0
# A run that ends before its kill instant does not count: it shows the
# reference was slow (a loaded machine), so the estimate of the run's length
# shrinks to what that run took, and another instant is drawn.
while landed < args.kills and i < 3 * args.kills:
    name = f"kill-{kind}-{i}"
    i += 1
    t_iter = time.monotonic()
    store = new_store(name)
    if landed < early:
        at = started * (landed + rng.random()) / early
    else:
        at = started + (duration - started) * (landed - early + rng.random()) / (args.kills - early)
    log = os.path.join(args.work, f"{name}.log")
    with open(log, "wb") as err:
        t_run = time.monotonic()
        p = subprocess.Popen(command(store, name), stderr=err, stdout=subprocess.DEVNULL)
        try:
            rc = p.wait(timeout=at)
            done_before = True
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGKILL)
            p.wait()
            done_before = False
    if done_before:
        finished_first += 1
        took = time.monotonic() - t_run
        if rc != 0:
            raise SystemExit(f"handoff_kill: {name} exited {rc}: {open(log, errors='replace').read()[-2000:]}")
        duration = min(duration, took)
        started = min(started, 0.9 * duration)
    else:
        landed += 1
    stored, pending, lost = killed_state(store)
    with_pending += pending > 0
    with_lost += lost > 0
    if not done_before:
        run_to_end(store, name, log)
    got = dump(store)
    e, w = emitted(name), posted(name)
    missing_e = sorted(set(ref_emitted) - set(e))
    missing_w = sorted(set(ref_posted) - set(w))
    dup = (len(e) - len(set(e))) + (len(w) - len(set(w)))
    duplicates += dup
    problems = []
    if got != ref_dump:
        diff = [l for l in got.splitlines() if l not in set(ref_dump.splitlines())][:3]
        problems.append(f"final rows differ from the reference (first extra rows: {diff})")
    if missing_e:
        problems.append(f"{len(missing_e)} recommendations never emitted, e.g. {missing_e[0][:4]}")
    if missing_w:
        problems.append(f"{len(missing_w)} recommendations never POSTed, e.g. {missing_w[0][:4]}")
    state = (f"ended in {took:.2f} s, before its kill at {at:.3f} s (not counted)" if done_before else
             f"killed at {at:.3f} s: {stored} verdicts stored, {pending} hand-offs pending, {lost} verdicts without recommendations; restarted")
    print(f"handoff_kill: {kind} #{i - 1}: {state}: " + ("; ".join(problems) if problems else
          f"same rows{f', {dup} duplicate deliveries' if dup else ''}") + f" ({time.monotonic() - t_iter:.1f} s)")
    if problems:
        bad += 1
    drop_store(name)

if landed < args.kills:
    raise SystemExit(f"handoff_kill: only {landed} of {i} runs were killed before they ended")
print(f"handoff_kill: {kind}: {landed} kills spread over the run (seed {args.seed}; {finished_first} more runs ended "
      f"before their kill instant); {with_pending} kills left hand-offs pending, {with_lost} left verdicts without "
      f"recommendations; {i - bad} stores ended with the reference rows, {bad} did not; "
      f"{duplicates} duplicate deliveries (at-least-once)")
sys.exit(1 if bad else 0)
