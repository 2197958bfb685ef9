#!/usr/bin/env python3
"""A large SQLite store for the dashboard's load test, grown from a real one.

    make_big_store.py SOURCE.db TARGET.db TOTAL

SOURCE is a store written by `culprit run` (the examples). TARGET gets its
rows, then copies of its verdicts until it holds TOTAL: each copy is a new
workload and attempt (cluster `load`, job ids from 100000) ending one minute
after the previous one (about 70 days for 100,000), on nodes renamed into a
pool of 2,000 (gpu0000..gpu1999, the verdict JSON renamed to match), a fifth
of them under a second catalog version. The list's tables are all filled
(workloads, attempts, attempt_nodes, verdicts with the whole verdict JSON,
verdict_culprits); symptoms, evidence and coverage rows stay those of the
originals, since no list or fleet query reads them.
"""
import os
import shutil
import sqlite3
import sys
import time

NODES = 2000
MINUTE = 60 * 10**9
BASE_END = 1767225600 * 10**9  # 2026-01-01T00:00:00Z


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, dst, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
    t0 = time.time()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(dst + suffix):
            os.remove(dst + suffix)
    shutil.copyfile(src, dst)
    db = sqlite3.connect(dst, isolation_level=None)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("PRAGMA cache_size=-200000")
    db.execute("BEGIN")
    have = db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
    templates = db.execute(
        "SELECT v.catalog_ref, v.scheduler, v.state, v.start_ns, v.end_ns, v.status, v.domain, v.sub_domain, "
        "v.culprit_nodes, v.root_cause, v.root_cause_summary, v.evaluator, v.attributed_by, v.attributed_ns, "
        "v.verdict_sha256, v.verdict_json, a.nodes, a.exit_code, a.steps, a.discovered_by, w.name, w.user_name, "
        "w.partition_name FROM verdicts v JOIN attempts a ON a.id = v.attempt_ref JOIN workloads w ON w.id = a.workload_ref "
        "ORDER BY v.id").fetchall()
    if not templates:
        sys.exit("make_big_store: the source store has no verdicts")
    cat = db.execute("SELECT name, version FROM catalogs ORDER BY id LIMIT 1").fetchone()
    db.execute("INSERT INTO catalogs (name, version, digest) VALUES (?, ?, ?)",
               (cat[0], cat[1] + "-previous", "sha256:" + "0" * 64))
    old_catalog = db.execute("SELECT MAX(id) FROM catalogs").fetchone()[0]
    wid = db.execute("SELECT COALESCE(MAX(id), 0) FROM workloads").fetchone()[0]
    aid = db.execute("SELECT COALESCE(MAX(id), 0) FROM attempts").fetchone()[0]
    vid = db.execute("SELECT COALESCE(MAX(id), 0) FROM verdicts").fetchone()[0]
    workloads, attempts, nodes_rows, verdicts, culprits = [], [], [], [], []

    def flush():
        db.executemany("INSERT INTO workloads (id, scheduler, cluster, workload_id, name, user_name, partition_name) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)", workloads)
        db.executemany("INSERT INTO attempts (id, workload_ref, attempt_key, attempt_no, state, exit_code, submit_ns, start_ns, "
                       "end_ns, nodes, node_count, steps, discovered_by, status, last_error, failures, updated_ns) "
                       "VALUES (?, ?, ?, 1, ?, ?, NULL, ?, ?, ?, ?, ?, ?, 'attributed', '', 0, ?)", attempts)
        db.executemany("INSERT INTO attempt_nodes (attempt_ref, node) VALUES (?, ?)", nodes_rows)
        db.executemany("INSERT INTO verdicts (id, attempt_ref, catalog_ref, scheduler, cluster, workload_id, state, start_ns, "
                       "end_ns, node_count, status, domain, sub_domain, culprit_nodes, root_cause, root_cause_summary, "
                       "evaluator, attributed_by, attributed_ns, verdict_sha256, verdict_json) "
                       "VALUES (?, ?, ?, ?, 'load', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", verdicts)
        db.executemany("INSERT INTO verdict_culprits (verdict_ref, node, domain, sub_domain, status, end_ns) "
                       "VALUES (?, ?, ?, ?, ?, ?)", culprits)
        for rows in (workloads, attempts, nodes_rows, verdicts, culprits):
            rows.clear()

    for i in range(total - have):
        (catalog, sched, state, start, end, status, domain, sub, culprit_nodes, root, summary, evaluator, by, at,
         sha, vjson, nodes, exit_code, steps, discovered, name, user, partition) = templates[i % len(templates)]
        old_nodes = [n for n in nodes.split(",") if n]
        offset = (i * 7) % NODES
        rename = {n: "gpu%04d" % ((offset + k) % NODES) for k, n in enumerate(sorted(old_nodes))}
        new_nodes = sorted(rename.values())
        for old in sorted(rename, key=len, reverse=True):
            vjson = vjson.replace('"%s"' % old, '"%s"' % rename[old]).replace("%s/" % old, "%s/" % rename[old])
        new_culprits = sorted(rename.get(n, n) for n in culprit_nodes.split(",") if n)
        new_end = BASE_END + i * MINUTE
        new_start = new_end - (end - start) if end is not None and start is not None else new_end - 3600 * 10**9
        wid += 1
        aid += 1
        vid += 1
        job = str(100000 + i)
        workloads.append((wid, sched, "load", job, name, user, partition))
        attempts.append((aid, wid, "%s/load/%s" % (sched, job), state, exit_code, new_start, new_end, ",".join(new_nodes),
                         len(new_nodes), steps, discovered, at))
        nodes_rows.extend((aid, n) for n in new_nodes)
        verdicts.append((vid, aid, old_catalog if i % 5 == 4 else catalog, sched, job, state, new_start, new_end,
                         len(new_nodes), status, domain, sub, ",".join(new_culprits), root, summary, evaluator, by, at, sha,
                         vjson))
        culprits.extend((vid, n, domain, sub, status, new_end) for n in new_culprits)
        if len(verdicts) >= 5000:
            flush()
    flush()
    db.execute("COMMIT")
    db.execute("PRAGMA journal_mode=WAL")  # as culprit run leaves it; no ANALYZE, which culprit run never does
    db.close()
    count = sqlite3.connect(dst).execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
    print("make_big_store: %s: %d verdicts, %.0f MB, in %.1f s" % (dst, count, os.path.getsize(dst) / 1e6, time.time() - t0))


if __name__ == "__main__":
    main()
