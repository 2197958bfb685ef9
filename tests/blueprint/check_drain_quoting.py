#!/usr/bin/env python3
"""The drain command of the hand-off is safe to paste (issue 38).

Bundles whose workload_id tries a command substitution, a backquote, a
quote break-out, an extra scontrol argument and control characters go
through `culprit run --once` without --apply. The command it prints, the one
it emits (--emit-recommendations) and the one it stores (the hand-off
column) are each run with `sh -c` in a scratch directory where `scontrol`
is a fake that records its argv: the argv must be exactly the intended one
(the attempt key's control characters encoded as \\n, \\x1b, ...) and
nothing else may run (no PWNED file appears).

    check_drain_quoting.py CULPRIT SOURCE_DIR
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

CULPRIT, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])

IDS = {
    "subst": "60101$(touch PWNED)",
    "resume": '" state=resume "',
    "backquote": "60101`touch PWNED`",
    "quote": "60101'; touch PWNED; echo '",
    "controls": "60101\n$(touch PWNED)\x1b]0;title\x07",
}


def encoded(s):
    """base/text_util.h escape_for_terminal, for the ASCII the ids use."""
    out = ""
    for ch in s:
        o = ord(ch)
        if ch == "\t":
            out += "\\t"
        elif ch == "\n":
            out += "\\n"
        elif ch == "\r":
            out += "\\r"
        elif o < 0x20 or o == 0x7F:
            out += "\\x%02x" % o
        else:
            out += ch
    return out


def fail(msg):
    print(f"check_drain_quoting: FAIL: {msg}")
    sys.exit(1)


def main():
    d = tempfile.mkdtemp(prefix="culprit-quoting.")
    try:
        run(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def run(d):
    bundles = []
    for name, wid in IDS.items():
        b = os.path.join(d, "bundles", name)
        shutil.copytree(os.path.join(SRC, "examples", "xid48-dbe"), b)
        p = os.path.join(b, "context.json")
        c = json.load(open(p))
        c["workload_id"] = wid
        json.dump(c, open(p, "w"))
        bundles.append(b)
    cfg = os.path.join(d, "c.yaml")
    with open(cfg, "w") as f:
        f.write("cluster: c1\ndiscovery:\n  static:\n    bundles:\n")
        for b in bundles:
            f.write(f"      - {json.dumps(b + '/')}\n")
    work = os.path.join(d, "work")
    os.mkdir(work)
    r = subprocess.run([CULPRIT, "run", "--config", cfg, "--once", "--store", f"sqlite:{d}/s.db", "--format", "none",
                        "--emit-recommendations", f"{d}/r.jsonl"], cwd=work, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        fail(f"culprit run exited {r.returncode}: {r.stderr[-2000:]}")

    # What each attempt's drain must run: scontrol and these arguments.
    want = {}
    for name, wid in IDS.items():
        key = f"bundle/c1/{wid}@{name}"
        want[key] = ["update", "nodename=node-02", "state=drain", f"reason=culprit: gpu.memory {encoded(key)}"]

    printed = {}
    marker = " (--apply runs it): "
    for line in r.stderr.splitlines():
        if marker in line and "to drain " in line:
            printed[line.split(marker, 1)[1]] = line
    emitted = {}
    for line in open(f"{d}/r.jsonl"):
        j = json.loads(line)
        if j["action"] == "drain" and j["command"]:
            emitted[j["attempt"]["key"]] = j["command"]
    stored = {}
    db = sqlite3.connect(f"{d}/s.db")
    for key, handoff in db.execute("select a.attempt_key, r.handoff from recommendations r join verdicts v on v.id = r.verdict_ref "
                                   "join attempts a on a.id = v.attempt_ref where r.action = 'drain'"):
        assert handoff.startswith("printed: "), handoff
        stored[key] = handoff[len("printed: "):]
    if sorted(emitted) != sorted(want):
        fail(f"emitted drains for {sorted(emitted)}, expected {sorted(want)}")
    if sorted(stored) != sorted(want):
        fail(f"stored drains for {sorted(stored)}, expected {sorted(want)}")

    # A fake scontrol that writes its argv, NUL-separated, where ARGV_OUT says.
    fake = os.path.join(d, "bin")
    os.mkdir(fake)
    with open(os.path.join(fake, "scontrol"), "w") as f:
        f.write('#!/bin/sh\nfor a in "$@"; do printf \'%s\\0\' "$a"; done > "$ARGV_OUT"\n')
    os.chmod(os.path.join(fake, "scontrol"), 0o755)
    env = dict(os.environ, PATH=fake + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
    checked = 0
    for key, argv in want.items():
        for what, command in (("emitted", emitted[key]), ("stored", stored[key])):
            out = os.path.join(d, "argv")
            if os.path.exists(out):
                os.remove(out)
            env["ARGV_OUT"] = out
            p = subprocess.run(["/bin/sh", "-c", command], cwd=work, env=env, capture_output=True, text=True, timeout=30)
            if p.returncode != 0:
                fail(f"{what} command for {key!r} failed in sh ({p.returncode}): {command!r}: {p.stderr}")
            got = open(out, "rb").read().split(b"\0")[:-1]
            got = [g.decode() for g in got]
            if got != argv:
                fail(f"{what} command for {key!r} ran scontrol with {got!r}, expected {argv!r} (command: {command!r})")
            checked += 1
    for root, _, files in os.walk(d):
        if "PWNED" in files:
            fail(f"a workload id ran a command: {os.path.join(root, 'PWNED')}")
    if sorted(printed) != sorted(emitted.values()):
        fail(f"printed commands {sorted(printed)} are not the emitted ones {sorted(emitted.values())}")
    for line in printed.values():
        if any(ord(ch) < 0x20 for ch in line):
            fail(f"a printed line has a control character: {line!r}")
    print(f"check_drain_quoting: {checked} drain commands (printed = emitted, emitted and stored) run by sh give exactly "
          f"the intended scontrol argv for {len(IDS)} hostile workload ids; nothing else ran")


if __name__ == "__main__":
    main()
