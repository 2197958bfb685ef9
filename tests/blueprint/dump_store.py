#!/usr/bin/env python3
"""Prints a store's rows in a canonical form, so two stores can be compared.

usage: dump_store.py sqlite:PATH | postgresql://...

Every table of the blueprint schema, rows sorted, values as text (NULL as
\\N). Surrogate ids are replaced by the natural keys they stand for
(PostgreSQL's identity sequences are not rolled back with a transaction, so
ids may have gaps there after a killed run, never in what they refer to). Columns that hold wall-clock times of the run itself (when a row was
written, not what it says) are left out, and so is `runs` (one row per run).
Columns a store's older schema lacks are left out too (so a store written by
an older culprit can be compared with another of the same version).
"""
import subprocess
import sqlite3
import sys

TABLES = {
    "schema_version": ["version", "description"],
    "catalogs": ["id", "name", "version", "digest"],
    "workloads": ["id", "scheduler", "cluster", "workload_id", "name", "user_name", "partition_name"],
    "attempts": ["id", "workload_ref", "attempt_key", "attempt_no", "state", "exit_code", "submit_ns", "start_ns", "end_ns",
                 "nodes", "node_count", "steps", "discovered_by", "status", "last_error", "failures"],
    "attempt_nodes": ["attempt_ref", "node"],
    "verdicts": ["id", "attempt_ref", "catalog_ref", "scheduler", "cluster", "workload_id", "state", "start_ns", "end_ns",
                 "node_count", "status", "domain", "sub_domain", "culprit_nodes", "root_cause", "root_cause_summary",
                 "evaluator", "attributed_by", "verdict_sha256", "verdict_json"],
    "verdict_culprits": ["verdict_ref", "node", "domain", "sub_domain", "status", "end_ns"],
    "symptoms": ["verdict_ref", "symptom_id", "kind", "node", "control_plane", "state", "rule", "summary", "priority",
                 "first_ns", "last_ns", "count", "domain", "sub_domain", "changed_by_rule", "changed_reason",
                 "changed_cause", "evidence_total", "fields"],
    "evidence": ["verdict_ref", "symptom_id", "ordinal", "host", "source", "file", "line", "byte_offset", "ts_ns",
                 "ts_origin", "text"],
    "coverage": ["verdict_ref", "kind", "name", "source", "status", "reason", "nodes_expected", "nodes_covered",
                 "nodes_missing", "files", "bytes", "lines", "observations", "events", "errors"],
    "watch_state": ["name", "value_ns"],
    "recommendations": ["verdict_ref", "ordinal", "scope", "node", "action", "target", "rule", "basis", "reason", "decision",
                        "decided_by", "decision_reason", "handoff", "record_id", "document", "owner", "handoff_state"],
}


def rows_sqlite(path, table, cols):
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    return [["\\N" if v is None else str(v) for v in r] for r in c.execute(f"select {','.join(cols)} from {table}")]


def rows_pg(url, table, cols):
    out = subprocess.run(["psql", "-X", "-q", "-At", "-F", "\x1f", "-R", "\x1e", "-P", "null=\\N", url, "-c",
                          f"select {','.join(cols)} from {table}"], check=True, capture_output=True, text=True).stdout
    if out.endswith("\n"):
        out = out[:-1]  # psql ends its output with a newline after the last record
    return [r.split("\x1f") for r in out.split("\x1e")] if out else []


def columns(url):
    """{table: its columns}: a store of an older schema lacks the newer ones."""
    have = {}
    if url.startswith("sqlite:"):
        c = sqlite3.connect(f"file:{url[7:]}?mode=ro", uri=True)
        for table in TABLES:
            have[table] = {r[1] for r in c.execute(f"pragma table_info({table})")}
        return have
    out = subprocess.run(["psql", "-X", "-q", "-At", "-F", " ", url, "-c",
                          "select table_name, column_name from information_schema.columns where table_schema = 'public'"],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        table, column = line.split(" ", 1)
        have.setdefault(table, set()).add(column)
    return have


url = sys.argv[1]
data = {}
have = columns(url)
for table in TABLES:
    TABLES[table] = [c for c in TABLES[table] if c in have.get(table, set())]
for table, cols in TABLES.items():
    data[table] = rows_sqlite(url[7:], table, cols) if url.startswith("sqlite:") else rows_pg(url, table, cols)
# id -> natural key
catalog = {r[0]: r[3] for r in data["catalogs"]}
workload = {r[0]: "/".join(r[1:4]) for r in data["workloads"]}
attempt = {r[0]: r[2] for r in data["attempts"]}
verdict = {r[0]: attempt[r[1]] + "#" + catalog[r[2]] for r in data["verdicts"]}
refs = {"catalog_ref": catalog, "workload_ref": workload, "attempt_ref": attempt, "verdict_ref": verdict}
for table, cols in TABLES.items():
    out = []
    for r in data[table]:
        row = []
        for c, v in zip(cols, r):
            if c == "id" and table not in ("schema_version",):
                continue
            row.append(refs[c][v] if c in refs else v)
        out.append(row)
    out.sort()
    print(f"== {table} ({len(out)} rows)")
    for r in out:
        print("\x1f".join(r).replace("\n", "\\n"))
