#!/usr/bin/python3
"""Checks the recommendation of every bundle under the given directories.

  check_recommendations.py CULPRIT DIR...

For each bundle (a directory with context.json) it runs `culprit diagnose
--format json` and holds the recommendation to the rules of docs/recovery.md:
  * a verdict that is not attributed (ambiguous, unattributed, no_failure)
    has the job action `none` (`stop_fix_code` for an unattributed one whose
    hang is a desync) and never a drain, reset, reboot or replacement; node
    actions are only `inspect`: on the nodes of an ambiguous verdict's
    candidate whose class acts on its nodes, or on the laggard nodes of an
    unattributed verdict's localised hang, each resting on symptoms;
  * node actions name culprit nodes only, reset_gpu carries a PCI address,
    and every symptom and evidence line an action rests on is in the verdict;
  * restart_excluding lists exactly the culprit nodes;
  * a node action resting on a symptom whose every evidence line is the
    job's own output (source `app`, all lines shown) is `inspect`: the job
    alone never gets its node drained, reset, rebooted or replaced;
  * `--schema v1` gives the same verdict without the recommendation and the
    hang detail (both v2 additions).
Prints one line per bundle (status, job action, node actions) and a tally.
"""
import json
import os
import subprocess
import sys

DESTRUCTIVE = {"drain", "reset_gpu", "reboot", "replace_suspect"}


def diagnose(culprit, bundle, *extra):
    # The catalog's own tests run in "catalog: culprit test"; not 194 times here.
    r = subprocess.run([culprit, "diagnose", bundle, "--format", "json", "--skip-self-test", *extra], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{bundle}: culprit diagnose exited {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def app_only(symptom):
    """Whether every evidence line of `symptom` is shown and from source app."""
    if not symptom or not symptom["evidence"] or symptom["evidence_total"] != len(symptom["evidence"]):
        return False
    return all(e["source"] == "app" for e in symptom["evidence"])


def check(bundle, v, v1):
    problems = []
    rec = v["recommendation"]
    job, nodes = rec["job"], rec["nodes"]
    status = v["status"]
    hang = v.get("hang")
    if status != "attributed":
        desync = status == "unattributed" and hang and hang["kind"] == "desync"
        if job["action"] != ("stop_fix_code" if desync else "none"):
            problems.append(f"{status} verdict recommends {job['action']} for the job")
        laggard_nodes = set(hang["laggard_nodes"]) if status == "unattributed" and hang and hang["kind"] == "straggler" else set()
        if nodes and status != "ambiguous" and not laggard_nodes:
            problems.append(f"{status} verdict recommends node actions: {[n['action'] for n in nodes]}")
        candidate_nodes = {n for c in v.get("candidates", []) for n in c["nodes"]}
        basis = "candidate of an ambiguous verdict" if status == "ambiguous" else "hang straggler"
        allowed = candidate_nodes if status == "ambiguous" else laggard_nodes
        for n in nodes:
            if n["action"] != "inspect" or n["basis"] != basis:
                problems.append(f"{status} verdict recommends {n['action']} ({n['basis']}) on {n['node']}")
            if n["node"] not in allowed:
                problems.append(f"inspect on {n['node']}, which no candidate or hang laggard names")
            if not n["symptoms"]:
                problems.append(f"inspect on {n['node']} rests on no symptom")
        bad = [n["action"] for n in nodes if n["action"] in DESTRUCTIVE]
        if bad:
            problems.append(f"{status} verdict recommends {bad}")
    culprits = set(v["culprit_nodes"])
    symptoms = {s["id"]: s for s in v["symptoms"]}
    if job["action"] == "restart_excluding" and job["nodes"] != v["culprit_nodes"]:
        problems.append(f"restart_excluding {job['nodes']} but the culprits are {v['culprit_nodes']}")
    for a in [job] + nodes:
        for sid in a["symptoms"]:
            if sid not in symptoms:
                problems.append(f"{a['action']} rests on {sid}, which is not in the verdict")
                continue
        lines = {f"{e['file']}:{e['line']}" for sid in a["symptoms"] if sid in symptoms for e in symptoms[sid]["evidence"]}
        for ref in a["evidence"]:
            if ref not in lines:
                problems.append(f"{a['action']} cites {ref}, not evidence of its symptoms")
        if a is not job and status == "attributed" and a["node"] not in culprits:
            problems.append(f"{a['action']} on {a['node']}, which is not a culprit node")
        if a is not job and a["action"] != "inspect" and any(app_only(symptoms.get(sid)) for sid in a["symptoms"]):
            problems.append(f"{a['action']} on {a['node']} rests only on the job's own output (source app)")
        if a is not job and a["action"] == "reset_gpu" and not a["target"].get("pci"):
            problems.append("reset_gpu without a PCI address")
        if status == "attributed" and not a["symptoms"] and a["action"] != "none":
            problems.append(f"{a['action']} rests on no symptom")
    if v1.get("schema") != "culprit.verdict/v1" or "recommendation" in v1:
        problems.append("--schema v1 is not the v1 document")
    else:
        stripped = {k: x for k, x in v.items() if k not in ("schema", "recommendation", "hang", "engine")}
        stripped1 = {k: x for k, x in v1.items() if k not in ("schema", "engine")}
        if stripped != stripped1:
            problems.append("--schema v1 differs from v2 in more than the recommendation and the hang detail")
    return problems


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    culprit = sys.argv[1]
    bundles = []
    for root in sys.argv[2:]:
        for name in sorted(os.listdir(root)):
            d = os.path.join(root, name)
            if os.path.isfile(os.path.join(d, "context.json")):
                bundles.append(d)
    if not bundles:
        print("check_recommendations: no bundles found", file=sys.stderr)
        return 2
    failed = 0
    tally = {}
    for b in bundles:
        v = diagnose(culprit, b)
        v1 = diagnose(culprit, b, "--schema", "v1")
        problems = check(b, v, v1)
        rec = v["recommendation"]
        acts = ",".join(f"{n['node']}:{n['action']}" for n in rec["nodes"]) or "-"
        print(f"{'FAIL' if problems else 'ok  '} {b}: {v['status']} job={rec['job']['action']} nodes={acts}")
        for p in problems:
            print(f"     {p}")
        failed += bool(problems)
        key = (v["status"], rec["job"]["action"])
        tally[key] = tally.get(key, 0) + 1
    print("check_recommendations: " + ", ".join(f"{s}/{a} {n}" for (s, a), n in sorted(tally.items())))
    print(f"check_recommendations: {len(bundles) - failed} of {len(bundles)} bundles ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
