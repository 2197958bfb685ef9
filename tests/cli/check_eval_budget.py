#!/usr/bin/python3
"""The evaluation budget (limits eval_steps, docs/robustness.md) stops a rule
whose queries nest over many events, on the engine given in $CULPRIT_ENGINE.

  check_eval_budget.py CULPRIT EXAMPLES_DIR

Issue 38: three nested `exists` over 3,000 XID events ran for more than a
minute (and held a service worker for as long). With the budget the same
diagnosis ends within seconds, `unattributed`, with a coverage warning that
names the rule; `culprit check` warns (E0801) about the nested scan before
anything runs. The bundled catalog alone, on the same bundle, stays
attributed: the budget is far above what real rules take.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

RULE = """rule NestedProbe stage symptoms {
  for e: event gpu.xid
  where exists(a: event gpu.xid where exists(b: event gpu.xid where exists(c: event gpu.xid where c.pid == a.pid + b.pid + e.pid + 1)))
  symptom probe.nested { summary: "nested" }
}
"""
# A run without the budget takes minutes. With it (1,000,000 + 100 x 3,018
# events = 1,301,800 steps) the diagnosis took 0.5-0.7 s, 1.1 s with a cold
# compile cache, on a 2-core machine shared with builds; the ASan/UBSan build
# (scripts/sanitize.sh) took 3.9-5.6 s for the whole script, JIT included,
# and failed a 4 s bound. The bound sits far from both: a run past it is the
# defect back, not a slow machine.
DEADLINE_S = 30


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    culprit, examples = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp()
    try:
        bundle = os.path.join(tmp, "b")
        shutil.copytree(os.path.join(examples, "xid48-dbe"), bundle)
        log = os.path.join(bundle, "logs", "node-02", "kernel.log")
        with open(log) as f:
            lines = f.read().split("\n")
        at = next(i for i, l in enumerate(lines) if ": 48, pid=51234" in l)
        lines[at + 1:at + 1] = [lines[at].replace("pid=51234", f"pid={100000 + i}") for i in range(3000)]
        with open(log, "w") as f:
            f.write("\n".join(lines))
        rule = os.path.join(tmp, "nest.attr")
        with open(rule, "w") as f:
            f.write(RULE)

        t0 = time.monotonic()
        try:
            r = subprocess.run([culprit, "diagnose", bundle, "--rules", rule, "--format", "json", "--skip-self-test"],
                               capture_output=True, text=True, timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            fail(f"diagnose with the nested rule still runs after {DEADLINE_S} s: no evaluation budget")
        took = time.monotonic() - t0
        if r.returncode != 0:
            fail(f"diagnose exited {r.returncode}: {r.stderr.strip()}")
        v = json.loads(r.stdout)
        if v["status"] != "unattributed":
            fail(f"an evaluation cut short must not attribute; status is {v['status']}")
        if v["recommendation"]["nodes"] or v["recommendation"]["job"]["action"] != "none":
            fail("an evaluation cut short recommends actions")
        warn = [w for w in v["coverage"]["warnings"] if "eval_steps" in w]
        if not warn or "NestedProbe" not in warn[0]:
            fail(f"no coverage warning names the rule that ran out: {v['coverage']['warnings']}")
        m = re.search(r"on (\d+) events; .*\(at most (\d+)\)", warn[0])
        if not m or int(m.group(2)) != 1000000 + 100 * int(m.group(1)):
            fail(f"the warning does not give the budget for its events (1,000,000 + 100 per event): {warn[0]}")
        print(f"nested rule: stopped after {took:.1f} s: {warn[0]}")

        chk = subprocess.run([culprit, "check", rule], capture_output=True, text=True, timeout=120)
        if chk.returncode != 0 or "warning[E0801]" not in chk.stderr + chk.stdout:
            fail(f"culprit check gives no E0801 warning for the nested scan (exit {chk.returncode}):\n{chk.stderr}")
        print("culprit check: E0801 at the nested scan")

        plain = subprocess.run([culprit, "diagnose", bundle, "--format", "json", "--skip-self-test"],
                               capture_output=True, text=True, timeout=120)
        pv = json.loads(plain.stdout)
        if pv["status"] != "attributed" or any("eval_steps" in w for w in pv["coverage"]["warnings"]):
            fail(f"the bundled catalog alone ran out of steps on 3,000 XIDs: {pv['status']}, {pv['coverage']['warnings']}")
        print("bundled catalog on the same bundle: attributed, within budget")
    finally:
        shutil.rmtree(tmp)
    print("ok")


if __name__ == "__main__":
    main()
